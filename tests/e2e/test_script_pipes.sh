#!/usr/bin/env bash
# Lint: no early-exiting reader at the end of a pipeline in a script that
# sets pipefail (scripts/*.sh, tests/**/*.sh).  `nm | grep -q X` under
# pipefail fails when grep exits at its first match and nm dies of SIGPIPE
# (exit 141): scripts/gpu_check.sh reported "built without the CUDA back
# end" 17 times in 20 that way.  Such a test reads the output captured in a
# variable instead (grep -q X <<<"$syms").
set -eu
SRC=$2
python3 - "$SRC" <<'PY'
import glob, os, re, sys
src = sys.argv[1]
files = sorted(set(glob.glob(os.path.join(src, "scripts", "*.sh")) +
                   glob.glob(os.path.join(src, "tests", "**", "*.sh"), recursive=True)))
# A pipe into a reader that may stop before its writer is done.
early = re.compile(r"\|\s*(grep\s+(-\w*[qlm]\w*|--quiet|--max-count|--files-with-matches)|head\b)")
bad = []
for path in files:
    text = open(path).read()
    if not re.search(r"^\s*set\s+(-\w*o\s+pipefail|.*-o pipefail|-\w+\s+-o\s+pipefail)|^\s*set\s+-euo\s+pipefail",
                     text, re.M):
        continue
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split(" #", 1)[0]
        if not code.lstrip().startswith("#") and early.search(code):
            bad.append(f"{os.path.relpath(path, src)}:{n}: {line.strip()}")
if bad:
    print("FAIL: an early-exiting reader at the end of a pipe under pipefail (the writer's "
          "SIGPIPE fails the pipeline):\n  " + "\n  ".join(bad))
    sys.exit(1)
print(f"{len(files)} scripts checked: no early-exiting reader in a pipefail pipeline")
PY
