#!/usr/bin/python3
"""Renders screenshot goldens (tests/tui/golden/*.txt) as SVG images, for the README and
docs: the same text, colours and attributes the tests check.

Usage: golden2svg.py GOLDEN.txt... [-o DIR]   (default: next to each golden, .svg)"""
import argparse
import html
import os
import re

# xterm's palette, by the colour names pyte gives (tuidriver.py adds the bright ones).
PALETTE = {
    "black": "#000000", "red": "#cd0000", "green": "#00cd00", "brown": "#cdcd00",
    "blue": "#0000ee", "magenta": "#cd00cd", "cyan": "#00cdcd", "white": "#e5e5e5",
    "brightblack": "#7f7f7f", "brightred": "#ff0000", "brightgreen": "#00ff00",
    "brightbrown": "#ffff00", "brightblue": "#5c5cff", "brightmagenta": "#ff00ff",
    "brightcyan": "#00ffff", "brightwhite": "#ffffff",
}
DEFAULT_FG, DEFAULT_BG = "#d0d0d0", "#1c1c1c"
CELL_W, CELL_H = 9, 18


def colour(name, default):
    if name == "default":
        return default
    if re.fullmatch(r"[0-9a-f]{6}", name):
        return "#" + name
    return PALETTE.get(name, default)


def parse(path):
    sections, current = {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("--- "):
                current = line[4:].split(" ")[0]
                sections[current] = []
            elif current:
                sections[current].append(line)
    text = [line[1:] for line in sections["text"]]
    attrs = [line[1:] for line in sections["attributes"]]
    legend = {}
    for line in sections["legend"]:
        letter, rest = line.split(": ", 1)
        words = rest.split(" (")[0].split()
        style = {"fg": "default", "bg": "default", "bold": False, "reverse": False,
                 "underline": False}
        for w in words:
            if "=" in w:
                k, v = w.split("=", 1)
                style[k] = v
            else:
                style[w] = True
        legend[letter] = style
    return text, attrs, legend


def render(path, out):
    text, attrs, legend = parse(path)
    cols = max(len(line) for line in attrs + text + [""])
    cols = max(cols, 40)
    rows = len(text)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * CELL_W}" '
             f'height="{rows * CELL_H}" font-family="DejaVu Sans Mono, monospace" '
             f'font-size="15">',
             f'<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>']
    for y in range(rows):
        line = text[y].ljust(cols)
        arow = attrs[y].ljust(cols, ".") if y < len(attrs) else "." * cols
        for x in range(cols):
            style = legend.get(arow[x])
            fg = colour(style["fg"], DEFAULT_FG) if style else DEFAULT_FG
            bg = colour(style["bg"], DEFAULT_BG) if style else DEFAULT_BG
            if style and style["reverse"]:
                fg, bg = bg, fg
            if bg != DEFAULT_BG:
                parts.append(f'<rect x="{x * CELL_W}" y="{y * CELL_H}" width="{CELL_W}" '
                             f'height="{CELL_H}" fill="{bg}"/>')
            ch = line[x]
            if ch != " ":
                extra = ""
                if style and style["bold"]:
                    extra += ' font-weight="bold"'
                if style and style["underline"]:
                    extra += ' text-decoration="underline"'
                parts.append(f'<text x="{x * CELL_W}" y="{y * CELL_H + 14}" fill="{fg}"'
                             f'{extra}>{html.escape(ch)}</text>')
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goldens", nargs="+")
    ap.add_argument("-o", "--output-dir")
    args = ap.parse_args()
    for g in args.goldens:
        name = os.path.splitext(os.path.basename(g))[0] + ".svg"
        out = os.path.join(args.output_dir or os.path.dirname(g), name)
        render(g, out)
        print(out)


if __name__ == "__main__":
    main()
