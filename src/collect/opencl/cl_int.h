/*
 * cl_int.h — what the files of the OpenCL back end share.
 *
 * The back end interposes the OpenCL entry points (cl_enqueue.c: commands;
 * cl_images.c: image commands and allocations; cl_objects.c: queues,
 * buffers, SVM, kernels, waits): libaiprof defines
 * functions with the OpenCL names, so a program that resolves them through
 * libaiprof (LD_PRELOAD by `aiprof run`, or -laiprof before -lOpenCL) calls
 * these, which call the real ones.  libaiprof never links libOpenCL: the
 * real functions are found at run time (cl_real.c).  cl_track.c keeps the
 * handle tables (queue, kernel name), the devices and their clock samples;
 * cl_events.c reads each command's profiling info once it completed, in a
 * completion callback per batch of commands, so the application never
 * waits for aiprof.
 */
#ifndef AIP_CL_INT_H
#define AIP_CL_INT_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>

#include "device.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The wrappers are the library's only exported non-aip symbols. */
#define AIP_CL_EXPORT __attribute__((visibility("default")))

/* Every real entry point the back end calls or wraps.  The pointer types
 * come from the header's own declarations, so a wrong prototype fails the
 * build. */
// clang-format off
#define AIP_CL_FUNCS(X)                                                                      \
    X(clGetPlatformIDs) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext)              \
    X(clReleaseContext) X(clGetContextInfo) X(clCreateCommandQueue)                          \
    X(clCreateCommandQueueWithProperties) X(clReleaseCommandQueue) X(clGetCommandQueueInfo)  \
    X(clEnqueueNDRangeKernel) X(clEnqueueTask) X(clEnqueueReadBuffer)                        \
    X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) X(clEnqueueReadBufferRect)                \
    X(clEnqueueWriteBufferRect) X(clEnqueueCopyBufferRect) X(clEnqueueFillBuffer)            \
    X(clEnqueueMapBuffer) X(clEnqueueUnmapMemObject) X(clEnqueueMarker)                      \
    X(clEnqueueMarkerWithWaitList) X(clEnqueueBarrier) X(clEnqueueBarrierWithWaitList)       \
    X(clEnqueueSVMMemcpy) X(clEnqueueSVMMemFill) X(clEnqueueSVMMap) X(clEnqueueSVMUnmap)     \
    X(clEnqueueSVMFree) X(clEnqueueSVMMigrateMem) X(clCreateBuffer)                          \
    X(clCreateBufferWithProperties) X(clReleaseMemObject) X(clGetMemObjectInfo)              \
    X(clSetMemObjectDestructorCallback) X(clSVMAlloc) X(clSVMFree) X(clFinish)               \
    X(clWaitForEvents) X(clRetainEvent) X(clReleaseEvent) X(clSetEventCallback)              \
    X(clGetEventProfilingInfo) X(clGetEventInfo) X(clGetKernelInfo) X(clCreateKernel)        \
    X(clCreateKernelsInProgram) X(clCloneKernel) X(clGetDeviceAndHostTimer)                  \
    X(clEnqueueReadImage) X(clEnqueueWriteImage) X(clEnqueueCopyImage)                       \
    X(clEnqueueCopyImageToBuffer) X(clEnqueueCopyBufferToImage) X(clEnqueueFillImage)        \
    X(clEnqueueMapImage) X(clEnqueueMigrateMemObjects) X(clCreateImage)                      \
    X(clCreateImageWithProperties) X(clGetImageInfo) X(clEnqueueNativeKernel)             \
    X(clEnqueueWaitForEvents) X(clCreateImage2D) X(clCreateImage3D) X(clCreatePipe)
// clang-format on

typedef struct aip__cl_api {
#define AIP_CL_FIELD(f) __typeof__(f) *f;
    AIP_CL_FUNCS(AIP_CL_FIELD)
#undef AIP_CL_FIELD
} aip__cl_api;

/* ---- the wrappers' shared pieces (cl_enqueue.c, cl_images.c) ---------- */

/* The real function, or CL_INVALID_OPERATION when this OpenCL lacks it. */
#define AIP_CL_REAL_OR_FAIL(fn)                                                                    \
    const aip__cl_api *cl = aip__cl_real();                                                        \
    if (!cl->fn)                                                                                   \
    return CL_INVALID_OPERATION

/* The body of a wrapper returning cl_int whose last argument is the event:
 * ARGS are the real call's arguments before it; TI the task it launches. */
