#!/usr/bin/env bash
# scripts/gpu_deps.sh — what aiprof's build needs, carried to a machine that
# has no network and may lack it (the GPU machine of scripts/gpu_check.sh,
# docs/CUDA.md "The GPU run"): Debian 12 packages for jansson, SQLite, zlib
# and pkg-config, unpacked with dpkg -x into a prefix, never installed.
#   scripts/gpu_deps.sh fetch DIR          apt-get download them into DIR (here)
#   scripts/gpu_deps.sh unpack DIR PREFIX  unpack DIR/*.deb into PREFIX, point
#                                          the .pc files at it, and print the
#                                          sh exports that build against it
# The unpacked libraries are those of Debian 12 (glibc 2.36): they run on a
# system with that glibc or a newer one.
set -euo pipefail
PACKAGES="libjansson-dev libjansson4 libsqlite3-dev libsqlite3-0 zlib1g-dev pkgconf-bin libpkgconf3"

die() { echo "gpu_deps: $*" >&2; exit 1; }

fetch() {
  mkdir -p "$1"
  (cd "$1" && timeout 300 apt-get download $PACKAGES) >&2 || die "apt-get download failed (no network or no apt?)"
}

unpack() {
  local dir=$1 p=$2 n=0
  mkdir -p "$p"
  p=$(cd "$p" && pwd)
  for deb in "$dir"/*.deb; do
    [ -f "$deb" ] || continue
    dpkg -x "$deb" "$p" || die "dpkg -x $deb failed"
    n=$((n + 1))
  done
  [ "$n" -gt 0 ] || die "no .deb in $dir (run: scripts/gpu_deps.sh fetch $dir)"
  local multi=x86_64-linux-gnu pc
  for pc in "$p"/usr/lib/$multi/pkgconfig/*.pc "$p"/usr/share/pkgconfig/*.pc; do
    [ -f "$pc" ] && sed -i "s|^prefix=/usr\$|prefix=$p/usr|" "$pc"
  done
  local lib=$p/usr/lib/$multi
  echo "export PKG_CONFIG_PATH='$lib/pkgconfig:$p/usr/share/pkgconfig'\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
  # Not CPATH or LIBRARY_PATH: pkg-config would take the prefix for a
  # system directory and leave it out of the flags CMake reads.
  echo "export LD_LIBRARY_PATH='$lib'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  echo "export CMAKE_PREFIX_PATH='$p/usr'\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
  # pkg-config itself when the machine has none (CMake honours PKG_CONFIG).
  if ! command -v pkg-config >/dev/null 2>&1 && [ -x "$p/usr/bin/pkgconf" ]; then
    echo "export PKG_CONFIG='$p/usr/bin/pkgconf'"
  fi
  echo "gpu_deps: $n packages unpacked into $p" >&2
}

case "${1:-}" in
  fetch) [ $# = 2 ] || die "usage: gpu_deps.sh fetch DIR"; fetch "$2" ;;
  unpack) [ $# = 3 ] || die "usage: gpu_deps.sh unpack DIR PREFIX"; unpack "$2" "$3" ;;
  *) die "usage: gpu_deps.sh fetch DIR | unpack DIR PREFIX" ;;
esac
