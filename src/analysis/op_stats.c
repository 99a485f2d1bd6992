/*
 * op_stats.c — per-name statistics of spans and of a device back end's
 * runtime API calls (count, total, self, min, max, variance), the basis of
 * op_statistic.csv, api_statistic.csv and the summary's top-op table.
 *
 * Names are grouped by text, across processes (each raw file has its own
 * string ids, so each process keeps an id → group array and texts are
 * hashed once per id, not once per span).  The result is sorted by total
 * time, longest first, then by name: the order is a function of the data.
 */
#include "model.h"
#include "error.h"
#include "hash_table.h"

#include <stdlib.h>
#include <string.h>

typedef struct grouper {
    aip__op_stat *v;
    size_t n, cap;
    aip__ht index;            /* (text, level) → index of v */
    uint64_t *hashes;         /* per group: compared before the text */
    size_t hashes_cap;
} grouper;

static uint64_t group_hash(const void *ctx, uint32_t i)
{
    return ((const grouper *)ctx)->hashes[i];
}

/* Group index of (text, level), created if new; -1 when out of memory. */
static int64_t group_of(grouper *g, const char *s, size_t n, unsigned level)
{
    uint64_t h = aip__fnv1a_more(AIP__FNV_OFFSET ^ level, s, n);
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&g->index, h, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&g->index, &pr)) {
        const aip__op_stat *o = &g->v[i];
        if (g->hashes[i] == h && o->level == level && o->len == n && !memcmp(o->name, s, n))
            return i;
    }
    if (aip__model_grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v) ||
        aip__model_grow((void **)&g->hashes, &g->hashes_cap, g->n + 1, sizeof *g->hashes) ||
        aip__ht_add(&g->index, &pr, group_hash, g))
        return -1;
    g->v[g->n] = (aip__op_stat){.name = s, .len = n, .level = level, .min_ns = INT64_MAX};
    g->hashes[g->n] = h;
    return (int64_t)g->n++;
}

static void add(aip__op_stat *o, int64_t total, int64_t self)
{
    o->count++;
    o->total_ns = aip__sat_add(o->total_ns, total); /* held at INT64_MAX, not wrapped */
    o->self_ns = aip__sat_add(o->self_ns, self);
    if (total < o->min_ns)
        o->min_ns = total;
    if (total > o->max_ns)
        o->max_ns = total;
    /* Welford, in µs: the variance is reported in µs² */
    double x = (double)total / 1000.0, d = x - o->mean_us;
    o->mean_us += d / (double)o->count;
    o->m2_us += d * (x - o->mean_us);
}

/* The statistics level of span s, 0 to leave it out; is_step has n_ent
 * entries (a name id past them is no step: its string was lost). */
static unsigned level_of(const aip__span *s, const uint8_t *is_step, size_t n_ent, unsigned kinds)
{
    switch (s->kind) {
    case AIP_SPAN_OP:
        return kinds & AIP_STAT_OPS ? AIP_STAT_LEVEL_OP : 0;
    case AIP_SPAN_ANNOTATION:
        if (!(kinds & AIP_STAT_ANNOTATIONS) || (is_step && s->name < n_ent && is_step[s->name]))
            return 0;
        return AIP_STAT_LEVEL_OP; /* record_function scopes are torch ops too */
    case AIP_SPAN_PYFUNC:
        return 0; /* python_function events are not ops */
    default:
        return kinds & AIP_STAT_RANGES ? AIP_STAT_LEVEL_MSTX : 0;
    }
}

/* Group of string id `id` (< n_ent) at `level`: one slot per (id, level)
 * in `map`, since ops, mstx ranges and runtime calls may share a name; -1
 * when out of memory. */
static int64_t group_of_id(grouper *g, const aip__process *p, uint32_t *map, uint32_t id,
                           unsigned level)
{
    size_t slot = 3 * (size_t)id + (level == AIP_STAT_LEVEL_MSTX ? 1
                                    : level == AIP_STAT_LEVEL_RUNTIME ? 2 : 0);
    if (!map[slot]) {
        size_t len;
        const char *name = aip__model_str(p, id, &len);
        int64_t gi = group_of(g, name, len, level);
        if (gi < 0)
            return -1;
        map[slot] = (uint32_t)gi + 1;
    }
    return (int64_t)map[slot] - 1;
}

static int cmp_stat(const void *a, const void *b)
{
    const aip__op_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    int c = aip__text_cmp(x->name, x->len, y->name, y->len);
    return c ? c : (int)x->level - (int)y->level;
}

static aip_status process_spans(grouper *g, const aip__process *p, unsigned kinds)
{
    uint8_t *is_step = (kinds & AIP_STAT_ANNOTATIONS) ? aip__step_name_flags(p) : NULL;
    uint32_t *map = calloc(p->strings.n_ent ? 3 * p->strings.n_ent : 1, sizeof *map);
    if (!map || ((kinds & AIP_STAT_ANNOTATIONS) && !is_step)) {
        free(map);
        free(is_step);
        return aip__fail(AIP_ERR_NOMEM, "no memory for op statistics");
    }
    aip_status s = AIP_OK;
    for (size_t ti = 0; ti < p->n_threads && !s; ti++) {
        const aip__thread *t = &p->threads[ti];
        for (size_t i = 0; i < t->n_spans; i++) {
            const aip__span *sp = &t->spans[i];
            unsigned level = level_of(sp, is_step, p->strings.n_ent, kinds);
            if (!level)
                continue;
            if (sp->name >= p->strings.n_ent) {
                /* its name was in a lost STRINGS chunk: grouped as "" */
                int64_t gi = group_of(&g[0], "", 0, level);
                if (gi < 0) {
                    s = aip__fail(AIP_ERR_NOMEM, "no memory for op statistics");
                    break;
                }
                add(&g->v[gi], sp->end - sp->start, t->self_ns ? t->self_ns[i] : 0);
                continue;
            }
            int64_t gi = group_of_id(g, p, map, sp->name, level);
            if (gi < 0) {
                s = aip__fail(AIP_ERR_NOMEM, "no memory for op statistics");
                break;
            }
            add(&g->v[gi], sp->end - sp->start, t->self_ns ? t->self_ns[i] : 0);
        }
    }
    /* A device back end's runtime calls are APIs of their own level; a
     * call's self time is its duration (nothing nests in it). */
    for (size_t i = 0; (kinds & AIP_STAT_DEVICE_API) && i < p->dev_api.n && !s; i++) {
        const aip__device_call *a = &p->dev_api.v[i];
        int64_t gi = a->name < p->strings.n_ent
                         ? group_of_id(g, p, map, a->name, AIP_STAT_LEVEL_RUNTIME)
                         : group_of(g, "", 0, AIP_STAT_LEVEL_RUNTIME);
        if (gi < 0)
            s = aip__fail(AIP_ERR_NOMEM, "no memory for op statistics");
        else
            add(&g->v[gi], a->end - a->start, a->end - a->start);
    }
    free(map);
    free(is_step);
    return s;
}

aip_status aip__op_stats(const aip__model *m, unsigned kinds, aip__op_stat **out, size_t *n)
{
    grouper g = {0};
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++)
        s = process_spans(&g, &m->procs[pi], kinds);
    aip__ht_free(&g.index);
    free(g.hashes);
    if (s) {
        free(g.v);
        return s;
    }
    if (g.n > 1)
        qsort(g.v, g.n, sizeof *g.v, cmp_stat);
    *out = g.v;
    *n = g.n;
    return AIP_OK;
}
