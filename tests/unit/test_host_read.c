/*
 * test_host_read.c — the host sampler's parsers (src/collect/host/
 * host_read.c) on real and hostile text, and the analyser's host series
 * (src/analysis/host_load.c) on a raw file built byte by byte: CPU split
 * into user / system, each core's share, memory %, disk rates, network
 * usage without loopback, NIC rows with error and drop rates, an interval
 * whose counters went backwards, and records of an unknown kind.
 */
#include "aip_test.h"
#include "collect/host/host_sampler.h"
#include "model.h"
#include "raw_builder.h"
#include "tmp_dir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmp[512];

#define T(s) s, sizeof(s) - 1

static void test_proc_stat(void)
{
    aip__proc_stat st;
    /* the command name holds ") (" and spaces: the last ')' ends it */
    const char line[] = "77 (a) (b c) R 1 77 77 0 -1 4194304 11 0 22 0 300 40 0 0 20 0 5 0 "
                        "100 1000 250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 "
                        "9 0 0\n";
    ASSERT_EQ(aip__parse_proc_stat(T(line), &st), 0);
    ASSERT_EQ(st.minflt, 11);
    ASSERT_EQ(st.majflt, 22);
    ASSERT_EQ(st.utime, 300);
    ASSERT_EQ(st.stime, 40);
    ASSERT_EQ(st.num_threads, 5);
    ASSERT_EQ(st.processor, 3);
    ASSERT_EQ(st.blkio_ticks, 9);
    /* an old kernel's short line: no processor, no blkio */
    ASSERT_EQ(aip__parse_proc_stat(T("1 (x) S 1 1 1 0 -1 0 1 0 2 0 3 4 0 0 20 0 1"), &st), 0);
    ASSERT_EQ(st.utime, 3);
    ASSERT_EQ(st.processor, 0);
    /* too short, no ')' at all, garbage */
    ASSERT_EQ(aip__parse_proc_stat(T("1 (x) S 1 2 3"), &st), -1);
    ASSERT_EQ(aip__parse_proc_stat(T("1 x S 1 2 3 4 5 6 7 8 9 10 11 12 13"), &st), -1);
    ASSERT_EQ(aip__parse_proc_stat(T("1 (x)"), &st), -1);
    ASSERT_EQ(aip__parse_proc_stat("", 0, &st), -1);
    /* numbers that overflow saturate instead of wrapping */
    ASSERT_EQ(aip__parse_proc_stat(T("1 (x) S 1 1 1 0 -1 0 1 0 2 0 99999999999999999999999 4"),
                                   &st), 0);
    ASSERT_TRUE(st.utime == UINT64_MAX);
}

static void test_statm_io_meminfo(void)
{
    uint64_t m[3], io[7];
    ASSERT_EQ(aip__parse_statm(T("1000 250 40 10 0 200 0\n"), m), 0);
    ASSERT_EQ(m[1], 250);
    ASSERT_EQ(aip__parse_statm(T("12"), m), -1);
    const char text[] = "rchar: 100\nwchar: 200\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\n"
                        "write_bytes: 8192\ncancelled_write_bytes: 0\n";
    ASSERT_EQ(aip__parse_proc_io(T(text), io), 7);
    ASSERT_EQ(io[0], 100);
    ASSERT_EQ(io[5], 8192);
    ASSERT_EQ(aip__parse_proc_io(T("rchar: 5\nnonsense\nwchar:x\n"), io), 1);
    ASSERT_EQ(io[1], 0);
    /* a key that is a prefix of another is not confused with it */
    ASSERT_EQ(aip__parse_proc_io(T("read_bytesx: 9\nread_bytes: 7\n"), io), 1);
    ASSERT_EQ(io[4], 7);
    ASSERT_EQ(aip__parse_meminfo_total(T("MemFree: 5 kB\nMemTotal:  8000 kB\n")), 8000 * 1024);
    ASSERT_EQ(aip__parse_meminfo_total(T("MemFree: 5 kB\n")), 0);
}

static void test_net_dev_and_rate(void)
{
    const char text[] =
        "Inter-|   Receive                            |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes ...\n"
        "    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n"
        "  eth0: 5000 50 1 2 0 0 0 0 7000 70 3 4 0 0 0 0\n"
        "  bad: 1 2 3\n"
        "veth-with-a-name-longer-than-thirty-one-chars: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
        "  eth1: 1 1 0 0 0 0 0 0 2 2 0 0 0 0 0 0";
    aip__netdev d[4];
    ASSERT_EQ(aip__parse_net_dev(T(text), d, 4), 3);
    ASSERT_STREQ(d[1].name, "eth0");
    ASSERT_EQ(d[1].rx_errs, 1);
    ASSERT_EQ(d[1].rx_drop, 2);
    ASSERT_EQ(d[1].tx_bytes, 7000);
    ASSERT_EQ(d[1].tx_drop, 4);
    ASSERT_STREQ(d[2].name, "eth1"); /* no final newline */
    ASSERT_EQ(aip__parse_net_dev(T(text), d, 1), 1);
    ASSERT_EQ(aip__parse_link_rate(T("100 Gb/sec (4X EDR)\n")), 100000);
    ASSERT_EQ(aip__parse_link_rate(T("2.5 Gb/sec (1X SDR)")), 2500);
    ASSERT_EQ(aip__parse_link_rate(T("10 Mb/sec")), 10);
    ASSERT_EQ(aip__parse_link_rate(T("fast")), 0);
}

