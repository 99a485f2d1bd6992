/*
 * bench_opencl.c — what the OpenCL back end adds to the host time of an
 * enqueue, against PoCL's own enqueue in the same run.
 *
 * The same loop of kernel enqueues (a one-work-item kernel, clFinish every
 * BATCH, not timed) runs in several ways, interleaved in every round (the
 * order rotated from round to round):
 *   unprofiled   the real clEnqueueNDRangeKernel and clCreateCommandQueue-
 *                WithProperties, from libOpenCL by dlsym, the queue without
 *                profiling: PoCL's own enqueue cost, the program without
 *                aiprof;
 *   idle         through aiprof's wrappers (which add profiling to the
 *                queue), no trace recording;
 *   profiled     through the wrappers, a trace recording device activity;
 * each without and with an application event (released at once), and
 * anchors, PoCL alone, that bound what any profiler reading every
 * command's device times must add:
 *   +profiling   the real enqueue into the queue with profiling;
 *   +event       ... asking for an event, released at once (a profiler
 *                needs one to read the times);
 *   +callback    ... and one clSetEventCallback per command (a no-op
 *                callback): the usual way to learn of a command's end.
 * Figures are ns per enqueue on three clocks, each the median batch of a
 * run: "wall" (what the target is about), the enqueuing thread's
 * CPU time ("cpu": immune to other processes taking the CPU away, which
 * they do on a shared machine), and the whole process's CPU time ("proc":
 * PoCL's threads too, where completion callbacks run; it includes the
 * kernels' execution, so only its "added" means something).  "added" is
 * the median over rounds of (mode - unprofiled) within the round, with its
 * min..max over rounds; "%" is added over PoCL's own cost on that clock.  The targets: added
 * <= 1000 ns and <= 10% of PoCL's own enqueue.  Figures, not pass/fail:
 * `make bench` prints them.
 *
 * This program links libaiprof (static) before libOpenCL, the order that
 * lets the wrappers see its OpenCL calls (docs/OPENCL.md).
 *   bench_opencl [--enqueues N] [--rounds R]   (defaults 20000, 9)
 *   bench_opencl --only MODE [--enqueues N]    one run of MODE (unprofiled,
 *       idle, profiled, +event, +callback; "MODE,event" with an application
 *       event), for perf / callgrind
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include "aiprof.h"

#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 100
#define MAX_ROUNDS 31

static long enqueues = 20000;
static int rounds = 9;
static const char *only;
static char tmp_root[64] = "/tmp/aiprof_bench_opencl_XXXXXX";

typedef cl_int(CL_API_CALL *enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                                        const size_t *, const size_t *, cl_uint,
                                        const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *finish_fn)(cl_command_queue);
typedef cl_int(CL_API_CALL *release_fn)(cl_event);
typedef cl_int(CL_API_CALL *callback_fn)(cl_event, cl_int,
                                         void(CL_CALLBACK *)(cl_event, cl_int, void *), void *);

static cl_command_queue plain_q, q; /* without profiling; the app's, through aiprof */
static cl_kernel k;
static enqueue_fn real_enqueue;
static finish_fn real_finish;
static release_fn real_release;
static callback_fn real_callback;
static aip_config cfg;

enum { UNPROFILED, IDLE, PROFILED, PLUS_PROFILING, PLUS_EVENT, PLUS_CALLBACK, N_MODES };
static const char *const mode_names[N_MODES] = {"unprofiled", "idle",   "profiled",
                                                "+profiling", "+event", "+callback"};

static void CL_CALLBACK nop_callback(cl_event ev, cl_int status, void *user)
{
    (void)ev, (void)status, (void)user;
}

static double now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

enum { WALL, CPU, PROC, N_CLOCKS };
static const clockid_t clocks[N_CLOCKS] = {CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID,
                                           CLOCK_PROCESS_CPUTIME_ID};
static const char *const clock_names[N_CLOCKS] = {"wall", "cpu", "proc"};

/* One run of `mode`: ns per enqueue on each clock, the median over its
 * batches (a batch the shared machine interrupted does not weigh in). */
