#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The include graph of service/ and tui/ keeps its layers (docs/ARCHITECTURE.md).

A file X.c and its header X.h are one node X; an edge is an `#include "Y.h"` of a file of the
tree. Two rules:

1. No include cycle, except a file with its own bus glue and its private header: X <-> X-bus
   (the objects X exports), X <-> X-client (X's clients of other daemons), and an
   X-internal.h shared by X's parts, which includes X.h (a strongly connected component
   inside {X, X-bus, X-client, X-internal}). A cycle means two files that each need the
   other: one of them is calling up.
2. The folders of service/ are layers, from the bottom: data/ (pure types and parsers), kernel/
   (the adapters of the kernel and of files: they say "changed" through the callbacks their
   owner hands them), clients/ (the adapters of other daemons: wpa_supplicant, resolved,
   NetworkManager, and the DNS view made of them and of files), core/, links/, features/NAME/,
   and the composition root (service/ itself: roamd.c, roamd-manager*). A file includes only
   its own layer and the layers below; a feature includes only other features below it (the
   features' folders form no cycle).
3. Only the composition root (roamd.c, roamd-manager*.c) includes
   roamd-manager.h: the features get the Core (roamd-core.h) and what the manager hands them.
4. A function declared in X.h (or X-internal.h) is defined in an X*.c of the same folder
   (service/ and shared/): a header is the interface of its own files, so no folder fills in
   another's interface, a call the include graph cannot see (a feature defining what a lower
   one declares, and calls).

Usage: include-graph.py SOURCE_ROOT [-v]. Exits 1 and says which files break a rule.
"""

import os
import re
import sys

DIRS = ("service", "shared", "tui")

# Cycles allowed for now, each with its reason: a set of node names that must be exactly one
# strongly connected component. An entry that no longer matches fails too, so the list only
# ever shrinks. Empty: every cycle is a file and its own bus glue.
ALLOWED_CYCLES = []

# service/'s layers, from the bottom; a folder under features/ is a feature of its own.
LAYERS = ["service/data", "service/kernel", "service/clients", "service/core", "service/links", "service/features",
          "service"]


def layer_of(path):
    """(layer index, feature name or None) of a file under service/, else None."""
    d = os.path.dirname(path)
    if not d.startswith("service"):
        return None
    if d.startswith("service/features/"):
        return LAYERS.index("service/features"), d.split("/")[2]
    return LAYERS.index(d), None


MANAGER_USERS = {"roamd", "roamd-manager", "roamd-manager-bus", "roamd-manager-status", "roamd-manager-features"}


def read_graph(root):
    nodes = {}
    for d in DIRS:
        for top, dirs, files in os.walk(os.path.join(root, d)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    path = os.path.relpath(os.path.join(top, f), root)
                    nodes.setdefault(f[:-2], []).append(path)
    edges = {n: set() for n in nodes}
    where = {}
    for n, files in nodes.items():
        for path in files:
            with open(os.path.join(root, path), errors="replace") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([^"]+)\.h"', line)
                    if not m:
                        continue
                    t = os.path.basename(m.group(1))
                    if t != n and t in nodes:
                        edges[n].add(t)
                        where.setdefault((n, t), path)
    return nodes, edges, where


# Rule 4 covers these; tui/ is on its way to one client model (issue 42) and not yet.
DEFINED_WHERE_DECLARED = ("service", "shared")


def strip_c(text):
    """C text without comments, string and character literals and preprocessor lines."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def top_level(text):
    """The statements at brace depth 0, each with what ends it: ';' or '{' (a body follows)."""
    depth, cur = 0, []
    for ch in text:
        if depth == 0:
            if ch in ";{":
                yield "".join(cur), ch
                cur = []
                depth = 1 if ch == "{" else 0
            else:
                cur.append(ch)
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                cur = []


def function_name(stmt):
    """(name, the words before it) of a function's declaration or definition, else None."""
    s = " ".join(stmt.split())
    m = re.search(r"([A-Za-z_]\w*)\s*\(", s)
    if not m or s.startswith("typedef") or "=" in s[: m.start()]:
        return None
    before = s[: m.start()].strip()
    if not before or before.endswith("(*") or before.endswith("("):
        return None  # a macro's use, a function pointer
    return m.group(1), before


