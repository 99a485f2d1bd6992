/*
 * toy.c — a device back end written only from docs/ADD_A_BACKEND.md: a
 * descriptor (src/core/collector.h) and recording through
 * src/core/device.h, nothing else of libaiprof touched.  Its "device" runs
 * on the host: its clock is CLOCK_MONOTONIC (AIP_SYNC_SAME_CLOCK), a
 * kernel is the calling thread spinning.  Its back-end number comes from
 * the private range (raw_format.h), so the outputs give it the defaults
 * (raw_backend.c: "other", NPU memory tags) and its own name where a name
 * comes from the recorder (profiler_info.json, aip_device_status).
 */
#include "toy.h"
#include "clock.h"
#include "collector.h"
#include "device.h"

#include <stdatomic.h>

#define TOY_BACKEND (AIP_BACKEND_PRIVATE + 72) /* the private range (raw_format.h) */

static uint32_t dev = AIP_DEV_NONE, queue = AIP_DEV_NONE;
static atomic_uint forks;

static void clock_sample(void)
{
    uint64_t t0 = aip__ticks(), ns = aip__mono_ns(), t1 = aip__ticks();
    aip__dev_clock(dev, t0, t1, ns, AIP_SYNC_SAME_CLOCK);
}

/* The device is described once per process, at the first trace. */
static void start(const aip_config *cfg)
{
    if (dev == AIP_DEV_NONE) {
        dev = aip__dev_device(TOY_BACKEND, 1, "Toy Accelerator", "aiprof tests",
                              AIP_DEVKIND_ACCELERATOR);
        queue = aip__dev_queue(dev, 1, "toy queue");
    }
    if (dev != AIP_DEV_NONE)
        clock_sample();
}

static void stop(void)
{
    if (dev != AIP_DEV_NONE)
        clock_sample();
}

static void fork_child(void) { atomic_fetch_add(&forks, 1); }

static const char *status(void) { return NULL; } /* always a device */

const aip__collector aip__collector_toy = {
    .name = "Toy",
    .wanted = aip__dev_wanted,
    .start = start,
    .stop = stop,
    .fork_child = fork_child,
    .backend = TOY_BACKEND,
    .status = status,
    .inject_var = "AIPROF_TOY_TOOL",
    .inject_off = "AIPROF_TOY",
    .record_kinds = (1ull << AIP_REC_DEVICE) | (1ull << AIP_REC_DEVICE_QUEUE) |
                    (1ull << AIP_REC_DEVICE_TASK) | (1ull << AIP_REC_DEVICE_API) |
                    (1ull << AIP_REC_DEVICE_CLOCK),
};

void toy_launch(const char *name, unsigned us)
{
    if (!aip__dev_recording() || dev == AIP_DEV_NONE)
        return;
    uint64_t corr = aip__dev_correlation(), t = aip__dev_api_begin();
    aip__dev_api_end("toyLaunchKernel", t, corr, dev);
    uint64_t begin = aip__mono_ns(), end;
    while ((end = aip__mono_ns()) < begin + (uint64_t)us * 1000) {
    }
    aip__dev_task_info ti = {.name = name, .device = dev, .queue = queue,
                             .kind = AIP_TASK_KERNEL, .correlation = corr,
                             .start = begin, .end = end, .global = {256, 1, 1},
                             .local = {32, 1, 1}};
    aip__dev_task(&ti);
}

unsigned toy_forks_seen(void) { return atomic_load(&forks); }
