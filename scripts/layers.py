#!/usr/bin/env python3
"""The module and folder graph of the package's Swift sources, and its cycles.

Usage:
    python3 scripts/layers.py                 # graph of ./Sources, then the cycles; exit 1 if any
    python3 scripts/layers.py --root DIR      # DIR is a Sources folder, or a folder holding one
    python3 scripts/layers.py --dot           # Graphviz instead (cycle edges in red):
                                              #   python3 scripts/layers.py --dot | dot -Tsvg > layers.svg
    python3 scripts/layers.py --cycles-only   # print only the cycles (and their edges)
    python3 scripts/layers.py --long [N]      # also list Sources files over N lines (400); exit 1 if any

Nodes are modules (the folders directly under Sources/ that hold Swift files) and folders:
`Module/Folder` for the first folder level inside a module (`Hearth/State`, `HearthLog/GroupCommit`);
a file directly in a module's root belongs to `Module/.`.

Edges:
  * module graph: `import M` lines (any attributes, `import struct M.T` too) naming a module of Sources/;
  * folder graph: a file in folder A names a type declared in folder B (A != B), in the same module or
    in a module the file imports (or that one re-exports with `@_exported import`). A type is a
    `struct`/`class`/`enum`/`protocol`/`actor`/`typealias` declared at the top level of a file and not
    `private`/`fileprivate`; a nested type counts as its outermost declaration (`Log.Options` is a
    reference to `Log`); an `extension` declares nothing (naming the extended type is a reference), nor
    does an import of one declaration (`@_exported import typealias M.T` names M's `T`).
    Internal (default-access) types are visible only inside their own module, as in Swift.

Before identifiers are scanned, comments (nested block comments too) and string literals (plain,
multi-line and raw, interpolations included) are blanked, line breaks kept. An identifier right after
a `.` is a member and is not a type reference unless what precedes the dot is a module name.

Each edge is printed with one example reference (file:line and the name). The strongly connected
components with more than one node are the cycles: the exit status is 1 if there is any, in either
graph. Python 3 standard library only; the self-check is scripts/test_layers.sh.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

DECL_KINDS = ("struct", "class", "enum", "protocol", "actor", "typealias")
IDENT = re.compile(r"`?([A-Za-z_][A-Za-z0-9_]*)`?")
IMPORT = re.compile(
    r"^[ \t]*((?:@[A-Za-z_]\w*(?:\([^)\n]*\))?[ \t]+)*)import[ \t]+"
    r"(?:(struct|class|enum|protocol|typealias|func|var|let)[ \t]+)?([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?",
    re.M,
)
# A top-level declaration: the keyword, its name, and the modifiers before it on the same line.
DECL = re.compile(r"\b(struct|class|enum|protocol|actor|typealias|extension)\b[ \t\n]+`?([A-Za-z_]\w*)")
PRIVATE = re.compile(r"\b(private|fileprivate)\b")
EXPORTED = re.compile(r"\b(public|open|package)\b")
IMPORT_KIND = re.compile(r"\bimport[ \t]+$")


def strip_swift(text):
    """Blanks comments and string literals (keeping newlines) so only code remains."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif c == '"' or (c == "#" and re.match(r"#+\"", text[i:])):
            j = skip_string(text, i)
            out.append(blank(text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_string(text, i):
    """Index just past the string literal starting at i (raw, multi-line and interpolated ones too)."""
    n = len(text)
    hashes = 0
    while text[i + hashes] == "#":
        hashes += 1
    j = i + hashes
    multi = text.startswith('"""', j)
    quote = '"""' if multi else '"'
    close = quote + "#" * hashes
    escape = "\\" + "#" * hashes
    j += len(quote)
    while j < n:
        if text.startswith(escape + "(", j):
            # An interpolation: skip to its matching parenthesis (strings inside it nest).
            j += len(escape) + 1
            depth = 1
            while j < n and depth:
                if text[j] == '"' or (text[j] == "#" and re.match(r"#+\"", text[j:])):
                    j = skip_string(text, j)
                    continue
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                j += 1
        elif text.startswith(escape, j):
            j += len(escape) + 1
        elif text.startswith(close, j):
            return j + len(close)
        elif text[j] == "\n" and not multi:
            return j  # an unterminated single-line string: stop at the line's end
        else:
            j += 1
    return n


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


class SourceFile:
    def __init__(self, path, module, folder, code):
        self.path, self.module, self.folder, self.code = path, module, folder, code
        self.imports = []  # (module, name or None, exported, line)
        self.decls = []  # (name, exported)


def load(sources):
    files = []
    for module in sorted(os.listdir(sources)):
        mdir = os.path.join(sources, module)
        if not os.path.isdir(mdir):
            continue
        for dirpath, dirnames, filenames in os.walk(mdir):
            dirnames[:] = sorted(d for d in dirnames if not d.endswith(".docc"))
            for name in sorted(filenames):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, mdir).split(os.sep)
                folder = module + "/" + (rel[0] if len(rel) > 1 else ".")
                with open(path, encoding="utf-8") as f:
                    code = strip_swift(f.read())
                files.append(SourceFile(path, module, folder, code))
    return files


def scan_declarations(sf):
    depth = 0
    code = sf.code
    for m in re.finditer(r"[{}]|" + DECL.pattern, code):
        tok = m.group(0)
        if tok == "{":
            depth += 1
            continue
        if tok == "}":
            depth -= 1
            continue
        kind, name = m.group(1), m.group(2)
        if depth != 0 or kind == "extension" or name in ("func", "var", "let", "subscript"):
            continue
        line_start = code.rfind("\n", 0, m.start()) + 1
        prefix = code[line_start : m.start()]
        # `import struct M.T` (`@_exported` or not) names a type another module declares.
        if PRIVATE.search(prefix) or IMPORT_KIND.search(prefix):
            continue
        sf.decls.append((name, bool(EXPORTED.search(prefix))))


def scan_imports(sf):
    for m in IMPORT.finditer(sf.code):
        attrs, kind, module, name = m.group(1), m.group(2), m.group(3), m.group(4)
        sf.imports.append((module, name if kind else None, "@_exported" in attrs, line_of(sf.code, m.start())))


KEYWORDS = set(
    """associatedtype class deinit enum extension fileprivate func import init inout internal let open
    operator private precedencegroup protocol public rethrows static struct subscript typealias var break
    case catch continue default defer do else fallthrough for guard if in repeat return throw switch where
    while as Any false is nil self Self super true try throws async await actor package some any
    """.split()
)


def analyse(sources):
    files = load(sources)
    modules = sorted({f.module for f in files})
    for sf in files:
        scan_declarations(sf)
        scan_imports(sf)

    # name -> [(module, folder, exported)]
    declared = defaultdict(list)
    for sf in files:
        for name, exported in sf.decls:
            declared[name].append((sf.module, sf.folder, exported, sf.path))

    # Module re-exports: module -> [(module, name or None)]
    reexports = defaultdict(set)
    for sf in files:
        for mod, name, exported, _ in sf.imports:
            if exported and mod in modules:
                reexports[sf.module].add((mod, name))

    def visible(mod, name, seen=None):
        """Modules whose exported declarations are visible through importing `mod` (name filter)."""
        seen = seen or set()
        if mod in seen:
            return set()
        seen.add(mod)
        out = {(mod, None)}
        for sub, only in reexports.get(mod, ()):
            out |= {(m, only or n) for m, n in visible(sub, name, seen)}
        return out

    module_edges = {}  # (a, b) -> example
    folder_edges = {}
    for sf in files:
        vis = set()
        for mod, name, _, line in sf.imports:
            if mod not in modules or mod == sf.module:
                continue
            module_edges.setdefault((sf.module, mod), f"{sf.path}:{line}: import {mod}")
            for m, only in visible(mod, None):
                vis.add((m, name or only))
        for m in IDENT.finditer(sf.code):
            ident = m.group(1)
            if ident in KEYWORDS or ident not in declared:
                continue
            before = sf.code[: m.start()].rstrip(" \t")
            qualifier = None
            if before.endswith("."):
                q = re.search(r"([A-Za-z_]\w*)\s*\.$", before)
                if not q or q.group(1) not in modules:
                    continue
                qualifier = q.group(1)
            for mod, folder, exported, path in resolve(ident, sf, declared[ident], vis, qualifier):
                if folder != sf.folder:
                    folder_edges.setdefault(
                        (sf.folder, folder), f"{sf.path}:{line_of(sf.code, m.start())}: {ident}"
                    )
    folders = sorted({f.folder for f in files})
    return modules, folders, module_edges, folder_edges


def resolve(ident, sf, candidates, vis, qualifier):
    """The declarations `ident` names in `sf`: its own module's first, else visible imported ones."""
    if qualifier is None or qualifier == sf.module:
        own = [c for c in candidates if c[0] == sf.module]
        if own:
            return own
        if qualifier == sf.module:
            return []
    out = []
    for c in candidates:
        mod, _, exported, _ = c
        if not exported or (qualifier and mod != qualifier):
            continue
        if (mod, None) in vis or (mod, ident) in vis:
            out.append(c)
    return out


def cycles(nodes, edges):
    """Strongly connected components with more than one node (Tarjan), each sorted."""
    succ = defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        work = [(v, iter(succ[v]))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ[w])))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(out)


