#!/usr/bin/env bash
# End to end for the OpenCL back end (src/collect/opencl) on a real OpenCL
# device (PoCL in CI): an OpenCL program unaware of aiprof under `aiprof
# run`, and the same program linked with -laiprof before -lOpenCL.
#   accuracy  device durations equal OpenCL's own profiling info, to the ns,
#             for every kind of command; kernels inside their host windows
#             within the error bound (<= 5 us); memory allocations and frees
#   threads   4 threads x 4 queues, with and without the app's own events:
#             every enqueue recorded once
#   reuse     kernels and queues released and created again at the same
#             addresses keep their own names and queues
#   errors    calls OpenCL rejects: the same error codes and out-parameters
#   bad       out-of-order queue, events released at once, a queue without
#             profiling: what the application sees is unchanged
#   batches   commands followed in batches: two queues (one out of order)
#             in turn, blocking reads as the only waits, pauses, a thread
#             exiting and a program ending with commands never waited for:
#             every enqueue recorded once, durations equal OpenCL's own
#   SIGKILL   the tasks recorded before the kill survive
#   no ICD    a program that finds no OpenCL platform still runs; the log
#             says why there is no device data
# Skips (exit 77) where the test programs were not built (no OpenCL headers
# or library) or no OpenCL device is usable.
set -eu
BUILD=$1 SRC=$2
B=$BUILD/bin
CHECK="/usr/bin/python3 $SRC/tests/e2e/opencl/check_opencl.py"
if [ ! -x "$B/ocl_prog" ] || [ ! -x "$B/ocl_dump" ]; then
  echo "SKIP: the OpenCL test programs were not built (no CL/cl.h or libOpenCL)"; exit 77
fi
probe=$("$B/ocl_prog" threads /dev/null 1 2>&1 || true)
case "$probe" in *"no platform"*|*failed*)
  echo "SKIP: no usable OpenCL device: $probe"; exit 77;;
esac
TMP=$(mktemp -d /tmp/aiprof_opencl_e2e_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
one_result() { ls -d "$1"/*_ascend_pt | head -1; }

# The reference: the program's results without aiprof.
for mode in accuracy bad reuse errors batches; do
  "$B/ocl_prog" $mode "$TMP/plain_$mode.txt" | grep checksum >"$TMP/plain_$mode.sum"
done

for mode in accuracy bad reuse errors threads batches; do
  args=""; [ $mode = threads ] && args=100
  # aiprof run, the program unaware of aiprof
  "$B/aiprof" run --dir "$TMP/run_$mode" -- "$B/ocl_prog" $mode "$TMP/run_$mode.txt" $args \
    >"$TMP/run_$mode.out" 2>&1
  d=$(one_result "$TMP/run_$mode")
  "$B/ocl_dump" "$d" >"$TMP/run_$mode.dump"
  $CHECK $mode run "$TMP/run_$mode.txt" "$TMP/run_$mode.dump" $args
  # linked in
  OCL_AIP_DIR="$TMP/linked_$mode" "$B/ocl_prog_linked" $mode "$TMP/linked_$mode.txt" $args \
    >"$TMP/linked_$mode.out" 2>&1
  d=$(one_result "$TMP/linked_$mode")
  "$B/ocl_dump" "$d" >"$TMP/linked_$mode.dump"
  $CHECK $mode linked "$TMP/linked_$mode.txt" "$TMP/linked_$mode.dump" $args
done
# Profiling changed nothing the programs computed or saw.
for mode in accuracy bad reuse batches; do
  grep checksum "$TMP/run_$mode.out" | cmp - "$TMP/plain_$mode.sum"
  grep checksum "$TMP/linked_$mode.out" | cmp - "$TMP/plain_$mode.sum"
done
for mode in bad errors; do
  for how in run linked; do
    cmp "$TMP/plain_$mode.txt" "$TMP/${how}_$mode.txt"
  done
done

# SIGKILL mid-run: the device tasks recorded before it are kept.
"$B/aiprof" run --dir "$TMP/killed" -- "$B/ocl_prog" loop >"$TMP/killed.out" 2>&1 &
runner=$!
for i in $(seq 200); do grep -q running "$TMP/killed.out" 2>/dev/null && break; sleep 0.05; done
grep -q running "$TMP/killed.out" || { echo "the loop never ran"; cat "$TMP/killed.out"; exit 1; }
sleep 1.5 # the writer thread flushes what was recorded
child=$(pgrep -P $runner)   # aiprof run's child: the program itself
kill -KILL $child
wait $runner || true
d=$(one_result "$TMP/killed")
"$B/ocl_dump" "$d" >"$TMP/killed.dump"
tasks=$(awk -F'\t' '$1 == "stats" {print $2}' "$TMP/killed.dump")
linked=$(awk -F'\t' '$1 == "stats" {print $3}' "$TMP/killed.dump")
[ "$tasks" -ge 50 ] || { echo "killed run: $tasks device tasks kept"; exit 1; }
# A task and its launching call are written by different threads (the
# runtime's, the program's): a kill can keep one without the other.
[ "$linked" -ge 50 ] || { echo "killed run: $linked of $tasks tasks have their call"; exit 1; }

# No ICD: the program runs as without aiprof; the log says why.
mkdir "$TMP/no_vendors"
OCL_ICD_VENDORS="$TMP/no_vendors" "$B/aiprof" run --dir "$TMP/noicd" -- "$B/ocl_prog" accuracy \
  "$TMP/noicd.txt" >"$TMP/noicd.out" 2>&1
grep -q "no platform" "$TMP/noicd.out"
d=$(one_result "$TMP/noicd")
grep -q "no device data can be collected (OpenCL: no OpenCL platform" "$d"/logs/*.log || {
  echo "no-ICD run: the log does not say why"; cat "$d"/logs/*.log; exit 1; }
echo "opencl e2e: all checks passed"
