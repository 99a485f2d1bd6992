/*
 * preload.c — libaiprof_preload.so, what `aiprof run` injects with
 * LD_PRELOAD so that a program is profiled without code changes.
 *
 * Uses only the public API.  Settings come from the environment that
 * `aiprof run` prepares (AIPROF_RUN_*).  Three modes:
 *   whole    one trace from load to exit;
 *   window   a trace from --delay to --delay + --duration seconds;
 *   dynamic  profiler_config.json in --config drives collections.
 * The program's own session calls, if any, only mark steps (see
 * aip_external_control()), so ProfilerStep# ranges follow its loop.
 * Unless AIPROF_RUN_CHILDREN=1, child processes are not profiled: the
 * process `aiprof run` started (AIPROF_RUN_PID) is, through its execs.
 * A `#!/usr/bin/env python3` script, a pyenv shim or a shell wrapper
 * ending in `exec prog` is a chain of images in one process; each image
 * that execs hands over to the next (aip__preload_exec(), called by the
 * exec wrappers of preload_exec.c) and the image that runs to the end owns
 * the result.  An image that marked steps before its exec keeps its trace
 * (saved, a result of its own); one that did not (a wrapper) leaves
 * nothing behind.  README.md, "`aiprof run` and exec".
 */
#include "preload.h"

#include "aiprof.h"
#include "aiprof_integration.h"
#include "thread.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

enum { MODE_OFF, MODE_WHOLE, MODE_WINDOW, MODE_DYNAMIC };

static int mode = MODE_OFF;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static aip_session *session;
static int started, finished, handing_over;
static int64_t program_steps;
static double delay_s, duration_s = -1;
static pid_t owner;

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "1") || !strcmp(v, "true"));
}

/* `aiprof run` reads the directories from this file to analyse them; a
 * directory is announced when recording starts, so that a program that
 * dies (SIGKILL, _exit) still gets its raw data analysed.  Under a lock:
 * the images of other processes (--children) append, and an image handing
 * over to its exec takes its line back (unannounce). */
static void announce_dir(const char *dir);

static void announce(void) { announce_dir(aip_session_result_dir(session)); }

static void announce_dir(const char *dir)
{
    const char *list = getenv("AIPROF_RUN_RESULT_LIST");
    if (!dir || !list || !*list)
        return;
    int fd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    flock(fd, LOCK_EX);
    dprintf(fd, "%s\n", dir);
    flock(fd, LOCK_UN);
    close(fd);
}

