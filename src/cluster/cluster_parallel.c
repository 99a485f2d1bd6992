/*
 * cluster_parallel.c — what `aiprof cluster` learns about the job's
 * parallelism from the ranks' profiler_metadata.json, exactly as
 * msprof-analyze's cluster_analyse does it (its code, read for this):
 *
 * - `distributed_args` (tensor/pipeline/data/context/expert parallel sizes,
 *   world_size) → each rank's DP, PP and TP Index by Megatron's rank
 *   layout (ParallelStrategyCalculator + MegatronAlgorithm), the columns
 *   cluster_step_trace_time.csv and ClusterStepTraceTime add;
 * - `parallel_group_info` ({group_id: {group_name, group_rank,
 *   global_ranks}}) → group_id and pg_name of each communication group in
 *   communication_group.json's comm_group_parallel_info and
 *   CommunicationGroupMapping, its rank_set replaced by global_ranks;
 *   msprof-analyze matches a group when its name is
 *   str(double_hash(group_id)) (CANN names groups by that hash); aiprof's
 *   own records name a torch group by group_id itself, so that matches too;
 * - the pipeline stages (StageInfoAnalysis): the p2p groups whose pg_name
 *   starts with "pp" joined into pipelines, the collective groups that
 *   hold at most one rank of each pipeline joined into stages — the
 *   "stage" rows of cluster_step_trace_time.
 * Pure computation on the loaded summaries; no I/O.
 */
#include "cluster.h"
#include "double_hash.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

unsigned long long aip__cluster_double_hash(const char *s)
{
    return aip__double_hash(s, strlen(s));
}

/* ---- DP / PP / TP Index (MegatronAlgorithm + ParallelStrategyCalculator) ---- */

/* Every figure of distributed_args comes from a file any rank's user could
 * have written: each is checked against AIP__CLUSTER_MAX_WORLD before it
 * is multiplied, and the products are checked for overflow, so no size
 * reaches malloc or an index unproven (a tensor-parallel size of 2^62 + 1
 * once made tp * pp * dp wrap around to the world size). */
#define AIP__CLUSTER_MAX_WORLD (1L << 24)

static int int_arg(json_t *args, const char *key, long *out, const char *who, char *why,
                   size_t cap)
{
    json_t *v = json_object_get(args, key);
    if (!v) {
        *out = 1; /* the algorithm's defaults */
        return 0;
    }
    if (!json_is_integer(v)) { /* "must be int type" */
        snprintf(why, cap, "%s distributed_args.%s is not an integer", who, key);
        return -1;
    }
    json_int_t x = json_integer_value(v);
    /* 0 is "set to 1" there (world_size excepted: checked below) */
    if (x < 0 || x > AIP__CLUSTER_MAX_WORLD) {
        snprintf(why, cap, "%s distributed_args.%s %lld is out of range [0, %ld]", who, key,
                 (long long)x, AIP__CLUSTER_MAX_WORLD);
        return -1;
    }
    *out = (long)x;
    return 0;
}

/* a * b, or -1 past AIP__CLUSTER_MAX_WORLD (never wraps: both are <= it). */
static long bounded_mul(long a, long b)
{
    long p;
    if (__builtin_mul_overflow(a, b, &p) || p > AIP__CLUSTER_MAX_WORLD)
        return -1;
    return p;
}

/* The map rank → (dp, pp, tp) of msprof-analyze, or 0 where its code
 * raises (then it writes no index columns); `who` names the rank whose
 * profiler_metadata.json gave the arguments. */
