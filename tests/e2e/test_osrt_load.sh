#!/usr/bin/env bash
# OSRT calls under load (issue 27, defect 8's load test for this kind):
# prog_osrt_load's 8 threads write 50,000 times each at threshold 0 into a
# 1 MiB buffer cap; every call is a recorded OSRT record or a counted
# dropped event, and the cap did refuse some.  The other kinds:
# tests/unit/test_threads.c (CPU), test_drop_accounting.c (device,
# communication, host samples).
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_osrt_load_XXXXXX)
trap 'rm -rf "$TMP"' EXIT

AIPROF_OSRT_THRESHOLD_NS=0 "$BUILD/bin/prog_osrt_load" "$TMP/r" 50000 >"$TMP/out.json"
dir=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dir"])' "$TMP/out.json")
"$BUILD/bin/aiprof" analyse "$dir" >/dev/null
/usr/bin/python3 - "$dir" "$TMP/out.json" <<'PY'
import glob, json, sys
d, seen = sys.argv[1], json.load(open(sys.argv[2]))
trace = json.load(open(glob.glob(d + "/ASCEND_PROFILER_OUTPUT/trace_view.json")[0]))
trace = trace["traceEvents"] if isinstance(trace, dict) else trace
pids = {e["pid"] for e in trace if e.get("ph") == "M" and e.get("name") == "process_name"
        and e["args"].get("name") == "OS Runtime API"}
calls = [e["name"] for e in trace if e.get("pid") in pids and e.get("ph") == "X"]
assert set(calls) <= {"write", "pthread_join"}, set(calls)
assert seen["writes"] == 8 * 50000, seen
assert seen["dropped"] > 0, seen
# the program's calls while recording: the writes and main's 8 pthread_joins
assert len(calls) + seen["dropped"] == seen["writes"] + 8, (len(calls), seen)
print("test_osrt_load: %d recorded + %d dropped = %d calls" % (len(calls), seen["dropped"],
                                                               seen["writes"] + 8))
PY
echo "test_osrt_load: ok"