static void unannounce(const char *dir)
{
    const char *list = getenv("AIPROF_RUN_RESULT_LIST");
    if (!dir || !list || !*list)
        return;
    int fd = open(list, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    flock(fd, LOCK_EX);
    FILE *in = fdopen(dup(fd), "r");
    char *keep = NULL, line[PATH_MAX + 2];
    size_t len = 0;
    FILE *out = in ? open_memstream(&keep, &len) : NULL;
    while (out && fgets(line, sizeof line, in))
        if (strcspn(line, "\n") != strlen(dir) || strncmp(line, dir, strlen(dir)))
            fputs(line, out);
    if (out && fclose(out) == 0 && ftruncate(fd, 0) == 0) {
        ssize_t w = pwrite(fd, keep, len, 0);
        (void)w;
    }
    if (in)
        fclose(in);
    free(keep);
    flock(fd, LOCK_UN);
    close(fd);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    remove(path);
    return 0;
}

static void on_ready(aip_session *s, const char *dir, void *user)
{
    (void)s;
    (void)user;
    if (handing_over)
        return; /* a wrapper's trace, removed next */
    fprintf(stderr, "aiprof: trace saved in %s (%llu events dropped)\n", dir,
            (unsigned long long)aip_session_dropped_events(session));
}

/* A flight recorder's dump (on its writer thread): listed for the
 * analysis at the end of the run. */
static void on_flight_dump(aip_session *s, const char *dir, void *user)
{
    (void)s;
    (void)user;
    fprintf(stderr, "aiprof: flight recorder dump in %s\n", dir);
    announce_dir(dir);
}

static void on_program_step(void *user)
{
    (void)user;
    pthread_mutex_lock(&lock);
    program_steps++;
    if (mode == MODE_DYNAMIC)
        aip_dynamic_step();
    else if (started && !finished)
        aip_session_step(session);
    pthread_mutex_unlock(&lock);
}

static void stop_trace(void)
{
    if (started && !finished) {
        finished = 1;
        if (aip_session_stop(session) != AIP_OK)
            fprintf(stderr, "aiprof: stopping failed: %s\n", aip_last_error());
    }
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void *window_thread(void *arg)
{
    (void)arg;
    sleep_s(delay_s);
    pthread_mutex_lock(&lock);
    if (!finished) {
        aip_session_set_step_offset(session, program_steps);
        if (aip_session_start(session) == AIP_OK) {
            started = 1;
            announce();
        } else {
            fprintf(stderr, "aiprof: cannot start: %s\n", aip_last_error());
        }
    }
    pthread_mutex_unlock(&lock);
    if (duration_s >= 0) {
        sleep_s(duration_s);
        pthread_mutex_lock(&lock);
        stop_trace();
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void at_exit(void)
{
    if (getpid() != owner)
        return;
    pthread_mutex_lock(&lock);
    if (mode == MODE_DYNAMIC) {
        pthread_mutex_unlock(&lock);
        aip_dynamic_shutdown();
        return;
    }
    stop_trace();
    pthread_mutex_unlock(&lock);
}

/* --host-sys's list (checked by `aiprof run`) as aip_host_sys bits. */
static unsigned host_sys_bits(const char *s)
{
    static const struct { const char *name; unsigned bit; } names[] = {
        {"cpu", AIP_HOST_SYS_CPU}, {"mem", AIP_HOST_SYS_MEM}, {"disk", AIP_HOST_SYS_DISK},
        {"network", AIP_HOST_SYS_NETWORK}, {"osrt", AIP_HOST_SYS_OSRT}};
    unsigned bits = 0;
    while (s && *s) {
        size_t n = strcspn(s, ",");
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            if (n == strlen(names[i].name) && !strncasecmp(s, names[i].name, n))
                bits |= names[i].bit;
        s += n;
        if (*s == ',')
            s++;
    }
    return bits;
}

/* The image is about to exec (preload_exec.c, after checking that the
 * exec can succeed): the next image, the same process, profiles from its
 * start (AIPROF_RUN_MODE stays set).  This image's trace is kept if the
 * program marked steps (a real program that execs at its end), else it
 * was a wrapper's (env, a shell script, a shim) and is removed. */
void aip__preload_exec(void)
{
    if (mode == MODE_OFF || getpid() != owner)
        return;
    if (mode == MODE_DYNAMIC) {
        mode = MODE_OFF;
        aip_dynamic_shutdown(); /* a running collection is saved */
        return;
    }
    pthread_mutex_lock(&lock);
    if (started && !finished && !program_steps) {
        char dir[PATH_MAX];
        const char *d = aip_session_result_dir(session);
        snprintf(dir, sizeof dir, "%s", d ? d : "");
        handing_over = 1;
        stop_trace();
        if (dir[0]) {
            nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
            unannounce(dir);
        }
    } else {
        stop_trace();
    }
    finished = 1; /* the window thread, if still waiting, starts nothing */
    mode = MODE_OFF;
    pthread_mutex_unlock(&lock);
}

/* AIPROF_RUN_PROFILER_LEVEL, a name aiprof run checked ("Level1"); the
 * library's default (Level0) when absent. */
static aip_profiler_level run_level(const char *name)
{
    for (int k = AIP_LEVEL_NONE; name && k <= AIP_LEVEL2; k++)
        if (!strcmp(name, aip_profiler_level_name((aip_profiler_level)k)))
            return (aip_profiler_level)k;
    return AIP_LEVEL0;
}

__attribute__((constructor)) static void aiprof_preload_init(void)
{
    const char *m = getenv("AIPROF_RUN_MODE");
    if (!m || !*m)
        return;
    owner = getpid();
    /* The process aiprof run started, through its execs; not the programs
     * it starts, nor theirs, unless --children.  The environment is only
     * read here, never changed: a program may bring its own setenv and
     * unsetenv (bash does), unusable before its main(). */
    const char *pid = getenv("AIPROF_RUN_PID");
    char me[24];
    snprintf(me, sizeof me, "%ld", (long)owner);
    if (!env_flag("AIPROF_RUN_CHILDREN") && pid && *pid && strcmp(pid, me))
        return;
    if (!strcmp(m, "dynamic")) {
        const char *dir = getenv("AIPROF_RUN_CONFIG");
        if (aip_dynamic_init(dir ? dir : ".") != AIP_OK) {
            fprintf(stderr, "aiprof: dynamic profiling not started: %s\n", aip_last_error());
            return;
        }
        mode = MODE_DYNAMIC;
        aip_external_control(on_program_step, NULL, NULL);
        atexit(at_exit);
        return;
    }
    aip_config cfg;
    aip_config_init(&cfg);
    /* Device activity too (an OpenCL program's kernels), unless
     * AIPROF_RUN_DEVICE=0: a program without a device still gets its host
     * profile, and the log says once why there is no device data. */
    const char *dev = getenv("AIPROF_RUN_DEVICE");
    cfg.activities = AIP_ACTIVITY_CPU | (dev && !strcmp(dev, "0") ? 0 : AIP_ACTIVITY_NPU);
    cfg.dir_name = getenv("AIPROF_RUN_DIR");
    cfg.record_shapes = env_flag("AIPROF_RUN_RECORD_SHAPES");
    cfg.with_stack = env_flag("AIPROF_RUN_WITH_STACK");
    cfg.profile_memory = env_flag("AIPROF_RUN_PROFILE_MEMORY");
    cfg.with_modules = env_flag("AIPROF_RUN_WITH_MODULES");
    cfg.with_flops = env_flag("AIPROF_RUN_WITH_FLOPS");
    cfg.mstx = !getenv("AIPROF_RUN_MSTX") || env_flag("AIPROF_RUN_MSTX");
    cfg.profiler_level = run_level(getenv("AIPROF_RUN_PROFILER_LEVEL")); /* --profiler-level */
    cfg.host_sys = host_sys_bits(getenv("AIPROF_RUN_HOST_SYS")); /* --host-sys */
    const char *max_size = getenv("AIPROF_RUN_MAX_SIZE"); /* bytes; --max-size */
    if (max_size)
        cfg.max_raw_bytes = strtoull(max_size, NULL, 10);
    const char *flight = getenv("AIPROF_RUN_FLIGHT"); /* --flight-recorder and co. */
    if (flight) {
        const char *v;
        cfg.flight_recorder_seconds = atof(flight);
        if ((v = getenv("AIPROF_RUN_FLIGHT_RING")))
            cfg.flight_ring_bytes = strtoull(v, NULL, 10);
        if ((v = getenv("AIPROF_RUN_FLIGHT_SLOW")))
            cfg.flight_slow_step = atof(v);
        if ((v = getenv("AIPROF_RUN_FLIGHT_HANG")))
            cfg.flight_hang_seconds = atof(v);
    }
    /* One long RECORD cycle: every step is recorded, ProfilerStep# ranges
     * follow the program's step calls, and the trace ends at stop. */
    cfg.has_schedule = 1;
    cfg.schedule = (aip_schedule){.wait = 0, .warmup = 0, .active = INT64_MAX / 4, .repeat = 1};
    cfg.on_trace_ready = flight ? on_flight_dump : on_ready;
    if (aip_session_create(&cfg, &session) != AIP_OK) {
        fprintf(stderr, "aiprof: not profiling: %s\n", aip_last_error());
        return;
    }
    aip_external_control(on_program_step, NULL, session);
    atexit(at_exit);
    const char *d = getenv("AIPROF_RUN_DELAY"), *u = getenv("AIPROF_RUN_DURATION");
    delay_s = d ? atof(d) : 0;
    duration_s = u ? atof(u) : -1;
    if (delay_s > 0 || duration_s >= 0) {
        mode = MODE_WINDOW;
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (aip__thread_create(&th, &attr, window_thread, NULL) != 0)
            fprintf(stderr, "aiprof: cannot start the time window thread\n");
        pthread_attr_destroy(&attr);
        return;
    }
    mode = MODE_WHOLE;
    if (aip_session_start(session) == AIP_OK) {
        started = 1;
        announce();
    } else {
        fprintf(stderr, "aiprof: cannot start: %s\n", aip_last_error());
    }
}
