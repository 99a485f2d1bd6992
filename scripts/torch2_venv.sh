#!/usr/bin/env bash
# Makes (or brings up to date) the project's torch 2.x venv, .venv/, from
# tests/requirements-torch2.txt: torch 2.13 (CPU, with Kineto) and the
# torch-2.x tools the tests read our outputs with (HTA, the TensorBoard
# plugin, msprof-analyze, nvtx, perfetto).  Debian's /usr/bin/python3 keeps
# torch 1.13; `make test` runs the Python suite under both.
#
# Needs a Python 3.11 (the CPU torch 2.13 wheel's; `python3.11`, else
# `python3` if it is 3.11) and pip's index (PyPI, or a local wheel of torch:
# pip's find-links).  Prints the venv's Python on stdout when it is ready;
# otherwise says why on stderr and exits 1.  Quick when nothing changed: the
# requirements' checksum is kept in .venv/.aiprof-requirements.
set -u
cd "$(dirname "$0")/.."
VENV=${AIP_TORCH2_VENV:-.venv}
REQ=tests/requirements-torch2.txt
py=""
for c in python3.11 python3; do
  if command -v "$c" >/dev/null && "$c" -c "import sys; sys.exit(sys.version_info[:2] != (3, 11))" 2>/dev/null; then
    py=$(command -v "$c"); break
  fi
done
if [ ! -x "$VENV/bin/python" ]; then
  if [ -z "$py" ]; then
    echo "aiprof: no Python 3.11 for the torch 2.x venv (python3.11 / python3): torch 2.x tests skipped" >&2
    exit 1
  fi
  "$py" -m venv "$VENV" >&2 || { echo "aiprof: cannot make $VENV ($py -m venv)" >&2; exit 1; }
fi
want=$(cksum <"$REQ" | cut -d' ' -f1)
if [ "$(cat "$VENV/.aiprof-requirements" 2>/dev/null)" != "$want" ]; then
  echo "aiprof: installing the torch 2.x test venv ($VENV, $REQ; a few minutes the first time)..." >&2
  if ! "$VENV/bin/python" -m pip install -q -r "$REQ" >"$VENV/pip.log" 2>&1; then
    echo "aiprof: pip install -r $REQ failed; see $VENV/pip.log:" >&2
    grep -v "is ignored" "$VENV/pip.log" | tail -5 >&2
    exit 1
  fi
  echo "$want" >"$VENV/.aiprof-requirements"
fi
"$VENV/bin/python" -c "import torch" 2>/dev/null || { echo "aiprof: $VENV has no working torch" >&2; exit 1; }
echo "$PWD/$VENV/bin/python"
