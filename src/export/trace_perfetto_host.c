/*
 * trace_perfetto_host.c — a process's own part of trace.perfetto-trace,
 * as trace_view.json has it (trace_json.c): the process (name, label CPU,
 * sort index 0) and its threads (named, sorted by tid) with their slices
 * (ops, annotations, mstx ranges, Python functions: the nested slices of
 * nesting.c), one sequence per thread; then on one more sequence the mstx
 * marks, the mstx start/end ranges (on lanes of their own: they overlap
 * without nesting, first fit in start order as the communication layer
 * does), the memory instants and the "Memory (<device>)" counters; then
 * the "Python GC" layer.
 *
 * Flows are ids on the slices they join (flow_ids where one leaves,
 * terminating_flow_ids where it ends): fwdbwd (forward op → backward op)
 * and op → device task.  They name spans, while a thread's track draws its
 * slices (a span split so that slices nest is several): a flow is put on
 * the slice that starts at its span's start with its name and is not a
 * continuing piece.
 */
#include "trace_perfetto_int.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct flow_end {
    uint32_t thread, name;
    int64_t start;
    uint64_t id;
    uint8_t in;               /* ends here (else leaves) */
    uint8_t used;
} flow_end;

static int cmp_flow_end(const void *a, const void *b)
{
    const flow_end *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int span_ok(const aip__process *p, uint32_t ti, size_t si)
{
    return ti < p->n_threads && si < p->threads[ti].n_spans;
}

/* Every flow end on p's threads, sorted by thread and start. */
static flow_end *flow_plan(aip__pf *w, size_t *n_out)
{
    const aip__process *p = w->p;
    size_t pi = (size_t)(p - w->m->procs), n = 0, cap = 0;
    flow_end *v = NULL;
#define ADD(th, sp, fid, dir)                                                          \
    do {                                                                               \
        if (aip__model_grow((void **)&v, &cap, n + 1, sizeof *v))                      \
            goto nomem;                                                                \
        const aip__span *s_ = &p->threads[th].spans[sp];                               \
        v[n++] = (flow_end){(th), s_->name, s_->start, (fid), (dir), 0};               \
    } while (0)
    for (size_t i = 0; i < w->m->n_flows; i++) {
        const aip__flow *f = &w->m->flows[i];
        if (f->process != pi || !span_ok(p, f->fwd_thread, f->fwd_span) ||
            !span_ok(p, f->bwd_thread, f->bwd_span))
            continue;
        ADD(f->fwd_thread, f->fwd_span, i + 1, 0);
        ADD(f->bwd_thread, f->bwd_span, i + 1, 1);
    }
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        const aip__device_task *k = &p->dev_tasks.v[i];
        if (k->api < 0 || (size_t)k->api >= p->dev_api.n)
            continue;
        const aip__device_call *c = &p->dev_api.v[k->api];
        if (c->parent_span >= 0 && span_ok(p, c->parent_thread, (size_t)c->parent_span))
            ADD(c->parent_thread, (size_t)c->parent_span, aip__pf_op_flow(w, i), 0);
    }
#undef ADD
    if (n)
        qsort(v, n, sizeof *v, cmp_flow_end);
    *n_out = n;
    return v;
nomem:
    free(v);
    *n_out = 0;
    if (!w->status)
        w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's flows");
    return NULL;
}

typedef struct id_list {
    uint64_t *v;
    size_t n, cap;
} id_list;

static void id_add(aip__pf *w, id_list *l, uint64_t id)
{
    if (aip__model_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's flows");
        return;
    }
    l->v[l->n++] = id;
}

static const uint8_t span_cat[4] = {
    [AIP_SPAN_OP] = AIP_PF_CAT_CPU_OP, [AIP_SPAN_ANNOTATION] = AIP_PF_CAT_USER_ANNOTATION,
    [AIP_SPAN_RANGE] = AIP_PF_CAT_MSTX, [AIP_SPAN_PYFUNC] = AIP_PF_CAT_PYTHON_FUNCTION};

/* A span still open when a flight recorder dumped: named "<name>
 * (unfinished)" (written inline: rare), into *label (reused, to free). */
static void unfinished_name(aip__pf *w, const aip__span *s, aip__pf_ev *e, char **label)
{
    static const char tail[] = " (unfinished)";
    size_t n;
    const char *name = aip__model_str(w->p, s->name, &n);
    char *v = realloc(*label, n + sizeof tail);
    if (!v) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's names");
        return;
    }
    memcpy(v, name, n);
    memcpy(v + n, tail, sizeof tail);
    *label = v;
    e->name = 0;
    e->lit = v;
    e->lit_len = n + sizeof tail - 1;
}

