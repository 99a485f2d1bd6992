/*
 * clock.h — the recording clock.
 *
 * Events carry raw ticks: the TSC where it is invariant (constant_tsc and
 * nonstop_tsc), else CLOCK_MONOTONIC ns.  Ticks become monotonic and
 * wall-clock ns at analysis time, from sync points (ticks, monotonic,
 * realtime) that the writer stores in CLOCK chunks.  Reading the TSC costs
 * a few ns, a vDSO clock_gettime about three times more.
 */
#ifndef AIP_CLOCK_H
#define AIP_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define AIP_HAVE_TSC 1
#else
#define AIP_HAVE_TSC 0
#endif

#include "raw_format.h"

extern int aip__clock_use_tsc;

static inline uint64_t aip__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t aip__ticks(void)
{
#if AIP_HAVE_TSC
    if (__builtin_expect(aip__clock_use_tsc, 1))
        return __rdtsc();
#endif
    return aip__mono_ns();
}

/* aip__clock_init() : choose the tick source and calibrate it (once; ~5 ms
 * on first call when the TSC is used).  AIPROF_CLOCK=monotonic forces the
 * portable clock. */
void aip__clock_init(void);

/* Ticks per second of the chosen source (1e9 for the monotonic clock). */
double aip__clock_ticks_per_second(void);
const char *aip__clock_name(void);

/* A sync point taken with the three reads as close together as possible. */
void aip__clock_sync(aip__clock_pair *out);

/* Convert a monotonic ns value to ticks (for events timed by the caller). */
uint64_t aip__clock_ns_to_ticks(uint64_t mono_ns);

#endif
