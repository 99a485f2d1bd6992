#!/usr/bin/env bash
# scripts/run_tests.sh's build() shows the compiler's and linker's
# diagnostics from a build's output, and nothing else: not make's progress
# lines that name a file such as src/common/error.c (which a plain
# "error|warning" match printed at every build).  The pattern is read from
# the script itself (its DIAGNOSTIC= line) and tried on sample lines.
set -eu
SRC=$2
line=$(grep -E "^DIAGNOSTIC=" "$SRC/scripts/run_tests.sh") ||
  { echo "FAIL: scripts/run_tests.sh has no DIAGNOSTIC= line"; exit 1; }
eval "$line"
fail=0
shown() { printf '%s\n' "$1" | grep -qE "$DIAGNOSTIC"; }
for l in "src/a.c:1:2: warning: unused variable 'x' [-Wunused-variable]" \
         "src/a.c:3:4: error: expected ';' before '}' token" \
         "src/b.h:1:10: fatal error: c.h: No such file or directory" \
         "collect2: error: ld returned 1 exit status" \
         "/tmp/x.c:147:5: warning: 'atomic_thread_fence' is not supported with '-fsanitize=thread' [-Wtsan]"; do
  shown "$l" || { echo "FAIL: not shown: $l"; fail=1; }
done
for l in "[ 10%] Building C object CMakeFiles/aiprof_obj.dir/src/common/error.c.o" \
         "[ 11%] Building C object tests/CMakeFiles/test_errors.dir/unit/test_errors.c.o" \
         "[ 12%] Linking C executable ../bin/test_no_warnings" \
         "[ 13%] Built target error_strings"; do
  shown "$l" && { echo "FAIL: shown: $l"; fail=1; }
done
[ $fail = 0 ] && echo "e2e run_tests diagnostics: all checks passed"
exit $fail
