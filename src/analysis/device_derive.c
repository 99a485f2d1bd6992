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
#include "analysis_int.h"
#include "error.h"
#include "sort_keys.h"

#include <stdlib.h>

/* Minor orders within equal starts (sort_keys.h): a task's longer first,
 * as spans, then by correlation id; a call's by correlation id. */
static int cmp_task_tie(uint64_t a, uint64_t b, const void *ctx)
{
    const aip__device_task *x = (const aip__device_task *)ctx + a;
    const aip__device_task *y = (const aip__device_task *)ctx + b;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

static int cmp_api_tie(uint64_t a, uint64_t b, const void *ctx)
{
    const aip__device_call *x = (const aip__device_call *)ctx + a;
    const aip__device_call *y = (const aip__device_call *)ctx + b;
    return (x->correlation > y->correlation) - (x->correlation < y->correlation);
}

/* Tasks by (start, longer first, correlation), memory records by time;
 * stable, as qsort was. */
static aip_status sort_tasks(aip__process *p)
{
    size_t n = p->dev_tasks.n > p->dev_memory.n ? p->dev_tasks.n : p->dev_memory.n;
    if (n < 2)
        return AIP_OK;
    aip__sort_key *k = malloc(n * sizeof *k);
    if (!k)
        return aip__fail(AIP_ERR_NOMEM, "no memory to sort device records");
    aip_status s = AIP_OK;
    if (p->dev_tasks.n > 1) {
        for (size_t i = 0; i < p->dev_tasks.n; i++)
            k[i] = (aip__sort_key){aip__sort_key_i64(p->dev_tasks.v[i].start), i};
        s = aip__sort_keys(k, p->dev_tasks.n);
        if (!s) {
            aip__sort_ties(k, p->dev_tasks.n, cmp_task_tie, p->dev_tasks.v);
            s = aip__permute(p->dev_tasks.v, p->dev_tasks.n, sizeof *p->dev_tasks.v, k);
        }
    }
    if (!s && p->dev_memory.n > 1) {
        for (size_t i = 0; i < p->dev_memory.n; i++)
            k[i] = (aip__sort_key){aip__sort_key_i64(p->dev_memory.v[i].ts), i};
        s = aip__sort_keys(k, p->dev_memory.n);
        if (!s)
            s = aip__permute(p->dev_memory.v, p->dev_memory.n, sizeof *p->dev_memory.v, k);
    }
    free(k);
    return s;
}

/* Is the run v[0..n) of one thread's calls in (start, correlation) order? */
static int calls_in_order(const aip__device_call *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i].start < v[i - 1].start ||
            (v[i].start == v[i - 1].start && v[i].correlation < v[i - 1].correlation))
            return 0;
    return 1;
}

/* The device calls' (thread or correlation id, index) keys, sorted into
 * *out (NULL, and the error, when there is no memory). */
static aip_status sorted_call_keys(const aip__process *p, int by_thread, aip__sort_key **out)
{
    size_t n = p->dev_api.n;
    aip__sort_key *k = *out = malloc(n * sizeof *k);
    if (!k)
        return aip__fail(AIP_ERR_NOMEM, "no memory to sort device calls");
    for (size_t i = 0; i < n; i++)
        k[i] = (aip__sort_key){by_thread ? p->dev_api.v[i].thread : p->dev_api.v[i].correlation,
                               i};
    return aip__sort_keys(k, n);
}

/* Calls by (thread, start, correlation), stable: moved by thread first,
 * then each thread's run sorted by start where it is not in order already
 * (as recorded, a thread's calls are: one pass over the run). */
