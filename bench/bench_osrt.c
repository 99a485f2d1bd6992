/*
 * bench_osrt.c — what host_sys OSRT costs each intercepted call
 * (docs/OSRT.md), as a ratio to the same call with the GOT untouched.
 *
 * Three calls of different weight: an uncontended pthread_mutex_lock +
 * unlock (only the lock is wrapped; ~15 ns), close(-1) (a syscall that
 * fails at once, EBADF) and a 1-byte read of /dev/zero.  Each is timed
 * (minimum over repetitions of the mean per call, which filters scheduler
 * noise) in four states:
 *   plain      no trace: the GOT entries lead to libc (the baseline);
 *   timed      OSRT on, default 10 ms threshold: the wrapper reads the
 *              clock twice and records nothing (the common case);
 *   recorded   OSRT on, threshold 0: every call becomes a 40-byte record;
 *   after      the trace stopped: the entries are restored (ratio ~1).
 * While the wrappers are installed and recording is off (only between the
 * patch and the first record, or the stop and the restore) a call pays one
 * load and a branch more than `plain`, too little to time apart from it.
 *
 * It links libaiprof.so, not the static library: libaiprof inside the
 * program would make its own calls unpatchable (osrt_got.c).
 *
 *   bench_osrt [--calls N] [--reps R]     (defaults: 200000 calls, 7 reps)
 */
#include "aiprof.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long calls = 200000;
static int reps = 7;
static int zero_fd = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void do_lock(void)
{
    pthread_mutex_lock(&mu);
    pthread_mutex_unlock(&mu);
}

static void do_close(void)
{
    if (close(-1) != -1)
        abort();
}

static void do_read(void)
{
    char c;
    if (read(zero_fd, &c, 1) != 1)
        abort();
}

typedef struct bench_call {
    const char *name;
    void (*fn)(void);
} bench_call;

static const bench_call cases[] = {
    {"pthread_mutex_lock+unlock", do_lock}, {"close(-1)", do_close}, {"read 1 B /dev/zero", do_read}};
#define N_CASES (sizeof cases / sizeof cases[0])

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static double per_call(void (*fn)(void))
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            fn();
        double t = (now_ns() - t0) / (double)calls;
        if (t < best)
            best = t;
    }
    return best;
}

static void measure(double out[N_CASES])
{
    for (size_t i = 0; i < N_CASES; i++)
        out[i] = per_call(cases[i].fn);
}

static aip_session *start(const char *dir, const char *threshold)
{
    setenv("AIPROF_OSRT_THRESHOLD_NS", threshold, 1);
    aip_config c;
    aip_config_init(&c);
    c.dir_name = dir;
    c.host_sys = AIP_HOST_SYS_OSRT;
    c.buffer_cap_bytes = (size_t)1 << 30; /* room for every record: nothing dropped */
    aip_session *s;
    if (aip_session_create(&c, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
        fprintf(stderr, "bench_osrt: cannot start: %s\n", aip_last_error());
        exit(1);
    }
    return s;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--calls"))
            calls = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
    }
    if (calls < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: bench_osrt [--calls N] [--reps R]\n");
        return 2;
    }
    zero_fd = open("/dev/zero", O_RDONLY);
    char dir[] = "/tmp/aip_bench_osrt_XXXXXX";
    if (zero_fd < 0 || !mkdtemp(dir))
        return 1;
    setenv("AIPROF_QUIET", "1", 0);
    /* A trace leaves threads behind (its writer), and glibc's locks cost
     * more in a multi-threaded process: the baseline has a thread too. */
    pthread_t idle;
    if (pthread_create(&idle, NULL, idle_thread, NULL))
        return 1;
    double plain[N_CASES], timed[N_CASES], recorded[N_CASES], after[N_CASES];
    measure(plain);
    aip_session *s = start(dir, "10000000");
    measure(timed);
    aip_session_stop(s);
    aip_session_destroy(s);
    s = start(dir, "0");
    measure(recorded);
    uint64_t dropped = aip_session_dropped_events(s);
    aip_session_stop(s);
    aip_session_destroy(s);
    measure(after);
    printf("bench_osrt: %ld calls x %d reps, min of the per-call means\n", calls, reps);
    printf("  %-26s %9s %9s %7s %9s %7s %9s %7s\n", "call", "plain ns", "timed ns", "ratio",
           "record ns", "ratio", "after ns", "ratio");
    for (size_t i = 0; i < N_CASES; i++)
        printf("  %-26s %9.1f %9.1f %6.2fx %9.1f %6.2fx %9.1f %6.2fx\n", cases[i].name, plain[i],
               timed[i], timed[i] / plain[i], recorded[i], recorded[i] / plain[i], after[i],
               after[i] / plain[i]);
    printf("  (recorded: %llu events dropped at the buffer cap)\n", (unsigned long long)dropped);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
