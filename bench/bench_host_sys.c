/*
 * bench_host_sys.c — what the host_sys sampler costs (docs/HOST_SYS.md).
 *
 * The program burns CPU on its main thread for DURATION seconds while a
 * trace samples everything (host_sys CPU, MEM, DISK, NETWORK and sys_io),
 * once at the default 20 ms period and once at 1 ms to magnify it; the
 * sampler's own CPU time (its STATUS record: CLOCK_THREAD_CPUTIME_ID of
 * its thread) is printed per sample and as a ratio of the process's CPU
 * time.  The anchor is one open()+read()+close() of /proc/self/stat
 * measured in the same run: a sample is a handful of such reads (the
 * process's stat, statm, io, each thread's stat, /proc/net/dev, and the
 * interface speeds).  Then each switch alone at 1 ms: what each costs.
 *
 *   bench_host_sys [DURATION_S]      (default 2)
 */
#include "aiprof.h"
#include "model.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static volatile uint64_t sink;

static int run(const char *base, int period_ms, unsigned host_sys, int sys_io, double seconds,
               aip__host_series *out)
{
    char env[16];
    snprintf(env, sizeof env, "%d", period_ms);
    setenv("AIPROF_HOST_SYS_PERIOD_MS", env, 1);
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = base;
    cfg.host_sys = host_sys;
    cfg.sys_io = sys_io;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s))
        return -1;
    uint64_t end = ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9), x = 1;
    while (ns(CLOCK_MONOTONIC) < end)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1;
    sink = x;
    aip_session_stop(s);
    char raw[4096];
    snprintf(raw, sizeof raw, "%s/FRAMEWORK/aiprof_%d.raw", aip_session_result_dir(s),
             (int)getpid());
    aip__model m;
    aip__model_init(&m);
    int rc = aip__model_load_raw(&m, raw) || aip__model_derive(&m) || !m.n_procs ||
             aip__host_derive(&m.procs[0], out);
    aip__model_free(&m);
    aip_session_destroy(s);
    return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    char base[] = "/tmp/aiprof_bench_host_XXXXXX";
    if (!mkdtemp(base))
        return 1;
    /* the anchor: one read of /proc/self/stat */
    char buf[4096];
    uint64_t t0 = ns(CLOCK_MONOTONIC);
    for (int i = 0; i < 2000; i++) {
        int fd = open("/proc/self/stat", O_RDONLY);
        sink += (uint64_t)read(fd, buf, sizeof buf);
        close(fd);
    }
    double anchor = (double)(ns(CLOCK_MONOTONIC) - t0) / 2000;
    printf("anchor: open+read+close of /proc/self/stat  %.2f us\n", anchor / 1e3);
    const unsigned all = AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK |
                         AIP_HOST_SYS_NETWORK;
    int periods[2] = {20, 1};
    for (int k = 0; k < 2; k++) {
        aip__host_series s;
        if (run(base, periods[k], all, 1, seconds, &s) || !s.has_status || !s.samples) {
            fprintf(stderr, "bench_host_sys: the run at %d ms recorded no sampler status\n",
                    periods[k]);
            return 1;
        }
        double per = (double)s.sampler_cpu_ns / (double)s.samples;
        printf("period %2d ms: %llu samples (%llu missed), sampler CPU %.3f ms = %.1f us per "
               "sample (%.1f anchors), %.3f%% of the process's CPU; at this period one core "
               "spends %.3f%% on sampling\n",
               periods[k], (unsigned long long)s.samples, (unsigned long long)s.missed,
               (double)s.sampler_cpu_ns / 1e6, per / 1e3, per / anchor,
               s.cpu_ns ? 100.0 * (double)s.sampler_cpu_ns / (double)s.cpu_ns : 0.0,
               100.0 * per / ((double)periods[k] * 1e6));
        aip__host_series_free(&s);
    }
    static const struct { const char *name; unsigned bits; int io; } one[] = {
        {"CPU (process + each thread)", AIP_HOST_SYS_CPU, 0}, {"MEM", AIP_HOST_SYS_MEM, 0},
        {"DISK", AIP_HOST_SYS_DISK, 0}, {"NETWORK", AIP_HOST_SYS_NETWORK, 0},
        {"sys_io (NIC + RoCE)", 0, 1}};
    for (size_t k = 0; k < sizeof one / sizeof one[0]; k++) {
        aip__host_series s;
        if (run(base, 1, one[k].bits, one[k].io, seconds / 2, &s) || !s.has_status || !s.samples)
            return 1;
        double per = (double)s.sampler_cpu_ns / (double)s.samples;
        printf("  %-28s %6.1f us per sample (%.1f anchors)\n", one[k].name, per / 1e3,
               per / anchor);
        aip__host_series_free(&s);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    return system(cmd) ? 1 : 0;
}
