/*
 * tick_convert.c — ticks of the INFO clock → wall-clock nanoseconds.
 *
 * docs/RAW_FORMAT.md: ticks map to CLOCK_MONOTONIC ns by linear
 * interpolation between the first and the last sync point (or the INFO
 * frequency when there is only one), and to wall-clock ns by adding
 * realtime − monotonic of the first sync point.  Combined:
 *     wall(t) = realtime0 + (t − ticks0) · k.
 * k is held as 32.32 fixed point so the per-event cost is one 128-bit
 * multiply and a shift (no division, no floating point on the hot path).
 * Results are clamped to [0, 2^62): hostile files cannot produce negative
 * or overflowing times, which keeps every later subtraction safe.
 *
 * A big profile's device records are aligned (device_align.c) on a second
 * thread while the host's times are converted here: the two share only
 * the read-only conversion, and loading is serial work that comes before
 * everything else of an analysis.
 */
#include "thread.h"
#include "analysis_int.h"

#include <math.h>
#include <pthread.h>

#define WALL_MAX ((int64_t)1 << 62)
#define MULT_MAX ((uint64_t)1 << 62) /* k < 2^30: |delta·mult| < 2^126 */

typedef struct conv {
    uint64_t t0;
    int64_t r0;
    uint64_t mult; /* k · 2^32 */
} conv;

static inline int64_t to_wall(const conv *c, int64_t ticks)
{
    __int128 d = (__int128)(uint64_t)ticks - (__int128)c->t0;
    __int128 v = (d * (__int128)c->mult + ((__int128)1 << 31)) >> 32; /* rounded */
    v += c->r0;
    if (v < 0)
        return 0;
    if (v >= WALL_MAX)
        return WALL_MAX - 1;
    return (int64_t)v;
}

static uint64_t mult_from_ratio(uint64_t num, uint64_t den)
{
    unsigned __int128 m = (((unsigned __int128)num << 32) + den / 2) / den;
    return m > MULT_MAX ? MULT_MAX : (uint64_t)m;
}

static void setup(conv *c, aip__process *p, const aip__model *m)
{
    const aip__clock_pair *a = &p->first_sync, *b = &p->last_sync;
    double tps = p->ticks_per_second;
    int tps_ok = isfinite(tps) && tps >= 1e3 && tps <= 1e13;
    if (p->n_syncs >= 2 && b->ticks > a->ticks && b->monotonic_ns >= a->monotonic_ns)
        c->mult = mult_from_ratio(b->monotonic_ns - a->monotonic_ns, b->ticks - a->ticks);
    else if (tps_ok)
        c->mult = (uint64_t)(1e9 / tps * 4294967296.0 + 0.5);
    else
        c->mult = (uint64_t)1 << 32; /* nothing better known: ticks are ns */
    if (c->mult == 0)
        c->mult = 1;
    if (p->n_syncs >= 2 && !(b->ticks > a->ticks))
        p->clock_fallback = 1;
    const aip__clock_pair *anchor = NULL;
    if (p->n_syncs >= 1) {
        anchor = a;
    } else if (m->info.has_start_sync) { /* profiler_info.json start_info */
        anchor = &m->info.start_sync;
        p->clock_fallback = 1;
    } else {
        p->clock_fallback = 1;
    }
    if (anchor) {
        c->t0 = anchor->ticks;
        c->r0 = anchor->realtime_ns > (uint64_t)WALL_MAX ? WALL_MAX : (int64_t)anchor->realtime_ns;
    } else {
        c->t0 = 0;
        c->r0 = 0;
    }
}

static int64_t tick_fn(const void *ctx, int64_t ticks) { return to_wall(ctx, ticks); }

/* Below this many device tasks and calls a thread costs more than it saves. */
#define ALIGN_BESIDE_MIN 16384u

typedef struct align_job {
    aip__process *p;
    const conv *c;
} align_job;

static void *align_main(void *arg)
{
    align_job *j = arg;
    aip__device_align(j->p, tick_fn, j->c);
    return NULL;
}

void aip__ticks_convert(aip__process *p, const aip__model *m)
{
    conv c;
    setup(&c, p, m);
    align_job job = {p, &c};
    pthread_t th;
    int beside = p->dev_tasks.n + p->dev_api.n >= ALIGN_BESIDE_MIN &&
                 aip__thread_create(&th, NULL, align_main, &job) == 0;
    for (size_t i = 0; i < p->n_threads; i++) {
        aip__thread *t = &p->threads[i];
        for (size_t j = 0; j < t->n_spans; j++) {
            aip__span *s = &t->spans[j];
            s->start = to_wall(&c, s->start);
            s->end = to_wall(&c, s->end);
            if (s->end < s->start)
                s->end = s->start;
        }
    }
    for (size_t i = 0; i < p->marks.n; i++)
        p->marks.v[i].ts = to_wall(&c, p->marks.v[i].ts);
    for (size_t i = 0; i < p->range_starts.n; i++)
        p->range_starts.v[i].ts = to_wall(&c, p->range_starts.v[i].ts);
    for (size_t i = 0; i < p->range_ends.n; i++)
        p->range_ends.v[i].ts = to_wall(&c, p->range_ends.v[i].ts);
    for (size_t i = 0; i < p->memory.n; i++)
        p->memory.v[i].ts = to_wall(&c, p->memory.v[i].ts);
    for (size_t i = 0; i < p->mem_labels.n; i++)
        p->mem_labels.v[i].ts = to_wall(&c, p->mem_labels.v[i].ts);
    for (size_t i = 0; i < p->gc.n; i++) {
        aip__gc_ev *g = &p->gc.v[i];
        g->start = to_wall(&c, g->start);
        g->end = to_wall(&c, g->end);
        if (g->end < g->start)
            g->end = g->start;
    }
    for (size_t i = 0; i < p->comm_ops.n; i++) {
        aip__comm_event *o = &p->comm_ops.v[i];
        o->start = to_wall(&c, o->start);
        o->end = to_wall(&c, o->end);
        if (o->end < o->start)
            o->end = o->start;
    }
    for (size_t i = 0; i < p->host.n; i++)
        p->host.v[i].ts = to_wall(&c, p->host.v[i].ts);
    for (size_t i = 0; i < p->osrt.n; i++) {
        aip__osrt_call *o = &p->osrt.v[i];
        o->start = to_wall(&c, o->start);
        o->end = to_wall(&c, o->end);
        if (o->end < o->start)
            o->end = o->start;
    }
    if (beside)
        pthread_join(th, NULL);
    else
        aip__device_align(p, tick_fn, &c);
}
