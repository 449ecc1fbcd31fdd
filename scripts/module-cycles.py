#!/usr/bin/env python3
"""Lists the import cycles between the files of a crate's `src/`.

Usage: scripts/module-cycles.py crates/tender-core/src

Every `crate::a::b::…` path in a file (in `use` lines and inline, outside `#[cfg(test)]`
modules) is an arrow to the file of the longest module prefix that exists (`a/b.rs`,
`a/b/mod.rs`, `a.rs`…); `super::` paths are resolved the same way. Prints each strongly
connected group of two or more files with the arrows inside it, and exits 1 when there is one.
"""
import os
import re
import sys


def module_files(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs"):
                path = os.path.join(root, n)
                rel = os.path.relpath(path, src)[:-3].split(os.sep)
                if rel[-1] == "mod":
                    rel = rel[:-1]
                if rel == ["lib"] or rel == ["main"]:
                    rel = []
                files[tuple(rel)] = path
    return files


def production_text(path):
    text = open(path, encoding="utf-8").read()
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n(?:#\[[^\n]*\]\s*\n)*mod tests", text, re.M)
    text = text[: cut.start()] if cut else text
    # Comments and doc links name modules without importing them.
    return re.sub(r"//[^\n]*", "", text)


def targets(module, text, files):
    out = set()
    for m in re.finditer(r"\b(crate|super)((?:::[a-z_][a-z0-9_]*)+)", text):
        parts = [p for p in m.group(2).split("::") if p]
        base = [] if m.group(1) == "crate" else list(module[:-1])
        path = base + parts
        while path and tuple(path) not in files:
            path = path[:-1]
        if tuple(path) != module and tuple(path) in files and path:
            out.add(tuple(path))
    # `use crate::x::{a, b::c}` groups.
    for m in re.finditer(r"use crate::([a-z_:]*)\{([^}]*)\}", text):
        prefix = [p for p in m.group(1).split("::") if p]
        for item in m.group(2).split(","):
            item = item.strip().split(" as ")[0]
            path = prefix + [p for p in item.split("::") if p and p != "self"]
            while path and tuple(path) not in files:
                path = path[:-1]
            if path and tuple(path) != module:
                out.add(tuple(path))
    return out


def sccs(graph):
    index, low, stack, on, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            result.append(group)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return result


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "crates/tender-core/src"
    files = module_files(src)
    graph = {m: targets(m, production_text(p), files) for m, p in files.items()}
    # A folder's mod.rs only declares its files: arrows to children are not imports.
    for m in graph:
        graph[m] = {t for t in graph[m] if t[: len(m)] != m or not m or len(t) == len(m)}
        if m == ():
            graph[m] = set()
    cycles = [g for g in sccs(graph) if len(g) > 1]
    for g in cycles:
        print("cycle of %d files:" % len(g))
        for m in sorted(g):
            inside = sorted("/".join(t) for t in graph[m] if t in g)
            print("  %s -> %s" % (files[m], ", ".join(inside)))
    print("%d import cycle(s) among %d files of %s" % (len(cycles), len(files), src))
    sys.exit(1 if cycles else 0)


if __name__ == "__main__":
    main()
