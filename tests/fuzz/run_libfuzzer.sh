#!/usr/bin/env bash
# Builds fuzz_raw_reader with clang's libFuzzer (+ ASan/UBSan) and runs it,
# starting from the committed corpus.  New interesting inputs go to a work
# corpus outside the tree; copy any crash reproducer into
# tests/fuzz/corpus_fuzz_raw_reader/ once fixed.
# Usage: tests/fuzz/run_libfuzzer.sh [SECONDS] [more libFuzzer flags]
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${AIP_FUZZ_BUILD:-/tmp/aiprof_fuzz_build}
SECS=${1:-180}
shift || true
mkdir -p "$OUT/corpus" "$OUT/artifacts"
srcs=$(ls "$SRC"/src/common/*.c "$SRC"/src/core/*.c "$SRC"/src/raw/*.c "$SRC"/src/analysis/*.c \
          "$SRC"/src/result/*.c "$SRC"/src/export/*.c "$SRC"/src/dynamic/*.c 2>/dev/null)
inc=""
for d in include src src/common src/raw src/core src/analysis src/result src/export; do inc="$inc -I$SRC/$d"; done
# shellcheck disable=SC2086
clang -std=gnu11 -g -O1 -D_GNU_SOURCE -DAIP_LIBFUZZER -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined $inc $srcs "$SRC/tests/fuzz/fuzz_raw_reader.c" \
  -lz -ljansson -lsqlite3 -lpthread -lm -o "$OUT/fuzz_raw_reader"
"$OUT/fuzz_raw_reader" -max_total_time="$SECS" -max_len=16384 -timeout=10 \
  -artifact_prefix="$OUT/artifacts/" "$@" "$OUT/corpus" "$SRC/tests/fuzz/corpus_fuzz_raw_reader"
