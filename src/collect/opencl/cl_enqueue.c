/*
 * cl_enqueue.c — the interposed OpenCL commands: kernels, copies, fills,
 * maps, markers, barriers and SVM commands (see cl_int.h).
 *
 * Each wrapper checks once whether a trace records device activity; if not
 * it calls the real function with the application's arguments.  Otherwise
 * it records the call as a runtime API call and follows its event to the
 * device task (cl_events.c).  The only argument ever changed is the event
 * out-pointer when the application passed none (we need an event); what
 * the application gets back is exactly what OpenCL returned.
 */
#include "cl_int.h"

static uint32_t clamp32(size_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* SVM migrations: sizes NULL or 0 mean whole allocations (unknown here). */
static uint64_t sum_sizes(cl_uint count, const size_t *sizes)
{
    uint64_t bytes = 0;
    for (cl_uint i = 0; sizes && i < count; i++)
        bytes += sizes[i];
    return bytes;
}

static aip__dev_task_info kernel_task(cl_int err, cl_kernel k, cl_uint dim, const size_t *gws,
                                      const size_t *lws)
{
    aip__dev_task_info ti = aip__cl_task(err == CL_SUCCESS ? aip__cl_kernel_name_id(k) : 0,
                                         AIP_TASK_KERNEL, AIP_COPY_NONE, 0);
    for (cl_uint i = 0; i < dim && i < 3; i++) {
        ti.global[i] = gws ? clamp32(gws[i]) : 0;
        ti.local[i] = lws ? clamp32(lws[i]) : 0;
    }
    return ti;
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                        cl_uint dim, const size_t *offset,
                                                        const size_t *gws, const size_t *lws,
                                                        cl_uint n, const cl_event *wait,
                                                        cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueNDRangeKernel, q, ev, kernel_task(err, k, dim, gws, lws), q, k, dim,
                   offset, gws, lws, n, wait);
}

static const size_t one = 1;

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n,
                                               const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueTask, q, ev, kernel_task(err, k, 1, &one, &one), q, k, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem buf,
                                                     cl_bool blocking, size_t offset, size_t size,
                                                     void *ptr, cl_uint n, const cl_event *wait,
                                                     cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueReadBuffer, q, ev,
                   aip__cl_task(AIP__ID("Memcpy DtoH"), AIP_TASK_MEMCPY, AIP_COPY_D2H, size), q, buf,
                   blocking, offset, size, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf,
                                                      cl_bool blocking, size_t offset, size_t size,
                                                      const void *ptr, cl_uint n,
                                                      const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueWriteBuffer, q, ev,
                   aip__cl_task(AIP__ID("Memcpy HtoD"), AIP_TASK_MEMCPY, AIP_COPY_H2D, size), q, buf,
                   blocking, offset, size, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                     size_t src_off, size_t dst_off, size_t size,
                                                     cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueCopyBuffer, q, ev,
                   aip__cl_task(AIP__ID("Memcpy DtoD"), AIP_TASK_MEMCPY, AIP_COPY_D2D, size), q, src, dst,
                   src_off, dst_off, size, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueReadBufferRect(
    cl_command_queue q, cl_mem buf, cl_bool blocking, const size_t *buf_origin,
    const size_t *host_origin, const size_t *region, size_t buf_row, size_t buf_slice,
    size_t host_row, size_t host_slice, void *ptr, cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueReadBufferRect, q, ev,
                   aip__cl_task(AIP__ID("Memcpy DtoH"), AIP_TASK_MEMCPY, AIP_COPY_D2H, region_bytes(region)),
                   q, buf, blocking, buf_origin, host_origin, region, buf_row, buf_slice, host_row,
                   host_slice, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL
clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking, const size_t *buf_origin,
                         const size_t *host_origin, const size_t *region, size_t buf_row,
                         size_t buf_slice, size_t host_row, size_t host_slice, const void *ptr,
                         cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueWriteBufferRect, q, ev,
                   aip__cl_task(AIP__ID("Memcpy HtoD"), AIP_TASK_MEMCPY, AIP_COPY_H2D, region_bytes(region)),
                   q, buf, blocking, buf_origin, host_origin, region, buf_row, buf_slice, host_row,
                   host_slice, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueCopyBufferRect(
    cl_command_queue q, cl_mem src, cl_mem dst, const size_t *src_origin, const size_t *dst_origin,
    const size_t *region, size_t src_row, size_t src_slice, size_t dst_row, size_t dst_slice,
    cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueCopyBufferRect, q, ev,
                   aip__cl_task(AIP__ID("Memcpy DtoD"), AIP_TASK_MEMCPY, AIP_COPY_D2D, region_bytes(region)),
                   q, src, dst, src_origin, dst_origin, region, src_row, src_slice, dst_row,
                   dst_slice, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem buf,
                                                     const void *pattern, size_t pattern_size,
                                                     size_t offset, size_t size, cl_uint n,
                                                     const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueFillBuffer, q, ev,
                   aip__cl_task(AIP__ID("Memset"), AIP_TASK_MEMSET, AIP_COPY_NONE, size), q, buf, pattern,
                   pattern_size, offset, size, n, wait);
}