def print_graph(title, edges):
    print(f"{title} ({len(edges)} edges):")
    for (a, b), example in sorted(edges.items()):
        print(f"  {a} -> {b}    ({example})")


def print_cycles(title, comps, edges):
    for comp in comps:
        members = set(comp)
        print(f"{title} cycle: {', '.join(comp)}")
        for (a, b), example in sorted(edges.items()):
            if a in members and b in members:
                print(f"    {a} -> {b}    ({example})")


def print_dot(modules, folders, module_edges, folder_edges, module_cycles, folder_cycles):
    def in_cycle(a, b, comps):
        return any(a in c and b in c for c in comps)

    print("digraph layers {")
    print("  rankdir=BT; node [shape=box, fontsize=10];")
    for mod in modules:
        print(f'  subgraph "cluster_{mod}" {{ label="{mod}";')
        for folder in folders:
            if folder.split("/")[0] == mod:
                print(f'    "{folder}";')
        print("  }")
    for a, b in sorted(folder_edges):
        color = ' [color=red, penwidth=2]' if in_cycle(a, b, folder_cycles) else ""
        print(f'  "{a}" -> "{b}"{color};')
    print('  subgraph "cluster_modules" { label="modules";')
    for mod in modules:
        print(f'    "module {mod}" [label="{mod}", shape=ellipse];')
    print("  }")
    for a, b in sorted(module_edges):
        color = ' [color=red, penwidth=2]' if in_cycle(a, b, module_cycles) else ""
        print(f'  "module {a}" -> "module {b}"{color};')
    print("}")