static void hs(rb_buf *e, uint8_t what, uint64_t ts, uint32_t name, uint32_t index,
               uint8_t flags, const uint64_t *v)
{
    aip__rec_host_sample r;
    memset(&r, 0, sizeof r);
    r.h = (aip__rec_header){AIP_REC_HOST_SAMPLE, flags, sizeof r, name};
    r.ts = ts;
    r.what = what;
    r.index = index;
    for (int i = 0; i < 8; i++)
        r.v[i] = v[i];
    rb_put(e, &r, sizeof r);
}

#define MS 1000000ull

static void test_series(void)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 5);
    rb_info(&b, 4242, "prog", 1e9); /* ticks are ns */
    rb_clock(&b, 0, 0, 1000000000000ull);
    static const char *const names[] = {"lo", "eth0"};
    rb_strings(&b, 1, names, NULL, 2);
    for (uint64_t i = 0; i < 3; i++) {
        uint64_t ts = i * 20 * MS;
        /* 10 ms of CPU per 20 ms interval, 3/4 user by the tick counts */
        uint64_t cpu[8] = {i * 30 * MS, i * 10 * MS, i * 10 * MS, 2, 4};
        hs(&e, AIP_HOST_PROC_CPU, ts, 0, 0, AIP_HOSTF_PRECISE, cpu);
        /* both threads on core 1; thread 10 has its run time (9 ms per
         * interval, the ticks say 8), thread 11 only ticks */
        uint64_t t1[8] = {i * 6 * MS, i * 2 * MS, 1, i * 9 * MS}, t2[8] = {i * 2 * MS, 0, 1};
        hs(&e, AIP_HOST_THREAD_CPU, ts, 0, 10, AIP_HOSTF_PRECISE, t1);
        hs(&e, AIP_HOST_THREAD_CPU, ts, 0, 11, 0, t2);
        uint64_t mem[8] = {(i + 1) << 20, 8 << 20, 0, 10 * i, i, 4 << 20};
        hs(&e, AIP_HOST_MEM, ts, 0, 0, 0, mem);
        uint64_t disk[8] = {i * 4096, i * 8192, 0, 0, 0, 0, 0, i * 2 * MS};
        hs(&e, AIP_HOST_DISK, ts, 0, 0, AIP_HOSTF_DELAYACCT, disk);
        uint64_t lo[8] = {i * 1000000, 0, 0, 0, i * 1000000};
        hs(&e, AIP_HOST_NET, ts, 1, UINT32_MAX, AIP_HOSTF_NETWORK | AIP_HOSTF_NIC, lo);
        /* eth0: 1 Mb/s; the third sample's rx counters went backwards */
        uint64_t eth[8] = {i == 2 ? 0 : i * 1250, i == 2 ? 0 : i * 100, i, 2 * i, i * 1250,
                           i * 50, 0, 0};
        hs(&e, AIP_HOST_NET, ts, 2, 1, AIP_HOSTF_NETWORK | AIP_HOSTF_NIC, eth);
    }
    uint64_t junk[8] = {0};
    hs(&e, 0, 5, 0, 0, 0, junk);
    hs(&e, 42, 5, 0, 0, 0, junk);
    uint64_t st[8] = {3, 1, 25 * MS, 2 * MS, AIP_HOSTSRC_IO, 20 * MS};
    hs(&e, AIP_HOST_STATUS, 41 * MS, 0, 0, 0, st);
    rb_events(&b, 10, &e);
    rb_end(&b);
    char path[600];
    snprintf(path, sizeof path, "%s/host.raw", tmp);
    ASSERT_EQ(rb_write_file(path, b.data, b.len), 0);
    rb_free(&b);
    rb_free(&e);

    aip__model m;
    aip__model_init(&m);
    ASSERT_EQ(aip__model_load_raw(&m, path), AIP_OK);
    ASSERT_EQ(aip__model_derive(&m), AIP_OK);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->host_bad_records, 2);
    aip__host_series s;
    ASSERT_EQ(aip__host_derive(p, &s), AIP_OK);
    ASSERT_EQ(s.n_cpu, 2);
    ASSERT_EQ(s.cpu[0].ts, 1000000000000ll);
    ASSERT_TRUE(fabs(s.cpu[0].user_pct - 37.5) < 1e-9 && fabs(s.cpu[0].sys_pct - 12.5) < 1e-9);
    ASSERT_TRUE(fabs(s.cpu[0].avg_pct - 12.5) < 1e-9); /* 50 % of one core over 4 CPUs */
    ASSERT_EQ(s.cpu_ns, 20 * MS);
    ASSERT_EQ(s.cpu_user_ns, 15 * MS);
    ASSERT_EQ(s.n_core, 2); /* core 1 in each interval: (9 + 2) ms of 20 */
    ASSERT_EQ(s.core[0].core, 1);
    ASSERT_TRUE(fabs(s.core[0].usage_pct - 55) < 1e-9);
    ASSERT_EQ(s.n_threads, 2);
    ASSERT_EQ(s.threads[0].tid, 10);
    ASSERT_EQ(s.threads[0].cpu_ns, 18 * MS);
    ASSERT_EQ(s.threads[1].cpu_ns, 4 * MS);
    ASSERT_EQ(s.n_mem, 3);
    ASSERT_TRUE(fabs(s.mem[0].usage_pct - 25) < 1e-9);
    ASSERT_EQ(s.rss_peak, 3 << 20);
    ASSERT_EQ(s.minflt, 20);
    ASSERT_EQ(s.n_disk, 2);
    ASSERT_TRUE(fabs(s.disk[0].read_rate - 4096 / 0.02) < 1e-6);
    ASSERT_TRUE(fabs(s.disk[0].usage_pct - 10) < 1e-9);
    ASSERT_EQ(s.write_bytes, 16384);
    /* network: loopback left out; eth0's first interval is 2500 B in 20 ms
     * of a 125000 B/s link; its second interval went backwards: none */
    ASSERT_EQ(s.n_net, 1);
    ASSERT_TRUE(fabs(s.net[0].speed - 125000) < 1e-6);
    ASSERT_TRUE(fabs(s.net[0].usage_pct - 100) < 1e-9);
    ASSERT_EQ(s.n_net_if, 3); /* per interface, loopback included: as the NIC rows */
    /* NIC rows: lo twice, eth0 once (its second interval was reset) */
    ASSERT_EQ(s.n_nic, 3);
    const aip__host_nic *eth = NULL;
    for (size_t i = 0; i < s.n_nic; i++)
        if (s.nic[i].func_id == 1)
            eth = &s.nic[i];
    ASSERT_TRUE(eth != NULL);
    ASSERT_EQ(eth->bandwidth, 125000);
    ASSERT_TRUE(fabs(eth->rx_error_pct - 1) < 1e-9 && fabs(eth->rx_drop_pct - 2) < 1e-9);
    ASSERT_TRUE(fabs(eth->rx_packet_rate - 5000) < 1e-6);
    ASSERT_TRUE(s.has_status && s.missed == 1 && s.sources_bad == AIP_HOSTSRC_IO);
    aip__host_series_free(&s);
    aip__model_free(&m);
}

