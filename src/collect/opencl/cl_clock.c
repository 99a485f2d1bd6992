/*
 * cl_clock.c — clock samples that map an OpenCL device's timestamps to the
 * recording clock (see cl_int.h; the analyser does the mapping).
 *
 * Where the device has clGetDeviceAndHostTimer (OpenCL 2.1), a sample is
 * that call bracketed by two tick reads: the device time was read between
 * them; half the bracket is the sample's error bound.
 *
 * Otherwise (PoCL 3.1 answers CL_INVALID_OPERATION) markers are enqueued
 * on a private, idle, profiling queue: the runtime stamps QUEUED inside the
 * enqueue call, so it lies between host clock reads taken around the call.
 * A CPU runtime stamps with a host clock (PoCL: CLOCK_MONOTONIC_RAW); when
 * every marker's QUEUED lies between the readings of one host clock, the
 * device is taken to count that clock, and a sample is a read of it
 * between two tick reads (AIP_SYNC_SAME_CLOCK, a bound of tens of ns, cheap
 * enough to repeat every AIP_CL_RESAMPLE_S while commands are enqueued, so
 * that the two clocks' drift is followed).  Else the marker with the
 * narrowest bracket is the sample (AIP_SYNC_MEASURED; its bound is half the
 * enqueue call, ~9 us on PoCL).  The private context and queue are made at
 * the first sample of a device, through the real functions (never
 * recorded), and kept for the process.
 */
#include "cl_int.h"

#include "clock.h"
#include "error.h"

#include <time.h>

#define TRIES 8

/* Per aip device id: the host clock it counts (clockid + 1, 0 = none
 * known) and when it was last sampled, read on the enqueue path. */
static _Atomic int same_clock[AIP_DEV_MAX_DEVICES];
static _Atomic uint64_t last_sample[AIP_DEV_MAX_DEVICES];
static _Atomic uint64_t resample_ticks;

static uint64_t read_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void same_clock_sample(uint32_t device, clockid_t id)
{
    uint64_t t0 = aip__ticks();
    uint64_t v = read_clock(id);
    uint64_t t1 = aip__ticks();
    atomic_store_explicit(&last_sample[device], t1, memory_order_relaxed);
    aip__dev_clock(device, t0, t1, v, AIP_SYNC_SAME_CLOCK);
}

void aip__cl_clock_tick(uint32_t device, uint64_t now)
{
    if (device >= AIP_DEV_MAX_DEVICES)
        return;
    int clk = atomic_load_explicit(&same_clock[device], memory_order_relaxed);
    uint64_t last = atomic_load_explicit(&last_sample[device], memory_order_relaxed);
    if (!clk || now - last < atomic_load_explicit(&resample_ticks, memory_order_relaxed))
        return;
    /* One thread takes it: the one that moves last_sample on. */
    if (atomic_compare_exchange_strong(&last_sample[device], &last, now))
        same_clock_sample(device, (clockid_t)(clk - 1));
}

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

/* The host clocks a CPU runtime may stamp with. */
static const clockid_t host_clocks[] = {CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC};
#define N_HOST_CLOCKS (sizeof host_clocks / sizeof host_clocks[0])

/* Timed markers: the best one as a sample, and which host clock (if any)
 * held every QUEUED between its readings.  @return 0 if markers fail. */
static int marker_sample(const aip__cl_api *cl, cl_device_id dev, uint32_t device, aip__cl_clock *c)
{
    if (!private_queue(cl, dev, c))
        return 0;
    uint64_t best = UINT64_MAX, b0 = 0, b1 = 0, bdev = 0;
    int inside[N_HOST_CLOCKS];
    for (size_t k = 0; k < N_HOST_CLOCKS; k++)
        inside[k] = 1;
    for (int i = 0; i < TRIES; i++) {
        cl_event ev = NULL;
        uint64_t h0[N_HOST_CLOCKS], h1[N_HOST_CLOCKS];
        for (size_t k = 0; k < N_HOST_CLOCKS; k++)
            h0[k] = read_clock(host_clocks[k]);
        uint64_t t0 = aip__ticks();
        cl_int err = cl->clEnqueueMarkerWithWaitList
                         ? cl->clEnqueueMarkerWithWaitList(c->q, 0, NULL, &ev)
                         : cl->clEnqueueMarker(c->q, &ev);
        uint64_t t1 = aip__ticks();
        for (size_t k = N_HOST_CLOCKS; k-- > 0;)
            h1[k] = read_clock(host_clocks[k]);
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
        for (size_t k = 0; k < N_HOST_CLOCKS; k++)
            inside[k] &= h0[k] <= queued && queued <= h1[k];
        if (t1 - t0 < best) {
            best = t1 - t0;
            b0 = t0, b1 = t1, bdev = queued;
        }
    }
    for (size_t k = 0; k < N_HOST_CLOCKS; k++)
        if (inside[k]) {
            c->host_clock = (int)host_clocks[k] + 1;
            return 1;
        }
    aip__dev_clock(device, b0, b1, bdev, AIP_SYNC_MEASURED);
    return 1;
}

void aip__cl_clock_sample(cl_device_id dev, uint32_t device, aip__cl_clock *c)
{
    const aip__cl_api *cl = aip__cl_real();
    if (c->method < 0)
        return;
    if (c->method == AIP_SYNC_SAME_CLOCK) {
        same_clock_sample(device, (clockid_t)(c->host_clock - 1));
        return;
    }
    if (c->method != AIP_SYNC_MEASURED && timer_sample(cl, dev, device)) {
        c->method = AIP_SYNC_DEVICE_AND_HOST_TIMER;
        return;
    }
    if (marker_sample(cl, dev, device, c)) {
        c->method = c->host_clock ? AIP_SYNC_SAME_CLOCK : AIP_SYNC_MEASURED;
        if (c->host_clock && device < AIP_DEV_MAX_DEVICES) {
            atomic_store(&resample_ticks,
                         (uint64_t)(AIP_CL_RESAMPLE_S * aip__clock_ticks_per_second()));
            same_clock_sample(device, (clockid_t)(c->host_clock - 1));
            atomic_store(&same_clock[device], c->host_clock);
        }
        return;
    }
    c->method = -1;
    aip__warn("OpenCL: no clock sample for device %u (no clGetDeviceAndHostTimer, and no "
              "timed marker); its device times cannot be aligned with the host",
              (unsigned)device);
}