static int megatron(json_t *args, const char *who, long (**out)[3], size_t *n_out, char *why,
                    size_t cap)
{
    long world, tp, pp, dp, cp, ep;
    if (int_arg(args, "world_size", &world, who, why, cap) ||
        int_arg(args, "tensor_model_parallel_size", &tp, who, why, cap) ||
        int_arg(args, "pipeline_model_parallel_size", &pp, who, why, cap) ||
        int_arg(args, "data_parallel_size", &dp, who, why, cap) ||
        int_arg(args, "context_parallel_size", &cp, who, why, cap) ||
        int_arg(args, "expert_model_parallel_size", &ep, who, why, cap))
        return 0;
    tp = tp ? tp : 1; /* "cannot be 0 and has been set to 1" */
    pp = pp ? pp : 1;
    dp = dp ? dp : 1;
    ep = ep ? ep : 1;
    long tpp = bounded_mul(tp, pp), prod = tpp < 0 ? -1 : bounded_mul(tpp, dp);
    long dcp = bounded_mul(dp, cp), tcp = bounded_mul(tp, cp);
    long blocks = tcp < 0 ? -1 : bounded_mul(pp, tcp);
    if (cp <= 0 || world <= 0 || prod < 0 || world != prod || dcp < 0 || blocks < 0 ||
        dp % ep || dcp % ep) {
        snprintf(why, cap,
                 "%s distributed_args: world_size %ld is not tensor %ld x pipeline %ld x data "
                 "%ld parallel (at most %ld), or expert parallel %ld does not divide data x "
                 "context parallel %ld",
                 who, world, tp, pp, dp, AIP__CLUSTER_MAX_WORLD, ep, cp);
        return 0;
    }
    long npg = world / pp, tc = tp * cp;
    /* all_data_parallel_group_ranks: per pipeline block, tp*cp strided groups */
    size_t n_dp = (size_t)(pp * tc);
    long (*map)[3] = malloc((size_t)world * sizeof *map);
    if (!map)
        return -1;
    for (long r = 0; r < world; r++)
        map[r][0] = map[r][1] = map[r][2] = -1;
    long *group = malloc((size_t)n_dp * sizeof *group);
    if (!group) {
        free(map);
        return -1;
    }
    int ok = 1;
    for (long i = 0; ok && i < dp; i++) {
        /* model-parallel group i: the i-th rank of every data-parallel group */
        size_t len = 0;
        for (long blk = 0; ok && blk < pp; blk++)
            for (long k = 0; ok && k < tc; k++) {
                long begin = npg * blk + k, end = npg * (blk + 1);
                long size = begin < end ? (end - begin + tc - 1) / tc : 0;
                if (i >= size)
                    ok = 0; /* IndexError there */
                else
                    group[len++] = begin + i * tc;
            }
        /* PP level: slices of tp ranks; TP level: the place in the slice */
        for (size_t j = 0; ok && j < len; j++)
            if (group[j] >= 0 && group[j] < world) {
                map[group[j]][0] = i;
                map[group[j]][1] = (long)(j / (size_t)tp);
                map[group[j]][2] = (long)(j % (size_t)tp);
            }
    }
    free(group);
    if (!ok) {
        free(map);
        snprintf(why, cap, "context parallel %ld leaves Megatron's layout short of ranks", cp);
        return 0;
    }
    *out = map;
    *n_out = (size_t)world;
    return 1;
}

/* ---- communication groups ---- */

static int add_rank(json_t *set, long rank)
{
    /* Ranks come in rank order, each with all its ops: almost always the
     * last member or a new last one (no scan of a 1,000-rank set). */
    size_t n = json_array_size(set);
    json_int_t last = n ? json_integer_value(json_array_get(set, n - 1)) : 0;
    if (n && last == rank)
        return 0;
    if (!n || last < rank)
        return json_array_append_new(set, json_integer(rank));
    size_t i, at = n;
    json_t *v;
    json_array_foreach(set, i, v) {
        if (json_integer_value(v) == rank)
            return 0;
        if (json_integer_value(v) > rank && at == json_array_size(set))
            at = i;
    }
    return json_array_insert_new(set, at, json_integer(rank)); /* kept sorted */
}

/* Every op name "<name>@<group>" of one class in a per-step object;
 * `index` finds a group of this class by name (a hash, not a scan: a
 * 1,000-rank job has hundreds of groups). */
static int add_class(json_t *groups, json_t *index, json_t *ops, const char *type, long rank)
{
    const char *op;
    json_t *ov;
    json_object_foreach(ops, op, ov) {
        if (!strncmp(op, "Total", 5))
            continue;
        const char *at = strrchr(op, '@');
        const char *name = at ? at + 1 : op;
        json_t *g = json_object_get(index, name);
        if (!g) {
            g = json_pack("{s:s, s:[], s:s, s:s, s:s}", "type", type, "rank_set", "group_name",
                          name, "group_id", "", "pg_name", "");
            if (!g || json_object_set(index, name, g) || json_array_append_new(groups, g))
                return -1;
        }
        if (add_rank(json_object_get(g, "rank_set"), rank))
            return -1;
    }
    return 0;
}

