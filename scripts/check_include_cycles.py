#!/usr/bin/env python3
"""Include cycles among src/core files.

Builds the graph of `#include "x.h"` edges over the library's own files
(src/**, include/), resolving a name the way the build does (the including
file's folder, then the library's include folders), and reports every cycle
that passes through a file of src/core.  Exit status 1 if there is one.

Usage: scripts/check_include_cycles.py [SOURCE_DIR]
"""
import os
import re
import sys

INCLUDE_DIRS = ["include", "src", "src/common", "src/raw", "src/core", "src/dynamic",
                "src/analysis", "src/export"]
CHECKED = "src/core/"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def library_files(root):
    for top in ("src", "include"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def resolve(root, including, name):
    for folder in [os.path.dirname(including)] + INCLUDE_DIRS:
        candidate = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None  # a system or third-party header


def include_graph(root):
    graph = {}
    for f in library_files(root):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            names = INCLUDE.findall(fh.read())
        graph[f] = sorted({r for r in (resolve(root, f, n) for n in names) if r})
    return graph


def strongly_connected(graph):
    """Tarjan's algorithm, iterative: the components of `graph`."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    for start in graph:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            succ = graph.get(node, [])
            if i < len(succ):
                work.append((node, i + 1))
                nxt = succ[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                comps.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return comps


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    graph = include_graph(root)
    core = [f for f in graph if f.startswith(CHECKED)]
    edges = sum(len(graph[f]) for f in core)
    cycles = [sorted(c) for c in strongly_connected(graph)
              if any(f.startswith(CHECKED) for f in c)
              and (len(c) > 1 or c[0] in graph.get(c[0], []))]
    for c in cycles:
        print("include cycle through src/core: " + " <-> ".join(c))
    print("src/core: %d files, %d include edges, %d cycles" % (len(core), edges, len(cycles)))
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
