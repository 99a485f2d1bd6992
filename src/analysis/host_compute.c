/*
 * host_compute.c — what the host step trace counts as computation
 * (docs/RESULT_LAYOUT.md "Host-side Computing"): the time in which some
 * thread was doing the program's work, as its annotations say, rather than
 * communicating or idle.  A thread computes inside
 *  - a top-level op (a framework op: aten::..., aip_op_begin),
 *  - an annotation (record_function, AIP_ANNOTATION_PUSH, a user scope)
 *    that is not a ProfilerStep#N and encloses no whole step (the loop
 *    around the steps is not work of its own),
 *  - an mstx / NVTX range,
 * unless the span is communication by its name (c10d::, nccl:, gloo:,
 * MPI_, hcom_, record_param_comms, torch.distributed), and minus the time
 * the same thread spends inside a blocking communication op (a blocking
 * MPI or c10d call inside an annotated block is waiting, not work).  A
 * non-blocking op (MPI_Iallreduce .. its completion) does not stop the
 * thread: the compute while it is outstanding is overlap.  Python
 * function spans (with_stack) are not annotations and count nowhere.
 * The result is one sorted list of disjoint intervals, the union over
 * every thread; the step trace clips it to each step (steps.c).
 */
#include "analysis_int.h"
#include "error.h"
#include "intervals.h"

#include <stdlib.h>
#include <string.h>

enum { CLASS_UNKNOWN = 0, CLASS_WORK = 1, CLASS_OTHER = 2 };

static int has_prefix(const char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    return n >= k && memcmp(s, p, k) == 0;
}

/* A span name that says communication (the runtimes' and frameworks'
 * prefixes, docs/RESULT_LAYOUT.md). */
