"""perfetto_check.py — decode a trace.perfetto-trace with Perfetto's own
published schema (the `perfetto` PyPI package's perfetto_trace_pb2) and
check it against trace_view.json of the same result directory (written in
torch_npu's form by the same analysis):

- every packet parses as a perfetto.protos.Trace;
- per sequence, the state a reader keeps is rebuilt as Perfetto does:
  incremental state cleared by sequence_flags, trace_packet_defaults
  (timestamp clock, default track), the incremental clock of the
  ClockSnapshot (which must start where the trace clock does: times are
  the model's ns unchanged), interned event names and categories;
- slices: BEGIN/END pairs per track, in time order, nest (a child ends
  before its parent), and the multiset of (process pid, track name, name,
  start ns, end ns) equals trace_view.json's X events exactly (the JSON's
  3-decimal µs are exact ns);
- instants and counters: the same per (pid, track / series, name, ts),
  counter values to the JSON's 3 decimals; mstx ranges (JSON b/e pairs);
- flows: each id leaves exactly one slice and ends at exactly one, and the
  (from, to) slice keys equal the JSON's flow pairs;
- args: the debug annotations of each host slice (ops, annotations, mstx
  ranges, Python functions), communication op and OS runtime call, their names and string values resolved
  through the sequence's interned tables, equal the JSON event's "args"
  (the slices' multiset above includes them).

Usable as a module (check(result_dir) → counts) and as a script:
    perfetto_check.py RESULT_DIR...   (exit 0 ok, 1 mismatch, 77 no perfetto)
"""
import collections
import json
import os
import sys

SKIP = 77


def load_schema():
    """perfetto_trace_pb2, or None (with the reason) when not installed."""
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    except Exception as e:  # ImportError, or protobuf too old for the module
        return None, f"the perfetto package's protobuf schema is not importable: {e}"
    return pb, None


def ns_of(ts):
    """A JSON ts / dur (torch_npu's "<µs>.<3 digits>" string or number) → ns."""
    s = ts if isinstance(ts, str) else repr(ts)
    neg = s.startswith("-")
    if neg:
        s = s[1:]
    whole, _, frac = s.partition(".")
    frac = (frac + "000")[:3]
    assert len(s.partition(".")[2]) <= 3, f"ts {ts!r} has more than 3 decimals"
    v = int(whole) * 1000 + int(frac)
    return -v if neg else v


class Decoded:
    def __init__(self):
        self.tracks = {}          # uuid -> TrackDescriptor
        self.events = []          # (order, track, ts, type, name, cats, flows, terms, value)
        self.packets = 0


def decode(path, pb):
    with open(path, "rb") as f:
        data = f.read()
    trace = pb.Trace()
    trace.ParseFromString(data)
    d = Decoded()
    d.bytes = len(data)
    state = {}
    TE = pb.TrackEvent
    for order, pkt in enumerate(trace.packet):
        d.packets += 1
        seq = pkt.trusted_packet_sequence_id
        if pkt.HasField("track_descriptor"):
            td = pkt.track_descriptor
            assert td.uuid not in d.tracks, f"track {td.uuid} described twice"
            d.tracks[td.uuid] = td
        st = state.setdefault(seq, {"names": {}, "cats": {}, "clock": None, "track": None,
                                    "inc": {}, "cleared": False, "anames": {}, "avals": {}})
        if pkt.sequence_flags & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
            st.update(names={}, cats={}, inc={}, cleared=True, clock=None, track=None,
                      anames={}, avals={})
        if pkt.HasField("trace_packet_defaults"):
            df = pkt.trace_packet_defaults
            if df.HasField("timestamp_clock_id"):
                st["clock"] = df.timestamp_clock_id
            if df.HasField("track_event_defaults") and \
                    df.track_event_defaults.HasField("track_uuid"):
                st["track"] = df.track_event_defaults.track_uuid
        if pkt.HasField("clock_snapshot"):
            boot = [c.timestamp for c in pkt.clock_snapshot.clocks if c.clock_id == 6]
            for c in pkt.clock_snapshot.clocks:
                if c.is_incremental:
                    assert boot and boot[0] == c.timestamp, \
                        "the incremental clock does not start where the trace clock does"
                    assert c.unit_multiplier_ns in (0, 1), "not 1 ns units"
                    st["inc"][c.clock_id] = c.timestamp
        if pkt.HasField("interned_data"):
            assert st["cleared"], f"sequence {seq} interns before clearing its state"
            for e in pkt.interned_data.event_names:
                st["names"][e.iid] = e.name
            for e in pkt.interned_data.event_categories:
                st["cats"][e.iid] = e.name
            for e in pkt.interned_data.debug_annotation_names:
                st["anames"][e.iid] = e.name
            for e in pkt.interned_data.debug_annotation_string_values:
                st["avals"][e.iid] = e.str.decode("utf-8")
        if not pkt.HasField("track_event"):
            continue
        ev = pkt.track_event
        clock = pkt.timestamp_clock_id if pkt.HasField("timestamp_clock_id") else st["clock"]
        if clock in st["inc"]:
            st["inc"][clock] += pkt.timestamp
            ts = st["inc"][clock]
        else:
            assert clock in (None, 6), f"packet on clock {clock} without a snapshot"
            ts = pkt.timestamp
        track = ev.track_uuid if ev.HasField("track_uuid") else st["track"]
        assert track in d.tracks, f"event on track {track} before (or without) its descriptor"
        if ev.HasField("name_iid"):
            assert ev.name_iid in st["names"], f"name iid {ev.name_iid} not interned on {seq}"
            name = st["names"][ev.name_iid]
        else:
            name = ev.name
        cats = [st["cats"][i] for i in ev.category_iids] + list(ev.categories)
        if ev.HasField("double_counter_value"):
            value = ev.double_counter_value
        elif ev.HasField("counter_value"):
            value = ev.counter_value
        else:
            value = None
        d.events.append((order, track, ts, ev.type, name, cats, list(ev.flow_ids),
                         list(ev.terminating_flow_ids), value, annotations(ev, st, seq)))
    return d


