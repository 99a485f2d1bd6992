#!/usr/bin/env bash
# `aiprof run` through exec (issue 27.6): the process aiprof run starts is
# profiled through its execs, and the image that runs to the end owns the
# result; wrappers that exec (env, shell scripts, pyenv-style shims) leave
# nothing behind.  Checked:
#   1. `#!/usr/bin/env python3` whose python3 on PATH is a pyenv-style shim
#      (a bash script that execs the real Python): the Python program's mstx
#      marks are in the one result directory;
#   2. the same script through the python3 PATH has here (a pyenv shim on
#      the build machines, else Debian's): skipped if that Python cannot
#      import the aiprof._C built here;
#   3. a C program exec'd by a shell script (`exec prog`): all its ticks;
#   4. a child started with fork + exec (bash -c 'prog; true'): not profiled
#      without --children (one result, the shell's, without ticks), and
#      profiled with it;
#   5. a program that marked steps, then execs another: both are results.
set -eu
BUILD=$1
AIPROF=$BUILD/bin/aiprof
TMP=$(mktemp -d /tmp/aiprof_run_exec_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
results() { ls -d "$1"/*_ascend_pt 2>/dev/null | wc -l; }
count() { # result dir, event name -> X/i events with that name in trace_view.json
  /usr/bin/python3 -c "
import glob,json,sys
t=json.load(open(glob.glob(sys.argv[1]+'/ASCEND_PROFILER_OUTPUT/trace_view.json')[0]))
t=t['traceEvents'] if isinstance(t,dict) else t
print(sum(1 for e in t if e.get('name')==sys.argv[2] and e.get('ph') in ('X','i','I')))" "$1" "$2"
}
check_one() { # out dir, log, what
  [ "$(results "$1")" = 1 ] || { cat "$2"; ls "$1"; fail "$3: $(results "$1") result directories, 1 expected"; }
  ! grep -q "ended before the trace was saved" "$2" || { cat "$2"; fail "$3: the trace was not saved"; }
  grep -q "events, 0 dropped, analysed" "$2" || { cat "$2"; fail "$3: no analysed result"; }
}

cat >"$TMP/marks.py" <<'PY'
#!/usr/bin/env python3
from aiprof import mstx
for i in range(5):
    mstx.mark("exec_chain_mark")
print("marks done")
PY
chmod +x "$TMP/marks.py"

# 1. a pyenv-style shim first on PATH: env -> bash shim -> Debian's python3
mkdir "$TMP/shims"
cat >"$TMP/shims/python3" <<'SH'
#!/usr/bin/env bash
set -e
program="${0##*/}"
exec /usr/bin/python3 "$@"
SH
chmod +x "$TMP/shims/python3"
PATH="$TMP/shims:$PATH" "$AIPROF" run --dir "$TMP/shim" -- "$TMP/marks.py" >"$TMP/shim.log" 2>&1 ||
  { cat "$TMP/shim.log"; fail "shim: aiprof run failed"; }
grep -q "marks done" "$TMP/shim.log" || fail "shim: the script did not run"
check_one "$TMP/shim" "$TMP/shim.log" "env + shim"
n=$(count "$(ls -d "$TMP"/shim/*_ascend_pt)" exec_chain_mark)
[ "$n" = 5 ] || fail "env + shim: $n of 5 marks"
echo "ok: #!/usr/bin/env python3 through a shim: 5 marks, one result"

# 2. the python3 this machine has on PATH
abi=$(ls "$BUILD"/python/aiprof/_C.cpython-*.so 2>/dev/null | sed -n 's/.*_C\.cpython-\([0-9]*\)-.*/\1/p' | head -1)
have=$(env python3 -c 'import sys; print("%d%d" % sys.version_info[:2])' 2>/dev/null || true)
if [ -n "$abi" ] && [ "$abi" = "$have" ]; then
  "$AIPROF" run --dir "$TMP/path" -- "$TMP/marks.py" >"$TMP/path.log" 2>&1 ||
    { cat "$TMP/path.log"; fail "PATH python3: aiprof run failed"; }
  check_one "$TMP/path" "$TMP/path.log" "PATH python3 ($(command -v python3))"
  n=$(count "$(ls -d "$TMP"/path/*_ascend_pt)" exec_chain_mark)
  [ "$n" = 5 ] || fail "PATH python3: $n of 5 marks"
  echo "ok: #!/usr/bin/env python3 with $(command -v python3): 5 marks, one result"
else
  echo "skipped: python3 on PATH is $have, aiprof._C is built for ${abi:-none}"
fi

# 3. a C program exec'd by a shell script
printf '#!/bin/sh\nexec "%s" 300\n' "$BUILD/bin/prog_ticker" >"$TMP/wrap.sh"
chmod +x "$TMP/wrap.sh"
"$AIPROF" run --dir "$TMP/wrap" -- "$TMP/wrap.sh" >"$TMP/wrap.log" 2>&1 ||
  { cat "$TMP/wrap.log"; fail "wrapper: aiprof run failed"; }
check_one "$TMP/wrap" "$TMP/wrap.log" "sh exec prog"
made=$(sed -n 's/^ticks //p' "$TMP/wrap.log")
n=$(count "$(ls -d "$TMP"/wrap/*_ascend_pt)" tick)
[ -n "$made" ] && [ "$n" = "$made" ] || fail "sh exec prog: $n ticks recorded of ${made:-?}"
echo "ok: sh script ending in exec prog: $n of $made ticks, one result"

# 4. fork + exec: the child is not profiled, unless --children
"$AIPROF" run --dir "$TMP/fork" -- bash -c "\"$BUILD/bin/prog_ticker\" 100; true" >"$TMP/fork.log" 2>&1 ||
  { cat "$TMP/fork.log"; fail "fork: aiprof run failed"; }
check_one "$TMP/fork" "$TMP/fork.log" "bash -c 'prog; true'"
n=$(count "$(ls -d "$TMP"/fork/*_ascend_pt)" tick)
[ "$n" = 0 ] || fail "fork + exec without --children: the child's $n ticks were recorded"
"$AIPROF" run --children --dir "$TMP/forkc" -- bash -c "\"$BUILD/bin/prog_ticker\" 100; true" \
  >"$TMP/forkc.log" 2>&1 || { cat "$TMP/forkc.log"; fail "--children: aiprof run failed"; }
[ "$(results "$TMP/forkc")" = 2 ] || { cat "$TMP/forkc.log"; fail "--children: $(results "$TMP/forkc") results, 2 expected"; }
echo "ok: fork + exec child: not profiled (one result, 0 ticks); with --children: two results"
# 5. steps, then exec: the first program's trace is kept, the second has its own
"$AIPROF" run --dir "$TMP/steps" -- "$BUILD/bin/prog_ticker" 0 3 60 --exec "$BUILD/bin/prog_ticker" 100 \
  >"$TMP/steps.log" 2>&1 || { cat "$TMP/steps.log"; fail "steps + exec: aiprof run failed"; }
[ "$(results "$TMP/steps")" = 2 ] || { cat "$TMP/steps.log"; fail "steps + exec: $(results "$TMP/steps") results, 2 expected"; }
! grep -q "ended before the trace was saved" "$TMP/steps.log" || { cat "$TMP/steps.log"; fail "steps + exec: a trace was not saved"; }
made=$(sed -n 's/^ticks //p' "$TMP/steps.log" | tail -1)
got=""
for d in "$TMP"/steps/*_ascend_pt; do got="$got $(count "$d" ProfilerStep#3)/$(count "$d" tick)"; done
case "$got" in
  *" 1/"*) ;; *) fail "steps + exec: no result with the first program's steps ($got)" ;;
esac
case "$got" in
  *" 0/$made"*) ;; *) fail "steps + exec: no result with the second program's $made ticks ($got)" ;;
esac
echo "ok: steps, then exec: two results (steps/ticks:$got)"
echo "PASS"