static void run(int mode, int app_event, double out[N_CLOCKS])
{
    int wrapped = mode == IDLE || mode == PROFILED;
    enqueue_fn enqueue = wrapped ? clEnqueueNDRangeKernel : real_enqueue;
    finish_fn finish = wrapped ? clFinish : real_finish;
    /* the anchors ask for an event when that is what they measure */
    int event = app_event || mode == PLUS_EVENT || mode == PLUS_CALLBACK;
    cl_command_queue queue = mode == UNPROFILED ? plain_q : q;
    aip_session *s = NULL;
    if (mode == PROFILED && (aip_session_create(&cfg, &s) != AIP_OK ||
                             aip_session_start(s) != AIP_OK)) {
        fprintf(stderr, "bench_opencl: %s\n", aip_last_error());
        exit(1);
    }
    size_t global = 1;
    long batches = enqueues / BATCH;
    double *per[N_CLOCKS];
    for (int i = 0; i < N_CLOCKS; i++)
        if (!(per[i] = malloc((size_t)batches * sizeof *per[i])))
            exit(1);
    for (long b = 0; b < batches; b++) {
        double t0[N_CLOCKS];
        for (int i = 0; i < N_CLOCKS; i++)
            t0[i] = now_ns(clocks[i]);
        for (int i = 0; i < BATCH; i++) {
            cl_event ev;
            if (enqueue(queue, k, 1, NULL, &global, NULL, 0, NULL, event ? &ev : NULL) !=
                CL_SUCCESS) {
                fprintf(stderr, "bench_opencl: enqueue failed\n");
                exit(1);
            }
            if (mode == PLUS_CALLBACK && real_callback(ev, CL_COMPLETE, nop_callback, NULL) !=
                                             CL_SUCCESS) {
                fprintf(stderr, "bench_opencl: clSetEventCallback failed\n");
                exit(1);
            }
            if (event)
                (wrapped ? clReleaseEvent : real_release)(ev);
        }
        for (int i = N_CLOCKS - 1; i >= 0; i--)
            per[i][b] = (now_ns(clocks[i]) - t0[i]) / BATCH;
        finish(queue);
    }
    for (int i = 0; i < N_CLOCKS; i++) {
        out[i] = median(per[i], (int)batches);
        free(per[i]);
    }
    if (s) {
        aip_session_stop(s);
        aip_session_destroy(s);
    }
}

/* Figures of every mode, clock and round, for one kind of enqueue. */
typedef double figures[N_MODES][N_CLOCKS][MAX_ROUNDS];

static double median_of(figures f, int mode, int clock)
{
    double v[MAX_ROUNDS];
    memcpy(v, f[mode][clock], sizeof v);
    return median(v, rounds);
}

