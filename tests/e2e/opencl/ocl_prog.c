/*
 * ocl_prog.c — an OpenCL program for the OpenCL back end's end-to-end
 * tests (tests/e2e/test_opencl.sh).  Built twice: ocl_prog knows nothing
 * of aiprof (profiled by `aiprof run`), ocl_prog_linked (AIP_LINKED) links
 * -laiprof before -lOpenCL and records its own session into $OCL_AIP_DIR,
 * with an annotation "step" around each command and its wait.
 *
 * Usage: ocl_prog MODE [OUT] [N]
 *   accuracy OUT  every kind of command on a profiling queue, each with its
 *                 own event: "API DURATION_NS" lines (OpenCL's own numbers)
 *                 in OUT, plus commands without events, on a queue created
 *                 without profiling, and "launches N" (successful enqueues)
 *   threads OUT N 4 threads enqueue N kernels each, round-robin into the
 *                 same 4 queues (every other with an event released at
 *                 once): "launches"
 *   loop          kernels until killed; "running" once 50 have finished
 *   reuse OUT     kernels and queues created and released in turn, so that
 *                 new ones get the addresses of released ones: "kernel
 *                 NAME" per launch, "reused_kernels N", "reused_queues N"
 *   errors OUT    calls OpenCL rejects: "CALL CODE" lines, which aiprof must
 *                 pass through unchanged (and record no task for)
 *   bad OUT       an out-of-order queue, events released right after the
 *                 enqueue, a queue without profiling asked about by the
 *                 application: what the application saw, in OUT
 *   batches OUT   what the back end's batches of followed commands must
 *                 get right: one thread enqueueing into an in-order and an
 *                 out-of-order queue in turn, waiting only by blocking
 *                 reads, pausing longer than a batch's age; a thread that
 *                 exits with its last commands never waited for; the
 *                 program's last commands never waited for either (only
 *                 the trace's stop hands them over).  Every third kernel
 *                 keeps its event: "API DURATION_NS" lines at the end
 * Every mode prints "checksum X" of its results, which profiling must not
 * change.  Without an OpenCL platform it prints "no platform" and exits 0.
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef AIP_LINKED
#include "aiprof.h"
#define STEP_BEGIN() aip_annotation_push("step")
#define STEP_END() aip_annotation_pop()
#else
#define STEP_BEGIN() ((void)0)
#define STEP_END() ((void)0)
#endif

#define N 4096
#define CHECK(x)                                                                             \
    do {                                                                                     \
        cl_int e_ = (x);                                                                     \
        if (e_ != CL_SUCCESS) {                                                              \
            fprintf(stderr, "ocl_prog: %s failed: %d (line %d)\n", #x, (int)e_, __LINE__);   \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static const char *source =
    "__kernel void vadd(__global const float *a, __global const float *b, __global float *c)"
    "{ int i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "__kernel void scale(__global float *c, float s)"
    "{ int i = get_global_id(0); c[i] = c[i] * s; }\n";

static cl_context ctx;
static cl_device_id dev;
static cl_program prog;
static FILE *out;
static long launches;
static pthread_mutex_t launches_lock = PTHREAD_MUTEX_INITIALIZER;

static void launched(void)
{
    pthread_mutex_lock(&launches_lock);
    launches++;
    pthread_mutex_unlock(&launches_lock);
}

static int setup(void)
{
    cl_platform_id platform;
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(1, &platform, &np);
    if (err != CL_SUCCESS || np == 0) {
        printf("no platform (%d)\n", (int)err);
        return 0;
    }
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    return 1;
}

static cl_command_queue queue(cl_command_queue_properties props)
{
    cl_int err;
    cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props ? list : NULL, &err);
    CHECK(err);
    return q;
}

static cl_mem buffer(size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK(err);
    return m;
}

static cl_kernel kernel(const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    CHECK(err);
    return k;
}

/* Wait for ev, write OpenCL's own duration of it, release it. */
static void timed(const char *api, cl_event ev)
{
    CHECK(clWaitForEvents(1, &ev));
    cl_ulong start = 0, end = 0;
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    fprintf(out, "%s %llu\n", api, (unsigned long long)(end - start));
    CHECK(clReleaseEvent(ev));
    launched();
    STEP_END();
}

