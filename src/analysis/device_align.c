/*
 * device_align.c — device-clock nanoseconds to wall-clock nanoseconds.
 *
 * A back end samples each device's clock against the host's ticks
 * (DEVICE_CLOCK: the device time read between two tick reads; the sample
 * sits at their midpoint and its error bound is half the gap).  Here every
 * sample becomes (device ns, wall ns) through the process's tick
 * conversion, and a task's start maps through the offset (wall − device)
 * interpolated linearly between the two samples around it, or the nearest
 * sample's offset outside them: drift between samples is followed, and
 * nothing is extrapolated.  Its other times keep their device-clock
 * distance to the start, so durations are exact.  The device's error bound is the largest bound
 * of its samples (docs/DEVICE.md "Clock alignment").
 *
 * A device without samples (its back end could not read its clock) is
 * taken to count CLOCK_MONOTONIC nanoseconds, as PoCL and CUPTI's default
 * timestamps do; its tasks are counted as unaligned and the result says so.
 */
#include "analysis_int.h"

#include <stdlib.h>
#include <string.h>

#define WALL_MAX ((int64_t)1 << 62)

typedef struct sample {
    int64_t dev, wall, err;
} sample;

static int cmp_sample(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    return (x->dev > y->dev) - (x->dev < y->dev);
}

static int64_t clamp_wall(__int128 v)
{
    if (v < 0)
        return 0;
    if (v >= WALL_MAX)
        return WALL_MAX - 1;
    return (int64_t)v;
}

/* wall time of device time `x` from samples s[0..n) sorted by dev. */
static int64_t map_time(const sample *s, size_t n, int64_t x)
{
    size_t lo = 0, hi = n; /* first sample with dev > x */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].dev <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    __int128 off;
    if (lo == 0) {
        off = (__int128)s[0].wall - s[0].dev;
    } else if (lo == n) {
        off = (__int128)s[n - 1].wall - s[n - 1].dev;
    } else {
        const sample *a = &s[lo - 1], *b = &s[lo];
        __int128 oa = (__int128)a->wall - a->dev, ob = (__int128)b->wall - b->dev;
        __int128 span = (__int128)b->dev - a->dev; /* > 0: a->dev <= x < b->dev */
        off = oa + (ob - oa) * ((__int128)x - a->dev) / span;
    }
    return clamp_wall((__int128)x + off);
}

void aip__device_align(aip__process *p, aip__tick_fn to_wall, const void *ctx)
{
    for (size_t i = 0; i < p->dev_api.n; i++) {
        aip__device_call *a = &p->dev_api.v[i];
        a->start = to_wall(ctx, a->start);
        a->end = to_wall(ctx, a->end);
        if (a->end < a->start)
            a->end = a->start;
    }
    for (size_t i = 0; i < p->dev_memory.n; i++)
        p->dev_memory.v[i].ts = to_wall(ctx, p->dev_memory.v[i].ts);
    for (size_t i = 0; i < p->dev_clocks.n; i++) {
        aip__device_clock *c = &p->dev_clocks.v[i];
        int64_t w = to_wall(ctx, c->ticks);
        int64_t we = to_wall(ctx, (int64_t)((uint64_t)c->ticks + (uint64_t)c->error));
        c->ticks = w;
        c->error = we > w ? we - w : 0;
    }
    if (!p->dev_tasks.n)
        return;

    /* Monotonic -> wall offset, for devices without samples. */
    int64_t mono_off = 0;
    if (p->n_syncs)
        mono_off = (int64_t)(p->first_sync.realtime_ns - p->first_sync.monotonic_ns);

    /* The samples grouped by device (each group sorted by device time),
     * so that one pass over the tasks aligns them all. */
    size_t first[AIP_RAW_MAX_DEVICES + 1] = {0};
    int64_t err[AIP_RAW_MAX_DEVICES] = {0};
    uint8_t method[AIP_RAW_MAX_DEVICES] = {0};
    sample *s = p->dev_clocks.n ? malloc(p->dev_clocks.n * sizeof *s) : NULL;
    if (s) {
        for (size_t i = 0; i < p->dev_clocks.n; i++)
            if (p->dev_clocks.v[i].device < AIP_RAW_MAX_DEVICES)
                first[p->dev_clocks.v[i].device + 1]++;
        for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES; d++)
            first[d + 1] += first[d];
        size_t fill[AIP_RAW_MAX_DEVICES];
        memcpy(fill, first, sizeof fill);
        for (size_t i = 0; i < p->dev_clocks.n; i++) {
            const aip__device_clock *c = &p->dev_clocks.v[i];
            if (c->device >= AIP_RAW_MAX_DEVICES)
                continue;
            s[fill[c->device]++] = (sample){(int64_t)c->device_ns, c->ticks, c->error};
            if (c->error > err[c->device])
                err[c->device] = c->error;
            method[c->device] = c->method;
        }
        for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES; d++)
            if (first[d + 1] - first[d] > 1)
                qsort(s + first[d], first[d + 1] - first[d], sizeof *s, cmp_sample);
    } /* without memory every device is taken as monotonic (counted unaligned) */
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        aip__device_task *t = &p->dev_tasks.v[i];
        uint32_t d = t->device < AIP_RAW_MAX_DEVICES ? t->device : 0;
        size_t n = s ? first[d + 1] - first[d] : 0;
        /* Only the start is mapped; the other times keep their exact
         * distance to it, so durations and waits are the device's own to
         * the nanosecond (the offset changes only by drift between
         * samples, far below the alignment error). */
        int64_t start = n ? map_time(s + first[d], n, t->start)
                          : clamp_wall((__int128)t->start + mono_off);
        int64_t dev_start = t->start;
        t->end = clamp_wall((__int128)start + (t->end - dev_start));
        if (t->queued)
            t->queued = clamp_wall((__int128)start - (dev_start - t->queued));
        if (t->submit)
            t->submit = clamp_wall((__int128)start - (dev_start - t->submit));
        t->start = start;
        if (t->end < t->start)
            t->end = t->start;
        if (!n)
            p->dev_unaligned_tasks++;
    }
    for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES && d < p->devices.n; d++) {
        aip__device *dv = &p->devices.v[d];
        size_t n = s ? first[d + 1] - first[d] : 0;
        dv->n_samples = n;
        dv->error_ns = n ? err[d] : -1;
        dv->sync_method = n ? method[d] : 0;
    }
    free(s);
}
