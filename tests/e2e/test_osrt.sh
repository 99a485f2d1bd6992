#!/usr/bin/env bash
# host_sys OSRT end to end (docs/OSRT.md): prog_osrt profiles itself with
# the C API (threshold 0: every call, and the default 10 ms threshold),
# then runs under `aiprof run --host-sys osrt`, also as a stripped copy;
# check_osrt.py compares the recorded calls with what the program
# measured.  Bad input: a threshold that is not a number (a warning, the
# default used, the program unaffected), a bad --host-sys list.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_osrt_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CHECK="/usr/bin/python3 $SRC/tests/e2e/check_osrt.py"
N=500

# In-process, every call, 4 threads x N preads.
AIPROF_OSRT_THRESHOLD_NS=0 "$BUILD/bin/prog_osrt" "$TMP/all" $N >"$TMP/all.json"
dir=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dir"])' "$TMP/all.json")
"$BUILD/bin/aiprof" analyse "$dir" >/dev/null
$CHECK "$dir" "$TMP/all.json" all
"$BUILD/bin/aiprof" summary "$dir" >"$TMP/summary.txt"
grep -q "^OS runtime: " "$TMP/summary.txt"
grep -Eq " $((4 * N)) +0 .* pread$" "$TMP/summary.txt"
"$BUILD/bin/aiprof" summary "$dir" --html "$TMP/summary.html" >/dev/null
grep -q '<table id="osrt">' "$TMP/summary.html"

# The default threshold (10 ms): only the sleeps and the contended lock.
env -u AIPROF_OSRT_THRESHOLD_NS "$BUILD/bin/prog_osrt" "$TMP/thr" 50 >"$TMP/thr.json"
dir=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dir"])' "$TMP/thr.json")
"$BUILD/bin/aiprof" analyse "$dir" >/dev/null
$CHECK "$dir" "$TMP/thr.json" threshold

# Under aiprof run, the program unchanged; and a stripped copy of it.
cp "$BUILD/bin/prog_osrt" "$TMP/prog_stripped"
strip --strip-all "$TMP/prog_stripped"
for prog in "$BUILD/bin/prog_osrt" "$TMP/prog_stripped"; do
  rm -rf "$TMP/run"
  mkdir "$TMP/run"
  AIPROF_OSRT_THRESHOLD_NS=0 "$BUILD/bin/aiprof" run --host-sys osrt --dir "$TMP/run" -- \
    "$prog" - $N >"$TMP/run.out" 2>"$TMP/run.err"
  head -n 1 "$TMP/run.out" >"$TMP/run.json" # then aiprof run's own lines
  $CHECK "$(ls -d "$TMP"/run/*_ascend_pt)" "$TMP/run.json" all
done

# Bad input: the program runs on, the warning names the problem.
AIPROF_OSRT_THRESHOLD_NS=soon env -u AIPROF_QUIET "$BUILD/bin/prog_osrt" "$TMP/bad" 10 >"$TMP/bad.json" 2>"$TMP/bad.err" ||
  { cat "$TMP/bad.err"; exit 1; }
grep -q 'AIPROF_OSRT_THRESHOLD_NS="soon" is not a number' "$TMP/bad.err" ||
  { echo "no warning for a bad threshold:"; cat "$TMP/bad.err"; exit 1; }
if "$BUILD/bin/aiprof" run --host-sys osrt,gpu -- true 2>"$TMP/usage.err"; then
  echo "a bad --host-sys list was accepted"; exit 1
fi
grep -q "not 'osrt,gpu'" "$TMP/usage.err"
echo "test_osrt: ok"
