#!/usr/bin/env bash
# Every function host_sys OSRT intercepts, called from C (issue 26 §1: a
# wrapper whose "real" function was the program's own PLT entry called
# itself until the stack ran out): prog_osrt_every, a non-PIE program
# taking every function's address, calls each one, then dlopens
# libosrt_every.so (while recording: it is patched as it arrives) which
# calls each one again; in-process (C API) and under `aiprof run --host-sys
# osrt`.  Each function but dlopen (wrapped, never recorded) must be
# recorded at least twice: once per object.  The Python side is
# tests/python/test_osrt.py.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_osrt_every_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
LIB="$BUILD/lib/libosrt_every.so"

check() { # result directory
  "$BUILD/bin/aiprof" analyse "$1" >/dev/null
  /usr/bin/python3 - "$1" "$SRC/src/collect/osrt/osrt_int.h" <<'PY'
import collections, glob, json, re, sys
d, header = sys.argv[1], open(sys.argv[2]).read()
names = re.findall(r"^\s+X\((\w+),", header, re.M) + [
    "pthread_mutex_lock", "open", "open64", "openat", "openat64"]
trace = json.load(open(glob.glob(d + "/ASCEND_PROFILER_OUTPUT/trace_view.json")[0]))
trace = trace["traceEvents"] if isinstance(trace, dict) else trace
pids = {e["pid"] for e in trace if e.get("ph") == "M" and e.get("name") == "process_name"
        and e["args"].get("name") == "OS Runtime API"}
seen = collections.Counter(e["name"] for e in trace if e.get("pid") in pids and e.get("ph") == "X")
missing = {n: seen[n] for n in names if seen[n] < 2}
assert len(names) == 44, len(names)
assert not missing, "recorded fewer than twice: %s" % missing
print("test_osrt_every: %d functions recorded from the program and the library" % len(names))
PY
}

AIPROF_OSRT_THRESHOLD_NS=0 "$BUILD/bin/prog_osrt_every" "$TMP/in" "$LIB" >"$TMP/in.out" ||
  { echo "prog_osrt_every failed (status $?)"; exit 1; }
check "$(head -n 1 "$TMP/in.out")"

mkdir "$TMP/run"
AIPROF_OSRT_THRESHOLD_NS=0 "$BUILD/bin/aiprof" run --host-sys osrt --dir "$TMP/run" -- \
  "$BUILD/bin/prog_osrt_every" - "$LIB" >"$TMP/run.out" 2>"$TMP/run.err" ||
  { echo "under aiprof run: status $?"; cat "$TMP/run.err"; exit 1; }
check "$(ls -d "$TMP"/run/*_ascend_pt)"
echo "test_osrt_every: ok"
