/*
 * comm_derive.c — per-rank communication analysis: each recorded op's step,
 * class (collective / p2p), name and transport, the communication matrix's
 * top1 / middle / bottom / total entries, and the op intervals the step
 * trace needs.  The rules are in docs/COMMUNICATION.md; in short:
 *  - an op belongs to the ProfilerStep whose [start, end] holds its start
 *    (reference §2.3); without steps all ops are in "step"; with steps an
 *    op outside every step is left out and counted;
 *  - names follow CANN's "hcom_<type>__<a>_<b>_1" so that every member of
 *    a collective gives it the same name: a collective is
 *    hcom_<type>__<seq>_0_1 (seq: the group's sequence number, the same on
 *    every member), a point-to-point op hcom_<send|receive>__<k>_<peer>_1
 *    (the k-th such op of this rank with that peer in the group);
 *  - transport: the self link is LOCAL; peer traffic is SDMA (same host),
 *    since a rank analysed alone does not know its peers' hosts — cluster
 *    analysis, which has every rank's host, corrects it to RDMA.
 * Only the rank's own view exists here, so the elapse time is not split
 * into wait / transit / idle (that needs the peers: cluster analysis).
 */
#include "comm_derive.h"
#include "error.h"
#include "intervals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *aip__comm_transport_name(uint8_t t)
{
    switch (t) {
    case AIP_TRANSPORT_RDMA: return "RDMA";
    case AIP_TRANSPORT_LOCAL: return "LOCAL";
    default: return "SDMA";
    }
}

typedef struct type_map {
    const char *from, *type, *lower;
} type_map;

/* Recorded names (MPI's without "MPI_", c10d's without "c10d::" and the
 * trailing '_', lower case; torch.distributed's as the Python package and
 * the adapter record them) to CANN's op types. */
static const type_map types[] = {
    {"allreduce", "allReduce", "allreduce"},
    {"all_reduce", "allReduce", "allreduce"},
    {"all_gather", "allGather", "allgather"},
    {"all_to_all", "alltoall", "alltoall"},
    {"all_to_all_single", "alltoall", "alltoall"},
    {"reduce", "reduce", "reduce"},
    {"bcast", "broadcast", "broadcast"},
    {"broadcast", "broadcast", "broadcast"},
    {"allgather", "allGather", "allgather"},
    {"allgatherv", "allGather", "allgather"},
    {"allgather_into_tensor", "allGather", "allgather"},
    {"_allgather_base", "allGather", "allgather"},
    {"allgather_coalesced", "allGather", "allgather"},
    {"gather", "gather", "gather"},
    {"gatherv", "gather", "gather"},
    {"scatter", "scatter", "scatter"},
    {"scatterv", "scatter", "scatter"},
    {"reduce_scatter", "reduceScatter", "reducescatter"},
    {"reduce_scatter_block", "reduceScatter", "reducescatter"},
    {"reduce_scatter_tensor", "reduceScatter", "reducescatter"},
    {"_reduce_scatter_base", "reduceScatter", "reducescatter"},
    {"alltoall", "alltoall", "alltoall"},
    {"alltoall_base", "alltoall", "alltoall"},
    {"alltoallv", "alltoallv", "alltoallv"},
    {"alltoallw", "alltoallv", "alltoallv"},
    {"barrier", "barrier", "barrier"},
    {"send", "send", "send"},
    {"ssend", "send", "send"},
    {"bsend", "send", "send"},
    {"rsend", "send", "send"},
    {"recv", "receive", "receive"},
    {"recv_any_source", "receive", "receive"},
    {"sendrecv", "batchSendRecv", "batchsendrecv"},
    {"sendrecv_replace", "batchSendRecv", "batchsendrecv"},
};

static const type_map *lookup(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].from) == n && memcmp(types[i].from, s, n) == 0)
            return &types[i];
    return NULL;
}

static const type_map *op_type(const aip__process *p, const aip__comm_event *e)
{
    static const type_map by_kind[] = {{"", "invalid", "invalid"},
                                       {"", "send", "send"},
                                       {"", "receive", "receive"},
                                       {"", "batchSendRecv", "batchsendrecv"}};
    size_t len;
    const char *s = aip__model_str(p, e->name, &len);
    const char *colon = len ? memchr(s, ':', len) : NULL;
    while (colon) { /* "c10d::allreduce_" */
        len -= (size_t)(colon + 1 - s);
        s = colon + 1;
        colon = memchr(s, ':', len);
    }
    char low[48];
    size_t n = 0;
    if (len > 4 && (s[0] == 'M' || s[0] == 'm') && (s[1] == 'P' || s[1] == 'p') &&
        (s[2] == 'I' || s[2] == 'i') && s[3] == '_') {
        s += 4;
        len -= 4;
    }
    while (len && s[len - 1] == '_')
        len--;
    if (len < sizeof low) {
        for (; n < len; n++)
            low[n] = (char)(s[n] >= 'A' && s[n] <= 'Z' ? s[n] - 'A' + 'a' : s[n]);
        const type_map *t = lookup(low, n);
        if (!t && n > 1 && low[0] == 'i') /* MPI_Iallreduce, MPI_Isend */
            t = lookup(low + 1, n - 1);
        if (t)
            return t;
    }
    switch (e->kind) {
    case AIP_COMM_SEND: return &by_kind[1];
    case AIP_COMM_RECV: return &by_kind[2];
    case AIP_COMM_SENDRECV: return &by_kind[3];
    default: return &by_kind[0];
    }
}

