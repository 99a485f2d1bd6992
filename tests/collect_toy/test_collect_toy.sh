#!/usr/bin/env bash
# A toy device back end, added as docs/ADD_A_BACKEND.md says (this folder
# and its lines in tests/CMakeLists.txt; nothing else of the tree), works
# end to end: the core starts and stops it with the trace, its kernel
# reaches kernel_details.csv and trace_view.json under its name, on its
# queue, linked (torch_to_npu) to the op around its launch call, profiler_info.json and aip_device_status() name it, `aiprof
# run`'s injection list has its variable, and its fork_child hook runs in
# a forked child.
set -eu
PROG=$1
tmp=$(mktemp -d /tmp/aiprof_toy_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { # name command...
  if "${@:2}"; then pass=$((pass + 1)); else echo "FAIL $1"; fail=$((fail + 1)); fi
}
"$PROG" "$tmp" >"$tmp/out"
dir=$(sed -n 's/^dir //p' "$tmp/out")
out=$dir/ASCEND_PROFILER_OUTPUT
has_kernel() { awk -F, 'NR > 1 && $5 == "toy_gemm" && $6 == "toy_gemm" { n++ } END { exit n != 1 }' "$1"; }
check kernel_details has_kernel "$out/kernel_details.csv"
check trace_view_api grep -q '"name":"Runtime@toyLaunchKernel"' "$out/trace_view.json"
check trace_view_flow grep -q '"name":"torch_to_npu"' "$out/trace_view.json"
check trace_view_queue grep -q '"name":"toy queue"' "$out/trace_view.json"
check trace_view_op grep -q '"name":"aten::toy_mm"' "$out/trace_view.json"
check trace_view_kernel grep -q '"name":"toy_gemm"' "$out/trace_view.json"
check trace_view_device grep -q 'Toy Accelerator' "$out/trace_view.json"
check profiler_info_backend grep -q '"backend": *"Toy"' "$dir"/profiler_info*.json
check device_status grep -q '^status .*Toy: device found' "$tmp/out"
check injection grep -qx 'inject AIPROF_TOY_TOOL AIPROF_TOY' "$tmp/out"
check fork_child grep -qx 'child_forks 1' "$tmp/out"
if [ "$fail" != 0 ]; then
  cat "$tmp/out"; head -3 "$out/kernel_details.csv" || true
fi
echo "e2e collect toy: $pass passed, $fail failed"
[ "$fail" = 0 ]
