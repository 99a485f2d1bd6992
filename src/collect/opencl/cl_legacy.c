/*
 * cl_legacy.c — the interposed OpenCL calls that are rarer or deprecated
 * but still allocate device memory or run device work: native kernels
 * (clEnqueueNativeKernel), the OpenCL 1.0 wait command
 * (clEnqueueWaitForEvents), the OpenCL 1.1 image constructors
 * (clCreateImage2D/3D) and pipes (clCreatePipe).  Without them a program
 * using these calls would show device work or memory with no trace of it.
 *
 * Sub-buffers (clCreateSubBuffer) are deliberately not interposed: they
 * alias their parent's memory, which is already counted; counting them too
 * would report memory the device never allocated.
 */
#include "cl_int.h"

/* A native kernel is a host function the device runs: no kernel name, so
 * it is named for what it is; one work item. */
AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue q,
                                                       void(CL_CALLBACK *fn)(void *), void *args,
                                                       size_t cb_args, cl_uint n_mem,
                                                       const cl_mem *mem_list,
                                                       const void **args_mem_loc, cl_uint n,
                                                       const cl_event *wait, cl_event *ev)
{
    aip__dev_task_info native = aip__cl_task(AIP__ID("NativeKernel"), AIP_TASK_KERNEL, AIP_COPY_NONE, 0);
    native.global[0] = native.local[0] = 1;
    AIP_CL_ENQUEUE(clEnqueueNativeKernel, q, ev, native, q, fn, args, cb_args, n_mem, mem_list,
                   args_mem_loc, n, wait);
}

/* OpenCL 1.0's "wait for these events" command gives no event of its own:
 * it is a runtime call on the queue's device, with no task. */
AIP_CL_EXPORT cl_int CL_API_CALL clEnqueueWaitForEvents(cl_command_queue q, cl_uint n,
                                                        const cl_event *events)
{
    AIP_CL_REAL_OR_FAIL(clEnqueueWaitForEvents);
    if (!aip__dev_recording())
        return cl->clEnqueueWaitForEvents(q, n, events);
    aip__cl_queue info = {.device = AIP_DEV_NONE};
    aip__cl_queue_info(q, &info);
    uint64_t start = aip__dev_api_begin();
    cl_int err = cl->clEnqueueWaitForEvents(q, n, events);
    aip__cl_api_call("clEnqueueWaitForEvents", start, info.device);
    return err;
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreateImage2D(cl_context ctx, cl_mem_flags flags,
                                                 const cl_image_format *format, size_t width,
                                                 size_t height, size_t row_pitch, void *host_ptr,
                                                 cl_int *errcode_ret)
{
    AIP_CL_CREATE_MEM(clCreateImage2D, AIP_DEVMEM_IMAGE, ctx, errcode_ret, flags, format, width,
                      height, row_pitch, host_ptr);
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreateImage3D(cl_context ctx, cl_mem_flags flags,
                                                 const cl_image_format *format, size_t width,
                                                 size_t height, size_t depth, size_t row_pitch,
                                                 size_t slice_pitch, void *host_ptr,
                                                 cl_int *errcode_ret)
{
    AIP_CL_CREATE_MEM(clCreateImage3D, AIP_DEVMEM_IMAGE, ctx, errcode_ret, flags, format, width,
                      height, depth, row_pitch, slice_pitch, host_ptr);
}

AIP_CL_EXPORT cl_mem CL_API_CALL clCreatePipe(cl_context ctx, cl_mem_flags flags,
                                              cl_uint packet_size, cl_uint max_packets,
                                              const cl_pipe_properties *props, cl_int *errcode_ret)
{
    AIP_CL_CREATE_MEM(clCreatePipe, AIP_DEVMEM_BUFFER, ctx, errcode_ret, flags, packet_size,
                      max_packets, props);
}
