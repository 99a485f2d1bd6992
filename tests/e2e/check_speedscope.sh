#!/usr/bin/env bash
# Imports trace_view.json files into speedscope headless and fails on its
# "Tried to end" warnings (a thread's slices that do not nest).  Not run by
# ctest: it needs node, speedscope's source and esbuild, which this
# project does not vendor.  speedscope's npm package holds only its browser
# bundle (its importers are not exported and initialise lazily behind the
# UI), so its importer is bundled from the source:
#   git clone https://github.com/jlfwong/speedscope   (1.25.0 was used)
#   npm install esbuild                                  (any directory)
# Usage: SPEEDSCOPE_SRC=speedscope-checkout ESBUILD=path/to/esbuild \
#        check_speedscope.sh TRACE_OR_RESULT_DIR...
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
: "${SPEEDSCOPE_SRC:?set SPEEDSCOPE_SRC to a speedscope checkout}"
ESBUILD=${ESBUILD:-esbuild}
TMP=$(mktemp -d /tmp/aiprof_speedscope_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
"$ESBUILD" "$HERE/speedscope_import.ts" --bundle --platform=node --log-level=warning \
  --alias:speedscope-src="$(cd "$SPEEDSCOPE_SRC/src" && pwd)" --outfile="$TMP/import.cjs"
files=()
for p in "$@"; do
  if [ -d "$p" ]; then files+=("$p/ASCEND_PROFILER_OUTPUT/trace_view.json"); else files+=("$p"); fi
done
node "$TMP/import.cjs" "${files[@]}"
