#!/usr/bin/env bash
# End to end: host_sys / sys_io (docs/HOST_SYS.md).  A program that burns
# CPU, touches memory and does I/O in known amounts is profiled; the
# figures must match within sampling error (check_host_sys.py).  Then the
# sampler's bad input: a fake /proc with a missing /proc/self/io and an
# interface that disappears mid-run, and a sampler that falls behind —
# each logged once, noted in the summary, the profile complete and the
# program unaffected.
set -eu
BUILD=$1 SRC=$2
TMP=$(mktemp -d /tmp/aiprof_host_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
B=$BUILD/bin

"$B/prog_host_sys" "$TMP/real" >"$TMP/out"
dir=$(head -1 "$TMP/out")
sed -n 2p "$TMP/out" >"$TMP/prog.json"
"$B/dump_host" "$dir" >"$TMP/dump.json"
"$B/aiprof" analyse "$dir" >/dev/null
"$B/aiprof" summary "$dir" --html "$TMP/s.html" >"$TMP/summary.txt"
grep -q 'id="host-cpu-chart-0"' "$TMP/s.html"
grep -q 'id="host-rss-chart-0"' "$TMP/s.html"
/usr/bin/python3 "$SRC/tests/e2e/check_host_sys.py" "$dir" "$TMP/prog.json" "$TMP/dump.json" \
  "$TMP/summary.txt"

# ---- a fake /proc: no self/io, eth1 vanishes after the first sleep ------
F=$TMP/fakeproc
mkdir -p "$F/self/task/4242" "$F/net" "$F/sys/kernel" "$TMP/fakesys/class/net/eth0"
stat='4242 (fake prog) S 1 4242 4242 0 -1 4194304 500 0 2 0 120 30 0 0 20 0 3 0 100 1000000 250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 7 0 0'
echo "$stat" >"$F/self/stat"
echo "$stat" >"$F/self/task/4242/stat"
echo '1000 250 40 10 0 200 0' >"$F/self/statm"
printf 'MemTotal:        8000000 kB\nMemFree: 1 kB\n' >"$F/meminfo"
echo 0 >"$F/sys/kernel/task_delayacct"
echo 1000 >"$TMP/fakesys/class/net/eth0/speed"
hdr='Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed'
printf '%s\n  eth0: 1000 10 0 0 0 0 0 0 2000 20 0 0 0 0 0 0\n  eth1: 5 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n' "$hdr" >"$F/net/dev"
printf '%s\n  eth0: 9000 90 1 2 0 0 0 0 2000 20 0 0 0 0 0 0\n' "$hdr" >"$TMP/netdev.next"
AIPROF_HOST_PROC_ROOT=$F AIPROF_HOST_SYS_ROOT=$TMP/fakesys NETDEV_NEXT=$TMP/netdev.next \
  "$B/prog_host_sys" "$TMP/fake" 50 8 1 >"$TMP/fout"
fdir=$(head -1 "$TMP/fout")
sed -n 2p "$TMP/fout" | /usr/bin/python3 -c "import json,sys; json.load(sys.stdin)"  # it finished
"$B/dump_host" "$fdir" >"$TMP/fdump.json"
"$B/aiprof" analyse "$fdir" >/dev/null
"$B/aiprof" summary "$fdir" >"$TMP/fsummary.txt"
/usr/bin/python3 - "$fdir" "$TMP/fdump.json" "$TMP/fsummary.txt" <<'PY'
import csv, glob, json, os, sys
rd, dump, summary = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
IO, GONE = 1 << 3, 1 << 7
assert dump["sources_bad"] & IO and dump["sources_bad"] & GONE, dump["sources_bad"]
assert dump["n_disk"] == 0 and dump["n_mem"] > 2 and dump["n_cpu"] > 2, dump
log = "".join(open(f).read() for f in glob.glob(os.path.join(rd, "logs", "*.log")))
assert log.count("/self/io cannot be read") == 1, log
assert log.count("interface eth1 disappeared") == 1, log
assert "could not read /proc/self/io" in summary and "disappeared" in summary, summary
# the fake RSS: 250 pages; MemTotal 8000000 kB
rows = list(csv.DictReader(open(os.path.join(rd, "ASCEND_PROFILER_OUTPUT", "nic.csv"))))
eth1 = [r for r in rows if r["Interface"] == "eth1"]
eth0 = [r for r in rows if r["Interface"] == "eth0"]
assert len(eth1) <= 8 and len(eth0) > len(eth1), (len(eth0), len(eth1))
assert all(r["Bandwidth(MB/s)"] != "N/A" for r in eth0) and eth1[0]["Bandwidth(MB/s)"] == "N/A"
jumps = [r for r in eth0 if float(r["rxError rate(%)"]) > 0]
assert len(jumps) == 1, jumps  # the one interval with 80 packets and 1 error
assert abs(float(jumps[0]["rxError rate(%)"]) - 1.25) < 1e-3, jumps[0]
print("check_host_sys: fake /proc ok")
PY

# ---- a sampler that falls behind: one sample takes 200 ms of a 10 ms period
AIPROF_HOST_SYS_PERIOD_MS=10 AIPROF_HOST_SYS_TEST_STALL_MS=200 \
  "$B/prog_host_sys" "$TMP/slow" 100 8 1 >"$TMP/sout"
sdir=$(head -1 "$TMP/sout")
"$B/dump_host" "$sdir" >"$TMP/sdump.json"
"$B/aiprof" summary "$sdir" >"$TMP/ssummary.txt"
/usr/bin/python3 - "$sdir" "$TMP/sdump.json" "$TMP/ssummary.txt" <<'PY'
import glob, json, os, sys
rd, dump, summary = sys.argv[1], json.load(open(sys.argv[2])), open(sys.argv[3]).read()
assert dump["period_ns"] == 10_000_000 and dump["missed"] >= 15, dump["missed"]
assert dump["max_lag_ns"] if "max_lag_ns" in dump else True
log = "".join(open(f).read() for f in glob.glob(os.path.join(rd, "logs", "*.log")))
assert log.count("fell behind") == 1, log
assert "host sampler missed" in summary, summary
print("check_host_sys: slow sampler ok")
PY

# A bad period is refused with a reason and the default used.
AIPROF_HOST_SYS_PERIOD_MS=0 "$B/prog_host_sys" "$TMP/bad" 10 1 1 >"$TMP/bout"
bdir=$(head -1 "$TMP/bout")
"$B/dump_host" "$bdir" | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); assert d['period_ns']==20_000_000, d['period_ns']"
grep -q "AIPROF_HOST_SYS_PERIOD_MS=0 is not" "$bdir"/logs/*.log
# Under `aiprof run --host-sys` (no code change): the sampler runs too.
"$B/aiprof" run --host-sys cpu,mem --dir "$TMP/run" -- "$B/prog_ticker" 200 >/dev/null 2>&1
rdir=$(ls -d "$TMP"/run/*_ascend_pt | head -1)
/usr/bin/python3 - "$rdir" <<'PY'
import glob, sqlite3, sys
con = sqlite3.connect(glob.glob(sys.argv[1] + "/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler*.db")[0])
t = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
assert {"CPU_USAGE", "HOST_MEM_USAGE"} <= t and "HOST_DISK_USAGE" not in t, t
assert con.execute("SELECT count(*) FROM HOST_MEM_USAGE").fetchone()[0] >= 5
PY
echo "test_host_sys: ok"
