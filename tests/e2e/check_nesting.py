#!/usr/bin/env python3
"""Checks that the slices of every thread track of a trace nest.

Usage: check_nesting.py [--max N] [--examples K] TRACE_OR_RESULT_DIR...

On one (pid, tid) track, any two complete slices must nest or be disjoint:
Perfetto, speedscope and the Chrome DevTools trace engine all draw a track
as one stack and mis-draw (or drop) a slice that starts inside another and
ends after it.  This counts such pairs: a.start < b.start < a.end < b.end.
Touching slices (b.start == a.end) and equal starts are nested/disjoint.

Form-agnostic, since trace_view.json has two forms: the top level may be a
bare JSON array of events (torch_npu's) or {"traceEvents": [...]}
(Kineto's); `ts` may be a string ("1700000000123456.789") or a number,
`dur` a number.  Times are read as exact decimals (never floats: absolute
epoch microseconds with 3 decimals do not fit a double) and compared as
integer nanoseconds, so a 1 ns overlap is found and a touch is not one.
'B'/'E' pairs on a track count as slices too; an 'E' with no open 'B' is
reported (speedscope's "Tried to end frame ... but stack was empty").

A result directory argument means its ASCEND_PROFILER_OUTPUT/trace_view.json.
Prints one line per file, plus examples; exits 1 if any file has more than
--max (default 0) mis-nested pairs or unmatched ends, 2 on unreadable input.
Importable: count_overlaps(events) -> (pairs, examples, unmatched_ends).
"""
import argparse
import bisect
import decimal
import json
import os
import sys
from collections import defaultdict

_CTX = decimal.Context(prec=60)


def _ns(v):
    """Exact integer ns of a µs value given as a string, int or Decimal."""
    if isinstance(v, bool) or v is None:
        raise ValueError(f"not a time: {v!r}")
    if isinstance(v, float):  # only if the caller parsed with floats
        v = repr(v)
    d = _CTX.multiply(decimal.Decimal(str(v).strip()), decimal.Decimal(1000))
    if not d.is_finite():
        raise ValueError(f"not a time: {v!r}")
    # More than 3 decimals: keep sub-ns order by scaling to a rational key.
    return d if d != d.to_integral_value() else int(d)


def load_events(path):
    """The event list of a trace file, with numbers as Decimals."""
    if os.path.isdir(path):
        path = os.path.join(path, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f, parse_float=decimal.Decimal)
    if isinstance(data, dict):
        data = data.get("traceEvents")
    if not isinstance(data, list):
        raise ValueError(f"{path}: neither a JSON array nor an object with traceEvents")
    return data


def _track_slices(events):
    """{(pid, tid): [(start, end, name)]}, and 'E' events with no 'B'."""
    tracks = defaultdict(list)
    open_b = defaultdict(list)
    unmatched = []
    for e in events:
        if not isinstance(e, dict):
            continue
        ph = e.get("ph")
        if ph not in ("X", "B", "E"):
            continue
        key = (str(e.get("pid")), str(e.get("tid")))
        ts = _ns(e["ts"])
        if ph == "X":
            dur = _ns(e.get("dur", 0))
            if dur < 0:
                raise ValueError(f"negative dur: {e}")
            tracks[key].append((ts, ts + dur, e.get("name", "")))
        elif ph == "B":
            open_b[key].append((ts, e.get("name", "")))
        elif open_b[key]:
            start, name = open_b[key].pop()
            tracks[key].append((start, ts, name))
        else:
            unmatched.append((key, ts, e.get("name", "")))
    return tracks, unmatched


def count_overlaps(events, examples=5, involved=None):
    """(number of partially overlapping slice pairs, up to `examples` of
    them as (track, outer, inner) tuples, 'E' events without a 'B').
    `involved`, a set, receives every slice in such a pair."""
    tracks, unmatched = _track_slices(events)
    pairs, found = 0, []
    for key, sl in tracks.items():
        # Start ascending, longer first: an enclosing slice precedes its children.
        sl.sort(key=lambda s: (s[0], -s[1]))
        active_ends = []   # sorted ends of the slices that are open at the cursor
        active = []        # the slices, parallel to active_ends
        for s in sl:
            # Drop what ended at or before this start (disjoint or touching).
            cut = bisect.bisect_right(active_ends, s[0])
            del active_ends[:cut]
            del active[:cut]
            # Still open and ending before s ends, having started no later:
            # they start before s (an equal start with an earlier end sorts
            # after s) and end inside it.
            k = bisect.bisect_left(active_ends, s[1])
            if k:
                bad = [a for a in active[:k] if a[0] < s[0]]
                pairs += len(bad)
                if involved is not None and bad:
                    involved.update((key,) + a for a in bad)
                    involved.add((key,) + s)
                for a in bad[:max(0, examples - len(found))]:
                    found.append((key, a, s))
            i = bisect.bisect_right(active_ends, s[1])
            active_ends.insert(i, s[1])
            active.insert(i, s)
    return pairs, found, unmatched


def _fmt(s):
    return f"{s[2]!r} [{s[0]}, {s[1]}] ns"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--max", type=int, default=0, help="mis-nested pairs allowed (default 0)")
    ap.add_argument("--examples", type=int, default=5)
    args = ap.parse_args(argv)
    status = 0
    for path in args.paths:
        try:
            events = load_events(path)
            involved = set()
            pairs, found, unmatched = count_overlaps(events, args.examples, involved)
        except (OSError, ValueError, KeyError, decimal.InvalidOperation) as exc:
            print(f"{path}: cannot check: {exc}", file=sys.stderr)
            status = 2
            continue
        print(f"{path}: {pairs} mis-nested slice pairs, {len(unmatched)} unmatched ends"
              + (f" ({len(involved)} slices involved)" if pairs else ""))
        for key, a, b in found:
            print(f"  pid {key[0]} tid {key[1]}: {_fmt(a)} overlaps {_fmt(b)}")
        for key, ts, name in unmatched[:args.examples]:
            print(f"  pid {key[0]} tid {key[1]}: 'E' of {name!r} at {ts} ns with no 'B'")
        if (pairs > args.max or unmatched) and status == 0:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
