#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every roam command, its literal words and options (from `roam --help`) and every roamd.conf
section and key (from service/data/roamd-config.c's table config_keys[], which its parser reads) have an entry in the man pages, every
key is shown in the installed data/roamd.conf, and every command is offered by each shell
completion.

Usage: check-man.py ROAM-BINARY SOURCE-ROOT [ROAMD-BINARY]
(with roamd: data/roamd.conf with every key uncommented must pass roamd --check-config)
Exits 1 and names each missing entry, so a new command or key cannot ship undocumented."""
import re
import subprocess
import sys
import tempfile


def help_commands(roam):
    """{command: (set of literal words, set of options)} from the global --help's Commands
    list; ([], options) for the Options list under the key None."""
    text = subprocess.run([roam, "--help"], capture_output=True, text=True, check=True).stdout
    commands = {}
    options = set()
    part = None
    for line in text.splitlines():
        if line.startswith("Commands:"):
            part = "commands"
            continue
        if line.startswith("Options:"):
            part = "options"
            continue
        if line and not line.startswith(" "):
            part = None
            continue
        if part == "options":
            # "  -h --help          Show ...": the option names before the description.
            m = re.match(r"^\s+(-[^ ].*?)(\s{2,}|$)", line)
            if m:
                options.update(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", m.group(1)))
            continue
        # An entry starts two spaces in with a lower-case command; deeper lines continue one.
        m = re.match(r"^  ([a-z][a-z0-9-]*)(.*)$", line)
        if part != "commands" or not m:
            continue
        cmd, rest = m.group(1), m.group(2)
        usage = re.split(r"\s{2,}", rest)[0]
        words, opts = commands.setdefault(cmd, (set(), set()))
        for token in usage.split():
            for piece in token.strip("[]").split("|"):
                piece = piece.strip("[]")
                if re.fullmatch(r"[a-z][a-z0-9-]*", piece):
                    words.add(piece)
                elif re.fullmatch(r"--[a-z][a-z-]*", piece):
                    opts.add(piece)
    return commands, options


def config_keys(source):
    """{section: [keys]} from roamd-config.c's table config_keys[], the one the parser reads:
    each row starts with its section and key ("NAME" or NULL: a section of free-form names,
    which has no keys to list; a key ending in "." is a prefix, AtOnce.BEARER=, and is not
    listed either)."""
    text = open(source, encoding="utf-8").read()
    m = re.search(r"^static const ConfigKey config_keys\[\] = \{\n(.*?)^\};", text, re.S | re.M)
    if not m:
        sys.exit(f"check-man: no table config_keys[] in {source}: parser changed?")
    sections = {}
    for section, key in re.findall(r'^\s*[A-Z0-9_]+\("(\w+)",\s*(NULL|"[\w.]+")', m.group(1),
                                   re.M):
        keys = sections.setdefault(section, set())
        if key != "NULL" and not key.endswith('."'):
            keys.add(key.strip('"'))
    if len(sections) < 10:
        sys.exit(f"check-man: found only {len(sections)} sections in {source}: parser changed?")
    return {section: sorted(keys) for section, keys in sections.items()}


def scd_sections(path):
    """{heading: text} of an scdoc page's top-level (# ) sections."""
    out, name = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("# "):
            name = line[2:].strip()
            out[name] = ""
        elif name:
            out[name] += line
    return out


def main():
    roam, top = sys.argv[1], sys.argv[2]
    missing = []

    roam1 = scd_sections(f"{top}/man/roam.1.scd")
    cmd_text = roam1.get("COMMANDS", "")
    commands, options = help_commands(roam)
    if len(commands) < 5:
        sys.exit(f"check-man: found only {len(commands)} commands in `roam --help`: format changed?")
    for cmd, (words, opts) in sorted(commands.items()):
        if not re.search(r"^\*" + re.escape(cmd) + r"[* ]", cmd_text, re.M):
            missing.append(f"roam(1) COMMANDS has no entry for `roam {cmd}`")
        for w in sorted(words | opts):
            if not re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", cmd_text):
                missing.append(f"roam(1) COMMANDS does not mention `{w}` of `roam {cmd}`")
    for o in sorted(options):
        if not re.search(r"\*" + re.escape(o) + r"\*", roam1.get("OPTIONS", "")):
            missing.append(f"roam(1) OPTIONS has no entry for `{o}`")

    for shell, path in (("bash", "completions/roam.bash"), ("zsh", "completions/_roam"),
                        ("fish", "completions/roam.fish")):
        comp = open(f"{top}/{path}", encoding="utf-8").read()
        for cmd in sorted(commands):
            if not re.search(r"(?<![\w-])" + re.escape(cmd) + r"(?![\w-])", comp):
                missing.append(f"the {shell} completion does not offer `roam {cmd}`")

    conf = scd_sections(f"{top}/man/roamd.conf.5.scd")
    for section, keys in sorted(config_keys(f"{top}/service/data/roamd-config.c").items()):
        text = conf.get(f"[{section}]")
        if text is None:
            missing.append(f"roamd.conf(5) has no section [{section}]")
            continue
        for key in keys:
            if f"*{key}=*" not in text:
                missing.append(f"roamd.conf(5) [{section}] has no entry for {key}=")

    # The installed /etc/roam/roamd.conf shows every key too (commented out).
    sample, section = {}, None
    for line in open(f"{top}/data/roamd.conf", encoding="utf-8"):
        m = re.match(r"^\[(\w+)\]", line)
        if m:
            section = m.group(1)
            sample[section] = set()
        m = re.match(r"^#?(\w+)=", line)
        if m and section:
            sample[section].add(m.group(1))
    for section, keys in sorted(config_keys(f"{top}/service/data/roamd-config.c").items()):
        if section not in sample:
            missing.append(f"data/roamd.conf has no section [{section}]")
            continue
        for key in keys:
            if key not in sample[section]:
                missing.append(f"data/roamd.conf [{section}] does not show {key}=")

    if len(sys.argv) > 3:
        # Every value shown is one roamd takes (the glob examples of the free-form sections
        # name no real link and stay commented).
        lines = [re.sub(r"^#(\w+=)", r"\1", line) for line in
                 open(f"{top}/data/roamd.conf", encoding="utf-8")]
        with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
            f.writelines(lines)
            f.flush()
            r = subprocess.run([sys.argv[3], "--check-config", "--config", f.name],
                               capture_output=True, text=True)
            if r.returncode != 0:
                missing.append("data/roamd.conf with its keys uncommented is refused: " +
                               (r.stderr or r.stdout).strip())

    for m in missing:
        print(f"check-man: {m}")
    if missing:
        return 1
    print(f"check-man: {len(commands)} commands, {len(options)} options, "
          f"the configuration's sections and keys: all in the man pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