static uint32_t local_rank(const aip__comm_group_info *g, uint32_t global)
{
    if (!g)
        return global;
    for (uint32_t i = 0; i < g->listed; i++)
        if (g->ranks[i] == global)
            return i;
    return global; /* not listed (a cut list): the global rank stands in */
}

/* The k-th point-to-point op of a (group, type, peer). */
typedef struct p2p_count {
    uint32_t group, peer;
    const char *type;
    uint64_t n;
} p2p_count;

aip_status aip__comm_op_names(const aip__process *p, aip__comm_name **out)
{
    *out = NULL;
    if (!p->comm_ops.n)
        return AIP_OK;
    aip__comm_name *v = calloc(p->comm_ops.n, sizeof *v);
    p2p_count *cnt = NULL;
    size_t n_cnt = 0, cap_cnt = 0;
    if (!v)
        return aip__fail(AIP_ERR_NOMEM, "no memory for communication op names");
    for (size_t k = 0; k < p->comm_ops.n; k++) {
        const aip__comm_event *e = &p->comm_ops.v[k];
        const aip__comm_group_info *g = aip__model_comm_group(p, e->group);
        const type_map *ty = op_type(p, e);
        aip__comm_name *nm = &v[k];
        nm->type = ty->type;
        nm->type_lower = ty->lower;
        nm->me = g ? g->my_rank : 0;
        nm->peer = UINT32_MAX;
        if (e->kind == AIP_COMM_COLLECTIVE) {
            snprintf(nm->s, sizeof nm->s, "hcom_%s__%llu_0_1", ty->type,
                     (unsigned long long)e->seq);
            continue;
        }
        nm->peer = e->peer == AIP_RAW_NO_RANK ? nm->me : local_rank(g, e->peer);
        size_t c = 0;
        while (c < n_cnt && !(cnt[c].group == e->group && cnt[c].peer == e->peer &&
                              cnt[c].type == ty->type))
            c++;
        if (c == n_cnt) {
            if (aip__model_grow((void **)&cnt, &cap_cnt, n_cnt + 1, sizeof *cnt)) {
                free(cnt);
                free(v);
                return aip__fail(AIP_ERR_NOMEM, "no memory for communication op names");
            }
            cnt[n_cnt++] = (p2p_count){e->group, e->peer, ty->type, 0};
        }
        snprintf(nm->s, sizeof nm->s, "hcom_%s__%llu_%u_1", ty->type,
                 (unsigned long long)cnt[c].n++, nm->peer);
    }
    free(cnt);
    *out = v;
    return AIP_OK;
}

static int cmp_row(const void *a, const void *b)
{
    const aip__comm_row *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->p2p != y->p2p)
        return x->p2p < y->p2p ? -1 : 1;
    size_t n = x->group_len < y->group_len ? x->group_len : y->group_len;
    int c = memcmp(x->group, y->group, n);
    if (c || x->group_len != y->group_len)
        return c ? c : (x->group_len < y->group_len ? -1 : 1);
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The step of time t: steps sorted by start in `by_start`. */
static const aip__step *step_of(const aip__model *m, const size_t *by_start, int64_t t)
{
    size_t lo = 0, hi = m->n_steps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->steps[by_start[mid]].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) { /* steps may overlap: the latest holding t */
        const aip__step *s = &m->steps[by_start[i]];
        if (t <= s->end)
            return s;
        if (i + 8 < lo) /* far enough back: no longer step reaches t */
            break;
    }
    return NULL;
}

static int cmp_step_start(const void *a, const void *b, void *ctx)
{
    const aip__step *s = ctx;
    int64_t x = s[*(const size_t *)a].start, y = s[*(const size_t *)b].start;
    return (x > y) - (x < y);
}

