/*
 * memory.c — what the raw MEMORY records say once put together: their
 * time order, which free releases which allocation, which op was running
 * on the recording thread, a category, and the peak totals per device.
 *
 * A record carries (time, thread, address, ±bytes, running totals, device);
 * nothing ties it to a tensor.  So only what follows from those fields is
 * derived (docs/MEMORY.md):
 *
 * - pairs: per (device, address), a free releases the latest allocation
 *   not yet released; a free with none is memory that existed before the
 *   trace (torch's PREEXISTING); an allocation with none lives past it.
 * - op name: the innermost op or record_function scope open on the
 *   record's thread at its time (torch_npu's operator_memory attribution).
 * - categories, torch's vocabulary, only where the data decides them:
 *   TEMPORARY   allocated and freed on the same thread inside the same
 *               top-level op (torch: an intermediate of one data-flow node);
 *   AUTOGRAD_DETAIL allocated inside a backward-scope op (autograd node)
 *               and freed before the thread's backward pass ends, i.e.
 *               before its next top-level op that runs no autograd node —
 *               a parameter gradient must outlive the backward pass (the
 *               optimizer reads it afterwards), so this is not one;
 *   ACTIVATION  allocated outside backward scope and released inside a
 *               backward-scope op: what the forward pass saved for the
 *               backward pass (torch: a tensor the autograd graph keeps);
 *   UNKNOWN     everything else.  PARAMETER, OPTIMIZER_STATE, INPUT and
 *               GRADIENT need to know which tensor a block holds, which
 *               only the framework side knows (labels, below).
 * - labels: a category the framework recorded for the block at an address
 *   (proposed MEMORY_CATEGORY record) overrides the above for the block
 *   live there at the label's time; with no allocation of it in the trace,
 *   the label describes a block that existed before (torch: PREEXISTING).
 */
#include "analysis_int.h"
#include "error.h"
#include "hash_table.h"

#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

const char *aip__mem_category_name(unsigned c)
{
    static const char *const names[AIP_MEMCAT_COUNT] = {
        "PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY",
        "ACTIVATION", "GRADIENT", "AUTOGRAD_DETAIL", "UNKNOWN"};
    return c < AIP_MEMCAT_COUNT ? names[c] : "UNKNOWN";
}

static int cmp_by_time(const void *a, const void *b, void *ctx)
{
    const aip__mem_ev *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (v[x].ts != v[y].ts)
        return v[x].ts < v[y].ts ? -1 : 1;
    return x < y ? -1 : x > y; /* file order on equal times */
}

/* ---- op context: one sweep per thread over its spans and records ------ */

typedef struct sweep {
    const aip__thread *t;
    size_t *stk;
    size_t depth;
    size_t top_depth;        /* stack depth of the outermost op, NONE if none */
    int n_bwd;               /* backward-scope ops on the stack */
} sweep;

static int is_bwd(const aip__span *s) { return s->kind == AIP_SPAN_OP && (s->opflags & AIP_OPF_BACKWARD); }

static void pop(sweep *w)
{
    const aip__span *s = &w->t->spans[w->stk[--w->depth]];
    w->n_bwd -= is_bwd(s);
    if (w->depth == w->top_depth)
        w->top_depth = NONE;
}

static void push(sweep *w, size_t i)
{
    const aip__span *s = &w->t->spans[i];
    if (s->kind == AIP_SPAN_OP && w->top_depth == NONE)
        w->top_depth = w->depth;
    w->n_bwd += is_bwd(s);
    w->stk[w->depth++] = i;
}

/* Top-level ops of a thread and, for each, the start of the next
 * top-level op that runs no autograd node (INT64_MAX if none). */
typedef struct tops {
    size_t *span;
    int64_t *fwd_after;
    size_t n;
} tops;

