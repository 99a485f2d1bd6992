/*
 * bench_flight.c — what an armed flight recorder costs against normal
 * recording (issue 30: "overhead while armed: within 5% of the normal
 * recording cost"; docs/FLIGHT_RECORDER.md).
 *
 * The same loop of annotation push+pop pairs records once normally (the
 * raw file under /tmp, or --normal-dir) and once into an armed flight
 * recorder (its ring where the library puts it by default: /dev/shm when
 * it has room, or --ring-dir) whose ring is smaller than what the loop
 * records, so that it recycles (reads back and counts) segments all
 * along.  Per figure the median over the rounds (normal and armed
 * interleaved, so that drift hits both): the process's CPU ns per pair
 * from start to stop (what the machine pays: the figure), split
 * into the recording thread's CPU and the writer's (the process's less
 * the recording thread's), and the calling thread's wall ns per pair (on
 * a loaded machine it measures the scheduler as much as the hot path).
 * Each is printed with the armed / normal ratio beside the 1.05
 * bound.  Then one dump of the armed ring: its time and size.
 *
 *   bench_flight [--pairs N] [--reps R] [--ring-dir DIR] [--normal-dir DIR]
 *                [--only normal|armed]   (one of them, under a profiler)
 *   (defaults: 4000000 pairs, 7 rounds, the ring where the library puts
 *   it, the normal raw under /tmp)
 *
 * Results go into a mkdtemp directory under /tmp, removed at exit.
 */
#include "bench_median.h"
#include "aiprof.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RING_BYTES (64ull << 20) /* 4 M pairs of 24 bytes: 96 MB through it */

static char tmp_root[64];
static size_t pairs = 4000000;
static int reps = 7;
static const char *ring_dir;   /* --ring-dir: NULL, the library's default */
static const char *normal_dir; /* --normal-dir: NULL, tmp_root */
static int only = -1;          /* --only normal|armed (for perf): -1 both */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void cleanup(void)
{
    if (tmp_root[0])
        nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static double now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct figures {
    double hot_ns, cpu_ns, rec_ns; /* per pair: wall of the loop, process CPU, its thread's CPU */
    double loop_ns;                /* per pair: the recording thread's CPU in the loop only */
    unsigned long long dropped;
} figures;

static int run_once(int armed, int dump, figures *f)
{
    aip_config c;
    aip_config_init(&c);
    c.activities = AIP_ACTIVITY_CPU;
    c.dir_name = normal_dir && !armed ? normal_dir : tmp_root;
    if (armed) {
        c.flight_recorder_seconds = 3600;
        c.flight_ring_bytes = RING_BYTES;
        c.flight_ring_dir = ring_dir;
    }
    aip_session *s;
    if (aip_session_create(&c, &s) != AIP_OK)
        return -1;
    double cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), rec0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    if (aip_session_start(s) != AIP_OK) {
        aip_session_destroy(s);
        return -1;
    }
    aip_string_id name = aip_intern("work");
    double l0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    double t0 = now_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < pairs; i++) {
        aip_annotation_push_id(name);
        aip_annotation_pop();
    }
    double t1 = now_ns(CLOCK_MONOTONIC);
    f->loop_ns = (now_ns(CLOCK_THREAD_CPUTIME_ID) - l0) / (double)pairs;
    f->dropped = aip_session_dropped_events(s);
    if (dump) {
        char dir[4096];
        struct stat st;
        char raw[4200];
        double d0 = now_ns(CLOCK_MONOTONIC);
        aip_status ds = aip_flight_dump("bench", dir, sizeof dir);
        double d1 = now_ns(CLOCK_MONOTONIC);
        snprintf(raw, sizeof raw, "%s/FRAMEWORK/aiprof_%d.raw", dir, (int)getpid());
        if (ds == AIP_OK && stat(raw, &st) == 0)
            printf("dump of the armed ring (%llu MiB bound): %.1f ms, %.1f MB raw\n",
                   (unsigned long long)(RING_BYTES >> 20), (d1 - d0) / 1e6,
                   (double)st.st_size / 1e6);
        else
            printf("dump of the armed ring failed: %s\n", aip_last_error());
    }
    aip_session_stop(s);
    double cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID), rec1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    aip_session_destroy(s);
    f->hot_ns = (t1 - t0) / (double)pairs;
    f->cpu_ns = (cpu1 - cpu0) / (double)pairs;
    f->rec_ns = (rec1 - rec0) / (double)pairs;
    return 0;
}

