#!/usr/bin/env bash
# A Python user's install: `pip install --no-build-isolation .` of a copy of
# the source tree (offline: --no-index) into a fresh venv, then a profile run
# with the installed package, from outside the source tree and without
# PYTHONPATH.  Twice when the project's torch 2.x venv (.venv, made by
# scripts/torch2_venv.sh in `make test`) is there:
#   - Debian's /usr/bin/python3, venv made with --system-site-packages (for
#     Debian's torch 1.13);
#   - the torch 2.x venv's Python: a fresh venv that sees .venv's
#     site-packages through a .pth file (torch 2.13 from PyPI's wheel).
# Checks: aiprof comes from the venv's site-packages; its _C, libaiprof.so.0
# and (with torch) the PyTorch adapter are there and find each other through
# $ORIGIN only; the profile records torch ops (the adapter works) and writes
# trace_view.json, in-process and with async_mode's background analysis.
# Slow: it compiles libaiprof, _C and the adapter (about a minute on 2 free
# cores per pass, a few minutes on a loaded machine).
set -eu
SRC=$(cd "$2" && pwd)
PY=/usr/bin/python3
if ! "$PY" -m pip --version >/dev/null 2>&1 || ! "$PY" -c "import venv, ensurepip, setuptools, wheel" 2>/dev/null; then
  echo "SKIPPED pip install check: needs python3-pip, python3-venv, python3-setuptools, python3-wheel (scripts/install_deps.sh test)"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
check() {  # check NAME COMMAND...
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

# A copy, so the in-tree build (build-python/, *.egg-info) stays out of $SRC
# (.venv too: the torch 2.x venv is not part of the source).
mkdir "$TMP/src" "$TMP/run"
tar -C "$SRC" --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./.venv \
    --exclude='*.egg-info' --exclude=__pycache__ -cf - . | tar -C "$TMP/src" -xf -
cat >"$TMP/run/prof.py" <<'EOF'
import glob, os, sys
import aiprof as torch_npu
from aiprof.profiler import _analyse
site = sys.argv[1]
assert torch_npu.__file__.startswith(site), f"aiprof imported from {torch_npu.__file__}"
have_torch = sys.argv[2] == "1"
if have_torch:
    import torch
    model = torch.nn.Linear(8, 4)
for name, async_mode in (("sync", False), ("async", True)):
    with torch_npu.profiler.profile(
            activities=[torch_npu.profiler.ProfilerActivity.CPU],
            on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(
                f"./{name}", async_mode=async_mode)) as prof:
        with torch_npu.profiler.record_function("step"):
            if have_torch:
                model(torch.randn(2, 8)).sum().backward()
    for d in list(_analyse._pending):
        _analyse.wait_for(d)
    traces = glob.glob(f"{name}/*_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json")
    assert len(traces) == 1 and os.path.getsize(traces[0]) > 0, (name, traces)
    names = {e.name for e in prof.events()}
    assert "step" in names, names
    if have_torch:
        assert "aten::addmm" in names, f"no torch op recorded: {sorted(names)}"
print("profiled with", torch_npu.__file__)
if have_torch:
    print("torch", torch.__version__)
EOF

pass_for() {  # pass_for LABEL VENV-DIR TORCH-CHECK-PYTHON
  local label=$1 venv=$2 tpy=$3
  echo "-- $label"
  VPY=$venv/bin/python
  if ! nice "$VPY" -m pip install --no-build-isolation --no-index --quiet "$TMP/src" \
      >"$TMP/pip.log" 2>&1; then
    tail -30 "$TMP/pip.log"
    check "pip install ($label)" false
    return
  fi
  rm -rf "$TMP/src/build" "$TMP/src/build-python"   # the next pass builds for its own Python
  SITE=$("$VPY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  PKG=$SITE/aiprof
  check "installed _C" test -n "$(ls "$PKG"/_C*.so 2>/dev/null)"
  check "installed libaiprof.so.0" test -f "$PKG/libaiprof.so.0"
  HAVE_TORCH=0
  "$tpy" -c "import torch" 2>/dev/null && HAVE_TORCH=1
  [ $HAVE_TORCH = 1 ] && check "installed PyTorch adapter" test -f "$PKG/libaiprof_torch.so"
  if command -v readelf >/dev/null; then
    for so in "$PKG"/_C*.so "$PKG"/libaiprof_torch.so; do
      [ -f "$so" ] || continue
      check "$(basename "$so") run path is \$ORIGIN only" \
        bash -c "readelf -d '$so' | grep -q 'RUNPATH.*\[\$ORIGIN\]'"
    done
  fi

  mkdir "$TMP/run-$label"; cp "$TMP/run/prof.py" "$TMP/run-$label/"   # each pass its own results
  if (cd "$TMP/run-$label" && env -u PYTHONPATH PYTHONWARNINGS=default "$VPY" prof.py "$SITE" $HAVE_TORCH \
        >"$TMP/run-$label.log" 2>&1); then
    check "profile with the installed package" true
    check "no warning while profiling" bash -c "! grep -q Warning '$TMP/run-$label.log'"
  else
    check "profile with the installed package" false
  fi

  [ $fails = 0 ] || cat "$TMP/run-$label.log"
}

"$PY" -m venv --system-site-packages "$TMP/venv"
pass_for debian "$TMP/venv" "$PY"
T2=$SRC/.venv/bin/python
if [ -x "$T2" ] && "$T2" -c "import sys, torch; sys.exit(int(torch.__version__.split('.')[0]) < 2)" 2>/dev/null; then
  # A fresh venv of the torch 2.x venv's Python, seeing its packages (torch
  # 2.x, setuptools) through a .pth file: pip then builds against torch 2.x.
  "$T2" -m venv "$TMP/venv2"
  t2site=$("$T2" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  v2site=$("$TMP/venv2/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  echo "$t2site" >"$v2site/_aiprof_torch2.pth"
  # the venv's own setuptools (ensurepip's, no bdist_wheel) would come first
  "$TMP/venv2/bin/python" -m pip uninstall -q -y setuptools >/dev/null 2>&1 || true
  pass_for torch2 "$TMP/venv2" "$TMP/venv2/bin/python"
  check "torch2 pass profiled torch 2.x" grep -q "^torch 2\." "$TMP/run-torch2.log"
else
  echo "-- torch 2.x: no torch 2.x venv at $SRC/.venv (scripts/torch2_venv.sh), pass skipped"
fi
if [ $fails = 0 ]; then
  echo "e2e pip install: 1 passed, 0 failed"
else
  echo "e2e pip install: 0 passed, 1 failed ($fails checks)"
  exit 1
fi