/* Thread ti's slices on its own sequence; `fe` its flow ends (sorted). */
static void thread_slices(aip__pf *w, uint32_t ti, uint64_t track, flow_end *fe, size_t n_fe)
{
    const aip__thread *t = &w->p->threads[ti];
    size_t n, cur = 0;
    const aip__span *sl = aip__thread_slices(t, &n);
    id_list out = {0}, in = {0};
    aip__pf_seq(w, track);
    aip__pf_arg args[AIP_PF_MAX_ARGS];
    char *label = NULL;
    for (size_t i = 0; i < n && !w->status; i++) {
        const aip__span *s = &sl[i];
        aip__pf_ev e = {.name = s->name, .cat = span_cat[s->kind], .args = args};
        if (!s->name)
            e.lit = "";
        e.n_args = aip__pf_span_args(t, s, args);
        if (s->unfinished) /* its name says so, as trace_view.json's */
            unfinished_name(w, s, &e, &label);
        while (cur < n_fe && fe[cur].start < s->start)
            cur++; /* no slice of its own (cannot happen: every span starts one) */
        if (cur < n_fe && fe[cur].start == s->start && !s->piece) {
            out.n = in.n = 0;
            for (size_t j = cur; j < n_fe && fe[j].start == s->start; j++)
                if (!fe[j].used && fe[j].name == s->name) {
                    fe[j].used = 1;
                    id_add(w, fe[j].in ? &in : &out, fe[j].id);
                }
            e.out = out.v;
            e.n_out = out.n;
            e.in = in.v;
            e.n_in = in.n;
        }
        aip__pf_slice(w, &e, s->start, s->end);
    }
    free(label);
    free(out.v);
    free(in.v);
}

/* Process and threads; the thread tracks' uuids into `tracks`.
 * @return the process track. */
static uint64_t threads(aip__pf *w, uint64_t *tracks)
{
    const aip__process *p = w->p;
    char name[48];
    const char *pname = p->program && p->program[0] ? p->program : NULL;
    if (!pname) {
        snprintf(name, sizeof name, "Process %lld", (long long)p->pid);
        pname = name;
    }
    uint64_t proc = aip__pf_process_track(w, p->pid, pname, strlen(pname), "CPU", 0);
    for (size_t i = 0; i < p->n_threads; i++) {
        const aip__thread *t = &p->threads[i];
        size_t n;
        if (t->name && t->name < p->strings.n_ent && p->strings.ent[t->name].defined) {
            const char *s = aip__model_str(p, t->name, &n);
            tracks[i] = aip__pf_thread_track(w, proc, p->pid, t->tid, s, n);
        } else {
            n = (size_t)snprintf(name, sizeof name, "Thread %llu", (unsigned long long)t->tid);
            tracks[i] = aip__pf_thread_track(w, proc, p->pid, t->tid, name, n);
        }
    }
    size_t n_fe = 0;
    flow_end *fe = flow_plan(w, &n_fe);
    size_t lo = 0;
    for (uint32_t i = 0; i < p->n_threads && !w->status; i++) {
        size_t hi = lo;
        while (hi < n_fe && fe[hi].thread == i)
            hi++;
        thread_slices(w, i, tracks[i], fe + lo, hi - lo);
        lo = hi;
    }
    free(fe);
    return proc;
}

/* ---- marks, ranges, memory ------------------------------------------------ */