static void print_ratio(const char *what, double normal, double armed)
{
    double r = armed / normal;
    printf("%s: normal %.1f ns, armed %.1f ns per pair: armed/normal %.3f (bound 1.05: %s)\n",
           what, normal, armed, r, r <= 1.05 ? "within" : "over");
}


/* Remove everything under tmp_root (and under --normal-dir, the normal
 * run's result directories: only what this bench made, *_ascend_pt). */
static void clean_round(void)
{
    cleanup();
    mkdir(tmp_root, 0700);
    if (normal_dir) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf -- '%s'/*_ascend_pt", normal_dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_flight: could not clean %s\n", normal_dir);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--pairs"))
            pairs = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ring-dir"))
            ring_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--normal-dir"))
            normal_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--only"))
            only = !strcmp(argv[i + 1], "armed");
    }
    if (!pairs || reps < 1 || reps > 99 || (normal_dir && strchr(normal_dir, '\''))) {
        fprintf(stderr, "usage: %s [--pairs N] [--reps R<100] [--ring-dir DIR] "
                        "[--normal-dir DIR]\n", argv[0]);
        return 2;
    }
    snprintf(tmp_root, sizeof tmp_root, "/tmp/aiprof_bench_flight_XXXXXX");
    if (!mkdtemp(tmp_root)) {
        fprintf(stderr, "bench_flight: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    printf("aiprof %s, %zu annotation pairs x %d rounds, median per figure; normal raw in %s, "
           "ring in %s\n", aip_version(), pairs, reps, normal_dir ? normal_dir : tmp_root,
           ring_dir ? ring_dir : "the default place");
    double hot[2][100], cpu[2][100], rec[2][100], wr[2][100], steady[2][100];
    unsigned long long dropped[2] = {0, 0};
    for (int r = 0; r < reps; r++)
        for (int armed = 0; armed < 2; armed++) { /* interleaved: drift hits both */
            figures f;
            if (only >= 0 && armed != only)
                continue;
            if (run_once(armed, 0, &f)) {
                fprintf(stderr, "bench_flight: %s\n", aip_last_error());
                cleanup();
                return 1;
            }
            hot[armed][r] = f.hot_ns;
            cpu[armed][r] = f.cpu_ns;
            rec[armed][r] = f.rec_ns;
            wr[armed][r] = f.cpu_ns - f.rec_ns;
            steady[armed][r] = f.loop_ns + wr[armed][r];
            dropped[armed] += f.dropped;
            clean_round();
        }
    if (only >= 0) { /* --only: the other's figures are its own (ratios of 1) */
        memcpy(hot[!only], hot[only], sizeof hot[0]);
        memcpy(cpu[!only], cpu[only], sizeof cpu[0]);
        memcpy(rec[!only], rec[only], sizeof rec[0]);
        memcpy(wr[!only], wr[only], sizeof wr[0]);
        memcpy(steady[!only], steady[only], sizeof steady[0]);
    }
    print_ratio("recording cost (recording thread in the loop + writer)", median(steady[0], reps),
                median(steady[1], reps));
    print_ratio("process CPU from start to stop", median(cpu[0], reps), median(cpu[1], reps));
    print_ratio("  of which the recording thread's (start and stop included)", median(rec[0], reps),
                median(rec[1], reps));
    print_ratio("  of which the writer's", median(wr[0], reps), median(wr[1], reps));
    print_ratio("recording thread wall (push+pop)", median(hot[0], reps), median(hot[1], reps));
    if (dropped[0] || dropped[1])
        printf("events dropped at the buffer cap: normal %llu, armed %llu (figures not "
               "representative)\n", dropped[0], dropped[1]);
    figures f;
    run_once(1, 1, &f);
    cleanup();
    return 0;
}
