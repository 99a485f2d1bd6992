#!/usr/bin/env python3
"""speedscope's Trace Event importer, ported line for line to count its
"Tried to end ..." warnings without node, esbuild or speedscope's source.

tests/e2e/check_speedscope.sh runs speedscope's own importer but needs a
speedscope checkout and esbuild, which the project does not vendor, so
ctest cannot run it.  This port of src/import/trace-event.ts (speedscope
commit 3613918, the B/E/X path of eventListToProfileGroup: partition by
(pid, tid), rebase on the lowest ts, X events sorted by ts then longer dur
first and split into B/E queues, the queue choice of
selectQueueToTakeFromNext, the E-queue swap that prefers the stack top's key
then its name, and tryToLeaveFrame's checks) lets the tests do what a user
dragging trace_view.json into speedscope does.  Like JavaScript, it reads
every ts and dur as a float64: absolute epoch microseconds lose sub-µs
precision there, which is why Kineto's form (ts relative to
baseTimeNanoseconds) exists (docs/RESULT_LAYOUT.md).

Usage: speedscope_port.py TRACE_OR_RESULT_DIR...  (exit 1 on any warning)
Importable: tried_to_end(events) -> list of warning texts.
"""
import json
import os
import sys


def _event_id(e):
    """getEventId: the name, plus the args as JSON when there are any."""
    key = str(e.get("name") or "(unnamed)")
    if e.get("args"):
        key += " " + json.dumps(e["args"], separators=(",", ":"), ensure_ascii=False)
    return key


def _dur(x):
    d = x.get("dur")
    if d is None:
        d = x.get("tdur")
    return float(d) if d is not None else 0.0


def _queues(events):
    """convertToEventQueues: ts as float64, rebased on the lowest."""
    first = min(float(e["ts"]) for e in events)
    begins, ends, xs = [], [], []
    for e in events:
        e = dict(e, ts=float(e["ts"]) - first)
        {"B": begins, "E": ends, "X": xs}[e["ph"]].append(e)
    xs.sort(key=lambda x: (x["ts"], -_dur(x)))  # stable, as Array.prototype.sort
    for x in xs:
        begins.append(dict(x, ph="B"))
        ends.append(dict(x, ph="E", ts=x["ts"] + _dur(x)))
    begins.sort(key=lambda e: e["ts"])
    ends.sort(key=lambda e: e["ts"])
    return begins, ends


def _take_b(begins, ends, bi, ei):
    """selectQueueToTakeFromNext: True for the B queue."""
    if ei == len(ends):
        return True
    if bi == len(begins):
        return False
    b, e = begins[bi], ends[ei]
    if b["ts"] != e["ts"]:
        return b["ts"] < e["ts"]
    return _event_id(b) == _event_id(e)


def _track(events, warnings):
    begins, ends = _queues(events)
    stack = []
    bi = ei = 0
    while bi < len(begins) or ei < len(ends):
        if _take_b(begins, ends, bi, ei):
            stack.append(begins[bi])
            bi += 1
            continue
        if stack:  # prefer an E of the same ts matching the top by key, then by name
            top = stack[-1]
            for match in (lambda e: _event_id(e) == _event_id(top),
                          lambda e: e.get("name") == top.get("name")):
                i = ei + 1
                while i < len(ends) and not ends[i]["ts"] > ends[ei]["ts"]:
                    if match(ends[i]):
                        ends[ei], ends[i] = ends[i], ends[ei]
                        break
                    i += 1
                else:
                    continue
                break
        e = ends[ei]
        ei += 1
        if not stack:
            warnings.append(f'Tried to end frame "{_event_id(e)}", but the stack was empty')
            continue
        b = stack[-1]
        if e.get("name") != b.get("name"):
            warnings.append(f'ts={e["ts"]}: Tried to end "{_event_id(e)}" when '
                            f'"{_event_id(b)}" was on the top of the stack')
            continue
        if _event_id(e) != _event_id(b):
            warnings.append(f'ts={e["ts"]}: Tried to end "{_event_id(e)}" when '
                            f'"{_event_id(b)}" was on the top of the stack. Ending it instead.')
        stack.pop()


def tried_to_end(events):
    """The "Tried to end" warnings speedscope prints importing `events`."""
    tracks = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") in ("B", "E", "X"):
            tracks.setdefault((int(e["pid"]), int(e["tid"])), []).append(e)
    warnings = []
    for key in sorted(tracks):
        _track(tracks[key], warnings)
    return warnings


def load_events(path):
    if os.path.isdir(path):
        path = os.path.join(path, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    with open(path) as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def main():
    status = 0
    for path in sys.argv[1:]:
        w = tried_to_end(load_events(path))
        print(f'{path}: {len(w)} "Tried to end" warnings')
        for line in w[:3]:
            print("  " + line[:300])
        status |= bool(w)
    return status


if __name__ == "__main__":
    sys.exit(main())