AIP_CL_EXPORT void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                   cl_map_flags flags, size_t offset, size_t size,
                                                   cl_uint n, const cl_event *wait, cl_event *ev,
                                                   cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clEnqueueMapBuffer) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    aip__cl_launch l;
    if (!aip__dev_recording() || !aip__cl_launch_begin(&l, q, ev))
        return cl->clEnqueueMapBuffer(q, buf, blocking, flags, offset, size, n, wait, ev,
                                      errcode_ret);
    cl_int err = CL_SUCCESS;
    void *p = cl->clEnqueueMapBuffer(q, buf, blocking, flags, offset, size, n, wait, l.event, &err);
    /* A map reads the device's data only when the host will read it. */
    aip__dev_task_info ti =
        aip__cl_task(AIP__ID("Map"), AIP_TASK_MAP, flags & CL_MAP_READ ? AIP_COPY_D2H : AIP_COPY_NONE, size);
    aip__cl_launch_end(&l, AIP__ID("clEnqueueMapBuffer"), err, ev, &ti);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue q, cl_mem mem, void *ptr,
                                                         cl_uint n, const cl_event *wait,
                                                         cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueUnmapMemObject, q, ev,
                   aip__cl_task(AIP__ID("Unmap"), AIP_TASK_MAP, AIP_COPY_NONE, 0), q, mem, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n,
                                                             const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueMarkerWithWaitList, q, ev,
                   aip__cl_task(AIP__ID("Marker"), AIP_TASK_MARKER, AIP_COPY_NONE, 0), q, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n,
                                                              const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueBarrierWithWaitList, q, ev,
                   aip__cl_task(AIP__ID("Barrier"), AIP_TASK_BARRIER, AIP_COPY_NONE, 0), q, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueMarker(cl_command_queue q, cl_event *ev)
{
    AIP_CL_REAL_OR_FAIL(clEnqueueMarker);
    aip__cl_launch l;
    /* The application must pass an event here (OpenCL 1.1); no wait list. */
    if (!aip__dev_recording() || !ev || !aip__cl_launch_begin(&l, q, ev))
        return cl->clEnqueueMarker(q, ev);
    cl_int err = cl->clEnqueueMarker(q, l.event);
    aip__dev_task_info ti = aip__cl_task(AIP__ID("Marker"), AIP_TASK_MARKER, AIP_COPY_NONE, 0);
    aip__cl_launch_end(&l, AIP__ID("clEnqueueMarker"), err, ev, &ti);
    return err;
}

/* clEnqueueBarrier (OpenCL 1.1) gives no event: where the OpenCL library
 * has clEnqueueBarrierWithWaitList, the same barrier (an empty wait list
 * means "every command before") is enqueued through it to time it. */
AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueBarrier(cl_command_queue q)
{
    AIP_CL_REAL_OR_FAIL(clEnqueueBarrier);
    aip__cl_launch l;
    if (!aip__dev_recording() || !aip__cl_launch_begin(&l, q, NULL))
        return cl->clEnqueueBarrier(q);
    cl_int err = cl->clEnqueueBarrierWithWaitList
                     ? cl->clEnqueueBarrierWithWaitList(q, 0, NULL, l.event)
                     : CL_INVALID_OPERATION;
    if (err == CL_INVALID_OPERATION) { /* a 1.1 platform: untimed */
        if (l.own)
            aip__cl_real()->clReleaseEvent(l.own);
        l.own = NULL;
        l.event = NULL;
        err = cl->clEnqueueBarrier(q);
    }
    aip__dev_task_info ti = aip__cl_task(AIP__ID("Barrier"), AIP_TASK_BARRIER, AIP_COPY_NONE, 0);
    aip__cl_launch_end(&l, AIP__ID("clEnqueueBarrier"), err, NULL, &ti);
    return err;
}

/* ---- SVM (OpenCL 2.0) --------------------------------------------------- */

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueSVMMemcpy(cl_command_queue q, cl_bool blocking, void *dst,
                                                    const void *src, size_t size, cl_uint n,
                                                    const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueSVMMemcpy, q, ev,
                   aip__cl_task(AIP__ID("SVM Memcpy"), AIP_TASK_MEMCPY, AIP_COPY_NONE, size), q, blocking,
                   dst, src, size, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueSVMMemFill(cl_command_queue q, void *ptr,
                                                     const void *pattern, size_t pattern_size,
                                                     size_t size, cl_uint n, const cl_event *wait,
                                                     cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueSVMMemFill, q, ev,
                   aip__cl_task(AIP__ID("SVM Memset"), AIP_TASK_MEMSET, AIP_COPY_NONE, size), q, ptr,
                   pattern, pattern_size, size, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueSVMMap(cl_command_queue q, cl_bool blocking,
                                                 cl_map_flags flags, void *ptr, size_t size,
                                                 cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueSVMMap, q, ev,
                   aip__cl_task(AIP__ID("SVM Map"), AIP_TASK_MAP,
                                flags & CL_MAP_READ ? AIP_COPY_D2H : AIP_COPY_NONE, size),
                   q, blocking, flags, ptr, size, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueSVMUnmap(cl_command_queue q, void *ptr, cl_uint n,
                                                   const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueSVMUnmap, q, ev,
                   aip__cl_task(AIP__ID("SVM Unmap"), AIP_TASK_MAP, AIP_COPY_NONE, 0), q, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL
clEnqueueSVMFree(cl_command_queue q, cl_uint count, void *ptrs[],
                 void(CL_CALLBACK *free_fn)(cl_command_queue, cl_uint, void *[], void *),
                 void *user, cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_REAL_OR_FAIL(clEnqueueSVMFree);
    aip__cl_launch l;
    int rec = aip__dev_recording() && aip__cl_launch_begin(&l, q, ev);
    cl_int err = cl->clEnqueueSVMFree(q, count, ptrs, free_fn, user, n, wait, rec ? l.event : ev);
    /* The memory goes when the command runs (or the application's free_fn
     * does it): recorded freed at the enqueue, the last moment we see. */
    if (err == CL_SUCCESS && ptrs)
        for (cl_uint i = 0; i < count; i++)
            aip__cl_svm_freed(ptrs[i]);
    if (rec) {
        aip__dev_task_info ti = aip__cl_task(AIP__ID("SVM Free"), AIP_TASK_OTHER, AIP_COPY_NONE, 0);
        aip__cl_launch_end(&l, AIP__ID("clEnqueueSVMFree"), err, ev, &ti);
    }
    return err;
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueSVMMigrateMem(cl_command_queue q, cl_uint count,
                                                        const void **ptrs, const size_t *sizes,
                                                        cl_mem_migration_flags flags, cl_uint n,
                                                        const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueSVMMigrateMem, q, ev,
        aip__cl_task(AIP__ID("SVM Migrate"), AIP_TASK_OTHER, AIP_COPY_NONE, sum_sizes(count, sizes)), q,
        count, ptrs, sizes, flags, n, wait);
}
