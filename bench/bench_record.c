/*
 * bench_record.c — what instrumentation costs the profiled program.
 *
 * The recording API promises "one relaxed atomic load when nothing is
 * recording" and a cheap, non-blocking, allocation-free path when it is.
 * This program measures both, per push+pop pair, for mstx ranges
 * (AIP_RANGE_PUSH / aip_range_pop) and annotations (AIP_ANNOTATION_PUSH /
 * aip_annotation_pop), on 1 and 2 threads, and expresses each figure as a
 * multiple of two clock_gettime(CLOCK_MONOTONIC) calls measured in the same
 * run (the floor any timestamping profiler pays for a begin/end pair).
 * Each figure is the minimum over several repetitions, which filters out
 * scheduler noise rather than averaging it in.
 *
 * It also reports the raw file's bytes per framework op (no shapes, with and
 * without a sequence number): docs/RAW_FORMAT.md promises 24 and 32 bytes
 * per record, plus chunk, string and clock overhead.
 *
 *   bench_record [--pairs N] [--reps R]     (defaults: 1000000 pairs, 5 reps)
 *
 * Results are written into a mkdtemp directory under /tmp, removed at exit.
 */
#include "aiprof.h"

#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 2
#define MAX_REPS 64

#define CHECK(call)                                                            \
    do {                                                                       \
        aip_status check_st_ = (call);                                         \
        if (check_st_ != AIP_OK) {                                             \
            fprintf(stderr, "bench_record: %s failed: %s: %s\n", #call,        \
                    aip_strerror(check_st_), aip_last_error());                \
            cleanup_and_exit(1);                                               \
        }                                                                      \
    } while (0)

static char tmp_root[64];
static size_t pairs = 1000000;
static int reps = 5;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (remove(path) != 0)
        fprintf(stderr, "bench_record: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

static void remove_tree(const char *path)
{
    /* FTW_PHYS: never follow a link out of our own directory. */
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static _Noreturn void cleanup_and_exit(int code)
{
    if (tmp_root[0])
        remove_tree(tmp_root);
    exit(code);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------------
 * The measured loops.  Each does `n` begin/end pairs.
 * ---------------------------------------------------------------------- */
/* Keeps the clock loop's results alive; atomic because both threads store. */
static _Atomic long sink;

static void clock_pairs(size_t n)
{
    struct timespec a, b;
    long acc = 0;
    for (size_t i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        acc += b.tv_nsec - a.tv_nsec;
    }
    atomic_store_explicit(&sink, acc, memory_order_relaxed);
}

#if defined(__x86_64__)
#include <x86intrin.h>
/* The floor of any recorder that timestamps both ends: two TSC reads. */
static void tsc_pairs(size_t n)
{
    unsigned long long acc = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned long long a = __rdtsc();
        acc += __rdtsc() - a;
    }
    atomic_store_explicit(&sink, (long)acc, memory_order_relaxed);
}
#endif

static void range_pairs(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        AIP_RANGE_PUSH("bench", "range_pair");
        AIP_RANGE_POP();
    }
}

static void annotation_pairs(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        AIP_ANNOTATION_PUSH("annotation_pair");
        AIP_ANNOTATION_POP();
    }
}

/* ------------------------------------------------------------------------
 * Running a loop on T threads, R times.
 *
 * The threads live for all repetitions (so per-thread buffers are set up
 * once, as in a real program) and start each repetition together at a
 * barrier, so the 2-thread figures measure the threads really overlapping.
 * ---------------------------------------------------------------------- */
struct run {
    void (*loop)(size_t);
    int threads;
    pthread_barrier_t start;
    uint64_t elapsed[MAX_REPS][MAX_THREADS];
};

struct worker {
    struct run *run;
    int index;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct run *r = w->run;
    for (int rep = 0; rep < reps; rep++) {
        pthread_barrier_wait(&r->start);
        uint64_t t0 = now_ns();
        r->loop(pairs);
        r->elapsed[rep][w->index] = now_ns() - t0;
    }
    return NULL;
}

/* @return ns per pair: per repetition the mean over threads of each
 * thread's own time, then the minimum over repetitions. */
static double measure(void (*loop)(size_t), int threads)
{
    struct run r = {.loop = loop, .threads = threads};
    struct worker w[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int err = pthread_barrier_init(&r.start, NULL, (unsigned)threads);
    if (err) {
        fprintf(stderr, "bench_record: pthread_barrier_init: %s\n", strerror(err));
        cleanup_and_exit(1);
    }
    for (int t = 0; t < threads; t++) {
        w[t] = (struct worker){&r, t};
        err = pthread_create(&tid[t], NULL, worker_main, &w[t]);
        if (err) {
            fprintf(stderr, "bench_record: pthread_create: %s\n", strerror(err));
            cleanup_and_exit(1);
        }
    }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&r.start);

    double best = 0;
    for (int rep = 0; rep < reps; rep++) {
        double sum = 0;
        for (int t = 0; t < threads; t++)
            sum += (double)r.elapsed[rep][t];
        double per_pair = sum / threads / (double)pairs;
        if (rep == 0 || per_pair < best)
            best = per_pair;
    }
    return best;
}

/* ------------------------------------------------------------------------
 * Sessions
 * ---------------------------------------------------------------------- */
static char last_result_dir[4096];

static void remember_result_dir(aip_session *s, const char *dir, void *data)
{
    snprintf(last_result_dir, sizeof last_result_dir, "%s", dir);
}

/* A session without schedule records from start to stop: torch's default
 * (every step RECORD), one result directory. */
