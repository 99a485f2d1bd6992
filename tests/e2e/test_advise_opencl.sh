#!/bin/bash
# `aiprof advise` on many tiny OpenCL kernels (docs/ADVISE.md
# "small_kernels"): ocl_tiny launches 200 one-work-item kernels per step;
# advise must rank small_kernels first, with the kernel count per step in
# its evidence, and fold the device's idle time between them into that
# finding (no separate device_idle finding for the same time).  Skips (77)
# where ocl_tiny was not built or no OpenCL device is usable.
set -eu
BUILD=$1
if [ ! -x "$BUILD/bin/ocl_tiny" ]; then
    echo "SKIP: ocl_tiny not built (no OpenCL headers or libOpenCL)"; exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
out=$("$BUILD/bin/ocl_tiny" "$TMP/r") || { echo "FAIL: ocl_tiny: $out" >&2; exit 1; }
case "$out" in *"no platform"*) echo "SKIP: no usable OpenCL device"; exit 77;; esac
dir=$(ls -d "$TMP"/r/*_ascend_pt | head -1)
"$BUILD/bin/aiprof" advise -q --json "$dir" >"$TMP/a.json"
python3 - "$TMP/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"]
assert f and f[0]["rule"] == "small_kernels", [x["rule"] for x in f]
assert "200 per step" in f[0]["evidence"], f[0]["evidence"]
assert f[0]["severity"] in ("medium", "high"), f[0]
assert not [x for x in f if x["rule"] == "device_idle"], [x["rule"] for x in f]
print("ok small_kernels first:", f[0]["title"])
PY
echo "test_advise_opencl: ok"