/* msprof-analyze's order: per rank its communication.json then its
 * communication_matrix.json, per step collective then p2p; the collective
 * groups listed before the p2p groups. */
static json_t *collect_groups(const aip__cluster *c)
{
    json_t *all[2] = {json_array(), json_array()}, *index[2] = {json_object(), json_object()};
    static const char *const types[] = {"collective", "p2p"};
    int err = !all[0] || !all[1] || !index[0] || !index[1];
    for (size_t i = 0; !err && i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        json_t *files[2] = {r->comm, r->matrix};
        for (int f = 0; f < 2 && !err; f++) {
            const char *step;
            json_t *sv;
            json_object_foreach(files[f], step, sv)
                for (int t = 0; t < 2 && !err; t++)
                    err = add_class(all[t], index[t], json_object_get(sv, types[t]), types[t],
                                    r->rank) != 0;
        }
    }
    if (!err)
        err = json_array_extend(all[0], all[1]) != 0;
    json_decref(all[1]);
    json_decref(index[0]);
    json_decref(index[1]);
    if (err) {
        json_decref(all[0]);
        return NULL;
    }
    return all[0];
}

/* group_id / pg_name / rank_set of each group from parallel_group_info
 * (the first rank listing a group_id gives its entry, as there). */
static int match_parallel_info(const aip__cluster *c, json_t *groups)
{
    json_t *pgi = json_object();
    if (!pgi)
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        json_t *info = r->problem[0] ? NULL : json_object_get(r->meta, "parallel_group_info");
        const char *gid;
        json_t *gv;
        json_object_foreach(info, gid, gv)
            if (json_is_object(gv) && !json_object_get(pgi, gid))
                json_object_set(pgi, gid, gv);
    }
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        const char *name = json_string_value(json_object_get(g, "group_name"));
        const char *gid, *hit = NULL;
        json_t *gv, *info = NULL;
        char hashed[24];
        json_object_foreach(pgi, gid, gv) {
            snprintf(hashed, sizeof hashed, "%llu", aip__cluster_double_hash(gid));
            if (!strcmp(hashed, name) || (!hit && !strcmp(gid, name))) {
                hit = gid;
                info = gv;
                if (!strcmp(hashed, name))
                    break; /* msprof-analyze's own rule wins */
            }
        }
        if (!hit)
            continue;
        json_t *pg = json_object_get(info, "group_name");
        json_object_set_new(g, "group_id", json_string(hit));
        json_object_set_new(g, "pg_name", json_string(json_is_string(pg) ? json_string_value(pg)
                                                                          : ""));
        json_t *ranks = json_object_get(info, "global_ranks"), *set = json_array();
        size_t k;
        json_t *v;
        json_array_foreach(ranks, k, v)
            if (json_is_integer(v) && add_rank(set, (long)json_integer_value(v)))
                break;
        if (set && json_array_size(set) && !json_equal(set, json_object_get(g, "rank_set")))
            json_object_set(g, "rank_set", set);
        json_decref(set);
    }
    json_decref(pgi);
    return 0;
}

/* ---- pipeline stages (StageInfoAnalysis) ---- */

typedef struct rset {
    long *v;
    size_t n;
} rset;

static int rs_has(const rset *s, long x)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == x)
            return 1;
    return 0;
}

static size_t rs_common(const rset *a, const rset *b)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n; i++)
        n += rs_has(b, a->v[i]);
    return n;
}

static int rs_union(rset *a, const rset *b)
{
    long *v = realloc(a->v, (a->n + b->n + 1) * sizeof *v);
    if (!v)
        return -1;
    a->v = v;
    for (size_t i = 0; i < b->n; i++)
        if (!rs_has(a, b->v[i]))
            a->v[a->n++] = b->v[i];
    return 0;
}

static long rs_min(const rset *s)
{
    long m = s->n ? s->v[0] : 0;
    for (size_t i = 1; i < s->n; i++)
        m = s->v[i] < m ? s->v[i] : m;
    return m;
}