static aip_session *start_recording(const char *subdir)
{
    static char dir[128];
    snprintf(dir, sizeof dir, "%s/%s", tmp_root, subdir);
    if (mkdir(dir, 0750) != 0) {
        fprintf(stderr, "bench_record: mkdir %s: %s\n", dir, strerror(errno));
        cleanup_and_exit(1);
    }
    aip_config config;
    aip_config_init(&config);
    config.activities = AIP_ACTIVITY_CPU;
    config.mstx = 1;
    config.dir_name = dir;
    config.worker_name = "bench";
    config.on_trace_ready = remember_result_dir;
    /* Room for every repetition of the largest figure (2 threads x 32-byte
     * range records) in case the writer falls behind; drops are reported. */
    config.buffer_cap_bytes = (size_t)1 << 30;

    aip_session *s = NULL;
    last_result_dir[0] = '\0';
    CHECK(aip_session_create(&config, &s));
    CHECK(aip_session_start(s));
    if (!aip_is_recording()) {
        fprintf(stderr, "bench_record: session started but aip_is_recording() is 0\n");
        cleanup_and_exit(1);
    }
    return s;
}

/* Stop and destroy; @return the number of events dropped at the cap. */
static uint64_t stop_recording(aip_session *s)
{
    CHECK(aip_session_stop(s));
    uint64_t dropped = aip_session_dropped_events(s);
    aip_session_destroy(s);
    return dropped;
}

static void report(const char *what, const char *mode, int threads, double ns, double clock_ns,
                   uint64_t dropped)
{
    printf("%s, %s, %d thread%s: %.1f ns (%.2fx two clock_gettime)", what, mode, threads,
           threads == 1 ? "" : "s", ns, ns / clock_ns);
    if (dropped)
        printf(" [%" PRIu64 " events dropped: figure is not representative]", dropped);
    printf("\n");
    fflush(stdout);
}

static void bench_pairs(const char *what, void (*loop)(size_t), const double clock_ns[])
{
    for (int threads = 1; threads <= MAX_THREADS; threads++)
        report(what, "not recording", threads, measure(loop, threads), clock_ns[threads], 0);
    for (int threads = 1; threads <= MAX_THREADS; threads++) {
        char sub[64];
        snprintf(sub, sizeof sub, "%s_%d", loop == range_pairs ? "range" : "annotation",
                 threads);
        aip_session *s = start_recording(sub);
        double ns = measure(loop, threads);
        uint64_t dropped = stop_recording(s);
        report(what, "recording", threads, ns, clock_ns[threads], dropped);
    }
}

/* ------------------------------------------------------------------------
 * Raw bytes per op
 * ---------------------------------------------------------------------- */
static void bench_op_bytes(const char *label, int with_sequence)
{
    const size_t n = pairs;
    aip_session *s = start_recording(with_sequence ? "ops_seq" : "ops");
    aip_op_info op = {.name_id = aip_intern("aten::mm"), .sequence_number = -1};
    for (size_t i = 0; i < n; i++) {
        if (with_sequence)
            op.sequence_number = (int64_t)i;
        aip_op_begin(&op);
        aip_op_end();
    }
    uint64_t dropped = stop_recording(s);

    if (!last_result_dir[0]) {
        fprintf(stderr, "bench_record: on_trace_ready was not called at stop\n");
        cleanup_and_exit(1);
    }
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s/FRAMEWORK/*.raw", last_result_dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) {
        fprintf(stderr, "bench_record: no raw file matches %s\n", pattern);
        cleanup_and_exit(1);
    }
    off_t total = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct stat st;
        if (stat(g.gl_pathv[i], &st) != 0) {
            fprintf(stderr, "bench_record: stat %s: %s\n", g.gl_pathv[i], strerror(errno));
            globfree(&g);
            cleanup_and_exit(1);
        }
        total += st.st_size;
    }
    globfree(&g);
    printf("raw bytes per op, no shapes, %s: %.2f B (%zu ops, %.1f MB raw)", label,
           (double)total / (double)n, n, (double)total / 1e6);
    if (dropped)
        printf(" [%" PRIu64 " events dropped]", dropped);
    printf("\n");
}

static size_t parse_count(const char *flag, const char *text, size_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = text ? strtoull(text, &end, 10) : 0;
    if (!text || errno || end == text || *end || v == 0 || v > max) {
        fprintf(stderr, "bench_record: %s needs an integer in 1..%zu\n", flag, max);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--pairs"))
            pairs = parse_count("--pairs", argv[i + 1], (size_t)1 << 30);
        else if (!strcmp(argv[i], "--reps"))
            reps = (int)parse_count("--reps", argv[i + 1], MAX_REPS);
        else {
            fprintf(stderr, "usage: %s [--pairs N] [--reps R]\n", argv[0]);
            return 2;
        }
    }
    snprintf(tmp_root, sizeof tmp_root, "/tmp/aiprof_bench_XXXXXX");
    if (!mkdtemp(tmp_root)) {
        fprintf(stderr, "bench_record: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    printf("aiprof %s, %zu pairs x %d repetitions, minimum per figure\n", aip_version(),
           pairs, reps);

    double clock_ns[MAX_THREADS + 1];
    for (int threads = 1; threads <= MAX_THREADS; threads++) {
        clock_ns[threads] = measure(clock_pairs, threads);
        printf("two clock_gettime, %d thread%s: %.1f ns\n", threads, threads == 1 ? "" : "s",
               clock_ns[threads]);
    }
#if defined(__x86_64__)
    printf("two rdtsc (the timestamping floor), 1 thread: %.1f ns\n", measure(tsc_pairs, 1));
#endif
    bench_pairs("range pair", range_pairs, clock_ns);
    bench_pairs("annotation pair", annotation_pairs, clock_ns);
    bench_op_bytes("sequence_number -1", 0);
    bench_op_bytes("with sequence_number", 1);

    cleanup_and_exit(0);
}