int aip__comm_span_name(const char *s, size_t n)
{
    static const char *const prefixes[] = {"c10d::", "nccl:", "gloo:", "MPI_", "hcom_",
                                           "record_param_comms", "torch.distributed",
                                           "ProcessGroup"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (has_prefix(s, n, prefixes[i]))
            return 1;
    return 0;
}

/* Steps by start, to tell an annotation that encloses a whole step. */
typedef struct steps_by_start {
    int64_t *start, *end;
    size_t n;
} steps_by_start;

static int encloses_step(const steps_by_start *st, int64_t a, int64_t b)
{
    size_t lo = 0, hi = st->n;
    while (lo < hi) { /* first step starting at or after a */
        size_t mid = (lo + hi) / 2;
        if (st->start[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < st->n && st->start[i] <= b; i++)
        if (st->end[i] <= b)
            return 1;
    return 0;
}

static int span_is_work(const aip__process *p, const aip__span *s, uint8_t *cls,
                        const uint8_t *is_step, const steps_by_start *st)
{
    if (s->kind == AIP_SPAN_PYFUNC || (s->kind == AIP_SPAN_OP && !s->top_op))
        return 0;
    if (s->name < p->strings.n_ent) {
        if (is_step[s->name])
            return 0;
        if (cls[s->name] == CLASS_UNKNOWN) {
            size_t len;
            const char *name = aip__model_str(p, s->name, &len);
            cls[s->name] = aip__comm_span_name(name, len) ? CLASS_OTHER : CLASS_WORK;
        }
        if (cls[s->name] == CLASS_OTHER)
            return 0;
    }
    return s->kind == AIP_SPAN_OP || !encloses_step(st, s->start, s->end);
}

/* The process's blocking comm ops grouped by thread (counting sort):
 * thread ti's are ix[at[ti] .. at[ti + 1]). */
typedef struct by_thread {
    size_t *at, *ix;
} by_thread;

static int group_blocking(const aip__process *p, by_thread *b)
{
    b->at = calloc(p->n_threads + 2, sizeof *b->at);
    b->ix = malloc((p->comm_ops.n ? p->comm_ops.n : 1) * sizeof *b->ix);
    if (!b->at || !b->ix)
        return -1;
    for (size_t k = 0; k < p->comm_ops.n; k++) {
        const aip__comm_event *e = &p->comm_ops.v[k];
        if (e->thread < p->n_threads && !(e->flags & AIP_COMMF_NONBLOCKING))
            b->at[e->thread + 2]++;
    }
    for (size_t t = 2; t < p->n_threads + 2; t++)
        b->at[t] += b->at[t - 1];
    for (size_t k = 0; k < p->comm_ops.n; k++) {
        const aip__comm_event *e = &p->comm_ops.v[k];
        if (e->thread < p->n_threads && !(e->flags & AIP_COMMF_NONBLOCKING))
            b->ix[b->at[e->thread + 1]++] = k;
    }
    return 0;
}

/* The thread's work intervals (merged) minus its blocking comm ops. */
static int thread_work(const aip__process *p, size_t ti, uint8_t *cls, const uint8_t *is_step,
                       const steps_by_start *st, const by_thread *bt, aip__intervals *out,
                       aip__intervals *tmp)
{
    const aip__thread *t = &p->threads[ti];
    tmp->n = 0;
    for (size_t i = 0; i < t->n_spans; i++)
        if (span_is_work(p, &t->spans[i], cls, is_step, st) &&
            aip__intervals_push_sorted(tmp, 0, t->spans[i].start, t->spans[i].end))
            return -1;
    if (!tmp->n)
        return 0;
    if (tmp->unsorted)
        aip__intervals_merge(tmp, 0);
    size_t comm_from = tmp->n;
    for (size_t k = bt->at[ti]; k < bt->at[ti + 1]; k++) { /* by start, as comm_ops */
        const aip__comm_event *e = &p->comm_ops.v[bt->ix[k]];
        if (aip__intervals_push_sorted(tmp, comm_from, e->start, e->end))
            return -1;
    }
    if (tmp->unsorted)
        aip__intervals_merge(tmp, comm_from);
    /* work minus blocking comm: both lists sorted and disjoint */
    const int64_t *c = tmp->v + 2 * comm_from;
    size_t nc = tmp->n - comm_from, j = 0;
    for (size_t i = 0; i < comm_from; i++) {
        int64_t a = tmp->v[2 * i], b = tmp->v[2 * i + 1];
        while (j < nc && c[2 * j + 1] <= a)
            j++;
        for (size_t k = j; k < nc && c[2 * k] < b && a < b; k++) {
            if (aip__intervals_push(out, a, c[2 * k] < b ? c[2 * k] : b))
                return -1;
            a = c[2 * k + 1] > a ? c[2 * k + 1] : a;
        }
        if (aip__intervals_push(out, a, b))
            return -1;
    }
    return 0;
}

static int build_steps(const aip__model *m, steps_by_start *st)
{
    st->n = m->n_steps;
    st->start = malloc((st->n ? st->n : 1) * sizeof *st->start);
    st->end = malloc((st->n ? st->n : 1) * sizeof *st->end);
    if (!st->start || !st->end)
        return -1;
    aip__intervals v = {0};
    for (size_t i = 0; i < st->n; i++)
        if (aip__intervals_push(&v, m->steps[i].start, m->steps[i].end + 1)) {
            free(v.v);
            return -1;
        }
    aip__intervals_sort(v.v, v.n); /* not merged: each step stays */
    for (size_t i = 0; i < v.n; i++) {
        st->start[i] = v.v[2 * i];
        st->end[i] = v.v[2 * i + 1] - 1;
    }
    st->n = v.n;
    free(v.v);
    return 0;
}

aip_status aip__host_compute_intervals(const aip__model *m, int64_t **iv, size_t *n)
{
    *iv = NULL;
    *n = 0;
    steps_by_start st = {0};
    aip__intervals out = {0}, tmp = {0};
    int err = build_steps(m, &st);
    for (size_t pi = 0; pi < m->n_procs && !err; pi++) {
        const aip__process *p = &m->procs[pi];
        uint8_t *is_step = aip__step_name_flags(p);
        uint8_t *cls = calloc(p->strings.n_ent ? p->strings.n_ent : 1, 1);
        by_thread bt = {0};
        err = !is_step || !cls || group_blocking(p, &bt);
        for (size_t ti = 0; ti < p->n_threads && !err; ti++)
            err = thread_work(p, ti, cls, is_step, &st, &bt, &out, &tmp);
        free(is_step);
        free(cls);
        free(bt.at);
        free(bt.ix);
    }
    free(st.start);
    free(st.end);
    free(tmp.v);
    if (err) {
        free(out.v);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the host step trace");
    }
    aip__intervals_merge(&out, 0);
    if (!out.n) {
        free(out.v);
        return AIP_OK;
    }
    *iv = out.v;
    *n = out.n;
    return AIP_OK;
}
