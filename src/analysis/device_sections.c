/*
 * device_sections.c — aip__device_overlap() (device_tracks.h): the
 * timeline's Overlap Analysis sections of a device (trace_view.json's
 * "Overlap Analysis" tracks, ascend_pytorch_profiler.db's
 * OVERLAP_ANALYSIS), cut from the same step windows and the same sets as
 * step_trace_time's device rows (device_steps.c), so that one definition
 * gives both outputs: per row of the device, in its window,
 *   Computing = the union of the step's kernels (clipped to the window's
 *   start), Communication = the recorded communication ops' union,
 *   Communication(Not Overlapped) = Communication less Computing,
 *   Free = the window less Computing and Communication,
 * so the Free sections of a step sum to its step_trace_time Free, and the
 * Computing ones to its Computing, exactly, wherever a step's device work
 * ends before the next step's window begins; where it runs on into it,
 * that time is drawn once, under the earlier step (a track's sections
 * never overlap).
 */
#include "device_tracks.h"
#include "comm_derive.h"
#include "error.h"
#include "intervals.h"

#include <stdlib.h>
#include <string.h>

typedef struct sect_vec {
    aip__overlap_section *v;
    size_t n, cap;
} sect_vec;

static int push(sect_vec *s, int64_t start, int64_t end, uint8_t type)
{
    if (end <= start)
        return 0; /* msprof keeps only sections with end > start */
    if (s->n && s->v[s->n - 1].type == type && s->v[s->n - 1].end == start &&
        type != AIP_OVERLAP_COMMUNICATION) {
        s->v[s->n - 1].end = end;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        aip__overlap_section *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (aip__overlap_section){start, end, type};
    return 0;
}

/* The kernels of one device grouped by step (a counting sort, stable:
 * each step's in task order, every process's in turn): bucket k = step + 1
 * (step -1: no steps) holds v[at[k] .. at[k + 1]).  Scanning every task
 * for every step cost tasks x steps, most of a device profile's overlap
 * analysis. */
typedef struct by_step {
    size_t *at;               /* n_buckets + 2 */
    const aip__device_task **v;
    size_t n_buckets;         /* steps + 1 */
} by_step;

/* Bucket of t for `device`, or -1 when t is none of its steps' kernels. */
static int64_t bucket_of(const aip__model *m, const aip__device_task *t, uint32_t device)
{
    if (t->device % AIP_RAW_MAX_DEVICES != device || t->kind != AIP_TASK_KERNEL ||
        t->step < -1 || t->step >= (int64_t)m->n_steps)
        return -1;
    return t->step + 1;
}

static int group_by_step(const aip__model *m, uint32_t device, by_step *g)
{
    size_t nb = m->n_steps + 1, total = 0;
    g->n_buckets = nb;
    g->at = calloc(nb + 2, sizeof *g->at);
    if (!g->at)
        return -1;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        for (size_t i = 0; i < m->procs[pi].dev_tasks.n; i++) {
            int64_t k = bucket_of(m, &m->procs[pi].dev_tasks.v[i], device);
            if (k >= 0) {
                g->at[k + 2]++;
                total++;
            }
        }
    for (size_t k = 2; k < nb + 2; k++)
        g->at[k] += g->at[k - 1];
    g->v = malloc((total ? total : 1) * sizeof *g->v);
    if (!g->v)
        return -1;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        for (size_t i = 0; i < m->procs[pi].dev_tasks.n; i++) {
            const aip__device_task *t = &m->procs[pi].dev_tasks.v[i];
            int64_t k = bucket_of(m, t, device);
            if (k >= 0)
                g->v[g->at[k + 1]++] = t;
        }
    return 0;
}

/* The step's kernels of the device (every process's), union from `from`. */
static int step_kernels(const by_step *g, int64_t step, int64_t from, aip__intervals *u)
{
    u->n = 0;
    if (step < -1 || (size_t)(step + 1) >= g->n_buckets)
        return 0; /* a row past the steps: no task names it */
    size_t k = (size_t)(step + 1);
    for (size_t j = g->at[k]; j < g->at[k + 1]; j++) {
        const aip__device_task *t = g->v[j];
        if (aip__intervals_push(u, t->start > from ? t->start : from, t->end))
            return -1;
    }
    aip__intervals_merge(u, 0);
    return 0;
}

/* One window's sections: U (computing) and the comm pairs c[0..nc). */
static int window(sect_vec *s, int64_t a, int64_t b, const aip__intervals *u, const int64_t *c,
                  size_t nc)
{
    size_t lo = 0;
    while (lo < nc && c[2 * lo + 1] <= a)
        lo++;
    for (size_t k = lo; k < nc && c[2 * k] < b; k++)
        if (push(s, c[2 * k] > a ? c[2 * k] : a, c[2 * k + 1] < b ? c[2 * k + 1] : b,
                 AIP_OVERLAP_COMMUNICATION))
            return -1;
    size_t i = 0, j = lo;
    int64_t at = a;
    while (at < b) {
        while (i < u->n && u->v[2 * i + 1] <= at)
            i++;
        while (j < nc && c[2 * j + 1] <= at)
            j++;
        int in_u = i < u->n && u->v[2 * i] <= at, in_c = j < nc && c[2 * j] <= at;
        int64_t next = b;
        if (i < u->n)
            next = in_u ? (u->v[2 * i + 1] < next ? u->v[2 * i + 1] : next)
                        : (u->v[2 * i] < next ? u->v[2 * i] : next);
        if (j < nc)
            next = in_c ? (c[2 * j + 1] < next ? c[2 * j + 1] : next)
                        : (c[2 * j] < next ? c[2 * j] : next);
        uint8_t type = in_u ? AIP_OVERLAP_COMPUTE
                            : in_c ? AIP_OVERLAP_COMM_NOT_OVERLAPPED : AIP_OVERLAP_FREE;
        if (push(s, at, next, type))
            return -1;
        at = next;
    }
    return 0;
}

static int cmp_section(const void *a, const void *b)
{
    const aip__overlap_section *x = a, *y = b;
    if (x->start != y->start)
        return (x->start > y->start) - (x->start < y->start);
    return (x->type > y->type) - (x->type < y->type);
}

aip_status aip__device_overlap_compute(const aip__model *m, uint32_t device,
                                       aip__overlap_section **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int64_t *comm = NULL;
    size_t n_comm = 0;
    aip_status st = aip__comm_intervals(m, 0, &comm, &n_comm);
    if (st)
        return st;
    sect_vec s = {0};
    aip__intervals u = {0};
    by_step g = {0};
    int fail = group_by_step(m, device, &g);
    int64_t k = 0, drawn = INT64_MIN;
    for (size_t r = 0; r < m->n_step_rows && !fail; r++) {
        const aip__step_row *row = &m->step_rows[r];
        if (row->device != (int32_t)device)
            continue;
        int64_t step = m->n_steps ? k++ : -1;
        /* a window reaching into the next (the step's kernels outlasting
         * the next step's start) is drawn once, under the earlier step:
         * the sections of one track must not overlap */
        int64_t from = row->start > drawn ? row->start : drawn;
        fail = step_kernels(&g, step, row->start, &u) ||
               window(&s, from, row->end, &u, comm, n_comm);
        drawn = row->end > drawn ? row->end : drawn;
    }
    free(comm);
    free(u.v);
    free(g.at);
    free(g.v);
    if (fail) {
        free(s.v);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the overlap analysis");
    }
    if (s.n)
        qsort(s.v, s.n, sizeof *s.v, cmp_section);
    *out = s.v;
    *n = s.n;
    return AIP_OK;
}
