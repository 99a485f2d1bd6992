/*
 * bench_trace_perfetto.c — trace.perfetto-trace against trace_view.json on
 * the same model, in the same run (issue 30: ≤ 30 bytes an event on
 * host-only profiles, written faster than the JSON).
 *
 * The profile is bench_analyse.c's (N framework ops on T threads, nested
 * two levels, autograd sequence numbers on the parents, ProfilerStep#
 * annotations; --device: every op triple launches a runtime call and a
 * kernel).  It is loaded and derived once; then each writer writes its
 * file ROUNDS times, interleaved (JSON, Perfetto, Perfetto, JSON, ...: a
 * shared machine's drift falls on both), each through the exporters'
 * aip__out (temporary file, rename).  Printed: each writer's median wall
 * time and bytes per recorded event (bench_analyse's "trace bytes per
 * event"), their ratios, and "ok" / "MISS" against the targets.
 *
 * Usage: bench_trace_perfetto [N_EVENTS (default 2000000)] [THREADS (4)]
 *                             [--device] [--rounds ROUNDS (default 3)] [--keep]
 */
#define main bench_analyse_main /* its generator, not its main */
#include "bench_analyse.c"
#undef main

#include "export.h"
#include "result.h"

enum { PF_MAX_ROUNDS = 15 };

/* One file written by `fn` from `m`; @return seconds, < 0 on failure. */
static double write_one(const aip__model *m, aip__export_fn fn, const char *path,
                        long long *bytes)
{
    aip__out o;
    double t0 = now();
    aip_status s = aip__out_open(&o, path);
    if (!s)
        s = aip__out_finish(&o, fn(m, &o));
    double t1 = now();
    if (s) {
        fprintf(stderr, "%s: %s\n", path, aip_last_error());
        return -1;
    }
    *bytes = file_size(path);
    return t1 - t0;
}

int main(int argc, char **argv)
{
    uint64_t n = 2000000;
    unsigned threads = 4;
    int rounds = 3, keep = 0, pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device"))
            with_device = 1;
        else if (!strcmp(argv[i], "--keep"))
            keep = 1;
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (pos == 0 && (pos = 1))
            n = strtoull(argv[i], NULL, 10);
        else
            threads = (unsigned)atoi(argv[i]);
    }
    if (rounds < 1 || rounds > PF_MAX_ROUNDS || !n || !threads) {
        fprintf(stderr, "usage: bench_trace_perfetto [N_EVENTS] [THREADS] [--device] "
                "[--rounds 1..%d] [--keep]\n", PF_MAX_ROUNDS);
        return 2;
    }
    char root[] = "/tmp/aip_bench_pf_XXXXXX";
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    char dir[256], fw[300], raw[400], json[400], pf[400];
    snprintf(dir, sizeof dir, "%s/bench_ascend_pt", root);
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", dir);
    snprintf(raw, sizeof raw, "%s/aiprof_31337.raw", fw);
    snprintf(json, sizeof json, "%s/trace_view.json", root);
    snprintf(pf, sizeof pf, "%s/trace.perfetto-trace", root);
    mkdir(dir, 0750);
    mkdir(fw, 0750);
    uint64_t steps;
    uint64_t events = write_profile(raw, n, threads, &steps);
    aip__run_log r;
    aip__model m;
    double l0 = now();
    if (aip__result_open(dir, 1, &r, &m)) {
        fprintf(stderr, "load: %s\n", aip_last_error());
        return 1;
    }
    double l1 = now();
    double tj[PF_MAX_ROUNDS], tp[PF_MAX_ROUNDS];
    long long bj = 0, bp = 0;
    for (int k = 0; k < rounds; k++) {
        int pf_first = k & 1;
        for (int w = 0; w < 2; w++) {
            int is_pf = pf_first ? w == 0 : w == 1;
            double t = is_pf ? write_one(&m, aip__export_trace_perfetto, pf, &bp)
                             : write_one(&m, aip__export_trace_json, json, &bj);
            if (t < 0)
                return 1;
            (is_pf ? tp : tj)[k] = t;
        }
    }
    double mj = median(tj, rounds), mp = median(tp, rounds);
    double bpe_j = (double)bj / (double)events, bpe_p = (double)bp / (double)events;
    printf("bench_trace_perfetto: %llu events (%s, %u threads), model loaded in %.3f s; "
           "median of %d rounds, interleaved\n", (unsigned long long)events,
           with_device ? "with device tasks" : "host-only", threads, l1 - l0, rounds);
    printf("  trace_view.json       %11lld bytes  %7.1f B/event  %.3f s  %.2f M events/s\n",
           bj, bpe_j, mj, (double)events / mj / 1e6);
    printf("  trace.perfetto-trace  %11lld bytes  %7.1f B/event  %.3f s  %.2f M events/s\n",
           bp, bpe_p, mp, (double)events / mp / 1e6);
    printf("  perfetto/json: size %.3f, time %.3f (speed-up %.2fx)\n", (double)bp / (double)bj,
           mp / mj, mj / mp);
    if (!with_device)
        printf("  target <= 30 B/event: %s; target faster than the JSON: %s\n",
               bpe_p <= 30.0 ? "ok" : "MISS", mp < mj ? "ok" : "MISS");
    aip__model_free(&m);
    aip__runlog_free(&r);
    if (!keep) {
        unlink(json);
        unlink(pf);
        unlink(raw);
        char p[600];
        snprintf(p, sizeof p, "%s/logs", dir);
        rmdir(p);
        rmdir(fw);
        rmdir(dir);
        rmdir(root);
    } else {
        printf("  kept: %s\n", root);
    }
    return 0;
}