/* By start, then recorded order. */
static int cmp_range_ptr(const void *a, const void *b)
{
    const aip__range_point *x = *(const aip__range_point *const *)a,
                           *y = *(const aip__range_point *const *)b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void ranges(aip__pf *w, uint64_t proc_track, const uint64_t *tracks)
{
    const aip__process *p = w->p;
    size_t n = p->range_starts.n;
    if (!n)
        return;
    const aip__range_point **v = malloc(n * sizeof *v);
    int64_t *lane_end = NULL;
    uint64_t *lane_track = NULL;
    size_t n_lanes = 0, cap_end = 0, cap_track = 0;
    if (!v) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's ranges");
        return;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = &p->range_starts.v[i];
    qsort(v, n, sizeof *v, cmp_range_ptr);
    for (size_t i = 0; i < n && !w->status; i++) {
        const aip__range_point *s = v[i];
        aip__pf_ev e = {.name = s->name, .cat = AIP_PF_CAT_MSTX, .lit = ""};
        if (s->match < 0) { /* no end recorded: an instant, as trace_view.json */
            e.track = tracks[s->thread];
            aip__pf_instant(w, &e, s->ts);
            continue;
        }
        int64_t end = p->range_ends.v[s->match].ts;
        size_t l = 0;
        while (l < n_lanes && lane_end[l] > s->ts)
            l++;
        if (l == n_lanes) {
            char name[32];
            size_t nl = l ? (size_t)snprintf(name, sizeof name, "mstx ranges (%zu)", l + 1)
                          : (size_t)snprintf(name, sizeof name, "mstx ranges");
            if (aip__model_grow((void **)&lane_end, &cap_end, l + 1, sizeof *lane_end) ||
                aip__model_grow((void **)&lane_track, &cap_track, l + 1, sizeof *lane_track)) {
                w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's ranges");
                break;
            }
            lane_track[l] = aip__pf_named_track(w, proc_track, name, nl, (int64_t)(1u << 30) + (int64_t)l);
            n_lanes++;
        }
        lane_end[l] = end < s->ts ? s->ts : end;
        e.track = lane_track[l];
        aip__pf_slice(w, &e, s->ts, end);
    }
    free(v);
    free(lane_end);
    free(lane_track);
}

typedef struct mem_tracks {
    uint16_t key;             /* type << 8 | (uint8_t)index */
    uint64_t alloc, reserved;
} mem_tracks;

static void memory(aip__pf *w, uint64_t proc_track, const uint64_t *tracks)
{
    const aip__process *p = w->p;
    mem_tracks set[64];
    size_t n_set = 0;
    for (size_t j = 0; j < p->memory.n && !w->status; j++) {
        const aip__mem_ev *m = &p->memory.v[p->mem_order ? p->mem_order[j] : j];
        aip__pf_ev e = {.track = tracks[m->thread], .lit = "[memory]", .lit_len = 8,
                        .cat = AIP_PF_CAT_CPU_INSTANT};
        aip__pf_instant(w, &e, m->ts);
        uint16_t key = (uint16_t)(m->device_type << 8 | (uint8_t)m->device_index);
        size_t k = 0;
        while (k < n_set && set[k].key != key)
            k++;
        if (k == n_set) {
            if (n_set == sizeof set / sizeof set[0])
                k = 0; /* device types × indices are far fewer: not reached */
            else
                n_set++;
            char dev[40], name[96];
            aip__tj_memory_device(dev, sizeof dev, m->device_type, m->device_index);
            snprintf(name, sizeof name, "Memory (%s) Total Allocated", dev);
            set[k].key = key;
            set[k].alloc = aip__pf_counter_track(w, proc_track, name);
            snprintf(name, sizeof name, "Memory (%s) Total Reserved", dev);
            set[k].reserved = aip__pf_counter_track(w, proc_track, name);
        }
        aip__pf_counter_i(w, set[k].alloc, m->ts, m->total_allocated);
        aip__pf_counter_i(w, set[k].reserved, m->ts, m->total_reserved);
    }
}

static void gc_layer(aip__pf *w)
{
    const aip__process *p = w->p;
    if (!p->gc.n)
        return;
    uint64_t layer = aip__pf_layer(w, 1, AIP__TJ_HOST_DEVICE, "Python GC", "CPU");
    uint64_t *tr = calloc(p->n_threads ? p->n_threads : 1, sizeof *tr);
    if (!tr) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the GC layer");
        return;
    }
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < p->gc.n && !w->status; i++) {
        const aip__gc_ev *g = &p->gc.v[i];
        if (g->thread >= p->n_threads)
            continue;
        if (!tr[g->thread])
            tr[g->thread] = aip__pf_named_track(w, layer, "Python GC", 9,
                                                (int64_t)p->threads[g->thread].tid);
        aip__pf_ev e = {.track = tr[g->thread], .lit = "GC", .lit_len = 2,
                        .cat = AIP_PF_CAT_GC};
        aip__pf_slice(w, &e, g->start, g->end);
    }
    free(tr);
}

void aip__pf_host(aip__pf *w)
{
    const aip__process *p = w->p;
    uint64_t *tracks = calloc(p->n_threads ? p->n_threads : 1, sizeof *tracks);
    if (!tracks) {
        w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's threads");
        return;
    }
    uint64_t proc_track = threads(w, tracks);
    if (!w->status && (p->marks.n || p->range_starts.n || p->memory.n)) {
        aip__pf_seq(w, 0); /* one sequence each: each is in time order */
        for (size_t i = 0; i < p->marks.n && !w->status; i++) {
            const aip__mark_ev *k = &p->marks.v[i];
            aip__pf_ev e = {.track = tracks[k->thread], .name = k->name, .lit = "",
                            .cat = AIP_PF_CAT_MSTX};
            aip__pf_instant(w, &e, k->ts);
        }
        aip__pf_seq(w, 0);
        ranges(w, proc_track, tracks);
        aip__pf_seq(w, 0);
        memory(w, proc_track, tracks);
    }
    free(tracks);
    gc_layer(w);
}