static double checksum(cl_command_queue q, cl_mem m)
{
    float *h = malloc(N * sizeof *h);
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, N * sizeof *h, h, 0, NULL, NULL));
    launched();
    double s = 0;
    for (int i = 0; i < N; i++)
        s += h[i] * (double)(i % 7 + 1);
    free(h);
    return s;
}

/* The native kernel: runs on the device's host thread, on a copy of arg. */
static void CL_CALLBACK native_add(void *arg)
{
    *(int *)arg += 1;
}

static void mode_accuracy(void)
{
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE), plain = queue(0);
    cl_mem a = buffer(N * 4), b = buffer(N * 4), c = buffer(N * 4), d = buffer(N * 4);
    cl_kernel vadd = kernel("vadd"), scale = kernel("scale");
    float *h = malloc(N * 4);
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    float two = 2.0f, zero = 0.0f;
    CHECK(clSetKernelArg(vadd, 0, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 1, sizeof b, &b));
    CHECK(clSetKernelArg(vadd, 2, sizeof c, &c));
    CHECK(clSetKernelArg(scale, 0, sizeof c, &c));
    CHECK(clSetKernelArg(scale, 1, sizeof two, &two));
    size_t global = N, local = 64;
    size_t origin[3] = {0, 0, 0}, region[3] = {256, 4, 1};
    cl_event ev;
    for (int it = 0; it < 3; it++) {
        STEP_BEGIN();
        CHECK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, N * 4, h, 0, NULL, &ev));
        timed("clEnqueueWriteBuffer", ev);
        STEP_BEGIN();
        CHECK(clEnqueueWriteBuffer(q, b, CL_TRUE, 0, N * 4, h, 0, NULL, &ev));
        timed("clEnqueueWriteBuffer", ev);
        STEP_BEGIN();
        CHECK(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, &local, 0, NULL, &ev));
        timed("clEnqueueNDRangeKernel", ev);
        STEP_BEGIN();
        CHECK(clEnqueueTask(q, scale, 0, NULL, &ev));
        timed("clEnqueueTask", ev);
        STEP_BEGIN();
        CHECK(clEnqueueCopyBuffer(q, c, d, 0, 0, N * 4, 0, NULL, &ev));
        timed("clEnqueueCopyBuffer", ev);
        STEP_BEGIN();
        CHECK(clEnqueueCopyBufferRect(q, c, d, origin, origin, region, 1024, 0, 1024, 0, 0, NULL,
                                      &ev));
        timed("clEnqueueCopyBufferRect", ev);
        STEP_BEGIN();
        CHECK(clEnqueueFillBuffer(q, b, &zero, sizeof zero, 0, N * 4, 0, NULL, &ev));
        timed("clEnqueueFillBuffer", ev);
        STEP_BEGIN();
        cl_int err;
        void *p = clEnqueueMapBuffer(q, d, CL_TRUE, CL_MAP_READ, 0, N * 4, 0, NULL, &ev, &err);
        CHECK(err);
        timed("clEnqueueMapBuffer", ev);
        STEP_BEGIN();
        CHECK(clEnqueueUnmapMemObject(q, d, p, 0, NULL, &ev));
        timed("clEnqueueUnmapMemObject", ev);
        STEP_BEGIN();
        CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev));
        timed("clEnqueueMarkerWithWaitList", ev);
        STEP_BEGIN();
        CHECK(clEnqueueBarrierWithWaitList(q, 0, NULL, &ev));
        timed("clEnqueueBarrierWithWaitList", ev);
        STEP_BEGIN();
        CHECK(clEnqueueReadBufferRect(q, d, CL_TRUE, origin, origin, region, 1024, 0, 1024, 0, h,
                                      0, NULL, &ev));
        timed("clEnqueueReadBufferRect", ev);
        STEP_BEGIN();
        CHECK(clEnqueueWriteBufferRect(q, a, CL_TRUE, origin, origin, region, 1024, 0, 1024, 0, h,
                                       0, NULL, &ev));
        timed("clEnqueueWriteBufferRect", ev);
        STEP_BEGIN();
        CHECK(clEnqueueReadBuffer(q, d, CL_TRUE, 0, N * 4, h, 0, NULL, &ev));
        timed("clEnqueueReadBuffer", ev);
        /* Without events (aiprof makes its own) and on a queue that did not
         * ask for profiling: recorded, not compared here. */
        CHECK(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, NULL));
        launched();
        CHECK(clFinish(q)); /* each command waited for by its thread's next wait */
        CHECK(clEnqueueNDRangeKernel(plain, vadd, 1, NULL, &global, &local, 0, NULL, NULL));
        launched();
        CHECK(clFinish(plain));
    }
    /* SVM, where the device has it. */
    cl_device_svm_capabilities svm = 0;
    clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof svm, &svm, NULL);
    if (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) {
        float *s1 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N * 4, 0);
        float *s2 = clSVMAlloc(ctx, CL_MEM_READ_WRITE, N * 4, 0);
        if (s1 && s2) {
            STEP_BEGIN();
            CHECK(clEnqueueSVMMemFill(q, s1, &two, sizeof two, N * 4, 0, NULL, &ev));
            timed("clEnqueueSVMMemFill", ev);
            STEP_BEGIN();
            CHECK(clEnqueueSVMMemcpy(q, CL_TRUE, s2, s1, N * 4, 0, NULL, &ev));
            timed("clEnqueueSVMMemcpy", ev);
        }
        clSVMFree(ctx, s1);
        clSVMFree(ctx, s2);
    }
    /* Images, where the device has them: 32x32 RGBA floats, 16 KiB. */
    cl_bool images = CL_FALSE;
    clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    if (images) {
        cl_image_format fmt = {CL_RGBA, CL_FLOAT};
        cl_image_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = desc.image_height = 32;
        cl_int err;
        cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &err);
        CHECK(err);
        size_t region2[3] = {32, 32, 1};
        float color[4] = {1, 2, 3, 4};
        STEP_BEGIN();
        CHECK(clEnqueueWriteImage(q, img, CL_FALSE, origin, region2, 0, 0, h, 0, NULL, &ev));
        timed("clEnqueueWriteImage", ev);
        STEP_BEGIN();
        CHECK(clEnqueueFillImage(q, img, color, origin, region2, 0, NULL, &ev));
        timed("clEnqueueFillImage", ev);
        STEP_BEGIN();
        CHECK(clEnqueueCopyImageToBuffer(q, img, d, origin, region2, 0, 0, NULL, &ev));
        timed("clEnqueueCopyImageToBuffer", ev);
        STEP_BEGIN();
        CHECK(clEnqueueCopyBufferToImage(q, d, img, 0, origin, region2, 0, NULL, &ev));
        timed("clEnqueueCopyBufferToImage", ev);
        STEP_BEGIN();
        CHECK(clEnqueueReadImage(q, img, CL_TRUE, origin, region2, 0, 0, h, 0, NULL, &ev));
        timed("clEnqueueReadImage", ev);
        STEP_BEGIN();
        size_t pitch;
        void *p = clEnqueueMapImage(q, img, CL_TRUE, CL_MAP_READ, origin, region2, &pitch, NULL,
                                    0, NULL, &ev, &err);
        CHECK(err);
        timed("clEnqueueMapImage", ev);
        STEP_BEGIN();
        CHECK(clEnqueueUnmapMemObject(q, img, p, 0, NULL, &ev));
        timed("clEnqueueUnmapMemObject", ev);
        STEP_BEGIN();
        CHECK(clEnqueueMigrateMemObjects(q, 1, &img, 0, 0, NULL, &ev));
        timed("clEnqueueMigrateMemObjects", ev);
        clReleaseMemObject(img);
        /* The OpenCL 1.1 constructors: allocations like any image. */
        cl_mem img2 = clCreateImage2D(ctx, CL_MEM_READ_WRITE, &fmt, 16, 16, 0, NULL, &err);
        CHECK(err);
        fprintf(out, "image2d_bytes %d\n", 16 * 16 * 16);
        clReleaseMemObject(img2);
    }
    /* A native kernel (a host function the device runs), where it can. */
    cl_device_exec_capabilities exec = 0;
    clGetDeviceInfo(dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof exec, &exec, NULL);
    if (exec & CL_EXEC_NATIVE_KERNEL) {
        int arg = 41;
        STEP_BEGIN();
        CHECK(clEnqueueNativeKernel(q, native_add, &arg, sizeof arg, 0, NULL, NULL, 0, NULL, &ev));
        timed("clEnqueueNativeKernel", ev);
    }
    /* Profiling info asked by the application on the queue without it. */
    CHECK(clEnqueueMarkerWithWaitList(plain, 0, NULL, &ev));
    launched();
    CHECK(clWaitForEvents(1, &ev));
    cl_ulong t;
    fprintf(out, "plain_profiling %d\n",
            (int)clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL));
    clReleaseEvent(ev);
    printf("checksum %.1f\n", checksum(q, d));
    free(h);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseMemObject(d);
    clReleaseKernel(vadd);
    clReleaseKernel(scale);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(plain);
}

