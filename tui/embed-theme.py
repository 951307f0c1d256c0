#!/usr/bin/python3
"""Writes a C header holding the themes roam ships as strings: they are built in, so every
shipped theme (and the monochrome fallback) loads even when nothing is installed.
Usage: embed-theme.py OUTPUT THEME-FILE..."""
import json
import os
import sys

with open(sys.argv[1], "w") as out:
    out.write("/* generated from the files in themes/ by tui/embed-theme.py */\n")
    out.write("static const struct {\n        const char *name, *text;\n} builtin_themes[] = {\n")
    for path in sys.argv[2:]:
        name = os.path.basename(path)[:-len(".theme")]
        text = open(path, encoding="ascii").read()
        # A JSON string of ASCII text is a valid C string literal.
        out.write(f"    {{{json.dumps(name)}, {json.dumps(text)}}},\n")
    out.write("};\n")
