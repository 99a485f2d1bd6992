#!/usr/bin/env python3
"""The layer rules that #include lines can show.

1. No include cycle through a src/core file: builds the graph of
   `#include "x.h"` edges over the library's own files (src/**, include/),
   resolving a name the way the build does (the including file's folder,
   then the library's include folders), and reports every cycle that passes
   through a file of src/core.
2. src/analysis holds no I/O format: none of its files includes <jansson.h>
   (JSON is read in src/raw, src/result and src/cluster, written in src/export).
3. src/dynamic knows a session only through its boundary header: none of its
   files includes session_int.h.
4. Every include between two folders is an edge of ALLOWED, the matrix of
   which folder may include which (issue 28 point 4): the data flows record
   -> raw -> analysis -> export -> result -> cluster -> insight -> cli, and
   an include goes down that flow, never up (nothing outside a collector's
   folder includes a file of src/collect: the core reaches the collectors
   through core/collector.h and the table the build generates).  Each
   folder under src/collect gets the collectors' row without an edit here.
   A folder the matrix does not know is an error too, so that a new folder
   gets its row.  EXCEPTIONS names the
   single file-to-header edges that break the matrix today, each with why.
   A header in PRIVATE is for its own folder only (analysis_int.h: what
   only src/analysis uses of the model; exporters read model.h).
Exit status 1 if any rule is broken.

Usage: scripts/check_includes.py [SOURCE_DIR]
"""
import os
import re
import sys

INCLUDE_DIRS = ["include", "src", "src/common", "src/raw", "src/core", "src/dynamic",
                "src/analysis", "src/result", "src/cluster", "src/export", "src/insight",
                "src/cli", "python/_C"]
# The folders of the matrix: a file belongs to the longest that holds it.
# Every folder under src/collect is a collector's (docs/ADD_A_BACKEND.md):
# its row comes without an edit here, so adding a back end touches its
# folder and CMake only.
COLLECT = "src/collect"


def collector_folders(root):
    top = os.path.join(root, COLLECT)
    names = sorted(os.listdir(top)) if os.path.isdir(top) else []
    return [COLLECT + "/" + n for n in names if os.path.isdir(os.path.join(top, n))]


_BASE = ["include", "src/common"]
# folder -> the folders its files may include (its own always).  Read a row
# as "may know of": a row lists only what lies below it in the data flow.
ALLOWED = {
    "include": [],
    "src/common": ["include"],
    "src/raw": _BASE,
    "src/core": _BASE + ["src/raw"],
    "src/dynamic": _BASE + ["src/core"],
    "src/analysis": _BASE + ["src/raw"],
    "src/export": _BASE + ["src/analysis"],
    "src/result": _BASE + ["src/raw", "src/analysis", "src/export"],
    # advise / compare on a job use `aiprof cluster`'s reading and rules
    # (one implementation, docs/ADVISE.md "Several directories")
    "src/insight": _BASE + ["src/analysis", "src/export", "src/result", "src/cluster"],
    "src/cluster": _BASE + ["src/export"],
    "src/cli": _BASE,
    "src/preload": _BASE,
    "python/_C": ["include"],
    "adapters": ["include", "python/_C"],
}
# A collector knows the core (collector.h, device.h, recorder.h) and the
# raw format, never another collector; no row but its own lists a
# collector: the core reaches them through the table the build generates.
COLLECTOR_ROW = _BASE + ["src/core", "src/raw"]
# A folder's private header -> the folder whose files alone may include it
# (tests may include any header).
PRIVATE = {
    "src/analysis/analysis_int.h": "src/analysis",
}
# (including file, included file) -> why the matrix is broken there.
EXCEPTIONS = {
    ("src/result/reports.c", "src/insight/insight.h"):
        "the summary's Advice section runs advise's rules (to go: advise hands "
        "the summary its text through result's API)",
}
CHECKED = "src/core/"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.M)
# (folder, header it must not include, why)
FORBIDDEN = [("src/analysis/", "jansson.h", "src/analysis parses no JSON"),
             ("src/dynamic/", "session_int.h", "src/dynamic uses session_control.h")]


def library_files(root, tops=("src", "include")):
    for top in tops:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".c", ".h", ".cpp")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def resolve(root, including, name):
    for folder in [os.path.dirname(including)] + INCLUDE_DIRS:
        candidate = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None  # a system or third-party header


def include_graph(root, tops=("src", "include")):
    graph = {}
    for f in library_files(root, tops):
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


def folder_of(path):
    """The matrix's folder holding `path`, or None."""
    best = None
    for folder in ALLOWED:
        if (path + "/").startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def matrix_breaks(root):
    """Messages for every include that is no edge of ALLOWED."""
    for c in collector_folders(root):
        ALLOWED.setdefault(c, COLLECTOR_ROW)
    out = []
    graph = include_graph(root, ("src", "include", "python/_C", "adapters"))
    for f in sorted(graph):
        a = folder_of(f)
        if a is None:
            out.append("%s is in no folder of the matrix (add its row to ALLOWED)" % f)
            continue
        for target in graph[f]:
            b = folder_of(target)
            if target in PRIVATE and PRIVATE[target] != a:
                out.append("%s includes %s: it is private to %s (PRIVATE in %s)"
                           % (f, target, PRIVATE[target], "scripts/check_includes.py"))
                continue
            if b == a or b in ALLOWED[a] or (f, target) in EXCEPTIONS:
                continue
            out.append("%s includes %s: %s may not include %s (ALLOWED in %s)"
                       % (f, target, a, b or "a file outside the matrix",
                          "scripts/check_includes.py"))
    return out


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
    broken = 0
    for f in library_files(root):
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            names = ANY_INCLUDE.findall(fh.read())
        for folder, header, why in FORBIDDEN:
            if f.startswith(folder) and any(os.path.basename(n) == header for n in names):
                print("%s includes %s (%s)" % (f, header, why))
                broken += 1
    for message in matrix_breaks(root):
        print(message)
        broken += 1
    print("layer rules: %d broken" % broken)
    return 1 if cycles or broken else 0


if __name__ == "__main__":
    sys.exit(main())