static int per_thread = 100;
static cl_command_queue shared[4];

static void finish_all(void)
{
    for (int i = 0; i < 4; i++)
        CHECK(clFinish(shared[i]));
}

/* Thread t enqueues its kernels round-robin into the 4 shared queues, as
 * the 3 other threads do at the same time. */
static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    cl_mem a = buffer(N * 4), c = buffer(N * 4);
    cl_kernel vadd = kernel("vadd"); /* one per thread: arguments are per kernel */
    CHECK(clSetKernelArg(vadd, 0, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 1, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 2, sizeof c, &c));
    float one = 1.0f;
    CHECK(clEnqueueFillBuffer(shared[t], a, &one, sizeof one, 0, N * 4, 0, NULL, NULL));
    launched();
    CHECK(clFinish(shared[t]));
    size_t global = N;
    for (int i = 0; i < per_thread; i++) {
        cl_event ev;
        CHECK(clEnqueueNDRangeKernel(shared[(t + i) % 4], vadd, 1, NULL, &global, NULL, 0, NULL,
                                     i % 2 ? &ev : NULL));
        if (i % 2)
            CHECK(clReleaseEvent(ev)); /* released at once: aiprof must keep it */
        launched();
        if (i % 25 == 24)
            finish_all();
    }
    finish_all();
    double s = checksum(shared[t], c);
    pthread_mutex_lock(&launches_lock);
    printf("thread checksum %.1f\n", s);
    pthread_mutex_unlock(&launches_lock);
    clReleaseMemObject(a);
    clReleaseMemObject(c);
    clReleaseKernel(vadd);
    return NULL;
}

