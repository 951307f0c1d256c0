#!/usr/bin/python3
"""Writes a C header holding a theme file as a string: the built-in default theme."""
import json
import sys

text = open(sys.argv[1], encoding="ascii").read()
with open(sys.argv[2], "w") as out:
    out.write("/* generated from themes/default.theme by tui/embed-theme.py */\n")
    # A JSON string of ASCII text is a valid C string literal.
    out.write("static const char theme_default_text[] = " + json.dumps(text) + ";\n")