def annotations(ev, st, seq):
    """A TrackEvent's debug annotations as a dict (name → value), names and
    string values resolved through the sequence's interned tables."""
    out = {}
    for a in ev.debug_annotations:
        if a.HasField("name_iid"):
            assert a.name_iid in st["anames"], f"arg name iid {a.name_iid} not interned on {seq}"
            k = st["anames"][a.name_iid]
        else:
            k = a.name
        kind = a.WhichOneof("value")
        if kind == "string_value_iid":
            assert a.string_value_iid in st["avals"], \
                f"arg value iid {a.string_value_iid} not interned on {seq}"
            v = st["avals"][a.string_value_iid]
        else:
            v = getattr(a, kind)
        assert k not in out, f"arg {k} twice"
        out[k] = v
    return out


# The categories whose X events carry args in both files.
ARG_CATS = {"cpu_op", "user_annotation", "mstx", "python_function", "communication",
            "os_runtime"}


def args_key(cat, args):
    return tuple(sorted(args.items())) if cat in ARG_CATS else None


def track_key(d, uuid):
    """(pid, name) of a track: a thread's (pid, thread name), a named
    track's (its process's pid, its name)."""
    td = d.tracks[uuid]
    if td.HasField("thread"):
        return td.thread.pid, td.thread.thread_name
    if td.HasField("process"):
        return td.process.pid, ""
    parent = d.tracks[td.parent_uuid]
    assert parent.HasField("process"), f"track {td.name} has no process above it"
    return parent.process.pid, td.name


def slices_of(d, pb):
    """Per track, BEGIN/END paired as a reader does (time order, stack)."""
    TE = pb.TrackEvent
    per_track = collections.defaultdict(list)
    for e in d.events:
        if e[3] in (TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END):
            per_track[e[1]].append(e)
    out = []
    for track, evs in per_track.items():
        evs.sort(key=lambda e: (e[2], e[0]))
        stack = []
        for e in evs:
            if e[3] == TE.TYPE_SLICE_BEGIN:
                stack.append(e)
                continue
            assert stack, f"END without BEGIN on {track_key(d, track)} at {e[2]}"
            b = stack.pop()
            for parent in stack:  # nesting: inside every open slice
                assert parent[2] <= b[2], "child begins before its parent"
            out.append({"track": track, "key": track_key(d, track), "name": b[4],
                        "start": b[2], "end": e[2], "flows": b[6], "terms": b[7],
                        "cats": b[5], "args": b[9]})
        assert not stack, f"{len(stack)} slices never end on {track_key(d, track)}"
    return out


def json_model(path):
    with open(path) as f:
        evs = json.load(f)
    if isinstance(evs, dict):
        evs = evs["traceEvents"]
    tname = {}
    for e in evs:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            tname[(e["pid"], e["tid"])] = e["args"]["name"]
    return evs, tname


