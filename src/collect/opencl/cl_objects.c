/*
 * cl_objects.c — the interposed OpenCL object calls: queue creation (where
 * profiling is switched on), buffers and SVM (device memory), kernels
 * (their name cache), and the waits (clFinish, clWaitForEvents).
 *
 * Profiling is added to every queue the application creates, recording or
 * not, so that a trace started later (a window, dynamic mode) can time the
 * commands of queues made before it; clGetCommandQueueInfo hides the bit
 * again from the application.  A device that refuses profiling queues gets
 * the application's own properties: its commands are counted untimed.
 * Buffer frees are recorded when OpenCL really destroys the object (a
 * destructor callback), not at a clReleaseMemObject that leaves references.
 */
#include "cl_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- queues ------------------------------------------------------------- */

/* `forced`: 0, or AIP_CLQ_FORCED with how it was added (AIP_CLQ_*). */
static void queue_made(cl_command_queue q, cl_device_id dev, cl_command_queue_properties asked,
                       unsigned forced)
{
    unsigned flags = 0;
    if (forced)
        flags = AIP_CLQ_PROFILING | forced;
    else if (asked & CL_QUEUE_PROFILING_ENABLE)
        flags = AIP_CLQ_PROFILING;
    aip__cl_queue_created(q, dev, flags);
}

AIP_CL_EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context ctx, cl_device_id dev,
                                                                cl_command_queue_properties props,
                                                                cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCreateCommandQueue) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    unsigned forced = props & CL_QUEUE_PROFILING_ENABLE ? 0 : AIP_CLQ_FORCED;
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        cl->clCreateCommandQueue(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, &err);
    if (!q && forced) { /* the device refuses profiling: the application's call */
        forced = 0;
        q = cl->clCreateCommandQueue(ctx, dev, props, &err);
    }
    if (q)
        queue_made(q, dev, props, forced);
    if (errcode_ret)
        *errcode_ret = err;
    return q;
}

#define MAX_PROPS 64

AIP_CL_EXPORT cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(
    cl_context ctx, cl_device_id dev, const cl_queue_properties *props, cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCreateCommandQueueWithProperties) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    /* A copy of the list with CL_QUEUE_PROFILING_ENABLE in CL_QUEUE_PROPERTIES
     * (the pair added when absent). */
    cl_queue_properties mine[MAX_PROPS + 3];
    cl_command_queue_properties asked = 0;
    int n = 0, has_props = 0, fits = 1;
    for (const cl_queue_properties *p = props; p && p[0]; p += 2) {
        if (n >= MAX_PROPS) {
            fits = 0;
            break;
        }
        mine[n] = p[0];
        mine[n + 1] = p[1];
        if (p[0] == CL_QUEUE_PROPERTIES) {
            has_props = 1;
            asked = (cl_command_queue_properties)p[1];
            mine[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
        }
        n += 2;
    }
    if (!has_props) {
        mine[n++] = CL_QUEUE_PROPERTIES;
        mine[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    mine[n] = 0;
    unsigned forced = 0;
    if (fits && !(asked & CL_QUEUE_PROFILING_ENABLE))
        forced = AIP_CLQ_FORCED | (has_props ? 0 : AIP_CLQ_ADDED_PAIR) |
                 (props && props[0] ? 0 : AIP_CLQ_NO_LIST);
    cl_int err = CL_SUCCESS;
    cl_command_queue q =
        cl->clCreateCommandQueueWithProperties(ctx, dev, forced ? mine : props, &err);
    if (!q && forced) {
        forced = 0;
        q = cl->clCreateCommandQueueWithProperties(ctx, dev, props, &err);
    }
    if (q)
        queue_made(q, dev, asked, forced);
    if (errcode_ret)
        *errcode_ret = err;
    return q;
}

/* The CL_QUEUE_PROPERTIES_ARRAY of a queue aiprof added profiling to, as
 * the application's own list would read: the pair aiprof appended removed
 * (nothing at all when the application gave no list), or the bit cleared. */
static cl_int hidden_properties_array(const aip__cl_api *cl, cl_command_queue q, unsigned flags,
                                      size_t size, void *value, size_t *size_ret)
{
    cl_queue_properties list[MAX_PROPS + 3];
    size_t got = 0;
    cl_int err = cl->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof list, list, &got);
    if (err != CL_SUCCESS)
        return err;
    size_t n = got / sizeof list[0], out = 0;
    for (size_t i = 0; i + 1 < n && list[i]; i += 2) {
        if (list[i] == CL_QUEUE_PROPERTIES) {
            if (flags & AIP_CLQ_ADDED_PAIR)
                continue;
            list[i + 1] &= ~(cl_queue_properties)CL_QUEUE_PROFILING_ENABLE;
        }
        list[out++] = list[i];
        list[out++] = list[i + 1];
    }
    list[out++] = 0;
    size_t bytes = flags & AIP_CLQ_NO_LIST ? 0 : out * sizeof list[0];
    if (value) {
        if (size < bytes)
            return CL_INVALID_VALUE;
        memcpy(value, list, bytes);
    }
    if (size_ret)
        *size_ret = bytes;
    return CL_SUCCESS;
}

AIP_CL_EXPORT cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue q,
                                                       cl_command_queue_info what, size_t size,
                                                       void *value, size_t *size_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clGetCommandQueueInfo)
        return CL_INVALID_OPERATION;
    /* Hide the profiling aiprof added: the application sees what it asked. */
    unsigned forced = aip__cl_queue_forced(q);
    if (forced && what == CL_QUEUE_PROPERTIES_ARRAY)
        return hidden_properties_array(cl, q, forced, size, value, size_ret);
    cl_int err = cl->clGetCommandQueueInfo(q, what, size, value, size_ret);
    if (err == CL_SUCCESS && forced && value && what == CL_QUEUE_PROPERTIES &&
        size >= sizeof(cl_command_queue_properties))
        *(cl_command_queue_properties *)value &=
            ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
    return err;
}