/* MEM samples in the raw file of the session's last trace; -1 on error. */
static long mem_samples(const aip_session *ss)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/FRAMEWORK/aiprof_%d.raw", aip_session_result_dir(ss),
             (int)getpid());
    aip__model m;
    aip__model_init(&m);
    long n = -1;
    if (!aip__model_load_raw(&m, path) && !aip__model_derive(&m) && m.n_procs) {
        n = 0;
        for (size_t i = 0; i < m.procs[0].host.n; i++)
            n += m.procs[0].host.v[i].what == AIP_HOST_MEM;
    }
    aip__model_free(&m);
    return n;
}

static aip_session *mem_session(const char *sub)
{
    char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", tmp, sub);
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = dir;
    cfg.host_sys = AIP_HOST_SYS_MEM;
    aip_session *ss = NULL;
    if (aip_session_create(&cfg, &ss) || aip_session_start(ss))
        return NULL;
    return ss;
}

/* A fork while the sampler runs: the child has no sampler but can start
 * its own (the fork handler let go of the parent's), and the parent's
 * trace keeps sampling. */
static void test_fork_while_sampling(void)
{
    aip_session *ss = mem_session("parent");
    ASSERT_TRUE(ss != NULL);
    struct timespec z = {0, 60 * 1000000L};
    nanosleep(&z, NULL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        aip_session *c = mem_session("child");
        if (!c)
            _exit(3);
        nanosleep(&z, NULL);
        aip_session_stop(c);
        long n = mem_samples(c);
        aip_session_destroy(c);
        _exit(n >= 2 ? 0 : 4);
    }
    ASSERT_TRUE(pid > 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    nanosleep(&z, NULL);
    aip_session_stop(ss);
    ASSERT_TRUE(mem_samples(ss) >= 4);
    aip_session_destroy(ss);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "host_read");
    static const aip_test_case cases[] = {
        TEST_CASE(test_proc_stat),
        TEST_CASE(test_statm_io_meminfo),
        TEST_CASE(test_net_dev_and_rate),
        TEST_CASE(test_series),
        TEST_CASE(test_fork_while_sampling),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
