/*
 * device_derive.c — device activity put in order and linked to the host.
 *
 * After loading and alignment the tasks, API calls and device memory
 * records of a process are in the order their threads' chunks reached the
 * file.  Here they are sorted by time, each task is linked to the runtime
 * call that launched it (same correlation id: kernel_details' parent op,
 * the HostToDevice flow), and each call to the innermost op,
 * record_function or mstx range open on its thread when it began (the
 * async_npu flow op -> kernel, operator_details' device times).
 *
 * The parent search is one sweep per thread over its sorted spans and
 * sorted calls with a stack of open spans, so it costs O(spans + calls).
 */
#include "model.h"
#include "error.h"

#include <stdlib.h>

static int cmp_task(const void *a, const void *b)
{
    const aip__device_task *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* longer first, as spans */
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_api(const void *a, const void *b)
{
    const aip__device_call *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_mem(const void *a, const void *b)
{
    const aip__device_mem *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Parents of the calls [first, last) of thread `ti` (sorted by start). */
static aip_status parents_of_thread(aip__process *p, uint32_t ti, size_t first, size_t last)
{
    aip__open_spans open;
    aip_status s = aip__open_spans_init(&open, &p->threads[ti], ~(1u << AIP_SPAN_PYFUNC));
    if (s)
        return s;
    for (size_t i = first; i < last; i++) {
        aip__device_call *a = &p->dev_api.v[i];
        aip__open_spans_at(&open, a->start);
        int64_t in = aip__open_spans_innermost(&open, a->start);
        if (in >= 0) {
            a->parent_thread = ti;
            a->parent_span = in;
        }
    }
    aip__open_spans_free(&open);
    return AIP_OK;
}

static int cmp_corr(const void *a, const void *b, void *ctx)
{
    const aip__device_call *v = ctx;
    uint64_t x = v[*(const size_t *)a].correlation, y = v[*(const size_t *)b].correlation;
    return (x > y) - (x < y);
}

/* Each task's launching call: the call with its correlation id. */
static aip_status link_tasks(aip__process *p)
{
    size_t n = p->dev_api.n;
    if (!n || !p->dev_tasks.n)
        return AIP_OK;
    size_t *by_corr = malloc(n * sizeof *by_corr);
    if (!by_corr)
        return aip__fail(AIP_ERR_NOMEM, "no memory to link device tasks to calls");
    for (size_t i = 0; i < n; i++)
        by_corr[i] = i;
    qsort_r(by_corr, n, sizeof *by_corr, cmp_corr, p->dev_api.v);
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        aip__device_task *t = &p->dev_tasks.v[i];
        if (!t->correlation)
            continue;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (p->dev_api.v[by_corr[mid]].correlation < t->correlation)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n && p->dev_api.v[by_corr[lo]].correlation == t->correlation)
            t->api = (int64_t)by_corr[lo];
    }
    free(by_corr);
    return AIP_OK;
}

static aip_status derive_process(aip__process *p)
{
    if (p->dev_tasks.n > 1) /* qsort wants a non-NULL array even for 0 */
        qsort(p->dev_tasks.v, p->dev_tasks.n, sizeof *p->dev_tasks.v, cmp_task);
    if (p->dev_api.n > 1)
        qsort(p->dev_api.v, p->dev_api.n, sizeof *p->dev_api.v, cmp_api);
    if (p->dev_memory.n > 1)
        qsort(p->dev_memory.v, p->dev_memory.n, sizeof *p->dev_memory.v, cmp_mem);
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        aip__device_task *t = &p->dev_tasks.v[i];
        if (t->device < p->devices.n)
            p->devices.v[t->device].tasks++;
        if (t->queue < p->queues.n)
            p->queues.v[t->queue].tasks++;
    }
    aip_status s = AIP_OK;
    for (size_t i = 0; i < p->dev_api.n && !s;) {
        size_t j = i;
        while (j < p->dev_api.n && p->dev_api.v[j].thread == p->dev_api.v[i].thread)
            j++;
        if (p->dev_api.v[i].thread < p->n_threads)
            s = parents_of_thread(p, p->dev_api.v[i].thread, i, j);
        i = j;
    }
    if (!s)
        s = link_tasks(p);
    return s;
}

aip_status aip__device_derive(aip__model *m)
{
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        aip_status s = derive_process(&m->procs[pi]);
        if (s)
            return s;
    }
    return AIP_OK;
}
