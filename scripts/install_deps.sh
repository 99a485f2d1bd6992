#!/usr/bin/env bash
# Installs the Debian packages aiprof needs, only those missing, only as root.
# Non-root users get the apt-get command to run instead.
# Usage: install_deps.sh [test|demo]   (test: also what the test suite needs,
#        with OpenCL on PoCL, a CPU device; demo: also PoCL, for examples/opencl)
set -u
need_pkgs=(cmake make gcc g++ pkg-config zlib1g-dev libjansson-dev libsqlite3-dev
           python3 python3-dev python3-pytest
           python3-pip python3-setuptools python3-wheel)  # pip install --no-build-isolation .
[ "${AIP_WITH_TORCH:-1}" = 1 ] && need_pkgs+=(python3-torch libtorch-dev pybind11-dev)
# MPI: libaiprof_mpi.so, the MPI example (make demo), its tests and bench_mpi.
[ "${AIP_WITH_MPI:-1}" = 1 ] && need_pkgs+=(openmpi-bin libopenmpi-dev)
# `make test` also renders the HTML reports in headless Chromium.
# tests/e2e/test_pip_install.sh installs into a fresh venv.
[ "${1:-}" = test ] && need_pkgs+=(chromium python3-venv)
# The OpenCL back end is tested on PoCL (OpenCL on the CPU), and `make demo`
# profiles examples/opencl on it; libaiprof itself needs only the headers.
case "${1:-}" in test|demo)
  need_pkgs+=(pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo python3-pyopencl);;
esac
missing=()
for p in "${need_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "aiprof: missing packages: ${missing[*]}" >&2
  echo "aiprof: run as root: apt-get install -y ${missing[*]}" >&2
  exit 0
fi
echo "aiprof: installing ${missing[*]} (apt-get)..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/aiprof-apt.log 2>&1; then
  echo "aiprof: apt-get install failed; see /tmp/aiprof-apt.log" >&2
  tail -5 /tmp/aiprof-apt.log >&2
  exit 1
fi
