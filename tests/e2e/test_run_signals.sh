#!/usr/bin/env bash
# aiprof's threads never take the program's signals (issue 27, defect 4):
# prog_sigwait blocks SIGTERM, sends it to its own process and takes it
# with sigwait, then with a signalfd, under `aiprof run` with the host
# sampler and OSRT on (the writer, the sampler; the preload's window thread
# with --delay).  Before, the kernel handed the signal to one of aiprof's
# threads, which did not block it, and the program died of it (status 143).
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_run_signals_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PROG="$BUILD/bin/prog_sigwait"

for how in sigwait signalfd; do
  for opts in "--host-sys cpu,mem,osrt" "--delay 0.001 --host-sys cpu"; do
    rm -rf "$TMP/run"
    mkdir "$TMP/run"
    # shellcheck disable=SC2086
    if ! "$BUILD/bin/aiprof" run $opts --dir "$TMP/run" -- "$PROG" $how \
        >"$TMP/out" 2>"$TMP/err"; then
      echo "prog_sigwait $how under aiprof run $opts: status $?"
      cat "$TMP/out" "$TMP/err"
      exit 1
    fi
    grep -q "took signal 15 (SIGTERM)" "$TMP/out"
  done
done
echo "test_run_signals: ok"