AIP_CL_EXPORT cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue q)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clReleaseCommandQueue)
        return CL_INVALID_OPERATION;
    if (!aip__dev_recording())
        return cl->clReleaseCommandQueue(q);
    aip__cl_queue info = {.device = AIP_DEV_NONE};
    aip__cl_queue_info(q, &info);
    uint64_t start = aip__dev_api_begin();
    cl_int err = cl->clReleaseCommandQueue(q);
    aip__cl_api_call("clReleaseCommandQueue", start, info.device);
    return err;
}

/* Events of a queue where aiprof added profiling answer as they would
 * without it: the application sees CL_PROFILING_INFO_NOT_AVAILABLE. */
AIP_CL_EXPORT cl_int CL_API_CALL clGetEventProfilingInfo(cl_event ev, cl_profiling_info what,
                                                         size_t size, void *value, size_t *size_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clGetEventProfilingInfo)
        return CL_INVALID_OPERATION;
    cl_command_queue q = NULL;
    if (cl->clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q &&
        aip__cl_queue_forced(q))
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    return cl->clGetEventProfilingInfo(ev, what, size, value, size_ret);
}

/* ---- waits -------------------------------------------------------------- */

AIP_CL_EXPORT cl_int CL_API_CALL clFinish(cl_command_queue q)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clFinish)
        return CL_INVALID_OPERATION;
    if (!aip__dev_recording())
        return cl->clFinish(q);
    aip__cl_queue info = {.device = AIP_DEV_NONE};
    aip__cl_queue_info(q, &info);
    aip__cl_hand_over();
    uint64_t start = aip__dev_api_begin();
    cl_int err = cl->clFinish(q);
    aip__cl_api_call("clFinish", start, info.device);
    return err;
}

AIP_CL_EXPORT cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *events)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clWaitForEvents)
        return CL_INVALID_OPERATION;
    if (!aip__dev_recording())
        return cl->clWaitForEvents(n, events);
    aip__cl_hand_over();
    uint64_t start = aip__dev_api_begin();
    cl_int err = cl->clWaitForEvents(n, events);
    aip__cl_api_call("clWaitForEvents", start, AIP_DEV_NONE);
    return err;
}

/* ---- device memory ------------------------------------------------------ */

/* The device a context's memory is counted on: its first. */
static uint32_t context_device(cl_context ctx)
{
    const aip__cl_api *cl = aip__cl_real();
    cl_device_id devs[8];
    size_t size = 0;
    if (cl->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof devs, devs, &size) != CL_SUCCESS ||
        size < sizeof devs[0]) {
        /* more than 8 devices: ask for the size, then all */
        if (cl->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 0, NULL, &size) != CL_SUCCESS ||
            size < sizeof devs[0])
            return AIP_DEV_NONE;
        cl_device_id *all = malloc(size);
        uint32_t id = AIP_DEV_NONE;
        if (all && cl->clGetContextInfo(ctx, CL_CONTEXT_DEVICES, size, all, NULL) == CL_SUCCESS)
            id = aip__cl_device_id(all[0]);
        free(all);
        return id;
    }
    return aip__cl_device_id(devs[0]);
}

typedef struct mem_freed {
    uint32_t device;
    uint8_t kind;
    int64_t bytes;
} mem_freed;

static void CL_CALLBACK on_mem_destroyed(cl_mem mem, void *user)
{
    mem_freed *f = user;
    aip__dev_memory(f->device, (uint64_t)(uintptr_t)mem, -f->bytes, f->kind);
    free(f);
}