static aip_status tops_build(const aip__thread *t, tops *o)
{
    memset(o, 0, sizeof *o);
    size_t n = 0;
    for (size_t i = 0; i < t->n_spans; i++)
        n += t->spans[i].top_op;
    if (!n)
        return AIP_OK;
    o->span = malloc(n * sizeof *o->span);
    o->fwd_after = malloc(n * sizeof *o->fwd_after);
    uint8_t *bwd = calloc(n, 1);
    if (!o->span || !o->fwd_after || !bwd) {
        free(bwd);
        return aip__fail(AIP_ERR_NOMEM, "no memory for memory attribution");
    }
    for (size_t i = 0; i < t->n_spans; i++) {
        const aip__span *s = &t->spans[i];
        if (s->top_op)
            o->span[o->n++] = i;
        /* preorder: an op that is not top-level is inside the last top-level op */
        if (o->n && is_bwd(s))
            bwd[o->n - 1] = 1;
    }
    int64_t next = INT64_MAX;
    for (size_t k = o->n; k-- > 0;) {
        o->fwd_after[k] = next;
        if (!bwd[k])
            next = t->spans[o->span[k]].start;
    }
    free(bwd);
    return AIP_OK;
}

static int64_t tops_limit(const tops *o, size_t span)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (o->span[mid] < span)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->n && o->span[lo] == span ? o->fwd_after[lo] : INT64_MAX;
}

/* Records `idx` (time order) of thread t: name, backward flag, top op,
 * and the backward pass limit. */
static aip_status thread_context(aip__process *p, const aip__thread *t, const size_t *idx, size_t n,
                                 size_t *top, int64_t *limit)
{
    sweep w = {.t = t, .top_depth = NONE};
    tops tp = {0};
    aip_status s = AIP_OK;
    if (t->n_spans) {
        w.stk = malloc(t->n_spans * sizeof *w.stk);
        if (!w.stk)
            return aip__fail(AIP_ERR_NOMEM, "no memory for memory attribution");
        s = tops_build(t, &tp);
    }
    size_t j = 0;
    for (size_t k = 0; k < n && !s; k++) {
        size_t e = idx[k];
        int64_t ts = p->memory.v[e].ts;
        for (; j < t->n_spans && t->spans[j].start <= ts; j++) {
            const aip__span *sp = &t->spans[j];
            if (sp->kind == AIP_SPAN_RANGE || sp->kind == AIP_SPAN_PYFUNC)
                continue; /* mstx ranges are markers, Python calls trace only: not ops */
            while (w.depth && t->spans[w.stk[w.depth - 1]].end < sp->start)
                pop(&w);
            push(&w, j);
        }
        while (w.depth && t->spans[w.stk[w.depth - 1]].end < ts)
            pop(&w);
        aip__mem_info *mi = &p->mem_info[e];
        mi->name = w.depth ? t->spans[w.stk[w.depth - 1]].name : 0;
        mi->in_backward = w.n_bwd > 0;
        top[e] = w.top_depth != NONE ? w.stk[w.top_depth] : NONE;
        limit[e] = mi->in_backward && top[e] != NONE ? tops_limit(&tp, top[e]) : INT64_MAX;
    }
    free(w.stk);
    free(tp.span);
    free(tp.fwd_after);
    return s;
}

/* ---- alloc/free pairs -------------------------------------------------- */

/* These tables keep their key and state in the slot rather than use
 * hash_table.h's index of entries: they are sized once for every record,
 * never grow, and a lookup per memory record is then one memory access,
 * not two (slot, then entry). */
typedef struct slot {
    uint64_t address;
    uint16_t device;         /* type << 8 | (uint8_t)index */
    uint8_t used;
    size_t pending;          /* the unreleased allocation here, NONE if none */
} slot;

static size_t slot_hash(uint64_t a, uint16_t dev, size_t cap)
{
    return aip__ht_home(aip__hash_u64_pair(a, dev), cap - 1);
}