static void mode_threads(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        shared[i] = queue(CL_QUEUE_PROFILING_ENABLE);
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++)
        clReleaseCommandQueue(shared[i]);
}

static void mode_loop(void)
{
    cl_command_queue q = queue(0);
    cl_mem a = buffer(N * 4), c = buffer(N * 4);
    cl_kernel vadd = kernel("vadd");
    CHECK(clSetKernelArg(vadd, 0, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 1, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 2, sizeof c, &c));
    size_t global = N;
    for (long i = 0;; i++) {
        CHECK(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, NULL));
        CHECK(clFinish(q));
        if (i == 50) {
            printf("running\n");
            fflush(stdout);
        }
    }
}

static void mode_bad(void)
{
    cl_command_queue ooo = queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_int err;
    cl_command_queue plain = clCreateCommandQueue(ctx, dev, 0, &err); /* the 1.x call */
    CHECK(err);
    cl_command_queue_properties props = 0;
    CHECK(clGetCommandQueueInfo(plain, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    fprintf(out, "plain_properties %llu\n", (unsigned long long)props);
    CHECK(clGetCommandQueueInfo(ooo, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    fprintf(out, "ooo_properties %llu\n", (unsigned long long)props);
    /* The properties lists read back as given (aiprof's profiling pair hidden). */
    cl_queue_properties list[8];
    size_t bytes = 99;
    CHECK(clGetCommandQueueInfo(ooo, CL_QUEUE_PROPERTIES_ARRAY, sizeof list, list, &bytes));
    fprintf(out, "ooo_list");
    for (size_t i = 0; i < bytes / sizeof list[0]; i++)
        fprintf(out, " %llu", (unsigned long long)list[i]);
    fprintf(out, "\n");
    cl_command_queue nolist = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    CHECK(err);
    bytes = 99;
    CHECK(clGetCommandQueueInfo(nolist, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &bytes));
    fprintf(out, "nolist_list_bytes %zu\n", bytes);
    CHECK(clReleaseCommandQueue(nolist));
    cl_mem a = buffer(N * 4), c = buffer(N * 4);
    cl_kernel vadd = kernel("vadd");
    float one = 1.0f;
    CHECK(clEnqueueFillBuffer(ooo, a, &one, sizeof one, 0, N * 4, 0, NULL, NULL));
    launched();
    CHECK(clFinish(ooo));
    CHECK(clSetKernelArg(vadd, 0, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 1, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 2, sizeof c, &c));
    size_t global = N;
    for (int i = 0; i < 20; i++) {
        cl_event ev;
        CHECK(clEnqueueNDRangeKernel(ooo, vadd, 1, NULL, &global, NULL, 0, NULL, &ev));
        CHECK(clReleaseEvent(ev));
        launched();
        CHECK(clEnqueueNDRangeKernel(plain, vadd, 1, NULL, &global, NULL, 0, NULL, &ev));
        launched();
        CHECK(clWaitForEvents(1, &ev));
        cl_ulong t;
        err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
        if (i == 0)
            fprintf(out, "plain_profiling %d\n", (int)err);
        cl_int status;
        CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        if (i == 0)
            fprintf(out, "event_status %d\n", (int)status);
        CHECK(clReleaseEvent(ev));
    }
    CHECK(clEnqueueBarrier(ooo));
    launched();
    CHECK(clFinish(ooo));
    printf("checksum %.1f\n", checksum(plain, c));
    clReleaseMemObject(a);
    clReleaseMemObject(c);
    clReleaseKernel(vadd);
    clReleaseCommandQueue(ooo);
    clReleaseCommandQueue(plain);
}

static void mode_reuse(void)
{
    cl_mem a = buffer(N * 4), c = buffer(N * 4);
    float two = 2.0f;
    size_t global = N;
    cl_command_queue fill = queue(0);
    CHECK(clEnqueueFillBuffer(fill, a, &two, sizeof two, 0, N * 4, 0, NULL, NULL));
    launched();
    CHECK(clFinish(fill));
    CHECK(clReleaseCommandQueue(fill));
    void *last_kernel = NULL, *last_queue = NULL;
    int reused_kernels = 0, reused_queues = 0;
    for (int i = 0; i < 20; i++) {
        const char *name = i % 2 ? "scale" : "vadd";
        cl_command_queue q = queue(i % 3 ? CL_QUEUE_PROFILING_ENABLE : 0);
        cl_kernel k = kernel(name);
        reused_kernels += (void *)k == last_kernel;
        reused_queues += (void *)q == last_queue;
        last_kernel = k, last_queue = q;
        if (i % 2) {
            CHECK(clSetKernelArg(k, 0, sizeof c, &c));
            CHECK(clSetKernelArg(k, 1, sizeof two, &two));
        } else {
            CHECK(clSetKernelArg(k, 0, sizeof a, &a));
            CHECK(clSetKernelArg(k, 1, sizeof a, &a));
            CHECK(clSetKernelArg(k, 2, sizeof c, &c));
        }
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
        launched();
        fprintf(out, "kernel %s\n", name);
        CHECK(clFinish(q));
        CHECK(clReleaseKernel(k));
        CHECK(clReleaseCommandQueue(q));
    }
    fprintf(out, "reused_kernels %d\nreused_queues %d\n", reused_kernels, reused_queues);
    cl_command_queue q = queue(0);
    printf("checksum %.1f\n", checksum(q, c));
    clReleaseCommandQueue(q);
    clReleaseMemObject(a);
    clReleaseMemObject(c);
}

static void mode_errors(void)
{
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE);
    cl_mem a = buffer(N * 4);
    size_t global = N;
    float h[4];
    cl_int err = 1;
    cl_event ev = NULL;
    fprintf(out, "ndrange_null_queue %d\n",
            (int)clEnqueueNDRangeKernel(NULL, NULL, 1, NULL, &global, NULL, 0, NULL, &ev));
    cl_kernel unset = kernel("vadd"); /* its arguments never set */
    fprintf(out, "ndrange_args_unset %d\n",
            (int)clEnqueueNDRangeKernel(q, unset, 1, NULL, &global, NULL, 0, NULL, &ev));
    fprintf(out, "event_untouched %d\n", ev == NULL);
    fprintf(out, "read_null_buffer %d\n",
            (int)clEnqueueReadBuffer(q, NULL, CL_TRUE, 0, 16, h, 0, NULL, NULL));
    fprintf(out, "read_out_of_range %d\n",
            (int)clEnqueueReadBuffer(q, a, CL_TRUE, N * 4, 16, h, 0, NULL, NULL));
    void *p = clEnqueueMapBuffer(q, NULL, CL_TRUE, CL_MAP_READ, 0, 16, 0, NULL, NULL, &err);
    fprintf(out, "map_null_buffer %d %d\n", (int)err, p == NULL);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
    fprintf(out, "buffer_size_0 %d %d\n", (int)err, m == NULL);
    cl_queue_properties bogus[] = {0x7fff, 1, 0};
    cl_command_queue bq = clCreateCommandQueueWithProperties(ctx, dev, bogus, &err);
    fprintf(out, "queue_bogus_property %d %d\n", (int)err, bq == NULL);
    fprintf(out, "wait_nothing %d\n", (int)clWaitForEvents(0, NULL));
    fprintf(out, "finish_null %d\n", (int)clFinish(NULL));
    cl_ulong t;
    fprintf(out, "profiling_null_event %d\n",
            (int)clGetEventProfilingInfo(NULL, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL));
    fprintf(out, "queue_info_null %d\n",
            (int)clGetCommandQueueInfo(NULL, CL_QUEUE_PROPERTIES, sizeof t, &t, NULL));
    fprintf(out, "release_null_mem %d\n", (int)clReleaseMemObject(NULL));
    fprintf(out, "release_null_queue %d\n", (int)clReleaseCommandQueue(NULL));
    /* One that works, so the run has a device. */
    CHECK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, 16, h, 0, NULL, NULL));
    launched();
    printf("checksum 0\n");
    clReleaseKernel(unset);
    clReleaseMemObject(a);
    clReleaseCommandQueue(q);
}

/* A thread that enqueues and exits without waiting: its exit hands its
 * commands over. */
static void *unwaited(void *arg)
{
    cl_command_queue q = arg;
    cl_kernel vadd = kernel("vadd");
    cl_mem a = buffer(N * 4);
    CHECK(clSetKernelArg(vadd, 0, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 1, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 2, sizeof a, &a));
    size_t global = N;
    for (int i = 0; i < 10; i++) {
        CHECK(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, NULL));
        launched();
    }
    CHECK(clFlush(q));
    clReleaseMemObject(a); /* OpenCL keeps it while the commands need it */
    clReleaseKernel(vadd);
    return NULL;
}