def declared_and_defined(root):
    """{function: header declaring it}, {function: [files defining it]} in DEFINED_WHERE_DECLARED."""
    declared, defined = {}, {}
    for d in DEFINED_WHERE_DECLARED:
        for top, dirs, files in os.walk(os.path.join(root, d)):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(top, f), root)
                with open(os.path.join(root, path), errors="replace") as fh:
                    text = strip_c(fh.read())
                for stmt, end in top_level(text):
                    found = function_name(stmt)
                    if not found or re.search(r"\bstatic\b", found[1]):
                        continue
                    if f.endswith(".h") and end == ";":
                        declared.setdefault(found[0], path)
                    elif f.endswith(".c") and end == "{" and stmt.rstrip().endswith(")"):
                        defined.setdefault(found[0], []).append(path)
    return declared, defined


def components(edges):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def bus_glue(comp):
    """Inside {X, X-bus, X-client, X-internal}: a file, its own bus glue (exported objects or
    clients of other daemons) and its private header."""
    return any(comp <= {x, x + "-bus", x + "-client", x + "-internal"} for x in comp)


def main():
    root = sys.argv[1]
    verbose = "-v" in sys.argv[2:]
    nodes, edges, where = read_graph(root)
    errors = []

    comps = components(edges)
    for comp in comps:
        if bus_glue(comp) or comp in ALLOWED_CYCLES:
            continue
        lines = [
            f"    {a} -> {b} ({where[(a, b)]})"
            for a in sorted(comp)
            for b in sorted(edges[a] & comp)
        ]
        errors.append(
            f"include cycle of {len(comp)}: {', '.join(sorted(comp))}\n" + "\n".join(lines)
        )
    for allowed in ALLOWED_CYCLES:
        if allowed not in comps:
            errors.append(
                f"allowed cycle {', '.join(sorted(allowed))} is gone or changed: "
                "update ALLOWED_CYCLES in tools/include-graph.py"
            )

    feature_edges = {}
    for n in sorted(nodes):
        for path in nodes[n]:
            mine = layer_of(path)
            if mine is None:
                continue
            for t in sorted(edges[n]):
                theirs = layer_of(nodes[t][0])
                if theirs is None or where[(n, t)] != path:
                    continue
                if theirs[0] > mine[0]:
                    errors.append(
                        f"{path} ({LAYERS[mine[0]]}) includes {t}.h from "
                        f"{LAYERS[theirs[0]]}, a layer above it: hand it a callback or a hook "
                        "at construction instead"
                    )
                elif mine[1] and theirs[1] and mine[1] != theirs[1]:
                    feature_edges.setdefault(mine[1], set()).add(theirs[1])
                    feature_edges.setdefault(theirs[1], set())
    for comp in components(feature_edges):
        errors.append(
            "the features " + ", ".join(sorted(comp)) + " include each other: one of them "
            "calls up"
        )

    for n in sorted(nodes):
        if "roamd-manager" in edges[n] and n not in MANAGER_USERS:
            errors.append(
                f"{where[(n, 'roamd-manager')]} includes roamd-manager.h: a feature gets the "
                "Core and what the manager hands it, never the manager"
            )

    declared, defined = declared_and_defined(root)
    n_checked = 0
    for fn, header in sorted(declared.items()):
        x = os.path.basename(header)[:-2]
        x = x[: -len("-internal")] if x.endswith("-internal") else x
        for path in defined.get(fn, []):
            n_checked += 1
            if os.path.dirname(path) != os.path.dirname(header) or not os.path.basename(
                path
            ).startswith(x):
                errors.append(
                    f"{fn}() is declared in {header} but defined in {path}: a header is the "
                    f"interface of its own files ({os.path.dirname(header)}/{x}*.c); give "
                    "the other side a hook or a callback instead"
                )

    if verbose:
        for comp in comps:
            print(f"{len(comp)} {sorted(comp)}")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"{len(nodes)} files, {len(comps)} cycles, all of them allowed; every layer of "
          "service/ includes only itself and those below; only the composition root includes "
          "the manager; "
          f"{n_checked} functions declared in a header are defined beside it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