static aip_status build_rows(const aip__model *m, aip__comm_tables *t)
{
    size_t total = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        total += m->procs[i].comm_ops.n;
    if (!total)
        return AIP_OK;
    t->rows = calloc(total, sizeof *t->rows);
    size_t *by_start = malloc((m->n_steps ? m->n_steps : 1) * sizeof *by_start);
    aip_status s = AIP_OK;
    if (!t->rows || !by_start) {
        free(by_start);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the communication analysis");
    }
    for (size_t i = 0; i < m->n_steps; i++)
        by_start[i] = i;
    qsort_r(by_start, m->n_steps, sizeof *by_start, cmp_step_start, m->steps);
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        aip__comm_name *names;
        s = aip__comm_op_names(p, &names);
        for (size_t k = 0; k < p->comm_ops.n && !s; k++) {
            const aip__comm_event *e = &p->comm_ops.v[k];
            const aip__comm_group_info *g = aip__model_comm_group(p, e->group);
            aip__comm_row r = {.type = names[k].type, .type_lower = names[k].type_lower,
                               .start = e->start, .elapse = e->end - e->start,
                               .bytes = e->bytes, .me = names[k].me, .peer = names[k].peer,
                               .transport = AIP_TRANSPORT_SDMA};
            memcpy(r.name, names[k].s, sizeof r.name);
            if (m->n_steps) {
                const aip__step *st = step_of(m, by_start, e->start);
                if (!st) {
                    t->outside_steps++;
                    continue;
                }
                r.has_step = 1;
                r.step = st->number;
            }
            /* the hashed name msprof-analyze maps through parallel_group_info */
            r.group = g ? g->label : "ungrouped";
            r.group_len = strlen(r.group);
            r.p2p = e->kind != AIP_COMM_COLLECTIVE;
            r.send = e->kind == AIP_COMM_SEND;
            t->rows[t->n_rows++] = r;
        }
        free(names);
    }
    free(by_start);
    if (!s)
        qsort(t->rows, t->n_rows, sizeof *t->rows, cmp_row);
    return s;
}

/* ---- the matrix ------------------------------------------------------ */

typedef struct rec {
    uint32_t src, dst;
    uint8_t transport, timed;
    uint64_t bytes;
    int64_t time;
    const aip__comm_row *row;
} rec;

/* Bandwidth descending (bytes/time compared by cross products), then start. */
static int cmp_rec(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    long double bx = (long double)x->bytes * (long double)(y->time > 0 ? y->time : 1);
    long double by = (long double)y->bytes * (long double)(x->time > 0 ? x->time : 1);
    if (bx != by)
        return bx > by ? -1 : 1;
    return (x->row->start > y->row->start) - (x->row->start < y->row->start);
}

static int same_block(const aip__comm_row *a, const aip__comm_row *b)
{
    return aip__comm_same_step(a, b) && a->group_len == b->group_len &&
           memcmp(a->group, b->group, a->group_len) == 0 && strcmp(a->type, b->type) == 0;
}

static aip_status push_link(aip__comm_tables *t, size_t *cap, aip__comm_link l)
{
    if (aip__model_grow((void **)&t->links, cap, t->n_links + 1, sizeof l))
        return AIP_ERR_NOMEM;
    t->links[t->n_links++] = l;
    return AIP_OK;
}

/* One (step, p2p, group, type) block's records, sorted by link then
 * bandwidth: its entries, label by label. */
static aip_status block_links(aip__comm_tables *t, size_t *cap, rec *r, size_t n)
{
    static const char *const labels[] = {"top1", "middle", "bottom1", "bottom2", "bottom3",
                                         "total"};
    for (int li = 0; li < 6; li++) {
        for (size_t a = 0; a < n;) {
            size_t b = a;
            while (b < n && r[b].src == r[a].src && r[b].dst == r[a].dst)
                b++;
            size_t len = b - a, pick;
            aip__comm_link l = {.of = r[a].row, .label = labels[li], .src = r[a].src,
                                .dst = r[a].dst, .transport = r[a].transport, .timed = 1};
            if (li == 5) {
                for (size_t i = a; i < b; i++) {
                    l.bytes += r[i].bytes;
                    l.time += r[i].time;
                    l.timed &= r[i].timed;
                }
                /* An untimed total (a collective's self link) is left
                 * out, as torch_npu never writes one: msprof-analyze's
                 * communication_matrix_sum divides every total's size by
                 * its time.  `aiprof cluster` adds it once the split gives
                 * it a time (cluster_comm_back.c). */
                l.op_name = r[a].row->name;
                if (l.timed && push_link(t, cap, l))
                    return AIP_ERR_NOMEM;
            } else if (li < 2 || len >= (size_t)(li - 1)) {
                pick = li == 0 ? a : li == 1 ? a + len / 2 : b - (size_t)(li - 1);
                l.bytes = r[pick].bytes;
                l.time = r[pick].time;
                l.timed = r[pick].timed;
                if (!l.timed)
                    l.time = 0;
                l.op_name = r[pick].row->name;
                if (push_link(t, cap, l))
                    return AIP_ERR_NOMEM;
            }
            a = b;
        }
    }
    return AIP_OK;
}

