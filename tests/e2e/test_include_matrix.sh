#!/usr/bin/env bash
# scripts/check_includes.py catches an include that goes up the layers
# (issue 28 point 4): the tree is copied to a temporary directory, passes
# there unchanged, then each case adds one include that its folder's row
# of the matrix does not allow and the check must fail naming that file:
# - src/core/trace.c including the host sampler's header (the up-include
#   the core had until it got core/host_sys.h);
# - src/analysis including an exporter's header (analysis knows no output);
# - src/common including a core header (common is below everything);
# - an exporter including analysis_int.h (exporters read model.h only);
# - an exporter or result including a collector's header (only the core's
#   collector.h table reaches a collector, issue 28 point 3);
# - a new collector folder passes with no edit of the check (its row comes
#   from src/collect), but may not include another collector's header;
# - a file in a folder the matrix has no row for.
set -eu
SRC=$2
tmp=$(mktemp -d /tmp/aiprof_include_matrix_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
mkdir -p "$tmp/tree/scripts" "$tmp/tree/python"
cp -r "$SRC/src" "$SRC/include" "$SRC/adapters" "$tmp/tree/"
cp -r "$SRC/python/_C" "$tmp/tree/python/"
cp "$SRC/scripts/check_includes.py" "$tmp/tree/scripts/"
inject() { # file line: append `line` to the copy's `file` (its original kept)
  cp "$tmp/tree/$1" "$tmp/saved"; echo "$2" >>"$tmp/tree/$1"
}
restore() { cp "$tmp/saved" "$tmp/tree/$1"; }
expect() { # name want-status want-text
  local out rc=0
  out=$(python3 "$tmp/tree/scripts/check_includes.py" "$tmp/tree" 2>&1) || rc=$?
  if [ "$rc" = "$2" ] && grep -qF -- "$3" <<<"$out"; then
    pass=$((pass + 1))
  else
    echo "FAIL $1: exit $rc (want $2), output:"; echo "$out"; echo "(wanted: $3)"
    fail=$((fail + 1))
  fi
}
expect unchanged 0 "layer rules: 0 broken"
inject src/core/trace.c '#include "collect/host/host_sampler.h"'
expect core_to_collect 1 "src/core/trace.c includes src/collect/host/host_sampler.h: src/core may not include src/collect/host"
restore src/core/trace.c
inject src/analysis/steps.c '#include "outbuf.h"'
expect analysis_to_export 1 "src/analysis/steps.c includes src/export/outbuf.h: src/analysis may not include src/export"
restore src/analysis/steps.c
inject src/common/error.c '#include "recorder.h"'
expect common_to_core 1 "src/common/error.c includes src/core/recorder.h: src/common may not include src/core"
restore src/common/error.c
inject src/export/csv_statistic.c '#include "analysis_int.h"'
expect export_to_analysis_int 1 "src/export/csv_statistic.c includes src/analysis/analysis_int.h: it is private to src/analysis"
restore src/export/csv_statistic.c
inject src/export/summary_device.c '#include "../collect/host/host_sampler.h"'
expect export_to_collect 1 "src/export/summary_device.c includes src/collect/host/host_sampler.h: src/export may not include src/collect/host"
restore src/export/summary_device.c
inject src/result/analyse_dir.c '#include "../collect/osrt/osrt_int.h"'
expect result_to_collect 1 "src/result/analyse_dir.c includes src/collect/osrt/osrt_int.h: src/result may not include src/collect/osrt"
restore src/result/analyse_dir.c
expect restored 0 "layer rules: 0 broken"
mkdir -p "$tmp/tree/src/collect/toy"
printf '#include "collector.h"\n#include "device.h"\n#include "toy_int.h"\n' >"$tmp/tree/src/collect/toy/toy.c"
echo '#include "raw_format.h"' >"$tmp/tree/src/collect/toy/toy_int.h"
expect new_collector 0 "layer rules: 0 broken"
echo '#include "../host/host_sampler.h"' >>"$tmp/tree/src/collect/toy/toy.c"
expect collector_to_collector 1 "src/collect/toy/toy.c includes src/collect/host/host_sampler.h: src/collect/toy may not include src/collect/host"
rm -r "$tmp/tree/src/collect/toy"
mkdir -p "$tmp/tree/src/newfolder" && echo '#include "aiprof.h"' >"$tmp/tree/src/newfolder/x.c"
expect unknown_folder 1 "src/newfolder/x.c is in no folder of the matrix"
echo "e2e include matrix: $pass passed, $fail failed"
[ "$fail" = 0 ]
