/*
 * bench_flight.c — what an armed flight recorder costs against normal
 * recording (issue 30: "overhead while armed: within 5% of the normal
 * recording cost"; docs/FLIGHT_RECORDER.md).
 *
 * The same loop of annotation push+pop pairs records once normally (the
 * raw file under /tmp) and once into an armed flight recorder (its ring
 * where the library puts it by default: /dev/shm when it has room) whose
 * ring is smaller than what the loop records, so that it recycles (reads
 * back and counts) segments all along.  Per figure the minimum over the
 * repetitions: the calling thread's ns per pair (the hot path), and the
 * process's CPU ns per pair from start to stop (the writer thread's work
 * included: what the machine pays).  Each is printed with the armed /
 * normal ratio beside the 1.05 bound.  Then one dump of the
 * armed ring: its time and size.
 *
 *   bench_flight [--pairs N] [--reps R] [--ring-dir DIR]
 *   (defaults: 4000000 pairs, 5 reps, the ring where the library puts it)
 *
 * Results go into a mkdtemp directory under /tmp, removed at exit.
 */
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
static int reps = 5;
static const char *ring_dir; /* --ring-dir: NULL, the library's default */

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
    double hot_ns, cpu_ns;   /* per pair */
    unsigned long long dropped;
} figures;

static int run_once(int armed, int dump, figures *f)
{
    aip_config c;
    aip_config_init(&c);
    c.activities = AIP_ACTIVITY_CPU;
    c.dir_name = tmp_root;
    if (armed) {
        c.flight_recorder_seconds = 3600;
        c.flight_ring_bytes = RING_BYTES;
        c.flight_ring_dir = ring_dir;
    }
    aip_session *s;
    if (aip_session_create(&c, &s) != AIP_OK)
        return -1;
    double cpu0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (aip_session_start(s) != AIP_OK) {
        aip_session_destroy(s);
        return -1;
    }
    aip_string_id name = aip_intern("work");
    double t0 = now_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < pairs; i++) {
        aip_annotation_push_id(name);
        aip_annotation_pop();
    }
    double t1 = now_ns(CLOCK_MONOTONIC);
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
    double cpu1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    aip_session_destroy(s);
    f->hot_ns = (t1 - t0) / (double)pairs;
    f->cpu_ns = (cpu1 - cpu0) / (double)pairs;
    return 0;
}

static void print_ratio(const char *what, double normal, double armed)
{
    double r = armed / normal;
    printf("%s: normal %.1f ns, armed %.1f ns per pair: armed/normal %.3f (bound 1.05: %s)\n",
           what, normal, armed, r, r <= 1.05 ? "within" : "over");
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
    }
    if (!pairs || reps < 1) {
        fprintf(stderr, "usage: %s [--pairs N] [--reps R] [--ring-dir DIR]\n", argv[0]);
        return 2;
    }
    snprintf(tmp_root, sizeof tmp_root, "/tmp/aiprof_bench_flight_XXXXXX");
    if (!mkdtemp(tmp_root)) {
        fprintf(stderr, "bench_flight: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    printf("aiprof %s, %zu annotation pairs x %d repetitions, minimum per figure\n",
           aip_version(), pairs, reps);
    figures best[2] = {{1e30, 1e30, 0}, {1e30, 1e30, 0}};
    for (int r = 0; r < reps; r++)
        for (int armed = 0; armed < 2; armed++) { /* interleaved: drift hits both */
            figures f;
            if (run_once(armed, 0, &f)) {
                fprintf(stderr, "bench_flight: %s\n", aip_last_error());
                cleanup();
                return 1;
            }
            if (f.hot_ns < best[armed].hot_ns)
                best[armed].hot_ns = f.hot_ns;
            if (f.cpu_ns < best[armed].cpu_ns)
                best[armed].cpu_ns = f.cpu_ns;
            best[armed].dropped += f.dropped;
            cleanup();
            mkdir(tmp_root, 0700);
        }
    print_ratio("recording thread (push+pop)", best[0].hot_ns, best[1].hot_ns);
    print_ratio("process CPU, writer included", best[0].cpu_ns, best[1].cpu_ns);
    if (best[0].dropped || best[1].dropped)
        printf("events dropped at the buffer cap: normal %llu, armed %llu (figures not "
               "representative)\n", best[0].dropped, best[1].dropped);
    figures f;
    run_once(1, 1, &f);
    cleanup();
    return 0;
}
