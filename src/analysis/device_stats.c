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
#include "model.h"
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
    static const char *const kinds[] = {"OTHER", "KERNEL", "MEMCPY", "MEMSET", "MARKER",
                                        "BARRIER", "MAP", "OTHER"};
    if (t->kind == AIP_TASK_KERNEL)
        return aip__model_str(p, t->name, len);
    const char *k = kinds[t->kind < sizeof kinds / sizeof kinds[0] ? t->kind : 0];
    *len = strlen(k);
    return k;
}

/* ---- op_statistic: tasks by (device, type) --------------------------- */

typedef struct task_ref {
    uint32_t device;
    uint8_t core;
    const char *type;
    size_t len;
    int64_t dur;
} task_ref;

static int cmp_text(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

static int cmp_ref(const void *a, const void *b)
{
    const task_ref *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return cmp_text(x->type, x->len, y->type, y->len);
}

static int cmp_stat(const void *a, const void *b)
{
    const aip__task_stat *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return cmp_text(x->type, x->len, y->type, y->len);
}

aip_status aip__task_stats(const aip__model *m, aip__task_stat **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    size_t n = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        n += m->procs[pi].dev_tasks.n;
    if (!n)
        return AIP_OK;
    task_ref *refs = malloc(n * sizeof *refs);
    if (!refs)
        return aip__fail(AIP_ERR_NOMEM, "no memory for device task statistics");
    size_t k = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->dev_tasks.n; i++) {
            const aip__device_task *t = &p->dev_tasks.v[i];
            const aip__device *d = aip__model_device(p, t->device);
            task_ref *r = &refs[k++];
            r->device = t->device;
            r->core = d ? d->kind : 0xff;
            r->type = aip__task_type(p, t, &r->len);
            r->dur = t->end - t->start;
        }
    }
    qsort(refs, n, sizeof *refs, cmp_ref);
    aip__task_stat *st = malloc(n * sizeof *st); /* at most one group per task */
    if (!st) {
        free(refs);
        return aip__fail(AIP_ERR_NOMEM, "no memory for device task statistics");
    }
    size_t g = 0;
    for (size_t i = 0; i < n; i++) {
        const task_ref *r = &refs[i];
        if (!g || cmp_ref(&refs[i - 1], r)) {
            st[g++] = (aip__task_stat){.device = r->device, .core = r->core, .type = r->type,
                                       .len = r->len, .min_ns = INT64_MAX};
        }
        aip__task_stat *x = &st[g - 1];
        x->count++;
        x->total_ns = aip__sat_add(x->total_ns, r->dur);
        if (r->dur < x->min_ns)
            x->min_ns = r->dur;
        if (r->dur > x->max_ns)
            x->max_ns = r->dur;
    }
    free(refs);
    qsort(st, g, sizeof *st, cmp_stat);
    *out = st;
    *n_out = g;
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
    size_t *stack = malloc(t->n_spans * sizeof *stack);
    if (!self || !total || !stack) {
        free(self);
        free(total);
        free(stack);
        return aip__fail(AIP_ERR_NOMEM, "no memory for device times of ops");
    }
    for (size_t i = 0; i < t->n_spans; i++)
        self[i] = total[i] = -1;
    size_t depth = 0, next = 0;
    for (size_t c = first; c < last; c++) {
        if (call_ns[c] < 0)
            continue;
        int64_t at = p->dev_api.v[c].start;
        /* open every op that began by the call (parents come first) */
        for (; next < t->n_spans && t->spans[next].start <= at; next++) {
            const aip__span *s = &t->spans[next];
            while (depth && t->spans[stack[depth - 1]].end < s->start)
                depth--;
            if (s->kind == AIP_SPAN_OP)
                stack[depth++] = next;
        }
        while (depth && t->spans[stack[depth - 1]].end < at)
            depth--;
        int innermost = 1;
        for (size_t k = depth; k-- > 0;) {
            size_t si = stack[k];
            if (t->spans[si].end < at) /* overlapping, not nested: already closed */
                continue;
            add_ns(&total[si], call_ns[c]);
            if (innermost)
                add_ns(&self[si], call_ns[c]);
            innermost = 0;
        }
    }
    free(stack);
    *self_out = self;
    *total_out = total;
    return AIP_OK;
}
