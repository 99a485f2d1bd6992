/*
 * device_stats.c — what the CSV summaries say of device tasks: the type a
 * task is counted under, per-(device, type) statistics (op_statistic.csv),
 * and the device time each framework op launched (operator_details.csv).
 *
 * A task's type is its kernel name (an OpenCL or CUDA kernel function is
 * what the seed's OP Type names: every launch of it is one call of that
 * op), or for the other tasks their kind.
 *
 * An op's device time is the summed duration of the tasks launched by the
 * runtime calls made on its thread while it was open (Device Total), or
 * while it was the innermost open op (Device Self) — the seed's "算子在
 * Device侧的耗时" with and without the ops called inside it.  One sweep per
 * thread over its sorted spans and calls with a stack of open ops, O(spans
 * + calls × depth).
 */
#include "analysis_int.h"
#include "device_tracks.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

const char *aip__dev_kind_name(unsigned kind)
{
    switch (kind) {
    case AIP_DEVKIND_CPU:
        return "CPU";
    case AIP_DEVKIND_GPU:
        return "GPU";
    case AIP_DEVKIND_ACCELERATOR:
        return "ACCELERATOR";
    default:
        return "OTHER";
    }
}

const char *aip__task_type(const aip__process *p, const aip__device_task *t, size_t *len)
{
    if (t->kind == AIP_TASK_KERNEL)
        return aip__model_str(p, t->name, len);
    /* the timeline's and the database's task type ("MEMCPY_ASYNC"...) */
    const char *k = aip__task_type_name(p, t);
    *len = strlen(k);
    return k;
}

/* ---- op_statistic: tasks by (device, type) --------------------------- *
 * Grouped per process by string id (a kernel) or kind, without comparing
 * texts: map[key] heads a chain of the groups of that key, one per device
 * (a chain is as long as the devices that ran the kernel).  The groups of
 * all processes are then merged by text, and there are few of them. */

static int cmp_group(const void *a, const void *b)
{
    const aip__task_stat *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return aip__text_cmp(x->type, x->len, y->type, y->len);
}

static int cmp_stat(const void *a, const void *b)
{
    const aip__task_stat *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return aip__text_cmp(x->type, x->len, y->type, y->len);
}

static void add_task(aip__task_stat *x, int64_t dur)
{
    x->count++;
    x->total_ns = aip__sat_add(x->total_ns, dur);
    if (dur < x->min_ns)
        x->min_ns = dur;
    if (dur > x->max_ns)
        x->max_ns = dur;
}

typedef struct stat_vec {
    aip__task_stat *v;
    size_t n, cap;
    uint32_t *next;           /* per group: 1 + the next group of its key, 0 = none */
    size_t next_cap;
} stat_vec;

#define N_KINDS 8 /* keys 0..7: task kinds; 8 + id: a kernel name */

static aip_status process_groups(stat_vec *g, const aip__process *p)
{
    /* + 1: a kernel whose name is no string id takes key N_KINDS + 0,
     * which must exist even when the process has no strings at all
     * (found by fuzz_raw_reader: tests/fuzz/corpus_fuzz_raw_reader/
     * regress_device_no_strings.raw). */
    size_t n_keys = N_KINDS + p->strings.n_ent + 1;
    uint32_t *map = calloc(n_keys, sizeof *map);
    if (!map)
        return aip__fail(AIP_ERR_NOMEM, "no memory for device task statistics");
    size_t first = g->n;
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        const aip__device_task *t = &p->dev_tasks.v[i];
        size_t key = t->kind == AIP_TASK_KERNEL
                         ? N_KINDS + (t->name < p->strings.n_ent ? t->name : 0)
                         : t->kind % N_KINDS;
        uint32_t gi = map[key];
        while (gi && g->v[first + gi - 1].device != t->device)
            gi = g->next[first + gi - 1];
        if (!gi) {
            if (aip__model_grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v) ||
                aip__model_grow((void **)&g->next, &g->next_cap, g->n + 1, sizeof *g->next)) {
                free(map);
                return AIP_ERR_NOMEM;
            }
            const aip__device *d = aip__model_device(p, t->device);
            aip__task_stat *x = &g->v[g->n];
            *x = (aip__task_stat){.device = t->device, .core = d ? d->kind : 0xff,
                                  .min_ns = INT64_MAX};
            x->type = aip__task_type(p, t, &x->len);
            g->next[g->n] = map[key];
            gi = map[key] = (uint32_t)(++g->n - first);
        }
        add_task(&g->v[first + gi - 1], t->end - t->start);
    }
    free(map);
    return AIP_OK;
}

