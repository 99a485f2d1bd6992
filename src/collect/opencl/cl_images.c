/*
 * cl_images.c — the interposed OpenCL image calls: image reads, writes,
 * copies (also to and from buffers), fills and maps as device tasks, memory
 * object migrations, and image allocations as device memory (see cl_int.h;
 * the buffer commands are cl_enqueue.c's).  Bytes of an image region are
 * its pixels times the image's element size (clGetImageInfo, asked only
 * while recording).
 */
#include "cl_int.h"

static uint64_t image_bytes(cl_mem image, const size_t *region)
{
    size_t elem = 0;
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clGetImageInfo ||
        cl->clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof elem, &elem, NULL) != CL_SUCCESS)
        return 0;
    return region_bytes(region) * elem;
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue q, cl_mem image,
                                                    cl_bool blocking, const size_t *origin,
                                                    const size_t *region, size_t row_pitch,
                                                    size_t slice_pitch, void *ptr, cl_uint n,
                                                    const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueReadImage, q, ev,
        aip__cl_task(AIP__ID("Memcpy DtoH"), AIP_TASK_MEMCPY, AIP_COPY_D2H, image_bytes(image, region)), q,
        image, blocking, origin, region, row_pitch, slice_pitch, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue q, cl_mem image,
                                                     cl_bool blocking, const size_t *origin,
                                                     const size_t *region, size_t row_pitch,
                                                     size_t slice_pitch, const void *ptr, cl_uint n,
                                                     const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueWriteImage, q, ev,
        aip__cl_task(AIP__ID("Memcpy HtoD"), AIP_TASK_MEMCPY, AIP_COPY_H2D, image_bytes(image, region)), q,
        image, blocking, origin, region, row_pitch, slice_pitch, ptr, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                                    const size_t *src_origin,
                                                    const size_t *dst_origin, const size_t *region,
                                                    cl_uint n, const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueCopyImage, q, ev,
        aip__cl_task(AIP__ID("Memcpy DtoD"), AIP_TASK_MEMCPY, AIP_COPY_D2D, image_bytes(src, region)), q,
        src, dst, src_origin, dst_origin, region, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src,
                                                            cl_mem dst, const size_t *src_origin,
                                                            const size_t *region, size_t dst_offset,
                                                            cl_uint n, const cl_event *wait,
                                                            cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueCopyImageToBuffer, q, ev,
        aip__cl_task(AIP__ID("Memcpy DtoD"), AIP_TASK_MEMCPY, AIP_COPY_D2D, image_bytes(src, region)), q,
        src, dst, src_origin, region, dst_offset, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src,
                                                            cl_mem dst, size_t src_offset,
                                                            const size_t *dst_origin,
                                                            const size_t *region, cl_uint n,
                                                            const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueCopyBufferToImage, q, ev,
        aip__cl_task(AIP__ID("Memcpy DtoD"), AIP_TASK_MEMCPY, AIP_COPY_D2D, image_bytes(dst, region)), q,
        src, dst, src_offset, dst_origin, region, n, wait);
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue q, cl_mem image,
                                                    const void *color, const size_t *origin,
                                                    const size_t *region, cl_uint n,
                                                    const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(
        clEnqueueFillImage, q, ev,
        aip__cl_task(AIP__ID("Memset"), AIP_TASK_MEMSET, AIP_COPY_NONE, image_bytes(image, region)), q,
        image, color, origin, region, n, wait);
}

AIP_CL_EXPORT void *CL_API_CALL clEnqueueMapImage(cl_command_queue q, cl_mem image,
                                                  cl_bool blocking, cl_map_flags flags,
                                                  const size_t *origin, const size_t *region,
                                                  size_t *row_pitch, size_t *slice_pitch, cl_uint n,
                                                  const cl_event *wait, cl_event *ev,
                                                  cl_int *errcode_ret)
{
    const aip__cl_api *cl = aip__cl_real();
    if (!cl->clEnqueueMapImage) {
        if (errcode_ret)
            *errcode_ret = CL_INVALID_OPERATION;
        return NULL;
    }
    aip__cl_launch l;
    if (!aip__dev_recording() || !aip__cl_launch_begin(&l, q, ev))
        return cl->clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch,
                                     slice_pitch, n, wait, ev, errcode_ret);
    cl_int err = CL_SUCCESS;
    void *p = cl->clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch,
                                    slice_pitch, n, wait, l.event, &err);
    aip__dev_task_info ti =
        aip__cl_task(AIP__ID("Map"), AIP_TASK_MAP, flags & CL_MAP_READ ? AIP_COPY_D2H : AIP_COPY_NONE,
                     err == CL_SUCCESS ? image_bytes(image, region) : 0);
    aip__cl_launch_end(&l, AIP__ID("clEnqueueMapImage"), err, ev, &ti);
    if (errcode_ret)
        *errcode_ret = err;
    return p;
}

static uint64_t objects_bytes(cl_uint count, const cl_mem *objs)
{
    uint64_t bytes = 0;
    const aip__cl_api *cl = aip__cl_real();
    for (cl_uint i = 0; objs && i < count; i++) {
        size_t size = 0;
        if (cl->clGetMemObjectInfo(objs[i], CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS)
            bytes += size;
    }
    return bytes;
}

AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint count,
                                                            const cl_mem *objs,
                                                            cl_mem_migration_flags flags, cl_uint n,
                                                            const cl_event *wait, cl_event *ev)
{
    AIP_CL_ENQUEUE(clEnqueueMigrateMemObjects, q, ev,
                   aip__cl_task(AIP__ID("Migrate"), AIP_TASK_OTHER, AIP_COPY_NONE,
                                err == CL_SUCCESS ? objects_bytes(count, objs) : 0),
                   q, count, objs, flags, n, wait);
}

/* ---- image allocations -------------------------------------------------- */

/* Memory objects whose size OpenCL computes (images, pipes): asked of the
 * object itself. */
void aip__cl_mem_made_sized(cl_context ctx, cl_mem mem, uint8_t kind)
{
    size_t size = 0;
    if (aip__cl_real()->clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof size, &size, NULL) ==
        CL_SUCCESS)
        aip__cl_mem_made(ctx, mem, size, kind);
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreateImage(cl_context ctx, cl_mem_flags flags,
                                               const cl_image_format *format,
                                               const cl_image_desc *desc, void *host_ptr,
                                               cl_int *errcode_ret)
{
    AIP_CL_CREATE_MEM(clCreateImage, AIP_DEVMEM_IMAGE, ctx, errcode_ret, flags, format, desc,
                      host_ptr);
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreateImageWithProperties(
    cl_context ctx, const cl_mem_properties *props, cl_mem_flags flags,
    const cl_image_format *format, const cl_image_desc *desc, void *host_ptr, cl_int *errcode_ret)
{
    AIP_CL_CREATE_MEM(clCreateImageWithProperties, AIP_DEVMEM_IMAGE, ctx, errcode_ret, props,
                      flags, format, desc, host_ptr);
}
