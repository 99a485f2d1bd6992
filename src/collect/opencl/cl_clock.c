/*
 * cl_clock.c — clock samples that map an OpenCL device's timestamps to the
 * recording clock (see cl_int.h; the analyser does the mapping).
 *
 * Where the device has clGetDeviceAndHostTimer (OpenCL 2.1), a sample is
 * that call bracketed by two tick reads: the device time was read between
 * them.  Otherwise (PoCL 3.1 answers CL_INVALID_OPERATION) a marker is
 * enqueued on a private, idle, profiling queue between two tick reads: its
 * QUEUED timestamp is taken by the runtime inside the enqueue call, so it
 * too lies between them.  The best of a few tries (the narrowest bracket)
 * is kept; half the bracket is the sample's error bound.  The private
 * context and queue are made at the first sample of a device, through the
 * real functions (they are never recorded), and kept for the process.
 */
#include "cl_int.h"

#include "clock.h"
#include "error.h"

#define TRIES 5

static int timer_sample(const aip__cl_api *cl, cl_device_id dev, uint32_t device)
{
    if (!cl->clGetDeviceAndHostTimer)
        return 0;
    uint64_t best = UINT64_MAX, b0 = 0, b1 = 0, bdev = 0;
    for (int i = 0; i < TRIES; i++) {
        cl_ulong d = 0, h = 0;
        uint64_t t0 = aip__ticks();
        cl_int err = cl->clGetDeviceAndHostTimer(dev, &d, &h);
        uint64_t t1 = aip__ticks();
        if (err != CL_SUCCESS || d == 0)
            return 0;
        if (t1 - t0 < best) {
            best = t1 - t0;
            b0 = t0, b1 = t1, bdev = d;
        }
    }
    aip__dev_clock(device, b0, b1, bdev, AIP_SYNC_DEVICE_AND_HOST_TIMER);
    return 1;
}

static int private_queue(const aip__cl_api *cl, cl_device_id dev, aip__cl_clock *c)
{
    if (c->q)
        return 1;
    cl_int err = CL_SUCCESS;
    c->ctx = cl->clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!c->ctx || err != CL_SUCCESS) {
        c->ctx = NULL;
        return 0;
    }
    if (cl->clCreateCommandQueueWithProperties) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
        c->q = cl->clCreateCommandQueueWithProperties(c->ctx, dev, props, &err);
    }
    if (!c->q && cl->clCreateCommandQueue)
        c->q = cl->clCreateCommandQueue(c->ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!c->q) {
        cl->clReleaseContext(c->ctx);
        c->ctx = NULL;
        return 0;
    }
    return 1;
}

static int marker_sample(const aip__cl_api *cl, cl_device_id dev, uint32_t device,
                         aip__cl_clock *c)
{
    if (!private_queue(cl, dev, c))
        return 0;
    uint64_t best = UINT64_MAX, b0 = 0, b1 = 0, bdev = 0;
    for (int i = 0; i < TRIES; i++) {
        cl_event ev = NULL;
        uint64_t t0 = aip__ticks();
        cl_int err = cl->clEnqueueMarkerWithWaitList
                         ? cl->clEnqueueMarkerWithWaitList(c->q, 0, NULL, &ev)
                         : cl->clEnqueueMarker(c->q, &ev);
        uint64_t t1 = aip__ticks();
        if (err != CL_SUCCESS || !ev)
            return 0;
        cl_ulong queued = 0;
        err = cl->clWaitForEvents(1, &ev);
        if (err == CL_SUCCESS)
            err = cl->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof queued,
                                              &queued, NULL);
        cl->clReleaseEvent(ev);
        if (err != CL_SUCCESS || queued == 0)
            return 0;
        if (t1 - t0 < best) {
            best = t1 - t0;
            b0 = t0, b1 = t1, bdev = queued;
        }
    }
    aip__dev_clock(device, b0, b1, bdev, AIP_SYNC_MEASURED);
    return 1;
}

void aip__cl_clock_sample(cl_device_id dev, uint32_t device, aip__cl_clock *c)
{
    const aip__cl_api *cl = aip__cl_real();
    if (c->method < 0)
        return;
    if (c->method != AIP_SYNC_MEASURED && timer_sample(cl, dev, device)) {
        c->method = AIP_SYNC_DEVICE_AND_HOST_TIMER;
        return;
    }
    if (marker_sample(cl, dev, device, c)) {
        c->method = AIP_SYNC_MEASURED;
        return;
    }
    c->method = -1;
    aip__warn("OpenCL: no clock sample for device %u (no clGetDeviceAndHostTimer, and no "
              "timed marker); its device times cannot be aligned with the host",
              (unsigned)device);
}