#define AIP_CL_ENQUEUE(fn, q, ev, TI, ...)                                                         \
    AIP_CL_REAL_OR_FAIL(fn);                                                                       \
    aip__cl_launch l;                                                                              \
    if (!aip__dev_recording() || !aip__cl_launch_begin(&l, q, ev))                                 \
        return cl->fn(__VA_ARGS__, ev);                                                            \
    cl_int err = cl->fn(__VA_ARGS__, l.event);                                                     \
    aip__dev_task_info ti = TI;                                                                    \
    aip__cl_launch_end(&l, AIP__ID(#fn), err, ev, &ti);                                            \
    return err

static inline uint64_t region_bytes(const size_t *region)
{
    return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

/* `name`: interned (AIP__ID("Memcpy HtoD"), a kernel's cached id), so
 * that recording the task looks nothing up. */
static inline aip__dev_task_info aip__cl_task(aip_string_id name, uint8_t kind, uint8_t dir,
                                              uint64_t bytes)
{
    aip__dev_task_info ti;
    memset(&ti, 0, sizeof ti);
    ti.name_id = name;
    ti.kind = kind;
    ti.direction = dir;
    ti.bytes = bytes;
    return ti;
}

/* ---- cl_real.c ---------------------------------------------------------- */

/* aip__cl_real() : the real entry points (resolved once, on first use); a
 * field is NULL where the OpenCL library lacks the function. */
const aip__cl_api *aip__cl_real(void);

/* aip__cl_status() : why the back end collects nothing in this process
 * now (the program has not loaded OpenCL; no platform; no device), NULL
 * when it collects; never loads OpenCL itself.  aip__cl_probe() : the same
 * for the machine: loads OpenCL and asks it (once per process). */
const char *aip__cl_status(void);
const char *aip__cl_probe(void);

/* ---- cl_track.c --------------------------------------------------------- */

/* What the back end knows of a queue, packed in one word so the enqueue
 * path reads it with one atomic load. */
enum {
    AIP_CLQ_PROFILING = 1, /* the queue has CL_QUEUE_PROFILING_ENABLE */
    AIP_CLQ_FORCED = 2,    /* ... because aiprof added it (hidden from the app) */
    AIP_CLQ_ADDED_PAIR = 4, /* ... as a CL_QUEUE_PROPERTIES pair appended to its list */
    AIP_CLQ_NO_LIST = 8     /* ... to a list the application did not give (NULL, empty) */
};
typedef struct aip__cl_queue {
    uint32_t queue;  /* aip__dev_queue id (AIP_DEV_NONE: none) */
    uint32_t device; /* aip__dev_device id */
    unsigned flags;  /* AIP_CLQ_* */
} aip__cl_queue;

/* aip__cl_queue_created() : a queue the application just created (an
 * address reused after a release replaces what was known of it). */
void aip__cl_queue_created(cl_command_queue q, cl_device_id dev, unsigned flags);
/* aip__cl_queue_info() : what is known of q, learnt from OpenCL on first
 * sight (a queue created before aiprof saw it).  @return 0 when OpenCL
 * does not know q (the command will fail anyway). */
int aip__cl_queue_info(cl_command_queue q, aip__cl_queue *out);
/* aip__cl_queue_forced() : the AIP_CLQ_* flags of q when aiprof added
 * profiling to it (what to hide), else 0. */
unsigned aip__cl_queue_forced(cl_command_queue q);

/* aip__cl_device_id() : the aip__dev_device id of dev (registered on first
 * sight, with a clock sample when a trace records). */
uint32_t aip__cl_device_id(cl_device_id dev);

/* aip__cl_kernel_name_id() : the kernel's function name, interned
 * (aip_intern), cached per cl_kernel; aip__cl_kernel_created() forgets
 * what was cached for an address a new kernel reuses. */
aip_string_id aip__cl_kernel_name_id(cl_kernel k);
void aip__cl_kernel_created(cl_kernel k);

/* ---- cl_events.c -------------------------------------------------------- */

/* One command being launched: filled by the wrapper before the real call. */
typedef struct aip__cl_launch {
    uint64_t api_start; /* aip__dev_api_begin() */
    uint64_t correlation;
    aip__cl_queue queue;
    cl_event own;    /* the event aiprof asked for */
    cl_event *event; /* what to pass the real call: the app's or &own */
} aip__cl_launch;

/* aip__cl_launch_begin() : start recording a command on q.  @return 0 when
 * nothing records (call the real function with the app's arguments). */
int aip__cl_launch_begin(aip__cl_launch *l, cl_command_queue q, cl_event *app_event);
/* aip__cl_launch_end() : after the real call returned `err`: record the API
 * call `api` (interned: AIP__ID) and, on success, follow the command's
 * event to its task. */
void aip__cl_launch_end(aip__cl_launch *l, aip_string_id api, cl_int err, cl_event *app_event,
                        aip__dev_task_info *ti);
/* aip__cl_hand_over() : the calling thread's gathered commands are read
 * as they complete (before it waits: clFinish, clWaitForEvents);
 * aip__cl_hand_over_all() : every thread's (a trace stopping). */
void aip__cl_hand_over(void);
void aip__cl_hand_over_all(void);
/* An API call that launches nothing (clFinish, clWaitForEvents...). */
void aip__cl_api_call(const char *api, uint64_t start, uint32_t device);

/* Counters of what could not be collected in the current trace. */
typedef struct aip__cl_counters {
    atomic_ullong untimed;     /* queues without profiling, or no info */
    atomic_ullong failed;      /* commands that ended in error */
    atomic_ullong no_callback; /* clSetEventCallback refused */
    atomic_ullong bad_times;   /* end before start */
    /* Commands handed over and not yet read (all traces) = issued -
     * completed.  Two counters on their own cache lines: the enqueuing
     * threads write one (per batch), the runtime's callback thread the
     * other, so no line bounces between them. */
    _Alignas(64) atomic_ullong issued;
    _Alignas(64) atomic_ullong completed;
} aip__cl_counters;
extern aip__cl_counters aip__cl_count;
/* Callbacks still owed. */
static inline long long aip__cl_outstanding(void)
{
    unsigned long long done = atomic_load_explicit(&aip__cl_count.completed, memory_order_acquire);
    return (long long)(atomic_load_explicit(&aip__cl_count.issued, memory_order_acquire) - done);
}

/* ---- cl_objects.c ------------------------------------------------------- */

/* aip__cl_mem_made() : a memory object of `size` bytes was created in ctx
 * while recording: record the allocation, and its free when OpenCL
 * destroys the object.  `kind`: enum aip__devmem_kind. */
void aip__cl_mem_made(cl_context ctx, cl_mem mem, size_t size, uint8_t kind);
void aip__cl_mem_made_sized(cl_context ctx, cl_mem mem, uint8_t kind); /* CL_MEM_SIZE asked */

/* The body of an interposed constructor of a memory object whose size
 * OpenCL computes (images, pipes): the real call, then the allocation. */
#define AIP_CL_CREATE_MEM(fn, kind, ctx, errcode_ret, ...)                                         \
    const aip__cl_api *cl = aip__cl_real();                                                        \
    if (!cl->fn) {                                                                                 \
        if (errcode_ret)                                                                           \
            *errcode_ret = CL_INVALID_OPERATION;                                                   \
        return NULL;                                                                               \
    }                                                                                              \
    cl_mem mem = cl->fn(ctx, __VA_ARGS__, errcode_ret);                                            \
    if (mem && aip__dev_recording())                                                               \
        aip__cl_mem_made_sized(ctx, mem, kind);                                                    \
    return mem

/* aip__cl_svm_freed() : an SVM allocation made while recording is freed:
 * record it with the size it had (nothing for pointers not allocated so). */
void aip__cl_svm_freed(void *ptr);

/* ---- cl_clock.c --------------------------------------------------------- */

/* aip__cl_clock_sample() : record a clock sample of dev (id `device`):
 * clGetDeviceAndHostTimer where the device has it, else a marker on a
 * private queue timed by the host.  Called with the device table locked. */
typedef struct aip__cl_clock {
    int method;     /* 0 = not tried, AIP_SYNC_*, -1 = none works */
    int host_clock; /* SAME_CLOCK: the host clockid it counts + 1 */
    cl_context ctx; /* private, for markers */
    cl_command_queue q;
} aip__cl_clock;
void aip__cl_clock_sample(cl_device_id dev, uint32_t device, aip__cl_clock *c);

/* aip__cl_clock_tick() : on the enqueue path (`now` in ticks): a device
 * that counts a host clock gets a new sample every AIP_CL_RESAMPLE_S. */
#define AIP_CL_RESAMPLE_S 0.1
void aip__cl_clock_tick(uint32_t device, uint64_t now);

/* cl_track.c: sample every known device (start and stop of a trace). */
void aip__cl_clock_sample_all(void);

#endif
