/*
 * clock.c — choosing and calibrating the tick source (see clock.h).
 */
#include "clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int aip__clock_use_tsc;
static double ticks_per_ns = 1.0;
static aip__clock_pair calib_base;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static int cpu_has_invariant_tsc(void)
{
#if AIP_HAVE_TSC
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    char line[4096];
    int constant = 0, nonstop = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return 0;
#endif
}

void aip__clock_sync(aip__clock_pair *out)
{
    struct timespec rt;
    /* Bracket the monotonic read with two tick reads and keep the midpoint,
     * so the pair is accurate to half the (tiny) bracket. */
    uint64_t t0 = aip__ticks();
    uint64_t mono = aip__mono_ns();
    uint64_t t1 = aip__ticks();
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t mono2 = aip__mono_ns();
    out->ticks = t0 + (t1 - t0) / 2;
    out->monotonic_ns = mono;
    /* realtime was read after mono; shift it back by the gap. */
    uint64_t real = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    out->realtime_ns = real - (mono2 - mono) / 2;
}

static void clock_setup(void)
{
    const char *env = getenv("AIPROF_CLOCK");
    int want_tsc = !(env && strcmp(env, "monotonic") == 0);
    aip__clock_use_tsc = want_tsc && cpu_has_invariant_tsc();
    if (!aip__clock_use_tsc) {
        ticks_per_ns = 1.0;
        aip__clock_sync(&calib_base);
        return;
    }
    /* Calibrate over ~5 ms; the analyser does not depend on this figure
     * (it interpolates between CLOCK chunks), only ns→tick conversion does. */
    aip__clock_pair a, b;
    aip__clock_sync(&a);
    struct timespec req = {0, 5 * 1000 * 1000};
    nanosleep(&req, NULL);
    aip__clock_sync(&b);
    double dns = (double)(b.monotonic_ns - a.monotonic_ns);
    ticks_per_ns = dns > 0 ? (double)(b.ticks - a.ticks) / dns : 1.0;
    if (ticks_per_ns <= 0.01 || ticks_per_ns > 100.0) {
        aip__clock_use_tsc = 0; /* nonsense: fall back to the portable clock */
        ticks_per_ns = 1.0;
        aip__clock_sync(&b);
    }
    calib_base = b;
}

void aip__clock_init(void) { pthread_once(&clock_once, clock_setup); }

double aip__clock_ticks_per_second(void) { return ticks_per_ns * 1e9; }

const char *aip__clock_name(void) { return aip__clock_use_tsc ? "tsc" : "monotonic"; }

uint64_t aip__clock_ns_to_ticks(uint64_t mono_ns)
{
    double d = ((double)mono_ns - (double)calib_base.monotonic_ns) * ticks_per_ns;
    double t = (double)calib_base.ticks + d;
    /* The time may come from outside (a runtime's timestamp, a caller of
     * aip_comm_ticks_from_ns) and be any 64-bit value: saturate, since
     * converting a double outside uint64_t's range is undefined
     * (fuzz_cuda_translate found it). */
    if (!(t > 0))
        return 0;
    if (t >= 18446744073709551616.0) /* 2^64 */
        return UINT64_MAX;
    return (uint64_t)t;
}