def long_files(sources, limit):
    found = []
    for dirpath, dirnames, filenames in os.walk(sources):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".swift"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    count = sum(1 for _ in f)
                if count > limit:
                    found.append((count, path))
    return sorted(found, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=None, help="a Sources folder, or a folder holding one (default: ./Sources)")
    ap.add_argument("--dot", action="store_true", help="print Graphviz (dot) instead of text")
    ap.add_argument("--cycles-only", action="store_true", help="print only the cycles")
    ap.add_argument("--long", nargs="?", const=400, type=int, metavar="N", help="also list files over N lines")
    args = ap.parse_args()

    root = args.root or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    sources = os.path.join(root, "Sources") if os.path.isdir(os.path.join(root, "Sources")) else root
    if not os.path.isdir(sources):
        print(f"layers: no such folder {sources}", file=sys.stderr)
        return 2
    sources = os.path.relpath(sources)

    modules, folders, module_edges, folder_edges = analyse(sources)
    module_cycles = cycles(modules, module_edges)
    folder_cycles = cycles(folders, folder_edges)
    status = 1 if module_cycles or folder_cycles else 0

    if args.dot:
        print_dot(modules, folders, module_edges, folder_edges, module_cycles, folder_cycles)
    else:
        if not args.cycles_only:
            print_graph("modules", module_edges)
            print()
            print_graph("folders", folder_edges)
            print()
        print_cycles("module", module_cycles, module_edges)
        print_cycles("folder", folder_cycles, folder_edges)
        print(
            f"layers: {len(modules)} modules, {len(folders)} folders, "
            f"{len(module_cycles)} module cycles, {len(folder_cycles)} folder cycles",
            file=sys.stderr,
        )
    if args.long is not None:
        found = long_files(sources, args.long)
        for count, path in found:
            print(f"{count:6d} {path}")
        print(f"layers: {len(found)} files over {args.long} lines", file=sys.stderr)
        if found:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
