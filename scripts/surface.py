#!/usr/bin/env python3
"""Counts the public surface of each module in Sources/: the declarations written `public` or
`open` in its Swift files, and how many of them are fenced behind `@_spi(...)` (the declaration's
own attribute or an enclosing type's), which only `@_spi import` sees.

Counted: types, functions, initializers, subscripts, properties, enum cases, typealiases and
associated types written with `public` or `open`; not imports (`public import`, `@_exported
import`) and not extensions themselves (their members are counted one by one). This reads the
source, not the compiled module, so members made public implicitly (an enum's cases, a public
protocol's requirements) are not counted: the figure says how much was chosen to be public.

Usage: python3 scripts/surface.py [--json]
Prints one line per module (public, of which @_spi, the rest) and the total; exits 0.
"""

import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SOURCES = os.path.join(ROOT, "Sources")

DECL = re.compile(
    r"^(?P<attrs>(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*)"
    r"(?P<mods>(?:(?:public|open|internal|package|private|fileprivate)(?:\(set\))?\s+"
    r"|(?:static|class|final|override|mutating|nonmutating|nonisolated(?:\(unsafe\))?|indirect|lazy"
    r"|convenience|required|dynamic|weak|unowned|consuming|borrowing|distributed)\s+)*)"
    r"(?P<kw>func|var|let|init|subscript|struct|class|enum|protocol|actor|typealias|associatedtype"
    r"|case|extension|import|macro)\b"
)
TYPE_KWS = {"struct", "class", "enum", "protocol", "actor", "extension"}


def strip(text):
    """The text with comments and string literals blanked (newlines kept), so braces and
    keywords inside them are not read as code."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:])):
            hashes = len(re.match(r"#*", text[i:]).group(0))
            j = i + hashes
            delim = '"""' if text.startswith('"""', j) else '"'
            close = delim + "#" * hashes
            j += len(delim)
            while j < n and not text.startswith(close, j):
                if text[j] == "\\" and hashes == 0:
                    j += 1
                if j < n and text[j] == "\n":
                    out.append("\n")
                j += 1
            out.append('""')
            i = j + len(close)
        else:
            out.append(c)
            i += 1
    return "".join(out)


SPI_TYPE = re.compile(r"@_spi\([^)]*\)\s+(?:public\s+|open\s+|final\s+)*(?:struct|class|enum|protocol|actor)\s+(\w+)")
EXTENDED = re.compile(r"\bextension\s+([\w.]+)")


def spi_types(files):
    """The names of the types declared `@_spi`: an extension of one is fenced too."""
    names = set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            names.update(SPI_TYPE.findall(strip(f.read())))
    return names


def count_file(path, fenced_types=frozenset()):
    """(public, spi) declarations in one file."""
    with open(path, encoding="utf-8") as f:
        code = strip(f.read())
    public = spi = 0
    stack = []  # per open brace: is everything inside it @_spi?
    pending = []  # attributes on lines of their own, for the next declaration
    scope_spi = None  # the spi-ness of the next `{` when a type declaration opened it
    for raw in code.split("\n"):
        line = raw.strip()
        if re.fullmatch(r"(?:@[A-Za-z_]+(?:\([^)]*\))?\s*)+", line):
            pending.append(line)
            continue
        m = DECL.match(" ".join(pending + [line])) if line else None
        pending = []
        inside_spi = any(stack)
        if m:
            attrs, mods, kw = m.group("attrs"), m.group("mods"), m.group("kw")
            own_spi = "@_spi(" in attrs
            exposed = re.search(r"\b(public|open)\b(?!\(set\))", mods) is not None
            if exposed and kw not in ("import", "extension"):
                public += 1
                if own_spi or inside_spi:
                    spi += 1
            if kw in TYPE_KWS:
                extended = EXTENDED.search(line) if kw == "extension" else None
                fenced = extended is not None and extended.group(1).split(".")[-1] in fenced_types
                scope_spi = own_spi or inside_spi or fenced
        for ch in line:
            if ch == "{":
                stack.append(scope_spi if scope_spi is not None else inside_spi)
                scope_spi = None
            elif ch == "}" and stack:
                stack.pop()
    return public, spi


def modules():
    for name in sorted(os.listdir(SOURCES)):
        folder = os.path.join(SOURCES, name)
        files = [
            os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs if f.endswith(".swift")
        ]
        if files:
            yield name, sorted(files)


def main():
    rows = []
    for name, files in modules():
        public = spi = 0
        fenced = spi_types(files)
        for path in files:
            p, s = count_file(path, fenced)
            public, spi = public + p, spi + s
        rows.append({"module": name, "public": public, "spi": spi, "unfenced": public - spi})
    total = {k: sum(r[k] for r in rows) for k in ("public", "spi", "unfenced")}
    if "--json" in sys.argv[1:]:
        print(json.dumps({"modules": rows, "total": total}, indent=1))
        return
    print("surface: public/open declarations per module (of which behind @_spi; the rest)")
    for r in rows:
        print(f"  {r['module']:<18} {r['public']:>5}  (@_spi {r['spi']:>3}; unfenced {r['unfenced']:>5})")
    print(f"  {'total':<18} {total['public']:>5}  (@_spi {total['spi']:>3}; unfenced {total['unfenced']:>5})")


if __name__ == "__main__":
    main()