void aip__cl_mem_made(cl_context ctx, cl_mem mem, size_t size, uint8_t kind)
{
    uint32_t dev = context_device(ctx);
    aip__dev_memory(dev, (uint64_t)(uintptr_t)mem, (int64_t)size, kind);
    mem_freed *f = malloc(sizeof *f);
    if (!f)
        return;
    f->device = dev;
    f->kind = kind;
    f->bytes = (int64_t)size;
    if (aip__cl_real()->clSetMemObjectDestructorCallback(mem, on_mem_destroyed, f) != CL_SUCCESS)
        free(f);
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size,
                                                void *host_ptr, cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCreateBuffer) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    cl_mem mem = cl->clCreateBuffer(ctx, flags, size, host_ptr, errcode_ret);
    if (mem && aip__dev_recording())
        aip__cl_mem_made(ctx, mem, size, AIP_DEVMEM_BUFFER);
    return mem;
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreateBufferWithProperties(cl_context ctx,
                                                              const cl_mem_properties *props,
                                                              cl_mem_flags flags, size_t size,
                                                              void *host_ptr, cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCreateBufferWithProperties) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    cl_mem mem = cl->clCreateBufferWithProperties(ctx, props, flags, size, host_ptr, errcode_ret);
    if (mem && aip__dev_recording())
        aip__cl_mem_made(ctx, mem, size, AIP_DEVMEM_BUFFER);
    return mem;
}

AIP_CL_EXPORT cl_int CL_API_CALL clReleaseMemObject(cl_mem mem)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clReleaseMemObject)
        return CL_INVALID_OPERATION;
    if (!aip__dev_recording())
        return cl->clReleaseMemObject(mem);
    uint64_t start = aip__dev_api_begin();
    cl_int err = cl->clReleaseMemObject(mem);
    aip__cl_api_call("clReleaseMemObject", start, AIP_DEV_NONE);
    return err;
}

/* SVM allocations made while recording: pointer -> size, so that a free
 * records the size it had.  Few and short-lived: a chained table. */
typedef struct svm_node {
    struct svm_node *next;
    void *ptr;
    size_t size;
    uint32_t device;
} svm_node;

#define SVM_BUCKETS 256
static svm_node *svm[SVM_BUCKETS];
static int svm_any; /* read without the lock: only a hint that the table has entries */
static pthread_mutex_t svm_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned svm_slot(void *p)
{
    return (unsigned)(((uintptr_t)p >> 6) * 0x9E3779B1u) % SVM_BUCKETS;
}

void aip__cl_svm_freed(void *ptr)
{
    if (!ptr || !__atomic_load_n(&svm_any, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&svm_lock);
    svm_node **pp = &svm[svm_slot(ptr)], *n;
    while ((n = *pp) && n->ptr != ptr)
        pp = &n->next;
    if (n)
        *pp = n->next;
    pthread_mutex_unlock(&svm_lock);
    if (n) {
        aip__dev_memory(n->device, (uint64_t)(uintptr_t)ptr, -(int64_t)n->size, AIP_DEVMEM_SVM);
        free(n);
    }
}

AIP_CL_EXPORT void *CL_API_CALL clSVMAlloc(cl_context ctx, cl_svm_mem_flags flags, size_t size,
                                           cl_uint alignment)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clSVMAlloc)
        return NULL;
    void *p = cl->clSVMAlloc(ctx, flags, size, alignment);
    if (!p || !aip__dev_recording())
        return p;
    svm_node *n = malloc(sizeof *n);
    if (!n)
        return p;
    n->ptr = p;
    n->size = size;
    n->device = context_device(ctx);
    aip__dev_memory(n->device, (uint64_t)(uintptr_t)p, (int64_t)size, AIP_DEVMEM_SVM);
    pthread_mutex_lock(&svm_lock);
    unsigned s = svm_slot(p);
    n->next = svm[s];
    svm[s] = n;
    __atomic_store_n(&svm_any, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&svm_lock);
    return p;
}

AIP_CL_EXPORT void CL_API_CALL clSVMFree(cl_context ctx, void *ptr)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clSVMFree)
        return;
    aip__cl_svm_freed(ptr); /* before: the address may be reused at once */
    cl->clSVMFree(ctx, ptr);
}

/* ---- kernels: a new kernel at a reused address gets its own name -------- */

AIP_CL_EXPORT cl_kernel CL_API_CALL clCreateKernel(cl_program prog, const char *name,
                                                   cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCreateKernel) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    cl_kernel k = cl->clCreateKernel(prog, name, errcode_ret);
    if (k)
        aip__cl_kernel_created(k);
    return k;
}

AIP_CL_EXPORT cl_int CL_API_CALL clCreateKernelsInProgram(cl_program prog, cl_uint n,
                                                          cl_kernel *kernels, cl_uint *n_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCreateKernelsInProgram)
        return CL_INVALID_OPERATION;
    cl_uint made = 0, *out = n_ret ? n_ret : &made;
    cl_int err = cl->clCreateKernelsInProgram(prog, n, kernels, out);
    if (err == CL_SUCCESS && kernels)
        for (cl_uint i = 0; i < *out && i < n; i++)
            aip__cl_kernel_created(kernels[i]);
    return err;
}

AIP_CL_EXPORT cl_kernel CL_API_CALL clCloneKernel(cl_kernel src, cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clCloneKernel) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    cl_kernel k = cl->clCloneKernel(src, errcode_ret);
    if (k)
        aip__cl_kernel_created(k);
    return k;
}