static aip_status pair_records(aip__process *p)
{
    size_t cap = 64;
    while (cap < 2 * p->memory.n)
        cap *= 2;
    slot *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return aip__fail(AIP_ERR_NOMEM, "no memory to pair memory records");
    for (size_t k = 0; k < p->memory.n; k++) {
        size_t e = p->mem_order[k];
        const aip__mem_ev *ev = &p->memory.v[e];
        if (!ev->bytes)
            continue;
        uint16_t dev = (uint16_t)(ev->device_type << 8 | (uint8_t)ev->device_index);
        size_t j = slot_hash(ev->address, dev, cap);
        while (tab[j].used && (tab[j].address != ev->address || tab[j].device != dev))
            j = (j + 1) & (cap - 1);
        if (!tab[j].used)
            tab[j] = (slot){ev->address, dev, 1, NONE};
        if (ev->bytes > 0) {
            tab[j].pending = e; /* an earlier one still pending lost its free */
        } else if (tab[j].pending != NONE) {
            p->mem_info[tab[j].pending].pair = (int64_t)e;
            p->mem_info[e].pair = (int64_t)tab[j].pending;
            tab[j].pending = NONE;
        }
    }
    free(tab);
    return AIP_OK;
}

static void categorize(aip__process *p, const size_t *top, const int64_t *limit)
{
    for (size_t e = 0; e < p->memory.n; e++) {
        aip__mem_info *mi = &p->mem_info[e];
        const aip__mem_ev *ev = &p->memory.v[e];
        mi->category = AIP_MEMCAT_UNKNOWN;
        if (ev->bytes <= 0 || mi->pair < 0 || mi->labeled)
            continue;
        const aip__mem_ev *fr = &p->memory.v[mi->pair];
        if (top[e] != NONE && fr->thread == ev->thread && top[mi->pair] == top[e])
            mi->category = AIP_MEMCAT_TEMPORARY;
        else if (mi->in_backward && fr->ts < limit[e])
            mi->category = AIP_MEMCAT_AUTOGRAD_DETAIL;
        else if (!mi->in_backward && p->mem_info[mi->pair].in_backward)
            mi->category = AIP_MEMCAT_ACTIVATION; /* made in forward, released by backward */
    }
}

/* ---- framework labels -------------------------------------------------- */

typedef struct lslot {
    uint64_t address;
    uint16_t device;
    uint8_t used;
    size_t live;             /* the allocation live here, NONE if none */
    size_t pre_label;        /* a label of a block from before the trace, NONE */
} lslot;

static int cmp_label_time(const void *a, const void *b, void *ctx)
{
    const aip__mem_label *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (v[x].ts != v[y].ts)
        return v[x].ts < v[y].ts ? -1 : 1;
    return (x > y) - (x < y); /* file order on equal times */
}

/* Labels in time order, stably. */
static aip_status sort_labels(aip__process *p)
{
    size_t n = p->mem_labels.n;
    size_t *idx = malloc(n * sizeof *idx);
    aip__mem_label *tmp = malloc(n * sizeof *tmp);
    if (!idx || !tmp) {
        free(idx);
        free(tmp);
        return aip__fail(AIP_ERR_NOMEM, "no memory for memory labels");
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, cmp_label_time, p->mem_labels.v);
    for (size_t i = 0; i < n; i++)
        tmp[i] = p->mem_labels.v[idx[i]];
    memcpy(p->mem_labels.v, tmp, n * sizeof *tmp);
    free(idx);
    free(tmp);
    return AIP_OK;
}

static lslot *lslot_find(lslot *tab, size_t cap, uint64_t address, uint16_t dev)
{
    size_t j = slot_hash(address, dev, cap);
    while (tab[j].used && (tab[j].address != address || tab[j].device != dev))
        j = (j + 1) & (cap - 1);
    if (!tab[j].used)
        tab[j] = (lslot){address, dev, 1, NONE, NONE};
    return &tab[j];
}

/* One sweep over records and labels in time order (records first on equal
 * times: a label right after an allocation is about that allocation). */
