/*
 * bench_opencl.c — what the OpenCL back end adds to the host time of an
 * enqueue.
 *
 * The same loop of kernel enqueues (a one-work-item kernel, clFinish every
 * BATCH) runs three ways, interleaved over several rounds:
 *   direct     the real clEnqueueNDRangeKernel, from libOpenCL by dlsym:
 *              PoCL's own enqueue cost, the program unprofiled;
 *   idle       through aiprof's wrapper, no trace recording;
 *   recording  through the wrapper, a trace recording device activity.
 * Each, without and with an application event (released at once).  Only
 * the enqueue calls are timed (per batch, not the clFinish).  Figures are
 * ns per enqueue, the median over rounds of each run's median batch (the
 * machine may be shared: a median is robust to the batches it interrupted);
 * "added" is recording - direct,
 * also as a share of direct.  The targets: added <= 1 us and <= 10%
 * of PoCL's own cost.  Figures, not pass/fail: `make bench` prints them.
 *
 * This program links libaiprof (static) before libOpenCL, the order that
 * lets the wrappers see its OpenCL calls (docs/OPENCL.md).
 *   bench_opencl [--enqueues N] [--rounds R]   (defaults 20000, 7)
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
static int rounds = 7;
static char tmp_root[64] = "/tmp/aiprof_bench_opencl_XXXXXX";

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef cl_int(CL_API_CALL *enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                                        const size_t *, const size_t *, cl_uint,
                                        const cl_event *, cl_event *);
typedef cl_int(CL_API_CALL *finish_fn)(cl_command_queue);

static cl_command_queue q;
static cl_kernel k;

static int cmp_double(const void *a, const void *b);

/* ns per enqueue of one run: the median over its batches, which keeps a
 * batch that the (shared) machine interrupted from weighing in. */
static double run(enqueue_fn enqueue, finish_fn finish, int with_event)
{
    size_t global = 1;
    long batches = enqueues / BATCH;
    double *per = malloc((size_t)batches * sizeof *per);
    if (!per)
        exit(1);
    for (long b = 0; b < batches; b++) {
        double t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            cl_event ev;
            if (enqueue(q, k, 1, NULL, &global, NULL, 0, NULL, with_event ? &ev : NULL) !=
                CL_SUCCESS) {
                fprintf(stderr, "bench_opencl: enqueue failed\n");
                exit(1);
            }
            if (with_event)
                clReleaseEvent(ev);
        }
        per[b] = (now_ns() - t0) / BATCH;
        finish(q);
    }
    qsort(per, (size_t)batches, sizeof *per, cmp_double);
    double m = per[batches / 2];
    free(per);
    return m;
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

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--enqueues"))
            enqueues = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
    }
    if (enqueues < BATCH)
        enqueues = BATCH;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 7;
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    enqueue_fn direct = lib ? (enqueue_fn)dlsym(lib, "clEnqueueNDRangeKernel") : NULL;
    finish_fn direct_finish = lib ? (finish_fn)dlsym(lib, "clFinish") : NULL;
    cl_platform_id platform;
    cl_device_id dev;
    cl_uint np = 0;
    if (!direct || !direct_finish || clGetPlatformIDs(1, &platform, &np) != CL_SUCCESS ||
        np == 0 || clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        printf("bench_opencl: no OpenCL device: nothing measured\n");
        return 0;
    }
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
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
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = tmp_root;
    cfg.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    /* warm-up: the kernel, the wrapper's tables, a first trace */
    run(direct, direct_finish, 0);
    printf("%-22s %10s %10s %10s %10s %8s\n", "ns per enqueue", "direct", "idle", "recording",
           "added", "added%");
    for (int with_event = 0; with_event < 2; with_event++) {
        double d[MAX_ROUNDS], idle[MAX_ROUNDS], rec[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            d[r] = run(direct, direct_finish, with_event);
            idle[r] = run(clEnqueueNDRangeKernel, clFinish, with_event);
            aip_session *s;
            if (aip_session_create(&cfg, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
                fprintf(stderr, "bench_opencl: %s\n", aip_last_error());
                return 1;
            }
            rec[r] = run(clEnqueueNDRangeKernel, clFinish, with_event);
            aip_session_stop(s);
            aip_session_destroy(s);
        }
        double md = median(d, rounds), mi = median(idle, rounds), mr = median(rec, rounds);
        printf("%-22s %10.0f %10.0f %10.0f %10.0f %7.1f%%\n",
               with_event ? "kernel, app event" : "kernel, no event", md, mi, mr, mr - md,
               100.0 * (mr - md) / md);
    }
    printf("targets: added <= 1000 ns and <= 10%% of direct (PoCL's own enqueue)\n");
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    nftw(tmp_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