static int rs_from(rset *s, json_t *arr)
{
    s->n = 0;
    s->v = malloc((json_array_size(arr) + 1) * sizeof *s->v);
    if (!s->v)
        return -1;
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
        if (!rs_has(s, (long)json_integer_value(v)))
            s->v[s->n++] = (long)json_integer_value(v);
    return 0;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static int cmp_rs_min(const void *a, const void *b)
{
    long x = rs_min(a), y = rs_min(b);
    return x < y ? -1 : x > y;
}

static int build_stages(aip__cluster_parallel *p)
{
    size_t n = json_array_size(p->groups), n_links = 0, n_pipes = 0, n_st = 0;
    rset *links = calloc(n + 1, sizeof *links), *pipes = calloc(n + 1, sizeof *pipes);
    rset *st = calloc(n + 1, sizeof *st);
    int err = !links || !pipes || !st;
    size_t i;
    json_t *g;
    json_array_foreach(p->groups, i, g) {
        const char *pg = json_string_value(json_object_get(g, "pg_name"));
        if (err || strcmp(json_string_value(json_object_get(g, "type")), "p2p") || !pg ||
            tolower((unsigned char)pg[0]) != 'p' || tolower((unsigned char)pg[1]) != 'p')
            continue;
        err = rs_from(&links[n_links++], json_object_get(g, "rank_set"));
    }
    if (err || !n_links)
        goto out;
    /* p2p links joined into pipelines: the first (by smallest rank) with
     * every later one meeting the growing set, in one pass */
    qsort(links, n_links, sizeof *links, cmp_rs_min);
    char *used = calloc(n_links, 1);
    if (!used) {
        err = 1;
        goto out;
    }
    for (size_t a = 0; !err && a < n_links; a++) {
        if (used[a])
            continue;
        used[a] = 1;
        rset u = {0};
        err = rs_union(&u, &links[a]);
        for (size_t b = a + 1; !err && b < n_links; b++)
            if (!used[b] && rs_common(&links[b], &u)) {
                err = rs_union(&u, &links[b]);
                used[b] = 1;
            }
        pipes[n_pipes++] = u;
    }
    free(used);
    /* collective groups with at most one rank in every pipeline, merged
     * with the stages they meet */
    json_array_foreach(p->groups, i, g) {
        if (err || strcmp(json_string_value(json_object_get(g, "type")), "collective"))
            continue;
        rset s;
        if ((err = rs_from(&s, json_object_get(g, "rank_set"))))
            break;
        int valid = 1;
        for (size_t k = 0; k < n_pipes && valid; k++)
            valid = rs_common(&s, &pipes[k]) <= 1;
        if (!valid || !s.n) {
            free(s.v);
            continue;
        }
        for (size_t k = 0; !err && k < n_st;) {
            if (rs_common(&s, &st[k])) {
                err = rs_union(&s, &st[k]);
                free(st[k].v);
                st[k] = st[--n_st];
            } else {
                k++;
            }
        }
        st[n_st++] = s;
    }
    qsort(st, n_st, sizeof *st, cmp_rs_min);
    if (!err && n_st) {
        p->stages = calloc(n_st, sizeof *p->stages);
        p->stage_len = calloc(n_st, sizeof *p->stage_len);
        err = !p->stages || !p->stage_len;
        for (size_t k = 0; !err && k < n_st; k++) {
            qsort(st[k].v, st[k].n, sizeof *st[k].v, cmp_long);
            p->stages[k] = st[k].v;
            p->stage_len[k] = st[k].n;
            st[k].v = NULL;
            p->n_stages++;
        }
    }
out:
    for (size_t k = 0; links && k < n_links; k++)
        free(links[k].v);
    for (size_t k = 0; pipes && k < n_pipes; k++)
        free(pipes[k].v);
    for (size_t k = 0; st && k < n_st; k++)
        free(st[k].v);
    free(links);
    free(pipes);
    free(st);
    return err ? -1 : 0;
}

aip_status aip__cluster_parallel_build(aip__cluster *c)
{
    aip__cluster_parallel *p = &c->par;
    size_t used = 0;
    long max_rank = -1, dist_rank = -1;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        used++;
        max_rank = r->rank > max_rank ? r->rank : max_rank;
        json_t *a = json_object_get(r->meta, "distributed_args");
        if (!p->dist_args && json_is_object(a) && json_object_size(a)) {
            p->dist_args = a; /* the first rank that has them, as there */
            dist_rank = r->rank;
        }
    }
    if (p->dist_args) {
        char who[48];
        snprintf(who, sizeof who, "rank %ld's profiler_metadata.json", dist_rank);
        int m = megatron(p->dist_args, who, &p->ptd, &p->n_ptd, p->ptd_problem,
                         sizeof p->ptd_problem);
        if (m < 0)
            return aip__fail(AIP_ERR_NOMEM, "out of memory");
        /* fewer map entries than ranks: "parallel params ... is error" */
        p->ptd_ok = m > 0 && p->n_ptd >= used;
        if (m > 0 && !p->ptd_ok)
            snprintf(p->ptd_problem, sizeof p->ptd_problem,
                     "world_size %zu is less than the %zu ranks found", p->n_ptd, used);
        (void)max_rank; /* a rank beyond the map gets NA (msprof-analyze fails there) */
    }
    p->groups = collect_groups(c);
    p->seen_sets = p->groups ? json_array() : NULL;
    size_t i;
    json_t *g;
    json_array_foreach(p->groups, i, g)
        if (json_array_append_new(p->seen_sets, json_deep_copy(json_object_get(g, "rank_set"))))
            break;
    if (!p->groups || !p->seen_sets ||
        json_array_size(p->seen_sets) != json_array_size(p->groups) ||
        match_parallel_info(c, p->groups) || build_stages(p))
        return aip__fail(AIP_ERR_NOMEM, "out of memory");
    return AIP_OK;
}