def check(result_dir, pb):
    """Compare the two files of result_dir; @return a dict of counts."""
    out = os.path.join(result_dir, "ASCEND_PROFILER_OUTPUT")
    d = decode(os.path.join(out, "trace.perfetto-trace"), pb)
    evs, tname = json_model(os.path.join(out, "trace_view.json"))
    TE = pb.TrackEvent
    sl = slices_of(d, pb)

    def key(e):
        return e["pid"], tname.get((e["pid"], e["tid"]), f"Thread {e['tid']}")

    want = collections.Counter()
    for e in evs:
        if e.get("ph") == "X":
            s = ns_of(e["ts"])
            want[key(e) + (e["name"], s, s + ns_of(e["dur"]),
                           args_key(e.get("cat"), e.get("args", {})))] += 1
    ranges = {}
    for e in evs:
        if e.get("ph") in ("b", "e"):
            ranges.setdefault(e["id"], {})[e["ph"]] = e
    want_ranges = collections.Counter(
        (r["b"]["pid"], r["b"]["name"], ns_of(r["b"]["ts"]), ns_of(r["e"]["ts"]))
        for r in ranges.values())
    got = collections.Counter()
    got_ranges = collections.Counter()
    for s in sl:
        if s["key"][1].startswith("mstx ranges"):
            got_ranges[(s["key"][0], s["name"], s["start"], s["end"])] += 1
        else:
            cat = s["cats"][0] if s["cats"] else None
            got[s["key"] + (s["name"], s["start"], s["end"], args_key(cat, s["args"]))] += 1
    assert got == want, f"slices differ: missing {list((want - got).items())[:5]}, " \
                        f"extra {list((got - want).items())[:5]}"
    assert got_ranges == want_ranges, "mstx ranges differ"

    want_i = collections.Counter(key(e) + (e["name"], ns_of(e["ts"]))
                                 for e in evs if e.get("ph") == "i")
    got_i = collections.Counter(track_key(d, e[1]) + (e[4], e[2])
                                for e in d.events if e[3] == TE.TYPE_INSTANT)
    assert got_i == want_i, f"instants differ: {list((want_i - got_i).items())[:3]} " \
                            f"{list((got_i - want_i).items())[:3]}"

    want_c = {}
    for e in evs:
        if e.get("ph") == "C":
            for k, v in e["args"].items():
                want_c.setdefault((e["pid"], f"{e['name']} {k}"), []).append(
                    (ns_of(e["ts"]), v))
    got_c = {}
    for e in d.events:
        if e[3] == TE.TYPE_COUNTER:
            got_c.setdefault(track_key(d, e[1]), []).append((e[2], e[8]))
    assert sorted(got_c) == sorted(want_c), \
        f"counter series differ: {sorted(set(want_c) ^ set(got_c))[:5]}"
    for k, w in want_c.items():
        g = sorted(got_c[k])
        w = sorted(w)
        assert [t for t, _ in g] == [t for t, _ in w], f"counter {k}: times differ"
        for (_, a), (_, b) in zip(g, w):
            assert abs(a - b) <= 0.0005 + 1e-9 * abs(b), f"counter {k}: {a} vs JSON {b}"

    # flows: one source and one end per id, the same pairs as the JSON's
    src, dst = {}, {}
    for s in sl:
        k = s["key"] + (s["start"],)
        for f in s["flows"]:
            assert f not in src, f"flow {f} leaves two slices"
            src[f] = k
        for f in s["terms"]:
            assert f not in dst, f"flow {f} ends at two slices"
            dst[f] = k
    assert set(src) == set(dst), f"flows without both ends: {sorted(set(src) ^ set(dst))[:5]}"
    got_f = collections.Counter((src[f], dst[f]) for f in src)
    # torch_npu's op → kernel id is the kernel's ts text, which two kernels
    # starting together share: the ends of one id pair in file order (each
    # flow's two ends are written one after the other)
    ends = {}
    for e in evs:
        if e.get("ph") in ("s", "f"):
            ends.setdefault((e["cat"], str(e["id"]), e.get("name")), {"s": [], "f": []})[
                e["ph"]].append(e)
    want_f = collections.Counter(
        (key(s) + (ns_of(s["ts"]),), key(f) + (ns_of(f["ts"]),))
        for p in ends.values() for s, f in zip(p["s"], p["f"]))
    assert got_f == want_f, f"flows differ: {list((want_f - got_f).items())[:3]} " \
                            f"{list((got_f - want_f).items())[:3]}"

    names = {}
    for td in d.tracks.values():
        if td.HasField("process"):
            names[td.process.pid] = td.process.process_name
    for e in evs:
        if e.get("ph") == "M" and e["name"] == "process_name":
            assert names.get(e["pid"]) == e["args"]["name"], \
                f"process {e['pid']}: {names.get(e['pid'])!r} vs {e['args']['name']!r}"
    n_json = sum(1 for e in evs if e.get("ph") in ("X", "i", "C", "b", "s"))
    n_args = sum(1 for s in sl if s["args"])
    return {"slices": len(sl), "slices_with_args": n_args, "instants": sum(want_i.values()),
            "counters": sum(len(v) for v in got_c.values()), "flows": len(src),
            "tracks": len(d.tracks), "bytes": d.bytes, "json_events": n_json}


def main(argv):
    pb, why = load_schema()
    if pb is None:
        print(f"SKIP: {why}")
        return SKIP
    for r in argv[1:]:
        print(r, check(r, pb))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
