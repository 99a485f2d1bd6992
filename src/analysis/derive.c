/*
 * derive.c — from loaded events to the facts exporters print: spans in
 * start order with self times, the slices a timeline draws (nesting.c),
 * steps and step trace rows (from device tasks when there are any:
 * device_steps.c), paired ranges, fwdbwd flows, device activity in order
 * and linked to its ops (device_derive.c), the time extent and the
 * event/drop totals.
 *
 * A profile with device activity has two sides that share little until
 * the end: sorting its device calls and tasks needs nothing of the host
 * side, and the device step trace nothing that pairing fwdbwd flows
 * makes.  Those run on other threads beside the host side's work (a
 * second core takes them off the serial part of an analysis, which comes
 * before the exporters can start); each side writes only its own records,
 * so the model is the same whatever the threads' timing.
 */
#include "thread.h"
#include "analysis_int.h"
#include "device_tracks.h"
#include "error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* One step of derive run on a second thread, or on this one when no
 * thread can be had; its error message kept for the caller's thread
 * (aip_last_error() is per thread). */
typedef struct beside {
    aip_status (*fn)(aip__model *m);
    aip__model *m;
    pthread_t th;
    int started;
    aip_status status;
    char error[512];
} beside;

static void *beside_main(void *arg)
{
    beside *b = arg;
    b->status = b->fn(b->m);
    if (b->status)
        snprintf(b->error, sizeof b->error, "%s", aip_last_error());
    return NULL;
}

/* The same, run here and now (a small profile: not worth a thread). */
static void beside_run(beside *b, aip_status (*fn)(aip__model *m), aip__model *m)
{
    *b = (beside){.fn = fn, .m = m};
    beside_main(b);
}

static void beside_start(beside *b, aip_status (*fn)(aip__model *m), aip__model *m)
{
    *b = (beside){.fn = fn, .m = m};
    b->started = aip__thread_create(&b->th, NULL, beside_main, b) == 0;
    if (!b->started)
        beside_main(b);
}

/* Its result, after waiting for it; `s` (this thread's) comes first. */
static aip_status beside_join(beside *b, aip_status s)
{
    if (b->started)
        pthread_join(b->th, NULL);
    b->started = 0;
    if (!s && b->status)
        s = aip__fail(b->status, "%s", b->error);
    return s;
}

static int any_device_calls(const aip__model *m)
{
    for (size_t pi = 0; pi < m->n_procs; pi++)
        if (m->procs[pi].dev_api.n > 1)
            return 1;
    return 0;
}

/* ProfilerStep#N is a record_function scope in torch (user_annotation),
 * whatever kind of record carried it; it never counts as a framework op. */