static aip_status apply_labels(aip__process *p)
{
    aip__mem_label *lb = p->mem_labels.v;
    size_t nl = p->mem_labels.n;
    aip_status st = sort_labels(p);
    if (st)
        return st;
    size_t cap = 64;
    while (cap < 2 * (p->memory.n + nl))
        cap *= 2;
    lslot *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return aip__fail(AIP_ERR_NOMEM, "no memory for memory labels");
    size_t k = 0, l = 0;
    while (k < p->memory.n || l < nl) {
        int take_record = l >= nl || (k < p->memory.n &&
                                      p->memory.v[p->mem_order[k]].ts <= lb[l].ts);
        if (take_record) {
            size_t e = p->mem_order[k++];
            const aip__mem_ev *ev = &p->memory.v[e];
            if (!ev->bytes)
                continue;
            lslot *s = lslot_find(tab, cap, ev->address,
                                  (uint16_t)(ev->device_type << 8 | (uint8_t)ev->device_index));
            if (ev->bytes > 0) {
                s->live = e;
                s->pre_label = NONE; /* the old block went without a record */
            } else if (s->live != NONE && p->mem_info[e].pair == (int64_t)s->live) {
                s->live = NONE;
            } else if (s->pre_label != NONE) {
                p->mem_info[e].category = lb[s->pre_label].category;
                p->mem_info[e].labeled = 1;
                lb[s->pre_label].free_idx = (int64_t)e;
                s->pre_label = NONE;
            }
            continue;
        }
        aip__mem_label *b = &lb[l];
        lslot *s = lslot_find(tab, cap, b->address,
                              (uint16_t)(b->device_type << 8 | (uint8_t)b->device_index));
        if (s->live != NONE) {
            p->mem_info[s->live].category = b->category;
            p->mem_info[s->live].labeled = 1;
            b->preexisting = 0;
        } else if (s->pre_label != NONE) {
            lb[s->pre_label].category = b->category; /* relabelled: the last word counts */
            b->preexisting = 0;
        } else {
            b->preexisting = 1;
            s->pre_label = l;
        }
        l++;
    }
    free(tab);
    return AIP_OK;
}

static aip_status process_derive(aip__process *p)
{
    size_t n = p->memory.n;
    aip_status s = aip__array_grow((void **)&p->mem_order, &(size_t){0}, n, sizeof *p->mem_order);
    if (!s)
        s = aip__array_grow((void **)&p->mem_info, &(size_t){0}, n, sizeof *p->mem_info);
    size_t *top = malloc((n ? n : 1) * sizeof *top), *idx = malloc((n ? n : 1) * sizeof *idx);
    int64_t *limit = malloc((n ? n : 1) * sizeof *limit);
    size_t *start = calloc(p->n_threads + 1, sizeof *start);
    if (!s && (!top || !idx || !limit || !start))
        s = aip__fail(AIP_ERR_NOMEM, "no memory for memory records");
    if (!s) {
        for (size_t i = 0; i < n; i++) {
            p->mem_order[i] = i;
            p->mem_info[i] = (aip__mem_info){-1, 0, AIP_MEMCAT_UNKNOWN, 0, 0, 0};
        }
        qsort_r(p->mem_order, n, sizeof *p->mem_order, cmp_by_time, p->memory.v);
        /* records grouped by thread, each group in time order */
        for (size_t i = 0; i < n; i++)
            start[p->memory.v[i].thread + 1]++;
        for (size_t t = 0; t < p->n_threads; t++)
            start[t + 1] += start[t];
        size_t *fill = malloc((p->n_threads + 1) * sizeof *fill);
        if (!fill)
            s = aip__fail(AIP_ERR_NOMEM, "no memory for memory records");
        else {
            memcpy(fill, start, (p->n_threads + 1) * sizeof *fill);
            for (size_t k = 0; k < n; k++) {
                size_t e = p->mem_order[k];
                idx[fill[p->memory.v[e].thread]++] = e;
            }
            free(fill);
        }
        for (size_t t = 0; t < p->n_threads && !s; t++)
            if (start[t + 1] > start[t])
                s = thread_context(p, &p->threads[t], idx + start[t], start[t + 1] - start[t],
                                   top, limit);
    }
    if (!s)
        s = pair_records(p);
    if (!s)
        categorize(p, top, limit);
    if (!s && p->mem_labels.n)
        s = apply_labels(p);
    free(top);
    free(idx);
    free(limit);
    free(start);
    return s;
}

