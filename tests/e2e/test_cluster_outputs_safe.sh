#!/usr/bin/env bash
# test_cluster_outputs_safe.sh — every file `aiprof cluster` writes goes
# the way single-rank outputs go (issue 27, defect 2): a temporary name,
# 0640 (the folder 0750) whatever the umask, never through a symbolic link,
# renamed into place only when complete.
# - a link planted where each output goes (to a file outside) is refused
#   with a message naming it, exit 1, and the file it points to is
#   unchanged (main wrote through the CSV and group links);
# - umask 000: the outputs are 0640, cluster_analysis_output 0750 (main:
#   0666 / 0644);
# - `ulimit -f 100` (100 KiB; SIGXFSZ ignored, as a batch system may):
#   cluster_communication.json (~240 KiB) cannot be written; exit 1 with
#   the reason, and no half cluster_communication*.json nor temporary file
#   is left behind (main left the first 100 KiB under the real name);
# - cluster_analysis.db, which other tools' tables share, is a copy renamed
#   into place too (a new inode; main changed it in place) that keeps a
#   foreign table; under `ulimit -f 600` a 1.1 MiB database is left byte
#   for byte as it was, with no temporary file; a link at it to another
#   database is refused and that database is unchanged.
set -u
BUILD=$1
SRC=$2
AIPROF="$BUILD/bin/aiprof"
T=$(mktemp -d /tmp/aiprof_cluster_safe_XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
mkdir -p "$T/job"
python3 "$SRC/tests/e2e/make_cluster_dirs.py" "$T/job" -1 0 --ranks 16 --steps 3 >/dev/null
OUT="$T/job/cluster_analysis_output"

for name in cluster_step_trace_time.csv communication_group.json cluster_communication.json \
            cluster_communication_matrix.json cluster_analysis.db cluster_report.html; do
  rm -rf "$OUT"; mkdir -m 750 "$OUT"
  echo "precious $name" >"$T/victim"
  ln -s "$T/victim" "$OUT/$name"
  "$AIPROF" cluster -q --html "$T/job" >"$T/link.log" 2>&1; rc=$?
  { [ $rc = 1 ] && grep -q "$OUT/$name.*symbolic link\|symbolic link.*$OUT/$name" "$T/link.log" &&
    [ "$(cat "$T/victim")" = "precious $name" ] && [ -L "$OUT/$name" ]; } ||
    { cat "$T/link.log"; echo "FAIL: a link at $name (exit $rc): the file behind it now: $(head -c 80 "$T/victim")"; fail=1; }
  if ls "$OUT" | grep -q "\.tmp"; then ls -l "$OUT"; echo "FAIL: a temporary file left ($name)"; fail=1; fi
done

rm -rf "$OUT"
(umask 000; "$AIPROF" cluster -q --html "$T/job" >"$T/modes.log" 2>&1) ||
  { cat "$T/modes.log"; echo "FAIL: umask 000 run"; fail=1; }
[ "$(stat -c %a "$OUT")" = 750 ] || { echo "FAIL: cluster_analysis_output is $(stat -c %a "$OUT")"; fail=1; }
for f in "$OUT"/*; do
  [ "$(stat -c %a "$f")" = 640 ] || { echo "FAIL: $f is $(stat -c %a "$f"), not 640"; fail=1; }
done
[ "$(ls "$OUT" | wc -l)" = 6 ] || { ls -l "$OUT"; echo "FAIL: not the 6 outputs"; fail=1; }

rm -rf "$OUT"
(trap '' XFSZ; ulimit -f 100; exec "$AIPROF" cluster -q "$T/job") >"$T/fsize.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "cluster_communication.json.*File too large" "$T/fsize.log"; } ||
  { cat "$T/fsize.log"; echo "FAIL: ulimit -f: exit $rc"; fail=1; }
if ls "$OUT" | grep -q "cluster_communication\|\.tmp"; then
  ls -l "$OUT"; echo "FAIL: a half-written output or temporary file left after EFBIG"; fail=1
fi
[ -s "$OUT/cluster_step_trace_time.csv" ] || { ls -l "$OUT"; echo "FAIL: the small outputs before it"; fail=1; }

# cluster_analysis.db is replaced, not changed in place (a new inode: main
# kept the old one), and keeps another tool's table, with its rows.
DB="$OUT/cluster_analysis.db"
rm -rf "$OUT"
"$AIPROF" cluster -q "$T/job" >"$T/db1.log" 2>&1 || { cat "$T/db1.log"; echo "FAIL: first run"; fail=1; }
python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE ForeignTool(k INTEGER, blob TEXT)")
c.executemany("INSERT INTO ForeignTool VALUES (?, ?)", [(i, "x" * 1000) for i in range(1000)])
c.commit()
PY
chmod 644 "$DB"
# a second name holds the old inode, so that it cannot be reused for the new
# file, and shows whether the old file was written to
ln "$DB" "$T/old.db"; ino=$(stat -c %i "$DB"); old_sum=$(sha256sum <"$DB")
"$AIPROF" cluster -q "$T/job" >"$T/db2.log" 2>&1 || { cat "$T/db2.log"; echo "FAIL: second run"; fail=1; }
got=$(python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("SELECT count(*), sum(length(blob)) FROM ForeignTool").fetchone(), c.execute("SELECT count(*) FROM ClusterStepTraceTime").fetchone()[0] > 0, c.execute("SELECT count(*) FROM ClusterCommunicationTime").fetchone()[0] > 0)' "$DB")
[ "$got" = "(1000, 1000000) True True" ] || { echo "FAIL: cluster_analysis.db after a rerun: $got"; fail=1; }
{ [ "$(stat -c %i "$DB")" != "$ino" ] && [ "$(sha256sum <"$T/old.db")" = "$old_sum" ]; } ||
  { echo "FAIL: cluster_analysis.db was changed in place, not replaced"; fail=1; }
[ "$(stat -c %a "$DB")" = 640 ] || { echo "FAIL: cluster_analysis.db is $(stat -c %a "$DB")"; fail=1; }

# `ulimit -f 600` (the ~240 KiB JSON fits, the ~1.1 MiB database does not):
# exit 1 naming the database, the old database byte for byte as it was,
# no temporary file nor journal left.
sum=$(sha256sum <"$DB")
(trap '' XFSZ; ulimit -f 600; exec "$AIPROF" cluster -q "$T/job") >"$T/dbfsize.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "cluster_analysis.db.*File too large" "$T/dbfsize.log"; } ||
  { cat "$T/dbfsize.log"; echo "FAIL: ulimit -f with a 1 MiB database: exit $rc"; fail=1; }
[ "$(sha256sum <"$DB")" = "$sum" ] || { echo "FAIL: the old cluster_analysis.db changed after EFBIG"; fail=1; }
if ls "$OUT" | grep -q "\.tmp\|journal"; then ls -l "$OUT"; echo "FAIL: a temporary file left after EFBIG on the database"; fail=1; fi

# A link at cluster_analysis.db to another database: not followed, the
# database behind it unchanged.
cp "$DB" "$T/victim.db"; sum=$(sha256sum <"$T/victim.db")
rm -f "$DB"; ln -s "$T/victim.db" "$DB"
"$AIPROF" cluster -q "$T/job" >"$T/dblink.log" 2>&1; rc=$?
{ [ $rc = 1 ] && grep -q "$DB.*symbolic link" "$T/dblink.log" && [ -L "$DB" ] &&
  [ "$(sha256sum <"$T/victim.db")" = "$sum" ]; } ||
  { cat "$T/dblink.log"; echo "FAIL: a link at cluster_analysis.db to a database (exit $rc)"; fail=1; }
if ls "$OUT" | grep -q "\.tmp"; then ls -l "$OUT"; echo "FAIL: a temporary file left (db link)"; fail=1; fi
[ $fail = 0 ] && echo "PASS"
exit $fail
