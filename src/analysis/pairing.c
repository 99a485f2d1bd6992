/*
 * pairing.c — events that belong together across threads.
 *
 * mstx ranges started with aip_range_start() may end on another thread:
 * RANGE_START and RANGE_END records are matched by range_id within a
 * process (k-th start of an id with its k-th end, in time order); what has
 * no partner is counted, not fatal.
 *
 * Forward→backward links follow PyTorch's generateForwardBackwardLinks.
 * Autograd numbers ops per thread, so a sequence number alone names
 * nothing: a backward op (fwd_thread_id ≠ 0) belongs to the ops with its
 * sequence number on the thread its fwd_thread_id names, and to no other.
 * For each (forward thread, sequence number) the backward op with the
 * earliest start is linked from the forward op (fwd_thread_id 0) of that
 * thread and number that started last, no later than it.  When that forward
 * op was not recorded there is no flow: an op of another thread, or one
 * that started after the backward op, is not its forward op.
 */
#include "analysis_int.h"
#include "error.h"
#include "hash_table.h"

#include <stdlib.h>
#include <string.h>

static int cmp_point(const void *a, const void *b, void *ctx)
{
    const aip__range_point *v = ctx;
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    const aip__range_point *x = &v[i], *y = &v[j];
    if (x->range_id != y->range_id)
        return x->range_id < y->range_id ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return i < j ? -1 : i > j;
}

aip_status aip__ranges_pair(aip__process *p)
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
        aip__range_point *s = &p->range_starts.v[si[a]];
        const aip__range_point *e = &p->range_ends.v[ei[b]];
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

/* One (forward thread, sequence number) that has a backward op: its
 * earliest backward op, and the forward op of that thread and number that
 * started last no later than it. */
typedef struct cand {
    int64_t start;
    uint32_t thread, span, set;
} cand;

typedef struct seq_slot {
    uint64_t tid;
    int64_t seq;
    cand bwd, fwd;
} seq_slot;

typedef struct seq_map {
    seq_slot *slots;
    size_t n, cap;
    aip__ht index;            /* (tid, seq) → index of slots */
} seq_map;

static uint64_t slot_hash(const void *ctx, uint32_t i)
{
    const seq_slot *s = &((const seq_map *)ctx)->slots[i];
    return aip__hash_u64_pair(s->tid, (uint64_t)s->seq);
}

/* The slot of (tid, seq), NULL if none (then `pr` is where it goes). */
static seq_slot *map_find(const seq_map *m, uint64_t tid, int64_t seq, aip__ht_probe *pr)
{
    for (uint32_t i = aip__ht_first(&m->index, aip__hash_u64_pair(tid, (uint64_t)seq), pr);
         i != AIP__HT_NONE; i = aip__ht_next(&m->index, pr)) {
        seq_slot *s = &m->slots[i];
        if (s->seq == seq && s->tid == tid)
            return s;
    }
    return NULL;
}

/* A new slot for (tid, seq), where map_find() did not find it. */
static aip_status map_add(seq_map *m, aip__ht_probe *pr, uint64_t tid, int64_t seq,
                          seq_slot **out)
{
    if (aip__model_grow((void **)&m->slots, &m->cap, m->n + 1, sizeof *m->slots) ||
        aip__ht_add(&m->index, pr, slot_hash, m))
        return aip__fail(AIP_ERR_NOMEM, "no memory to pair forward/backward ops");
    seq_slot *s = &m->slots[m->n++];
    memset(s, 0, sizeof *s);
    s->tid = tid;
    s->seq = seq;
    *out = s;
    return AIP_OK;
}

/* The sequence number of an op span, or -1. */
static int64_t span_seq(const aip__thread *t, const aip__span *s, uint64_t *fwd)
{
    if (s->kind != AIP_SPAN_OP || !(s->opflags & AIP_OPF_SEQ) || !s->aux)
        return -1;
    const uint64_t *w = t->aux + (s->aux - 1);
    *fwd = (s->opflags & AIP_OPF_FWD) ? w[1] : 0;
    return (int64_t)w[0];
}

static int cmp_slot(const void *a, const void *b)
{
    const seq_slot *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static aip_status pair_process(aip__model *m, size_t pi, size_t *cap)
{
    const aip__process *p = &m->procs[pi];
    seq_map map = {0};
    aip_status rc = AIP_OK;
    size_t nt = p->n_threads < UINT32_MAX ? p->n_threads : UINT32_MAX;
    /* Pass 1: the earliest backward op of each (forward thread, number). */
    for (size_t ti = 0; ti < nt && !rc; ti++) {
        const aip__thread *t = &p->threads[ti];
        for (size_t i = 0; i < t->n_spans && i < UINT32_MAX && !rc; i++) {
            uint64_t fwd;
            int64_t seq = span_seq(t, &t->spans[i], &fwd);
            if (seq < 0 || !fwd)
                continue;
            aip__ht_probe pr;
            seq_slot *s = map_find(&map, fwd, seq, &pr);
            if (!s && (rc = map_add(&map, &pr, fwd, seq, &s)))
                break;
            if (!s->bwd.set || t->spans[i].start < s->bwd.start)
                s->bwd = (cand){t->spans[i].start, (uint32_t)ti, (uint32_t)i, 1};
        }
    }
    /* Pass 2: forward candidates, only for the keys seen above, so only on
     * the thread a backward op names (tids are unique in a process).  The
     * later span wins a tie: iteration is in span order. */
    for (size_t ti = 0; ti < nt && !rc && map.n; ti++) {
        const aip__thread *t = &p->threads[ti];
        for (size_t i = 0; i < t->n_spans && i < UINT32_MAX; i++) {
            uint64_t fwd;
            int64_t seq = span_seq(t, &t->spans[i], &fwd);
            if (seq < 0 || fwd)
                continue;
            aip__ht_probe pr;
            seq_slot *s = map_find(&map, t->tid, seq, &pr);
            int64_t st = t->spans[i].start;
            if (!s || st > s->bwd.start)
                continue;
            if (!s->fwd.set || st >= s->fwd.start)
                s->fwd = (cand){st, (uint32_t)ti, (uint32_t)i, 1};
        }
    }
    if (map.n)
        qsort(map.slots, map.n, sizeof *map.slots, cmp_slot);
    for (size_t k = 0; k < map.n && !rc; k++) {
        const seq_slot *s = &map.slots[k];
        const cand *f = &s->fwd;
        if (!f->set)
            continue;
        rc = aip__array_grow((void **)&m->flows, cap, m->n_flows + 1, sizeof *m->flows);
        if (!rc)
            m->flows[m->n_flows++] = (aip__flow){(uint32_t)pi, f->thread, s->bwd.thread, f->span,
                                                s->bwd.span};
    }
    free(map.slots);
    aip__ht_free(&map.index);
    return rc;
}

aip_status aip__flows_pair(aip__model *m)
{
    size_t cap = 0;
    m->n_flows = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        aip_status rc = pair_process(m, pi, &cap);
        if (rc)
            return rc;
    }
    return AIP_OK;
}
