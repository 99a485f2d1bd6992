/*
 * pairing.c — events that belong together across threads.
 *
 * mstx ranges started with aip_range_start() may end on another thread:
 * RANGE_START and RANGE_END records are matched by range_id within a
 * process (k-th start of an id with its k-th end, in time order); what has
 * no partner is counted, not fatal.
 *
 * Forward→backward links follow PyTorch's generateForwardBackwardLinks: ops
 * sharing an autograd sequence number; the backward op (fwd_thread_id ≠ 0)
 * with the earliest start is linked from the forward op (fwd_thread_id 0)
 * that started last before it — preferring forward ops on the thread the
 * backward op names, since sequence numbers are per thread in autograd.
 */
#include "model.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

static int cmp_point(const void *a, const void *b, void *ctx)
{
    const aip_range_point *v = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const aip_range_point *x = &v[i], *y = &v[j];
    if (x->range_id != y->range_id)
        return x->range_id < y->range_id ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return i < j ? -1 : i > j;
}

aip_status aip__ranges_pair(aip_process *p)
{
    size_t ns = p->range_starts.n, ne = p->range_ends.n;
    p->unmatched_range_starts = ns;
    p->unmatched_range_ends = ne;
    if (!ns && !ne)
        return AIP_OK;
    if (ns > UINT32_MAX || ne > UINT32_MAX)
        return aip__fail(AIP_ERR_LIMIT, "too many mstx ranges in %s", p->source);
    uint32_t *si = malloc((ns + 1) * sizeof *si), *ei = malloc((ne + 1) * sizeof *ei);
    if (!si || !ei) {
        free(si);
        free(ei);
        return aip__fail(AIP_ERR_NOMEM, "no memory to pair mstx ranges");
    }
    for (uint32_t i = 0; i < ns; i++)
        si[i] = i;
    for (uint32_t i = 0; i < ne; i++)
        ei[i] = i;
    qsort_r(si, ns, sizeof *si, cmp_point, p->range_starts.v);
    qsort_r(ei, ne, sizeof *ei, cmp_point, p->range_ends.v);
    size_t a = 0, b = 0;
    while (a < ns && b < ne) {
        aip_range_point *s = &p->range_starts.v[si[a]];
        const aip_range_point *e = &p->range_ends.v[ei[b]];
        if (s->range_id < e->range_id) {
            a++;
        } else if (s->range_id > e->range_id) {
            b++;
        } else {
            s->match = (int32_t)ei[b];
            p->unmatched_range_starts--;
            p->unmatched_range_ends--;
            a++;
            b++;
        }
    }
    free(si);
    free(ei);
    return AIP_OK;
}

/* ---- fwdbwd ------------------------------------------------------- */

typedef struct seq_op {
    int64_t seq;
    int64_t start;
    uint32_t thread;
    uint32_t span;
} seq_op;

static int cmp_seq_op(const void *a, const void *b)
{
    const seq_op *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->span < y->span ? -1 : x->span > y->span;
}

static void op_of(const aip_process *p, const seq_op *o, aip_op_fields *f)
{
    const aip_thread *t = &p->threads[o->thread];
    aip__model_op_fields(t, &t->spans[o->span], f);
}

static aip_status link_group(aip_model *m, size_t pi, const seq_op *g, size_t n, size_t *cap)
{
    const aip_process *p = &m->procs[pi];
    aip_op_fields f;
    const seq_op *bwd = NULL;
    uint64_t want_tid = 0;
    for (size_t i = 0; i < n && !bwd; i++) { /* sorted by start: first backward op */
        op_of(p, &g[i], &f);
        if (f.fwd_thread_id) {
            bwd = &g[i];
            want_tid = f.fwd_thread_id;
        }
    }
    if (!bwd)
        return AIP_OK;
    int same_thread_exists = 0;
    for (size_t i = 0; i < n; i++) {
        op_of(p, &g[i], &f);
        if (!f.fwd_thread_id && p->threads[g[i].thread].tid == want_tid)
            same_thread_exists = 1;
    }
    const seq_op *fwd = NULL, *fwd_any = NULL;
    for (size_t i = 0; i < n; i++) {
        op_of(p, &g[i], &f);
        if (f.fwd_thread_id)
            continue;
        if (same_thread_exists && p->threads[g[i].thread].tid != want_tid)
            continue;
        fwd_any = &g[i]; /* last by start overall */
        if (g[i].start <= bwd->start)
            fwd = &g[i];
    }
    if (!fwd)
        fwd = fwd_any;
    if (!fwd)
        return AIP_OK;
    aip_status s = aip__model_grow((void **)&m->flows, cap, m->n_flows + 1, sizeof *m->flows);
    if (s)
        return s;
    m->flows[m->n_flows++] = (aip_flow){(uint32_t)pi, fwd->thread, bwd->thread, fwd->span,
                                        bwd->span};
    return AIP_OK;
}

aip_status aip__flows_pair(aip_model *m)
{
    size_t cap = 0;
    m->n_flows = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip_process *p = &m->procs[pi];
        size_t n = 0, cap_ops = 0;
        seq_op *ops = NULL;
        for (size_t ti = 0; ti < p->n_threads && ti < UINT32_MAX; ti++) {
            const aip_thread *t = &p->threads[ti];
            for (size_t i = 0; i < t->n_spans && i < UINT32_MAX; i++) {
                const aip_span *s = &t->spans[i];
                if (s->kind != AIP_SPAN_OP || !(s->opflags & AIP_OPF_SEQ) || !s->aux)
                    continue;
                int64_t seq = (int64_t)t->aux[s->aux - 1];
                if (seq < 0)
                    continue;
                aip_status rc = aip__model_grow((void **)&ops, &cap_ops, n + 1, sizeof *ops);
                if (rc) {
                    free(ops);
                    return rc;
                }
                ops[n++] = (seq_op){seq, s->start, (uint32_t)ti, (uint32_t)i};
            }
        }
        if (n)
            qsort(ops, n, sizeof *ops, cmp_seq_op);
        aip_status rc = AIP_OK;
        for (size_t i = 0; i < n && !rc;) {
            size_t j = i + 1;
            while (j < n && ops[j].seq == ops[i].seq)
                j++;
            rc = link_group(m, pi, ops + i, j - i, &cap);
            i = j;
        }
        free(ops);
        if (rc)
            return rc;
    }
    return AIP_OK;
}
