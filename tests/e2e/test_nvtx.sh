#!/usr/bin/env bash
# End to end for the NVTX collector (src/collect/nvtx, docs/NVTX.md): a
# program using NVIDIA's NVTX v3 C API (tests/e2e/nvtx_c/nvtx_prog.c, built
# against the headers found on this machine; no CUDA needed):
#   1. unaware of aiprof, under `aiprof run`: every range and mark in
#      trace_view.json as mstx events with the NVTX domain, the push/pop
#      levels NVTX returns as a tool gives them (0 1 1 0), the statistic;
#   2. `aiprof run --no-mstx`: none of them (NVTX follows the mstx switch);
#   3. linked with libaiprof, its own session (mstx on): the same, with no
#      variable set by anyone but libaiprof itself;
#   4. AIPROF_NVTX=0: libaiprof and aiprof run leave NVTX alone, nothing recorded;
#   5. aiprof run sets NVTX_INJECTION64_PATH to libaiprof and keeps a value
#      the user set (another tool).
# Skips (exit 77) where nvtx_prog was not built (no NVTX headers).
set -eu
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd)
B=$BUILD/bin
if [ ! -x "$B/nvtx_prog" ] || [ ! -x "$B/nvtx_prog_linked" ]; then
  echo "SKIP: the NVTX test programs were not built (no nvtx3/nvToolsExt.h)"; exit 77
fi
CHECK="/usr/bin/python3 $SRC/tests/e2e/nvtx_c/check_nvtx.py"
TMP=$(mktemp -d /tmp/aiprof_nvtx_e2e_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
one_result() { find "$1" -maxdepth 1 -name "*_ascend_pt" | sort | head -1; }
fail() { echo "FAIL: $*"; exit 1; }
mstx_count() { # result dir -> number of mstx events in trace_view.json
  /usr/bin/python3 -c 'import json,sys
t=json.load(open(sys.argv[1]+"/ASCEND_PROFILER_OUTPUT/trace_view.json"))
e=t["traceEvents"] if isinstance(t,dict) else t
print(sum(1 for x in e if x.get("cat")=="mstx"))' "$1"
}

# 1. aiprof run, unaware program.
env -u NVTX_INJECTION64_PATH "$B/aiprof" run --dir "$TMP/r1" -- "$B/nvtx_prog" >"$TMP/r1.out" 2>"$TMP/r1.err" ||
  fail "aiprof run: $(cat "$TMP/r1.err")"
[ "$(grep -c '^levels 0 1 1 0$' "$TMP/r1.out")" = 3 ] || fail "push/pop levels: $(cat "$TMP/r1.out")"
$CHECK "$(one_result "$TMP/r1")" c || fail "aiprof run's trace"

# 2. --no-mstx: NVTX is mstx.
env -u NVTX_INJECTION64_PATH "$B/aiprof" run --no-mstx --dir "$TMP/r2" -- "$B/nvtx_prog" >"$TMP/r2.out" 2>&1 ||
  fail "aiprof run --no-mstx: $(cat "$TMP/r2.out")"
[ "$(mstx_count "$(one_result "$TMP/r2")")" = 0 ] || fail "NVTX recorded with --no-mstx"

# 3. Linked in, its own session.
mkdir "$TMP/r3"
env -u NVTX_INJECTION64_PATH NVTX_AIP_DIR="$TMP/r3" "$B/nvtx_prog_linked" >"$TMP/r3.out" 2>&1 ||
  fail "nvtx_prog_linked: $(cat "$TMP/r3.out")"
"$B/aiprof" analyse "$TMP/r3" -q >/dev/null || fail "analyse"
$CHECK "$(one_result "$TMP/r3")" c || fail "the linked program's trace"

# 4. AIPROF_NVTX=0: NVTX without a tool (its levels say so), nothing recorded.
mkdir "$TMP/r4"
env -u NVTX_INJECTION64_PATH AIPROF_NVTX=0 NVTX_AIP_DIR="$TMP/r4" "$B/nvtx_prog_linked" >"$TMP/r4.out" 2>&1 ||
  fail "nvtx_prog_linked with AIPROF_NVTX=0: $(cat "$TMP/r4.out")"
grep -q '^levels 0 1 1 0$' "$TMP/r4.out" && fail "NVTX had a tool with AIPROF_NVTX=0"
"$B/aiprof" analyse "$TMP/r4" -q >/dev/null || fail "analyse r4"
[ "$(mstx_count "$(one_result "$TMP/r4")")" = 0 ] || fail "NVTX recorded with AIPROF_NVTX=0"

# 5. The variable: set by aiprof run, the user's kept.
env -u NVTX_INJECTION64_PATH "$B/aiprof" run --dir "$TMP/r5" -- /usr/bin/env >"$TMP/r5.out" 2>&1 || true
grep -q "^NVTX_INJECTION64_PATH=/.*libaiprof\.so" "$TMP/r5.out" ||
  fail "NVTX_INJECTION64_PATH not set to libaiprof: $(grep NVTX_INJ "$TMP/r5.out")"
NVTX_INJECTION64_PATH=/mine.so "$B/aiprof" run --dir "$TMP/r5b" -- /usr/bin/env >"$TMP/r5b.out" 2>&1 || true
grep -q "^NVTX_INJECTION64_PATH=/mine.so$" "$TMP/r5b.out" || fail "the user's NVTX_INJECTION64_PATH was replaced"
env -u NVTX_INJECTION64_PATH AIPROF_NVTX=0 "$B/aiprof" run --dir "$TMP/r5c" -- /usr/bin/env >"$TMP/r5c.out" 2>&1 || true
grep -q "^NVTX_INJECTION64_PATH=" "$TMP/r5c.out" && fail "NVTX_INJECTION64_PATH set with AIPROF_NVTX=0"
echo "e2e nvtx: 5 passed, 0 failed"
