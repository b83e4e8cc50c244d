#!/usr/bin/env python3
"""Checks a flow description (scripts/flows/*.txt) against the code and counts it.

A flow is the path a piece of work takes through Sources/, one hop a line: `FILE: SYMBOL`, FILE
relative to Sources/, SYMBOL `member` or `Type.member` (`A.B.member` for a nested type).
`#` lines are comments and `## ` lines name stages. Every SYMBOL's last component must be
declared in FILE (as a func, var, let, case, init, type or typealias) and every other component
must appear in it, so a rename or a move makes the description stale and this script fail.

Counts: distinct files; hops (consecutive lines in different files); re-entries (hops into a file
the flow had already visited and left); modules (Sources/ folders) crossed.

Usage: python3 scripts/flow.py [FLOW.txt ...]   (default: every scripts/flows/*.txt)
Exit 1 when a description is stale (a file or a symbol not found), else 0.
"""

import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SOURCES = os.path.join(ROOT, "Sources")
DECLARING = r"(?:func|var|let|case|struct|class|enum|protocol|actor|typealias|associatedtype)"


def declared(name, text):
    """Whether `name` is declared in the Swift source `text`."""
    if name == "init":
        return re.search(r"\binit\s*[?!]?\s*[(<]", text) is not None
    return re.search(rf"\b{DECLARING}\s+`?{re.escape(name)}`?\b", text) is not None


def read(flow):
    """The hops of a flow file: (line number, file, symbol). Raises ValueError on a bad line."""
    hops = []
    with open(flow, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            file, sep, symbol = line.partition(": ")
            if not sep or not symbol.strip():
                raise ValueError(f"{flow}:{number}: not `FILE: SYMBOL`: {line}")
            hops.append((number, file.strip(), symbol.strip()))
    return hops


def check(flow):
    """Prints the flow's counts; returns the list of problems (empty when it matches the code)."""
    problems = []
    try:
        hops = read(flow)
    except ValueError as e:
        return [str(e)]
    texts = {}
    for number, file, symbol in hops:
        path = os.path.join(SOURCES, file)
        if file not in texts:
            if not os.path.isfile(path):
                problems.append(f"{flow}:{number}: no file Sources/{file}")
                texts[file] = None
                continue
            with open(path, encoding="utf-8") as f:
                texts[file] = f.read()
        text = texts[file]
        if text is None:
            continue
        parts = symbol.split(".")
        if not declared(parts[-1], text):
            problems.append(f"{flow}:{number}: `{parts[-1]}` is not declared in Sources/{file}")
        for part in parts[:-1]:
            if re.search(rf"\b{re.escape(part)}\b", text) is None:
                problems.append(f"{flow}:{number}: `{part}` does not appear in Sources/{file}")
    files, visited, transitions, reentries = [], set(), 0, 0
    previous = None
    for _, file, _ in hops:
        if file != previous:
            if previous is not None:
                transitions += 1
                if file in visited:
                    reentries += 1
            visited.add(file)
            if file not in files:
                files.append(file)
            previous = file
    modules = sorted({f.split("/")[0] for f in files})
    name = os.path.relpath(flow, ROOT)
    print(
        f"flow {name}: {len(files)} files in {len(modules)} modules ({', '.join(modules)}), "
        f"{transitions} hops between files, {reentries} re-entries"
    )
    return problems


def main():
    flows = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "scripts", "flows", "*.txt")))
    if not flows:
        print("flow: no flow descriptions", file=sys.stderr)
        return 1
    problems = []
    for flow in flows:
        problems += check(flow)
    for p in problems:
        print(f"flow: stale: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
