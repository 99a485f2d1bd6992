#!/usr/bin/env bash
# Builds one fuzz target (tests/fuzz/<TARGET>.c) with clang's libFuzzer
# (+ ASan/UBSan) and runs it, starting from its committed corpus
# tests/fuzz/corpus_<TARGET>/.  New interesting inputs go to a work corpus
# outside the tree; copy any crash reproducer into the committed corpus once
# fixed, and merge the work corpus into it with -merge=1 (see the end).
# Usage: tests/fuzz/run_libfuzzer.sh [TARGET] [SECONDS] [more libFuzzer flags]
#   TARGET: any tests/fuzz/fuzz_*.c (default fuzz_raw_reader)
# Merge what a run found into the committed corpus (keeps only new coverage):
#   AIP_FUZZ_MERGE=1 tests/fuzz/run_libfuzzer.sh TARGET
# Only build (the library archive and the target), do not run:
#   AIP_FUZZ_BUILD_ONLY=1 tests/fuzz/run_libfuzzer.sh TARGET
# Exit status 77 when no clang with libFuzzer is found (ctest's skip):
# $AIP_FUZZ_CLANG, else clang, clang-19 ... clang-14 on PATH.
#
# The library is compiled once into $AIP_FUZZ_BUILD/lib/libaiprof_fuzz.a
# from the same folders CMakeLists.txt globs (rebuilt when a source or
# header of those folders or include/ is newer), and each target links it: ctest runs every
# target this way (tests/CMakeLists.txt, libfuzzer_*), so a library file
# the script does not know about fails a test instead of rotting here.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=fuzz_raw_reader
case "${1:-}" in fuzz_*) TARGET=$1; shift ;; esac
ROOT=${AIP_FUZZ_BUILD:-/tmp/aiprof_fuzz_build}
OUT=$ROOT/$TARGET
SECS=${1:-180}
shift || true
[ -f "$SRC/tests/fuzz/$TARGET.c" ] || { echo "no such target: $TARGET" >&2; exit 2; }

CC=${AIP_FUZZ_CLANG:-}
if [ -z "$CC" ]; then
  for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
    if command -v "$c" >/dev/null 2>&1; then CC=$c; break; fi
  done
fi
if [ -z "$CC" ]; then
  echo "SKIP: no clang on PATH (libFuzzer needs clang; the corpus replay test runs anyway)"
  exit 77
fi
mkdir -p "$ROOT/lib" "$OUT/corpus" "$OUT/artifacts"
probe=$ROOT/lib/probe-$(basename "$CC")
if [ ! -x "$probe" ]; then
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' > "$probe.c"
  if ! "$CC" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" 2>/dev/null; then
    echo "SKIP: $CC cannot link -fsanitize=fuzzer (no libclang_rt.fuzzer)"
    exit 77
  fi
fi

# What CMakeLists.txt builds into libaiprof: the back ends whose headers
# are found (OpenCL's, CUPTI's) included.
dirs="common core raw analysis result cluster export dynamic collect/host collect/osrt collect/nvtx insight"
inc=""
for d in include src src/common src/raw src/core src/analysis src/result src/cluster src/export src/dynamic src/insight; do
  inc="$inc -I$SRC/$d"
done
if [ -f /usr/include/CL/cl.h ]; then dirs="$dirs collect/opencl"; fi
cupti=""
for d in ${CUDA_HOME:+$CUDA_HOME/include} /usr/local/cuda/include /usr/local/cuda/extras/CUPTI/include; do
  if [ -f "$d/cupti.h" ] && [ -f "$d/cuda.h" ]; then cupti=$d; break; fi
done
if [ -n "$cupti" ]; then dirs="$dirs collect/cuda"; inc="$inc -isystem $cupti"; fi
dirs="$dirs collect/comm" # last, as in CMakeLists.txt: it stops first
CFLAGS="-std=gnu11 -g -O1 -D_GNU_SOURCE -DAIP_LIBFUZZER -fno-omit-frame-pointer
        -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
lib=$ROOT/lib/libaiprof_fuzz.a
stamp="$dirs|$CC|$cupti"
if [ ! -f "$lib" ] || [ "$(cat "$lib.stamp" 2>/dev/null)" != "$stamp" ] ||
   # shellcheck disable=SC2046
   [ -n "$(find $(for d in $dirs; do echo "$SRC/src/$d"; done) "$SRC/include" -maxdepth 1 \
           -newer "$lib" \( -name '*.c' -o -name '*.h' \) -print -quit)" ]; then
  echo "building $lib with $CC ..."
  rm -rf "$ROOT/lib/obj" "$lib"
  mkdir -p "$ROOT/lib/obj"
  export AIP_FZ_CC=$CC AIP_FZ_FLAGS="$CFLAGS $inc" AIP_FZ_OBJ=$ROOT/lib/obj
  for d in $dirs; do ls "$SRC/src/$d"/*.c; done |
    xargs -P "${AIP_FUZZ_JOBS:-$(nproc)}" -n 1 sh -c \
      'o=$AIP_FZ_OBJ/$(echo "$0" | sed "s|.*/src/||; s|/|_|g").o; exec $AIP_FZ_CC $AIP_FZ_FLAGS -c "$0" -o "$o"'
  # the collectors' table (CMake's aip_collector_table: collector.h)
  table=$ROOT/lib/obj/aip_collectors.c
  { echo '#include "collector.h"'
    for d in $dirs; do case $d in collect/*) echo "extern const aip__collector aip__collector_${d#collect/};";; esac; done
    echo 'const aip__collector *const aip__collectors[] = {'
    for d in $dirs; do case $d in collect/*) echo "    &aip__collector_${d#collect/},";; esac; done
    echo '    NULL,'; echo '};'; } >"$table"
  # shellcheck disable=SC2086
  $CC $CFLAGS $inc -c "$table" -o "$ROOT/lib/obj/aip_collectors.o"
  ar rcs "$lib" "$ROOT"/lib/obj/*.o
  echo "$stamp" > "$lib.stamp"
fi
max_len=16384
extra=""
case $TARGET in
  fuzz_cli_run_options)  # the CLI's parser is not in libaiprof
    extra="$SRC/src/cli/run_options.c"; inc="$inc -I$SRC/src/cli"; max_len=4096 ;;
  fuzz_cuda_translate)
    [ -n "$cupti" ] || { echo "SKIP: no CUPTI headers (cupti.h, cuda.h): no CUDA back end to fuzz"; exit 77; }
    inc="$inc -I$SRC/src/collect/cuda"; max_len=65536 ;;
  fuzz_profiler_config | fuzz_cluster | fuzz_cluster_wire) max_len=65536 ;;
esac
# shellcheck disable=SC2086
"$CC" $CFLAGS -fsanitize=fuzzer $inc "$SRC/tests/fuzz/$TARGET.c" $extra "$lib" \
  -lz -ljansson -lsqlite3 -lpthread -lm -ldl -o "$OUT/$TARGET"
[ -z "${AIP_FUZZ_BUILD_ONLY:-}" ] || exit 0
CORPUS="$SRC/tests/fuzz/corpus_$TARGET"
if [ -n "${AIP_FUZZ_MERGE:-}" ]; then
  exec "$OUT/$TARGET" -merge=1 -max_len=$max_len -timeout=10 "$@" "$CORPUS" "$OUT/corpus"
fi
"$OUT/$TARGET" -max_total_time="$SECS" -max_len=$max_len -timeout=10 \
  -artifact_prefix="$OUT/artifacts/" "$@" "$OUT/corpus" "$CORPUS"