/* The median and range over rounds of (mode - unprofiled), per round. */
static double added(figures f, int mode, int clock, double *lo, double *hi)
{
    double d[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        d[r] = f[mode][clock][r] - f[UNPROFILED][clock][r];
    double m = median(d, rounds); /* sorts d */
    *lo = d[0];
    *hi = d[rounds - 1];
    return m;
}

static void report(const char *label, int mode, figures f)
{
    printf("  %-22s", label);
    for (int c = 0; c < N_CLOCKS; c++) {
        double lo, hi, a = added(f, mode, c, &lo, &hi);
        if (c == PROC)
            printf(" | %s +%4.0f [%4.0f..%4.0f]", clock_names[c], a, lo, hi);
        else
            printf(" | %s %5.0f +%4.0f [%4.0f..%4.0f] %5.1f%%", clock_names[c],
                   median_of(f, mode, c), a, lo, hi, 100 * a / median_of(f, UNPROFILED, c));
    }
    printf("\n");
}

static void verdict(const char *what, figures f)
{
    double lo, hi, aw = added(f, PROFILED, WALL, &lo, &hi), ac = added(f, PROFILED, CPU, &lo, &hi);
    double pw = 100 * aw / median_of(f, UNPROFILED, WALL),
           pc = 100 * ac / median_of(f, UNPROFILED, CPU);
    printf("  => %s: added %.0f ns wall (%.1f%%), %.0f ns cpu (%.1f%%): <= 1000 ns %s; "
           "<= 10%% of PoCL's own enqueue %s\n",
           what, aw, pw, ac, pc, aw <= 1000 ? "holds" : "NOT met",
           pw <= 10 ? "holds" : "NOT met");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int run_only(void)
{
    int mode = -1;
    for (int m = 0; m < N_MODES; m++)
        if (!strncmp(only, mode_names[m], strlen(mode_names[m])))
            mode = m;
    if (mode < 0) {
        fprintf(stderr, "bench_opencl: --only: unknown mode '%s'\n", only);
        return 2;
    }
    double t[N_CLOCKS];
    run(mode, strstr(only, ",event") != NULL, t);
    printf("%s: ns per enqueue: wall %.0f, cpu %.0f, proc %.0f\n", only, t[WALL], t[CPU],
           t[PROC]);
    return 0;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--enqueues"))
            enqueues = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    if (enqueues < BATCH)
        enqueues = BATCH;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 9;
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    real_enqueue = lib ? (enqueue_fn)dlsym(lib, "clEnqueueNDRangeKernel") : NULL;
    real_finish = lib ? (finish_fn)dlsym(lib, "clFinish") : NULL;
    real_release = lib ? (release_fn)dlsym(lib, "clReleaseEvent") : NULL;
    real_callback = lib ? (callback_fn)dlsym(lib, "clSetEventCallback") : NULL;
    cl_platform_id platform;
    cl_device_id dev;
    cl_uint np = 0;
    if (!real_enqueue || !real_finish || !real_release || !real_callback ||
        clGetPlatformIDs(1, &platform, &np) != CL_SUCCESS || np == 0 ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        printf("bench_opencl: no OpenCL device: nothing measured\n");
        return 0;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    typedef cl_command_queue(CL_API_CALL * create_fn)(cl_context, cl_device_id,
                                                       const cl_queue_properties *, cl_int *);
    create_fn real_create = (create_fn)dlsym(lib, "clCreateCommandQueueWithProperties");
    if (!real_create) {
        printf("bench_opencl: no clCreateCommandQueueWithProperties: nothing measured\n");
        return 0;
    }
    plain_q = real_create(ctx, dev, NULL, &err);
    q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    const char *src = "__kernel void nop(__global int *x) { if (get_global_id(0) > 1) x[0] = 1; }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "bench_opencl: cannot build the kernel\n");
        return 1;
    }
    k = clCreateKernel(prog, "nop", &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    if (!mkdtemp(tmp_root)) {
        fprintf(stderr, "bench_opencl: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    aip_config_init(&cfg);
    cfg.dir_name = tmp_root;
    cfg.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    /* warm-up: the kernel, the wrapper's tables, a first trace */
    double warm[N_CLOCKS];
    run(UNPROFILED, 0, warm);
    run(PROFILED, 0, warm);
    int rc = 0;
    if (only) {
        rc = run_only();
    } else {
        printf("ns per enqueue, %d rounds of %ld; +added: median [min..max] over rounds of "
               "(mode - unprofiled) in the round; %% of unprofiled\n",
               rounds, enqueues);
        static figures f[2];
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < 2 * N_MODES; i++) {
                int j = (i + r) % (2 * N_MODES), mode = j % N_MODES, ev = j / N_MODES;
                if (ev && mode >= PLUS_PROFILING)
                    continue; /* anchors: PoCL alone, no application event */
                double t[N_CLOCKS];
                run(mode, ev, t);
                for (int c = 0; c < N_CLOCKS; c++)
                    f[ev][mode][c][r] = t[c];
            }
        for (int ev = 0; ev < 2; ev++) {
            printf("kernel enqueue, %s: unprofiled (PoCL's own) wall %.0f, cpu %.0f\n",
                   ev ? "application event" : "no event", median_of(f[ev], UNPROFILED, WALL),
                   median_of(f[ev], UNPROFILED, CPU));
            report("idle (not recording)", IDLE, f[ev]);
            report("profiled", PROFILED, f[ev]);
            if (!ev) {
                report("anchor +profiling", PLUS_PROFILING, f[ev]);
                report("anchor +event", PLUS_EVENT, f[ev]);
                report("anchor +callback", PLUS_CALLBACK, f[ev]);
            }
            verdict(ev ? "application event" : "no event", f[ev]);
        }
        printf("targets (issue 14): added <= 1000 ns and <= 10%% of PoCL's own enqueue; the "
               "anchors are PoCL alone: what reading device times costs before aiprof adds "
               "anything\n");
    }
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(plain_q);
    clReleaseContext(ctx);
    nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
