/*
 * derive.c — from loaded events to the facts exporters print: spans in
 * start order with self times, the slices a timeline draws (nesting.c),
 * steps and step trace rows (from device tasks when there are any:
 * device_steps.c), paired ranges, fwdbwd flows, device activity in order
 * and linked to its ops (device_derive.c), the time extent and the
 * event/drop totals.
 */
#include "model.h"
#include "error.h"

#include <stdlib.h>

/* ProfilerStep#N is a record_function scope in torch (user_annotation),
 * whatever kind of record carried it; it never counts as a framework op. */
static void normalize_steps(aip__process *p, const uint8_t *is_step)
{
    for (size_t ti = 0; ti < p->n_threads; ti++) {
        aip__thread *t = &p->threads[ti];
        for (size_t i = 0; i < t->n_spans; i++) {
            aip__span *s = &t->spans[i];
            if (s->kind == AIP_SPAN_OP && s->name < p->strings.n_ent && is_step[s->name]) {
                s->kind = AIP_SPAN_ANNOTATION;
                s->aux = 0;
                s->opflags = 0;
            }
        }
    }
}

static void extend(aip__model *m, int *have, int64_t a, int64_t b)
{
    if (!*have) {
        m->first_ns = a;
        m->last_ns = b;
        *have = 1;
        return;
    }
    if (a < m->first_ns)
        m->first_ns = a;
    if (b > m->last_ns)
        m->last_ns = b;
}

static void compute_extent(aip__model *m)
{
    int have = 0;
    m->first_ns = m->last_ns = 0;
    m->n_events = 0;
    m->dropped_events = 0;
    m->invalid_utf8_texts = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        m->n_events += p->events;
        m->dropped_events += p->dropped;
        m->invalid_utf8_texts += p->invalid_utf8_strings;
        for (size_t ti = 0; ti < p->n_threads; ti++) {
            const aip__thread *t = &p->threads[ti];
            /* Sorted by start: the first span starts first; ends need a scan. */
            for (size_t i = 0; i < t->n_spans; i++)
                extend(m, &have, t->spans[i].start, t->spans[i].end);
        }
        for (size_t i = 0; i < p->marks.n; i++)
            extend(m, &have, p->marks.v[i].ts, p->marks.v[i].ts);
        for (size_t i = 0; i < p->range_starts.n; i++)
            extend(m, &have, p->range_starts.v[i].ts, p->range_starts.v[i].ts);
        for (size_t i = 0; i < p->range_ends.n; i++)
            extend(m, &have, p->range_ends.v[i].ts, p->range_ends.v[i].ts);
        for (size_t i = 0; i < p->memory.n; i++)
            extend(m, &have, p->memory.v[i].ts, p->memory.v[i].ts);
        for (size_t i = 0; i < p->gc.n; i++)
            extend(m, &have, p->gc.v[i].start, p->gc.v[i].end);
        for (size_t i = 0; i < p->dev_tasks.n; i++)
            extend(m, &have, p->dev_tasks.v[i].start, p->dev_tasks.v[i].end);
        for (size_t i = 0; i < p->dev_api.n; i++)
            extend(m, &have, p->dev_api.v[i].start, p->dev_api.v[i].end);
        for (size_t i = 0; i < p->dev_memory.n; i++)
            extend(m, &have, p->dev_memory.v[i].ts, p->dev_memory.v[i].ts);
        for (size_t i = 0; i < p->comm_ops.n; i++)
            extend(m, &have, p->comm_ops.v[i].start, p->comm_ops.v[i].end);
        for (size_t i = 0; i < p->osrt.n; i++)
            extend(m, &have, p->osrt.v[i].start, p->osrt.v[i].end);
    }
}

aip_status aip__model_derive(aip__model *m)
{
    if (m->derived)
        return AIP_OK;
    size_t step_cap = 0;
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        aip__process *p = &m->procs[pi];
        uint8_t *is_step = aip__step_name_flags(p);
        if (!is_step)
            return aip__fail(AIP_ERR_NOMEM, "no memory for step names");
        normalize_steps(p, is_step);
        for (size_t ti = 0; ti < p->n_threads && !s; ti++) {
            s = aip__spans_sort(p->threads[ti].spans, p->threads[ti].n_spans);
            if (!s)
                s = aip__spans_nest(&p->threads[ti]);
            if (!s)
                s = aip__slices_build(&p->threads[ti], &p->split_slices);
        }
        if (!s)
            s = aip__steps_add(m, p, is_step, &step_cap);
        free(is_step);
        if (!s)
            s = aip__ranges_pair(p);
        aip__comm_sort(p);
        aip__osrt_sort(p);
    }
    if (s)
        return s;
    aip__steps_finish(m);
    s = aip__device_derive(m);
    if (s)
        return s;
    compute_extent(m);
    s = aip__flows_pair(m);
    if (!s)
        s = aip__step_trace_compute(m);
    if (!s)
        s = aip__device_steps(m);
    if (!s)
        s = aip__memory_derive(m);
    if (!s)
        m->derived = 1;
    return s;
}