/* Matrix records of one op: its self link (LOCAL; a collective's carries
 * the rank's buffer bytes, since the algorithm's pairwise transfers are not
 * visible to the rank, and no time: its elapse includes the wait for the
 * other ranks, which one rank cannot tell from the transfer, so it is
 * left untimed and ranked by bytes per elapse only to pick top / middle /
 * bottom; a point-to-point op's is empty and only names the rank, which
 * cluster tools need to map group ranks to global ones), and a
 * point-to-point op's link to or from its peer. */
static size_t op_recs(const aip__comm_row *w, rec out[2])
{
    out[0] = (rec){w->me, w->me, AIP_TRANSPORT_LOCAL, (uint8_t)w->p2p, w->p2p ? 0 : w->bytes,
                   w->p2p ? 0 : w->elapse, w};
    if (!w->p2p || w->peer == w->me)
        return 1;
    out[1] = (rec){w->send ? w->me : w->peer, w->send ? w->peer : w->me, w->transport, 1,
                   w->bytes, w->elapse, w};
    return 2;
}

static int cmp_type_start(const void *a, const void *b)
{
    const aip__comm_row *x = *(const aip__comm_row *const *)a;
    const aip__comm_row *y = *(const aip__comm_row *const *)b;
    int c = strcmp(x->type, y->type);
    if (c)
        return c;
    return (x->start > y->start) - (x->start < y->start);
}

static aip_status build_links(aip__comm_tables *t)
{
    size_t cap = 0, cap_buf = 0;
    rec *buf = NULL;
    const aip__comm_row **run = malloc((t->n_rows ? t->n_rows : 1) * sizeof *run);
    aip_status s = run ? AIP_OK : AIP_ERR_NOMEM;
    /* Rows are sorted by step, p2p, group, start: each (step, p2p, group)
     * run, ordered by type (alphabetically) then start, gives one block per
     * type. */
    for (size_t a = 0; a < t->n_rows && !s;) {
        size_t b = a;
        while (b < t->n_rows && aip__comm_same_step(&t->rows[a], &t->rows[b]) &&
               t->rows[b].group_len == t->rows[a].group_len &&
               memcmp(t->rows[b].group, t->rows[a].group, t->rows[a].group_len) == 0)
            b++;
        for (size_t i = a; i < b; i++)
            run[i - a] = &t->rows[i];
        qsort(run, b - a, sizeof *run, cmp_type_start);
        for (size_t i = 0; i < b - a && !s;) {
            size_t j = i, n = 0;
            for (; j < b - a && same_block(run[i], run[j]); j++) {
                if (aip__model_grow((void **)&buf, &cap_buf, n + 2, sizeof *buf)) {
                    s = AIP_ERR_NOMEM;
                    break;
                }
                n += op_recs(run[j], buf + n);
            }
            if (!s) {
                qsort(buf, n, sizeof *buf, cmp_rec);
                s = block_links(t, &cap, buf, n);
            }
            i = j;
        }
        a = b;
    }
    free(buf);
    free(run);
    return s ? aip__fail(s, "no memory for the communication matrix") : AIP_OK;
}

aip_status aip__comm_tables_build(const aip__model *m, aip__comm_tables *t)
{
    memset(t, 0, sizeof *t);
    aip_status s = build_rows(m, t);
    if (!s)
        s = build_links(t);
    if (s)
        aip__comm_tables_free(t);
    return s;
}

void aip__comm_tables_free(aip__comm_tables *t)
{
    free(t->rows);
    free(t->links);
    memset(t, 0, sizeof *t);
}

/* ---- intervals for the step trace ---------------------------------- */

aip_status aip__comm_intervals(const aip__model *m, int recv_only, int64_t **iv, size_t *n)
{
    *iv = NULL;
    *n = 0;
    size_t total = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        total += m->procs[i].comm_ops.n;
    if (!total)
        return AIP_OK;
    int64_t *v = malloc(2 * total * sizeof *v);
    if (!v)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the communication intervals");
    size_t k = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        for (size_t j = 0; j < m->procs[i].comm_ops.n; j++) {
            const aip__comm_event *e = &m->procs[i].comm_ops.v[j];
            if (recv_only && e->kind != AIP_COMM_RECV)
                continue;
            v[2 * k] = e->start;
            v[2 * k + 1] = e->end;
            k++;
        }
    size_t u = aip__intervals_union(v, k);
    if (!u) {
        free(v);
        return AIP_OK;
    }
    *iv = v;
    *n = u;
    return AIP_OK;
}