aip_status aip__task_stats(const aip__model *m, aip__task_stat **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    stat_vec g = {0};
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++)
        s = process_groups(&g, &m->procs[pi]);
    free(g.next);
    if (s) {
        free(g.v);
        return s;
    }
    if (!g.n)
        return AIP_OK;
    /* the same (device, type) from several processes is one row */
    qsort(g.v, g.n, sizeof *g.v, cmp_group);
    size_t k = 0;
    for (size_t i = 0; i < g.n; i++) {
        if (k && !cmp_group(&g.v[k - 1], &g.v[i])) {
            aip__task_stat *x = &g.v[k - 1], *y = &g.v[i];
            x->count += y->count;
            x->total_ns = aip__sat_add(x->total_ns, y->total_ns);
            x->min_ns = y->min_ns < x->min_ns ? y->min_ns : x->min_ns;
            x->max_ns = y->max_ns > x->max_ns ? y->max_ns : x->max_ns;
        } else {
            g.v[k++] = g.v[i];
        }
    }
    qsort(g.v, k, sizeof *g.v, cmp_stat);
    *out = g.v;
    *n_out = k;
    return AIP_OK;
}

/* ---- operator_details: device time per op ----------------------------- */

aip_status aip__device_call_ns(const aip__process *p, int64_t **out)
{
    *out = NULL;
    if (!p->dev_api.n)
        return AIP_OK;
    int64_t *ns = malloc(p->dev_api.n * sizeof *ns);
    if (!ns)
        return aip__fail(AIP_ERR_NOMEM, "no memory for device times of ops");
    for (size_t i = 0; i < p->dev_api.n; i++)
        ns[i] = -1;
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        const aip__device_task *t = &p->dev_tasks.v[i];
        if (t->api < 0 || (size_t)t->api >= p->dev_api.n)
            continue;
        int64_t *c = &ns[t->api];
        *c = aip__sat_add(*c < 0 ? 0 : *c, t->end - t->start);
    }
    *out = ns;
    return AIP_OK;
}

static void add_ns(int64_t *v, int64_t ns) { *v = aip__sat_add(*v < 0 ? 0 : *v, ns); }

aip_status aip__op_device_ns(const aip__process *p, size_t ti, const int64_t *call_ns,
                             int64_t **self_out, int64_t **total_out)
{
    *self_out = *total_out = NULL;
    const aip__thread *t = &p->threads[ti];
    /* the thread's calls: dev_api is sorted by thread, then start */
    size_t lo = 0, hi = p->dev_api.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->dev_api.v[mid].thread < ti)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo, last = lo;
    int any = 0;
    while (last < p->dev_api.n && p->dev_api.v[last].thread == ti)
        any |= call_ns[last++] >= 0;
    if (!any || !t->n_spans)
        return AIP_OK;
    int64_t *self = malloc(t->n_spans * sizeof *self);
    int64_t *total = malloc(t->n_spans * sizeof *total);
    aip__open_spans open = {0};
    if (!self || !total || aip__open_spans_init(&open, t, (1u << AIP_SPAN_OP) |
                                                               (1u << AIP_SPAN_ANNOTATION))) {
        free(self);
        free(total);
        aip__open_spans_free(&open);
        return aip__fail(AIP_ERR_NOMEM, "no memory for device times of ops");
    }
    for (size_t i = 0; i < t->n_spans; i++)
        self[i] = total[i] = -1;
    for (size_t c = first; c < last; c++) {
        if (call_ns[c] < 0)
            continue;
        int64_t at = p->dev_api.v[c].start;
        aip__open_spans_at(&open, at); /* the ops open around the call */
        int innermost = 1;
        for (size_t k = open.depth; k-- > 0;) {
            size_t si = open.stack[k];
            if (t->spans[si].end < at) /* overlapping, not nested: already closed */
                continue;
            add_ns(&total[si], call_ns[c]);
            if (innermost)
                add_ns(&self[si], call_ns[c]);
            innermost = 0;
        }
    }
    aip__open_spans_free(&open);
    *self_out = self;
    *total_out = total;
    return AIP_OK;
}