static aip_status sort_calls(aip__process *p)
{
    size_t n = p->dev_api.n;
    if (n < 2)
        return AIP_OK;
    aip__sort_key *k;
    aip_status s = sorted_call_keys(p, 1, &k);
    if (!k)
        return s;
    if (!s)
        s = aip__permute_copy((void **)&p->dev_api.v, &p->dev_api.cap, n, sizeof *p->dev_api.v,
                              k);
    aip__device_call *c = p->dev_api.v;
    for (size_t i = 0; i < n && !s;) {
        size_t j = i + 1;
        while (j < n && c[j].thread == c[i].thread)
            j++;
        if (!calls_in_order(c + i, j - i)) {
            for (size_t r = i; r < j; r++)
                k[r - i] = (aip__sort_key){aip__sort_key_i64(c[r].start), r - i};
            s = aip__sort_keys(k, j - i);
            if (!s) { /* calls of one start: by correlation id */
                aip__sort_ties(k, j - i, cmp_api_tie, c + i);
                s = aip__permute(c + i, j - i, sizeof *c, k);
            }
        }
        i = j;
    }
    free(k);
    return s;
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

/* Each task's launching call: the call with its correlation id (the
 * first such call, when ids repeat).  Back ends count correlation ids
 * from 1, so they are usually dense: a table indexed by id then finds a
 * call in one step; otherwise calls sorted by id are searched. */
static aip_status link_tasks(aip__process *p)
{
    size_t n = p->dev_api.n;
    if (!n || !p->dev_tasks.n)
        return AIP_OK;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t c = p->dev_api.v[i].correlation;
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
    }
    if (hi - lo < 4 * (uint64_t)n + 1024) {
        size_t span = (size_t)(hi - lo) + 1;
        int64_t *first = malloc(span * sizeof *first);
        if (!first)
            return aip__fail(AIP_ERR_NOMEM, "no memory to link device tasks to calls");
        for (size_t i = 0; i < span; i++)
            first[i] = -1;
        for (size_t i = n; i-- > 0;) /* backwards: the first call of an id stays */
            first[p->dev_api.v[i].correlation - lo] = (int64_t)i;
        for (size_t i = 0; i < p->dev_tasks.n; i++) {
            aip__device_task *t = &p->dev_tasks.v[i];
            if (t->correlation && t->correlation >= lo && t->correlation <= hi &&
                first[t->correlation - lo] >= 0)
                t->api = first[t->correlation - lo];
        }
        free(first);
        return AIP_OK;
    }
    aip__sort_key *by_corr;
    aip_status s = sorted_call_keys(p, 0, &by_corr);
    if (!by_corr)
        return s;
    for (size_t i = 0; i < p->dev_tasks.n && !s; i++) {
        aip__device_task *t = &p->dev_tasks.v[i];
        if (!t->correlation)
            continue;
        size_t a = 0, b = n;
        while (a < b) {
            size_t mid = (a + b) / 2;
            if (by_corr[mid].key < t->correlation)
                a = mid + 1;
            else
                b = mid;
        }
        if (a < n && by_corr[a].key == t->correlation)
            t->api = (int64_t)by_corr[a].idx;
    }
    free(by_corr);
    return s;
}

static aip_status parents_of_process(aip__process *p)
{
    aip_status s = AIP_OK;
    for (size_t i = 0; i < p->dev_api.n && !s;) {
        size_t j = i;
        while (j < p->dev_api.n && p->dev_api.v[j].thread == p->dev_api.v[i].thread)
            j++;
        if (p->dev_api.v[i].thread < p->n_threads)
            s = parents_of_thread(p, p->dev_api.v[i].thread, i, j);
        i = j;
    }
    return s;
}

static aip_status link_process(aip__process *p)
{
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        aip__device_task *t = &p->dev_tasks.v[i];
        if (t->device < p->devices.n)
            p->devices.v[t->device].tasks++;
        if (t->queue < p->queues.n)
            p->queues.v[t->queue].tasks++;
    }
    return link_tasks(p);
}

/* `step` on every process, stopping at the first failure. */
static aip_status each_process(aip__model *m, aip_status (*step)(aip__process *))
{
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++)
        s = step(&m->procs[pi]);
    return s;
}

aip_status aip__device_sort_tasks(aip__model *m) { return each_process(m, sort_tasks); }

aip_status aip__device_sort_calls(aip__model *m) { return each_process(m, sort_calls); }

aip_status aip__device_parents(aip__model *m) { return each_process(m, parents_of_process); }

aip_status aip__device_link(aip__model *m) { return each_process(m, link_process); }