void aip__cluster_parallel_free(aip__cluster_parallel *p)
{
    free(p->ptd);
    json_decref(p->groups);
    json_decref(p->seen_sets);
    for (size_t k = 0; k < p->n_stages; k++)
        free(p->stages[k]);
    free(p->stages);
    free(p->stage_len);
    memset(p, 0, sizeof *p);
}

/* ---- stage rows ---- */

static int stage_of(const aip__cluster_parallel *p, long rank)
{
    for (size_t s = 0; s < p->n_stages; s++)
        for (size_t k = 0; k < p->stage_len[s]; k++)
            if (p->stages[s][k] == rank)
                return (int)s;
    return -1;
}

int aip__cluster_stage_rows(const aip__cluster *c, aip__stage_row_fn emit, void *ctx)
{
    const aip__cluster_parallel *p = &c->par;
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    if (!ref || !p->n_stages)
        return 0;
    double *mx = malloc((ref->n_cols + 1) * sizeof *mx);
    if (!mx)
        return -1;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        int st = stage_of(p, r->rank);
        for (size_t j = 0; j < r->n_rows; j++) {
            int seen = 0; /* this (step, stage) came up at an earlier row */
            for (size_t i2 = 0; i2 <= i && !seen; i2++) {
                const aip__rank_dir *o = &c->r[i2];
                if (o->problem[0] || stage_of(p, o->rank) != st)
                    continue;
                for (size_t j2 = 0; j2 < (i2 == i ? j : o->n_rows) && !seen; j2++)
                    seen = !strcmp(o->rows[j2].step, r->rows[j].step);
            }
            if (seen)
                continue;
            memcpy(mx, r->rows[j].v, r->n_cols * sizeof *mx);
            for (size_t i2 = i + 1; i2 < c->n; i2++) {
                const aip__rank_dir *o = &c->r[i2];
                if (o->problem[0] || stage_of(p, o->rank) != st)
                    continue;
                for (size_t j2 = 0; j2 < o->n_rows; j2++)
                    if (!strcmp(o->rows[j2].step, r->rows[j].step))
                        for (size_t k = 0; k < r->n_cols; k++)
                            mx[k] = o->rows[j2].v[k] > mx[k] ? o->rows[j2].v[k] : mx[k];
            }
            emit(ctx, r->rows[j].step, st, mx);
        }
    }
    free(mx);
    return 0;
}