static void normalize_steps(const aip__process *p, aip__thread *t, const uint8_t *is_step)
{
    for (size_t i = 0; i < t->n_spans; i++) {
        aip__span *s = &t->spans[i];
        if (s->kind == AIP_SPAN_OP && s->name < p->strings.n_ent && is_step[s->name]) {
            s->kind = AIP_SPAN_ANNOTATION;
            s->aux = 0;
            s->opflags = 0;
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
    m->flight_overwritten = 0;
    m->dev_bad_records = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        m->n_events += p->events;
        m->dropped_events += p->dropped;
        m->flight_overwritten += p->flight_overwritten;
        m->flight_dump |= p->has_flight;
        m->invalid_utf8_texts += p->invalid_utf8_strings;
        m->dev_bad_records += p->dev_bad_records;
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

/* The threads of one process sorted, nested and cut into slices by a few
 * workers: each thread's spans are its own, so the threads are independent
 * work, and on a big profile this is most of the host side.  Each worker
 * takes the next thread not yet taken; the count of split slices is a sum,
 * the same in any order. */
#define MAX_WORKERS 8

typedef struct thread_pool {
    aip__process *p;
    const uint8_t *is_step;   /* aip__step_name_flags() of p */
    pthread_mutex_t lock;
    size_t next;              /* under lock */
    uint64_t pieces;          /* under lock */
    aip_status status;        /* under lock: the first failure */
    char error[512];
} thread_pool;

static void *thread_pool_run(void *arg)
{
    thread_pool *tp = arg;
    for (;;) {
        pthread_mutex_lock(&tp->lock);
        size_t ti = tp->status ? tp->p->n_threads : tp->next++;
        pthread_mutex_unlock(&tp->lock);
        if (ti >= tp->p->n_threads)
            return NULL;
        aip__thread *t = &tp->p->threads[ti];
        uint64_t pieces = 0;
        normalize_steps(tp->p, t, tp->is_step);
        aip_status s = aip__spans_sort(t->spans, t->n_spans);
        if (!s)
            s = aip__spans_nest(t);
        if (!s)
            s = aip__slices_build(t, &pieces);
        pthread_mutex_lock(&tp->lock);
        tp->pieces += pieces;
        if (s && !tp->status) {
            tp->status = s;
            snprintf(tp->error, sizeof tp->error, "%s", aip_last_error());
        }
        pthread_mutex_unlock(&tp->lock);
    }
}

/* Fewer spans than this (a short trace): starting a thread costs more
 * than it saves. */
#define PARALLEL_FROM 65536

static size_t spans_of(const aip__process *p)
{
    size_t n = 0;
    for (size_t ti = 0; ti < p->n_threads; ti++)
        n += p->threads[ti].n_spans;
    return n;
}

static aip_status threads_nest(aip__process *p, const uint8_t *is_step)
{
    thread_pool tp = {.p = p, .is_step = is_step};
    pthread_mutex_init(&tp.lock, NULL);
    int cpus = spans_of(p) < PARALLEL_FROM ? 1 : aip__cpus_usable();
    size_t n = cpus > MAX_WORKERS ? MAX_WORKERS : (size_t)cpus, started = 0;
    if (n > p->n_threads)
        n = p->n_threads;
    pthread_t th[MAX_WORKERS];
    while (started + 1 < n && aip__thread_create(&th[started], NULL, thread_pool_run, &tp) == 0)
        started++; /* no thread to be had: fewer, this one at least */
    thread_pool_run(&tp);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&tp.lock);
    p->split_slices += tp.pieces;
    return tp.status ? aip__fail(tp.status, "%s", tp.error) : AIP_OK;
}

static aip_status host_side(aip__model *m)
{
    size_t step_cap = 0;
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        aip__process *p = &m->procs[pi];
        uint8_t *is_step = aip__step_name_flags(p);
        if (!is_step)
            return aip__fail(AIP_ERR_NOMEM, "no memory for step names");
        s = threads_nest(p, is_step);
        if (!s)
            s = aip__steps_add(m, p, is_step, &step_cap);
        free(is_step);
        if (!s)
            s = aip__ranges_pair(p);
        aip__comm_sort(p);
        aip__osrt_sort(p);
    }
    if (!s)
        aip__steps_finish(m);
    return s;
}

aip_status aip__model_derive(aip__model *m)
{
    if (m->derived)
        return AIP_OK;
    beside b, tasks;
    int calls = any_device_calls(m), device = aip__model_has_device_tasks(m);
    /* the calls and the tasks sorted while the host side is derived, the
     * calls' parents found when both the calls and the spans are ready */
    if (calls)
        beside_start(&b, aip__device_sort_calls, m);
    if (device)
        beside_start(&tasks, aip__device_sort_tasks, m);
    aip_status s = host_side(m);
    if (calls)
        s = beside_join(&b, s);
    if (!s)
        s = aip__device_parents(m);
    if (device)
        s = beside_join(&tasks, s);
    if (!s && !device)
        s = aip__device_sort_tasks(m); /* memory records without tasks */
    if (!s)
        s = aip__device_link(m);
    if (s)
        return s;
    compute_extent(m);
    /* The step trace beside the fwdbwd flows: it reads the spans, steps
     * and comm ops and writes only the step rows, the flows only read the
     * spans.  With device tasks it is computed from them (device_steps.c
     * replaces the host rows), so the host rows are not made at all.
     * Without, the memory records are derived meanwhile too (the host
     * step trace reads none of them). */
    size_t spans = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        spans += spans_of(&m->procs[pi]);
    if (device || spans >= PARALLEL_FROM)
        beside_start(&b, device ? aip__device_steps : aip__step_trace_compute, m);
    else
        beside_run(&b, aip__step_trace_compute, m);
    s = aip__flows_pair(m);
    aip_status mem = s || device ? AIP_OK : aip__memory_derive(m);
    s = beside_join(&b, s);
    if (!s && device)
        s = aip__memory_derive(m);
    else if (!s)
        s = mem;
    if (!s && device && !m->dev_share)
        m->dev_share = aip__dev_share_new(m->n_procs); /* NULL: no sharing, same outputs */
    if (!s)
        m->derived = 1;
    return s;
}
