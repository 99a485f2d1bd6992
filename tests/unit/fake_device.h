/*
 * fake_device.h — test helper: a device without hardware, for the tests of
 * the device model and outputs (and tests/e2e/fake_device_profile.c).  Its
 * "device clock" is CLOCK_MONOTONIC + FAKE_DEV_OFFSET ns, which the includer
 * defines, so the exact alignment of every device time is known; its clock
 * samples are what a back end's start/stop hooks record.
 */
#ifndef AIP_FAKE_DEVICE_H
#define AIP_FAKE_DEVICE_H

#include "clock.h"
#include "collector.h"
#include "device.h"

#include <stdint.h>

#ifndef FAKE_DEV_OFFSET
#error "define FAKE_DEV_OFFSET (device clock = CLOCK_MONOTONIC + it, in ns) first"
#endif

static inline uint64_t device_now(void) { return aip__mono_ns() + (uint64_t)FAKE_DEV_OFFSET; }

/* One clock sample of device `dev`: the device clock read between two
 * tick reads, as a back end with clGetDeviceAndHostTimer takes it. */
static inline void fake_device_sample(uint32_t dev)
{
    uint64_t t0 = aip__ticks();
    uint64_t d = device_now();
    uint64_t t1 = aip__ticks();
    aip__dev_clock(dev, t0, t1, d, AIP_SYNC_DEVICE_AND_HOST_TIMER);
}

/* Busy for `us` microseconds (a host op or a device task that lasts). */
static inline void spin_us(unsigned us)
{
    uint64_t end = aip__mono_ns() + (uint64_t)us * 1000;
    while (aip__mono_ns() < end) {
    }
}

static inline const char *fake_device_ok(void) { return NULL; }

/* FAKE_COLLECTOR(var, start, stop) : the descriptor of the fake back end
 * (collector.h), "Fake", numbered as OpenCL's, always found; `start` and
 * `stop` take the clock samples a real back end's hooks take. */
#define FAKE_COLLECTOR(var, start_fn, stop_fn)                                                 \
    static const aip__collector var = {.name = "Fake",                                         \
                                       .wanted = aip__dev_wanted,                              \
                                       .start = (start_fn),                                    \
                                       .stop = (stop_fn),                                      \
                                       .backend = AIP_BACKEND_OPENCL,                          \
                                       .status = fake_device_ok}

#endif