static void mode_batches(void)
{
    cl_command_queue q = queue(CL_QUEUE_PROFILING_ENABLE),
                     ooo = queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), other = queue(0);
    cl_mem a = buffer(N * 4), c = buffer(N * 4);
    cl_kernel vadd = kernel("vadd");
    CHECK(clSetKernelArg(vadd, 0, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 1, sizeof a, &a));
    CHECK(clSetKernelArg(vadd, 2, sizeof c, &c));
    float one = 1.0f, h[16];
    CHECK(clEnqueueFillBuffer(q, a, &one, sizeof one, 0, N * 4, 0, NULL, NULL));
    launched();
    size_t global = N;
    cl_event kept[200];
    int n_kept = 0;
    for (int i = 0; i < 300; i++) {
        cl_command_queue to = i % 3 == 1 ? ooo : q;
        cl_event *ev = i % 3 == 0 && n_kept < 200 ? &kept[n_kept++] : NULL;
        CHECK(clEnqueueNDRangeKernel(to, vadd, 1, NULL, &global, NULL, 0, NULL, ev));
        launched();
        if (i % 7 == 6) { /* the only waits: blocking reads of the in-order queue */
            CHECK(clEnqueueReadBuffer(q, c, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL));
            launched();
        }
        if (i % 100 == 50) { /* longer than a batch may wait to be handed over */
            struct timespec pause = {0, 30 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    pthread_t th;
    pthread_create(&th, NULL, unwaited, other);
    pthread_join(th, NULL);
    for (int i = 0; i < n_kept; i++) { /* read long after: done by now, or waited for */
        CHECK(clWaitForEvents(1, &kept[i]));
        cl_ulong start = 0, end = 0;
        CHECK(clGetEventProfilingInfo(kept[i], CL_PROFILING_COMMAND_START, sizeof start, &start,
                                      NULL));
        CHECK(clGetEventProfilingInfo(kept[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        fprintf(out, "clEnqueueNDRangeKernel %llu\n", (unsigned long long)(end - start));
        CHECK(clReleaseEvent(kept[i]));
    }
    CHECK(clFinish(q));
    CHECK(clFinish(ooo));
    CHECK(clFinish(other));
    printf("checksum %.1f\n", checksum(q, c));
    /* The last commands: never waited for, only flushed. */
    for (int i = 0; i < 5; i++) {
        CHECK(clEnqueueNDRangeKernel(q, vadd, 1, NULL, &global, NULL, 0, NULL, NULL));
        launched();
    }
    CHECK(clFlush(q));
    struct timespec done = {0, 50 * 1000 * 1000};
    nanosleep(&done, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    out = argc > 2 ? fopen(argv[2], "w") : stdout;
    if (!out)
        return 2;
    if (argc > 3)
        per_thread = atoi(argv[3]);
#ifdef AIP_LINKED
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = getenv("OCL_AIP_DIR");
    cfg.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "ocl_prog: %s\n", aip_last_error());
        return 1;
    }
    const char *dir = aip_session_result_dir(s);
    printf("result %s\n", dir ? dir : "");
    fflush(stdout);
#endif
    if (setup()) {
        if (!strcmp(mode, "accuracy"))
            mode_accuracy();
        else if (!strcmp(mode, "threads"))
            mode_threads();
        else if (!strcmp(mode, "loop"))
            mode_loop();
        else if (!strcmp(mode, "bad"))
            mode_bad();
        else if (!strcmp(mode, "errors"))
            mode_errors();
        else if (!strcmp(mode, "reuse"))
            mode_reuse();
        else if (!strcmp(mode, "batches"))
            mode_batches();
        else
            return 2;
        clReleaseProgram(prog);
        clReleaseContext(ctx);
    }
    fprintf(out, "launches %ld\n", launches);
    if (out != stdout)
        fclose(out);
#ifdef AIP_LINKED
    aip_session_stop(s);
    aip_session_destroy(s);
#endif
    return 0;
}
