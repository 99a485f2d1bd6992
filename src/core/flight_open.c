/*
 * flight_open.c — the ranges still open on every thread when the flight
 * recorder dumps (docs/FLIGHT_RECORDER.md), written as records flagged
 * AIP_REC_UNFINISHED that end at the dump: what a hung thread is inside.
 *
 * The stacks belong to their threads, which push and pop without a lock
 * (record.c), and go on recording while the writer dumps.  They are read
 * here under the pool lock with the depths loaded once: a thread blocked
 * in a hang does not change them; one pushing or popping at that very
 * moment may show its innermost frame as of just before or just after (a
 * frame is filled after the depth counts it), which the checks below
 * keep within the trace and the dump's time.  A dump therefore never
 * stops a thread.
 */
#include "flight.h"
#include "recorder_int.h"

#include <stdlib.h>
#include <string.h>

static uint32_t depth_of(const uint32_t *d)
{
    uint32_t v = __atomic_load_n(d, __ATOMIC_RELAXED);
    return v > AIP_STACK_DEPTH ? AIP_STACK_DEPTH : v; /* deeper frames were never kept */
}

static int plausible(uint64_t start, uint32_t name, uint64_t begin, uint64_t end)
{
    return name && start >= begin && start <= end;
}

/* One thread's open frames into `out` (room for all of them). */
static uint32_t thread_open(const aip__tstate *t, uint64_t begin, uint64_t end, uint8_t *out)
{
    uint32_t n = 0;
    for (uint32_t i = 0, d = depth_of(&t->ann_depth); i < d; i++) {
        const aip__frame *f = &t->ann[i];
        if (!plausible(f->start, f->name, begin, end))
            continue;
        aip__rec_span r;
        aip__rec_set_header(&r.h, AIP_REC_ANNOTATION, AIP_REC_UNFINISHED, sizeof r, f->name);
        r.start = f->start;
        r.end = end;
        memcpy(out + n, &r, sizeof r);
        n += sizeof r;
    }
    for (uint32_t i = 0, d = depth_of(&t->range_depth); i < d; i++) {
        const aip__frame *f = &t->range[i];
        if (!f->domain || !plausible(f->start, f->name, begin, end))
            continue; /* domain 0: filtered out, never recorded */
        aip__rec_range r;
        aip__rec_set_header(&r.h, AIP_REC_RANGE, AIP_REC_UNFINISHED, sizeof r, f->name);
        r.start = f->start;
        r.end = end;
        r.domain = f->domain;
        r.reserved = 0;
        memcpy(out + n, &r, sizeof r);
        n += sizeof r;
    }
    for (uint32_t i = 0, d = depth_of(&t->op_depth); i < d; i++) {
        uint64_t rec[8];
        memcpy(rec, t->op[i].rec, sizeof rec);
        aip__rec_header h;
        memcpy(&h, rec, sizeof h);
        if (h.kind != AIP_REC_OP || h.size < 24 || h.size > sizeof rec || (h.size & 7) ||
            !plausible(rec[1], h.name, begin, end))
            continue;
        h.flags |= AIP_REC_UNFINISHED;
        memcpy(rec, &h, sizeof h);
        rec[2] = end;
        memcpy(out + n, rec, h.size);
        n += h.size;
    }
    for (uint32_t i = 0, d = depth_of(&t->py_depth); i < d; i++) {
        const aip__py_frame *f = &t->py[i];
        if (!plausible(f->start, f->name, begin, end))
            continue;
        n += aip__pyfunc_put(f, AIP_REC_UNFINISHED, end, out + n);
    }
    return n;
}

size_t aip__flight_open_ranges(uint64_t begin, uint64_t end, aip__flight_open **out)
{
    aip__pool *pool = &aip__pool_state;
    size_t n = 0, k = 0;
    *out = NULL;
    for (aip__tstate *t = pool->threads; t; t = t->next)
        n += t->gen == pool->gen;
    if (!n)
        return 0;
    aip__flight_open *v = calloc(n, sizeof *v);
    if (!v)
        return 0;
    /* Room for full stacks: 24 + 32 + 64 + 40 bytes a level. */
    const size_t room = AIP_STACK_DEPTH * (24 + 32 + 64 + 40);
    for (aip__tstate *t = pool->threads; t && k < n; t = t->next) {
        if (t->gen != pool->gen)
            continue;
        uint8_t *p = malloc(room);
        if (!p)
            break;
        uint32_t size = thread_open(t, begin, end, p);
        if (!size) {
            free(p);
            continue;
        }
        v[k++] = (aip__flight_open){.tid = t->tid, .records = p, .size = size};
    }
    *out = v;
    return k;
}
