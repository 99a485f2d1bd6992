#!/usr/bin/env bash
# Builds one fuzz target (tests/fuzz/<TARGET>.c) with clang's libFuzzer
# (+ ASan/UBSan) and runs it, starting from its committed corpus
# tests/fuzz/corpus_<TARGET>/.  New interesting inputs go to a work corpus
# outside the tree; copy any crash reproducer into the committed corpus once
# fixed, and merge the work corpus into it with -merge=1 (see the end).
# Usage: tests/fuzz/run_libfuzzer.sh [TARGET] [SECONDS] [more libFuzzer flags]
#   TARGET: fuzz_raw_reader (default), fuzz_profiler_config, fuzz_cli_run_options
# Merge what a run found into the committed corpus (keeps only new coverage):
#   AIP_FUZZ_MERGE=1 tests/fuzz/run_libfuzzer.sh TARGET
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=fuzz_raw_reader
case "${1:-}" in fuzz_*) TARGET=$1; shift ;; esac
OUT=${AIP_FUZZ_BUILD:-/tmp/aiprof_fuzz_build}/$TARGET
SECS=${1:-180}
shift || true
[ -f "$SRC/tests/fuzz/$TARGET.c" ] || { echo "no such target: $TARGET" >&2; exit 2; }
mkdir -p "$OUT/corpus" "$OUT/artifacts"
srcs=$(ls "$SRC"/src/common/*.c "$SRC"/src/core/*.c "$SRC"/src/raw/*.c "$SRC"/src/analysis/*.c \
          "$SRC"/src/result/*.c "$SRC"/src/export/*.c "$SRC"/src/dynamic/*.c \
          "$SRC"/src/collect/host/*.c 2>/dev/null)
inc=""
for d in include src src/common src/raw src/core src/analysis src/result src/export src/dynamic; do
  inc="$inc -I$SRC/$d"
done
max_len=16384
case $TARGET in
  fuzz_cli_run_options)  # the CLI's parser is not in libaiprof
    srcs="$srcs $SRC/src/cli/run_options.c"; inc="$inc -I$SRC/src/cli"; max_len=4096 ;;
  fuzz_profiler_config) max_len=65536 ;;
esac
# shellcheck disable=SC2086
clang -std=gnu11 -g -O1 -D_GNU_SOURCE -DAIP_LIBFUZZER -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined $inc $srcs "$SRC/tests/fuzz/$TARGET.c" \
  -lz -ljansson -lsqlite3 -lpthread -lm -o "$OUT/$TARGET"
CORPUS="$SRC/tests/fuzz/corpus_$TARGET"
if [ -n "${AIP_FUZZ_MERGE:-}" ]; then
  exec "$OUT/$TARGET" -merge=1 -max_len=$max_len -timeout=10 "$@" "$CORPUS" "$OUT/corpus"
fi
"$OUT/$TARGET" -max_total_time="$SECS" -max_len=$max_len -timeout=10 \
  -artifact_prefix="$OUT/artifacts/" "$@" "$OUT/corpus" "$CORPUS"