static int cmp_peak(const void *a, const void *b)
{
    const aip__mem_peak *x = a, *y = b;
    if (x->process != y->process)
        return x->process < y->process ? -1 : 1;
    if (x->device_type != y->device_type)
        return x->device_type < y->device_type ? -1 : 1;
    return (x->device_index > y->device_index) - (x->device_index < y->device_index);
}

static aip_status peaks(aip__model *m)
{
    size_t cap = 0;
    for (uint32_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        size_t first = m->n_mem_peaks;
        for (size_t e = 0; e < p->memory.n; e++) {
            const aip__mem_ev *ev = &p->memory.v[e];
            aip__mem_peak *pk = NULL;
            for (size_t k = first; k < m->n_mem_peaks && !pk; k++)
                if (m->mem_peaks[k].device_type == ev->device_type &&
                    m->mem_peaks[k].device_index == ev->device_index)
                    pk = &m->mem_peaks[k];
            if (!pk) {
                if (aip__model_grow((void **)&m->mem_peaks, &cap, m->n_mem_peaks + 1,
                                    sizeof *m->mem_peaks))
                    return AIP_ERR_NOMEM;
                pk = &m->mem_peaks[m->n_mem_peaks++];
                *pk = (aip__mem_peak){pi, ev->device_type, ev->device_index, 0,
                                     ev->total_allocated, ev->total_reserved, ev->ts, ev->ts};
            }
            pk->records++;
            if (ev->total_allocated > pk->max_allocated)
                pk->max_allocated = ev->total_allocated;
            if (ev->total_reserved > pk->max_reserved)
                pk->max_reserved = ev->total_reserved;
            if (ev->ts < pk->first_ns)
                pk->first_ns = ev->ts;
            if (ev->ts > pk->last_ns)
                pk->last_ns = ev->ts;
        }
    }
    if (m->n_mem_peaks > 1)
        qsort(m->mem_peaks, m->n_mem_peaks, sizeof *m->mem_peaks, cmp_peak);
    return AIP_OK;
}

aip_status aip__memory_derive(aip__model *m)
{
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        if (!m->procs[pi].memory.n && !m->procs[pi].mem_labels.n)
            continue;
        aip_status s = process_derive(&m->procs[pi]);
        if (s)
            return s;
    }
    return peaks(m);
}

aip_status aip__mem_iter_init(aip__mem_iter *it, const aip__model *m)
{
    it->m = m;
    it->pos = calloc(m->n_procs ? m->n_procs : 1, sizeof *it->pos);
    return it->pos ? AIP_OK : aip__fail(AIP_ERR_NOMEM, "no memory");
}

int aip__mem_iter_next(aip__mem_iter *it, size_t *proc, size_t *idx)
{
    const aip__model *m = it->m;
    size_t best = NONE;
    int64_t best_ts = 0;
    /* few processes: a linear pick per record is cheaper than a heap */
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        if (it->pos[pi] >= p->memory.n || !p->mem_order)
            continue;
        int64_t ts = p->memory.v[p->mem_order[it->pos[pi]]].ts;
        if (best == NONE || ts < best_ts) {
            best = pi;
            best_ts = ts;
        }
    }
    if (best == NONE)
        return 0;
    *proc = best;
    *idx = m->procs[best].mem_order[it->pos[best]++];
    return 1;
}

void aip__mem_iter_free(aip__mem_iter *it)
{
    free(it->pos);
    it->pos = NULL;
}
