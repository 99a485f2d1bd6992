/*
 * cluster_links.c — the job's link matrix between GLOBAL ranks and its
 * slow links, for the verdict of `aiprof cluster` and the heat map of
 * `--html`.
 *
 * From each rank's communication_matrix.json (its entries are between
 * group-LOCAL ranks): the local → global map of every group comes from the
 * self links "<l>-<l>" each rank reports (as msprof-analyze's
 * CommMatrixAnalysis builds it); the per-op statistics top/middle/bottom
 * are skipped and the rest (the "-total" entries) summed, as there.  A
 * transfer between two ranks is reported by both (the sender's send and
 * the receiver's receive); the link counts it once, from the sender's
 * record (the receiver's only when the sender's is missing), so its bytes
 * are what was sent.  Transport: LOCAL for a rank's own link; a peer link
 * a rank's files call SDMA (same host assumed, docs/COMMUNICATION.md)
 * becomes RDMA when the two ranks' hosts (HOST_INFO, cluster_meta.c)
 * differ.
 *
 * Slow links, per transport other than LOCAL, by msprof-analyze advisor's
 * slow-link rule (advisor/analyzer/cluster/slow_link_analyzer.py): the
 * spread max − min of the bandwidths against their mean; at 5 % or more,
 * the links more than 5 % below the links' median are named, with their
 * numbers (the median, not the mean: one fast link must not make the
 * others "slow").
 * The advisor's own form of the rule (per step and rank, over
 * communication.json's SDMA / RDMA bandwidth) is printed beside it.
 */
#include "cluster_links.h"
#include "py_round.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOW_LINK_RATIO 0.05 /* SlowLinkAnalyzer.RATIO_THRESHOLD */

typedef struct acc {
    double mb, ms;
    size_t ops;
} acc;

typedef struct slot {
    long src, dst;
    char transport[16];
    acc from_src, from_dst;
} slot;

static const char *host_of(const aip__rank_dir *r)
{
    return r ? (r->host_uid ? r->host_uid : r->host_name) : NULL;
}

static const aip__rank_dir *rank_dir(const aip__cluster *c, long rank)
{
    /* c->r is sorted by rank: binary search among the used ones */
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->r[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < c->n && c->r[lo].rank == rank; lo++)
        if (!c->r[lo].problem[0])
            return &c->r[lo];
    return NULL;
}

/* msprof-analyze's check_add_op: per-op statistics are not added. */
static int summed_entry(const char *op)
{
    return strncmp(op, "Total", 5) && !strstr(op, "top") && !strstr(op, "middle") &&
           !strstr(op, "bottom");
}

static int parse_link(const char *key, long *a, long *b)
{
    char *end;
    *a = strtol(key, &end, 10);
    if (end == key || *end != '-')
        return -1;
    const char *p = end + 1;
    *b = strtol(p, &end, 10);
    return end == p || *end ? -1 : 0;
}

/* "<group>\x1f<local>" → global rank, from the self links. */
static int build_map(const aip__cluster *c, json_t *map, size_t *conflicts)
{
    char key[512];
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        const char *step, *cls, *op, *lk;
        json_t *sv, *cv, *ov, *lv;
        json_object_foreach(r->matrix, step, sv) json_object_foreach(sv, cls, cv)
            json_object_foreach(cv, op, ov) json_object_foreach(ov, lk, lv) {
            long a, b;
            const char *at = strrchr(op, '@');
            if (parse_link(lk, &a, &b) || a != b)
                continue;
            snprintf(key, sizeof key, "%s\x1f%ld", at ? at + 1 : op, a);
            json_t *had = json_object_get(map, key);
            if (!had) {
                if (json_object_set_new(map, key, json_integer(r->rank)))
                    return -1;
            } else if (json_integer_value(had) != r->rank) {
                (*conflicts)++; /* two ranks claim one local rank: the first kept */
            }
        }
    }
    return 0;
}

static int cmp_link(const void *x, const void *y)
{
    const aip__cluster_link *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    return strcmp(a->transport, b->transport);
}

aip_status aip__cluster_links_build(const aip__cluster *c, aip__cluster_links *out)
{
    memset(out, 0, sizeof *out);
    json_t *map = json_object(), *index = json_object();
    slot *v = NULL;
    size_t n = 0, cap = 0;
    int err = !map || !index || build_map(c, map, &out->conflicts);
    char key[512];
    for (size_t i = 0; !err && i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        const char *step, *cls, *op, *lk;
        json_t *sv, *cv, *ov, *lv;
        json_object_foreach(r->matrix, step, sv) json_object_foreach(sv, cls, cv)
            json_object_foreach(cv, op, ov) {
            if (err || !summed_entry(op))
                continue;
            const char *at = strrchr(op, '@'), *group = at ? at + 1 : op;
            json_object_foreach(ov, lk, lv) {
                long a, b;
                if (err || parse_link(lk, &a, &b))
                    continue;
                snprintf(key, sizeof key, "%s\x1f%ld", group, a);
                json_t *ga = json_object_get(map, key);
                snprintf(key, sizeof key, "%s\x1f%ld", group, b);
                json_t *gb = json_object_get(map, key);
                if (!ga || !gb) {
                    out->unmapped++; /* no rank reported that local rank's self link */
                    continue;
                }
                long src = (long)json_integer_value(ga), dst = (long)json_integer_value(gb);
                const char *t = json_string_value(json_object_get(lv, "Transport Type"));
                char tr[16];
                snprintf(tr, sizeof tr, "%s", t ? t : "");
                if (!strcmp(tr, "SDMA") && src != dst) {
                    const char *hs = host_of(rank_dir(c, src)), *hd = host_of(rank_dir(c, dst));
                    if (hs && hd && strcmp(hs, hd))
                        snprintf(tr, sizeof tr, "RDMA");
                }
                snprintf(key, sizeof key, "%ld-%ld-%s", src, dst, tr);
                json_t *slot_at = json_object_get(index, key);
                size_t k;
                if (slot_at) {
                    k = (size_t)json_integer_value(slot_at);
                } else {
                    if (n == cap) {
                        cap = cap ? 2 * cap : 64;
                        slot *nv = realloc(v, cap * sizeof *nv);
                        if (!nv) {
                            err = 1;
                            continue;
                        }
                        v = nv;
                    }
                    k = n++;
                    memset(&v[k], 0, sizeof v[k]);
                    v[k].src = src;
                    v[k].dst = dst;
                    memcpy(v[k].transport, tr, sizeof tr);
                    err = json_object_set_new(index, key, json_integer((json_int_t)k)) != 0;
                }
                acc *d = r->rank == src ? &v[k].from_src : &v[k].from_dst;
                json_t *mb = json_object_get(lv, "Transit Size(MB)");
                json_t *ms = json_object_get(lv, "Transit Time(ms)");
                d->mb += json_is_number(mb) ? json_number_value(mb) : 0;
                d->ms += json_is_number(ms) ? json_number_value(ms) : 0;
                d->ops++;
            }
        }
    }
    json_decref(map);
    json_decref(index);
    if (!err && n && !(out->v = malloc(n * sizeof *out->v)))
        err = 1;
    for (size_t k = 0; !err && k < n; k++) {
        const acc *a = v[k].from_src.ops ? &v[k].from_src : &v[k].from_dst;
        aip__cluster_link *l = &out->v[k];
        l->src = v[k].src;
        l->dst = v[k].dst;
        memcpy(l->transport, v[k].transport, sizeof l->transport);
        l->mb = a->mb;
        l->ms = a->ms;
        l->records = a->ops;
        l->gbps = a->ms > 1e-15 ? a->mb / a->ms : 0;
        l->slow = 0;
    }
    free(v);
    if (err) {
        free(out->v);
        memset(out, 0, sizeof *out);
        return aip__fail(AIP_ERR_NOMEM, "out of memory building the link matrix");
    }
    out->n = n;
    if (n)
        qsort(out->v, n, sizeof *out->v, cmp_link);
    return AIP_OK;
}

void aip__cluster_links_free(aip__cluster_links *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Whether the verdict named `rank` slow (c->slow, per directory). */
static int rank_named_slow(const aip__cluster *c, long rank)
{
    for (size_t i = 0; c->slow && i < c->n; i++)
        if (c->r[i].rank == rank && !c->r[i].problem[0] && c->slow[i])
            return 1;
    return 0;
}

/* One transport's bandwidths: count, mean, median, extremes. */
typedef struct tstats {
    size_t n, at_lo, at_hi;
    double mean, med, lo, hi, gap;
} tstats;

static int transport_stats(const aip__cluster_links *l, const char *tr, tstats *t)
{
    double sum = 0;
    memset(t, 0, sizeof *t);
    t->lo = INFINITY;
    t->hi = -INFINITY;
    for (size_t k = 0; k < l->n; k++) {
        const aip__cluster_link *x = &l->v[k];
        if (strcmp(x->transport, tr))
            continue;
        sum += x->gbps;
        if (x->gbps < t->lo)
            t->lo = x->gbps, t->at_lo = k;
        if (x->gbps > t->hi)
            t->hi = x->gbps, t->at_hi = k;
        t->n++;
    }
    if (!t->n)
        return 0;
    double *bw = malloc(t->n * sizeof *bw);
    if (!bw)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < l->n; k++)
        if (!strcmp(l->v[k].transport, tr))
            bw[n++] = l->v[k].gbps;
    qsort(bw, n, sizeof *bw, aip__cluster_cmp_double);
    t->med = n % 2 ? bw[n / 2] : (bw[n / 2 - 1] + bw[n / 2]) / 2;
    free(bw);
    t->mean = sum / (double)n;
    t->gap = t->mean > 0 ? (t->hi - t->lo) / t->mean : 0;
    return 0;
}

/* The rule per transport other than LOCAL (the file's header): every link
 * gets its transport's median; those more than 5 % below it, when the
 * spread reaches 5 % of the mean, are marked slow.  Returns how many. */
size_t aip__cluster_links_mark(aip__cluster_links *l)
{
    size_t slow = 0;
    for (size_t k = 0; k < l->n; k++) {
        l->v[k].slow = 0;
        l->v[k].median_gbps = 0;
    }
    for (size_t k = 0; k < l->n; k++) {
        const char *tr = l->v[k].transport;
        tstats t;
        if (!strcmp(tr, "LOCAL") || l->v[k].median_gbps != 0 || transport_stats(l, tr, &t))
            continue;
        for (size_t j = 0; j < l->n; j++) {
            aip__cluster_link *x = &l->v[j];
            if (strcmp(x->transport, tr))
                continue;
            x->median_gbps = t.med > 0 ? t.med : -1; /* -1: judged, no bandwidth */
            if (t.gap >= SLOW_LINK_RATIO && t.med > 0 &&
                (t.med - x->gbps) / t.med > SLOW_LINK_RATIO) {
                x->slow = 1;
                slow++;
            }
        }
    }
    for (size_t k = 0; k < l->n; k++)
        if (l->v[k].median_gbps < 0)
            l->v[k].median_gbps = 0;
    return slow;
}

/* What the rule found for one transport (aip__cluster_links_mark() has
 * run): returns the number of slow links said. */
static size_t judge(const aip__cluster *c, const aip__cluster_links *l, const char *tr)
{
    tstats t;
    if (transport_stats(l, tr, &t) || !t.n)
        return 0;
    aip__cluster_say(c,
                     "links %s: %zu, bandwidth mean %.4f GB/s, median %.4f, max %.4f (%ld->%ld), "
                     "min %.4f (%ld->%ld): max - min is %.1f%% of the mean (limit %.0f%%)\n",
                     tr, t.n, t.mean, t.med, t.hi, l->v[t.at_hi].src, l->v[t.at_hi].dst, t.lo,
                     l->v[t.at_lo].src, l->v[t.at_lo].dst, 100 * t.gap, 100 * SLOW_LINK_RATIO);
    size_t slow = 0;
    for (size_t k = 0; k < l->n; k++) {
        const aip__cluster_link *x = &l->v[k];
        if (strcmp(x->transport, tr) || !x->slow)
            continue;
        slow++;
        /* A link's time is its ops' elapse, waiting included (point-to-point
         * ops are not split): one end being a slow rank explains it too. */
        char why[96] = "";
        long end = aip__cluster_link_slow_end(c, x);
        if (end >= 0)
            snprintf(why, sizeof why, "; rank %ld is slow: the time includes waiting for it", end);
        aip__cluster_say(c,
                         "slow link: %ld->%ld %s — %.4f GB/s (%.6f MB in %.6f ms, %zu "
                         "records), %.1f%% below the %s links' median %.4f GB/s (limit %.0f%%)%s\n",
                         x->src, x->dst, tr, x->gbps, x->mb, x->ms, x->records,
                         100 * (t.med - x->gbps) / t.med, tr, t.med, 100 * SLOW_LINK_RATIO, why);
    }
    return slow;
}

long aip__cluster_link_slow_end(const aip__cluster *c, const aip__cluster_link *x)
{
    return rank_named_slow(c, x->dst) ? x->dst : rank_named_slow(c, x->src) ? x->src : -1;
}

/* The advisor's own form: per (step, rank), the SDMA and RDMA sizes and
 * transit times of communication.json's split ops summed (cluster_comm.c
 * gives a split op its transit time), bandwidth = size / time
 * (rounded to 4 decimals, 0 without time); over all those rows, max − min
 * against the mean. */
static void advisor_rule(const aip__cluster *c)
{
    static const char *const types[] = {"SDMA", "RDMA"};
    size_t rows = 0, cap = 0;
    struct row {
        const char *step;
        long rank;
        double mb[2], ms[2];
    } *v = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        const char *step, *cls, *op;
        json_t *sv, *cv, *ov;
        json_object_foreach(r->comm, step, sv) {
            struct row cur = {step, r->rank, {0, 0}, {0, 0}};
            int any = 0;
            json_object_foreach(sv, cls, cv) json_object_foreach(cv, op, ov) {
                if (!strncmp(op, "Total", 5))
                    continue;
                json_t *bw = json_object_get(ov, "Communication Bandwidth Info");
                for (int t = 0; t < 2; t++) {
                    json_t *b = json_object_get(bw, types[t]);
                    /* no transit time: not split (point-to-point, or a rank
                     * alone), its size alone would inflate the bandwidth */
                    if (!json_is_number(json_object_get(b, "Transit Time(ms)")))
                        continue;
                    any = 1;
                    cur.mb[t] += json_number_value(json_object_get(b, "Transit Size(MB)"));
                    cur.ms[t] += json_number_value(json_object_get(b, "Transit Time(ms)"));
                }
            }
            if (!any)
                continue;
            if (rows == cap) {
                cap = cap ? 2 * cap : 64;
                struct row *nv = realloc(v, cap * sizeof *nv);
                if (!nv) {
                    free(v);
                    return;
                }
                v = nv;
            }
            v[rows++] = cur;
        }
    }
    for (int t = 0; t < 2 && rows; t++) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        size_t at_lo = 0, at_hi = 0;
        for (size_t k = 0; k < rows; k++) {
            double b = fabs(v[k].ms[t]) < 1e-15 ? 0 : aip__py_round(v[k].mb[t] / v[k].ms[t], 4);
            sum += b;
            if (b < lo)
                lo = b, at_lo = k;
            if (b > hi)
                hi = b, at_hi = k;
        }
        double mean = sum / (double)rows, gap = mean != 0 ? (hi - lo) / mean : 0;
        if (mean == 0)
            continue; /* no such traffic */
        aip__cluster_say(c,
                         "advisor rule (slow link): %s bandwidth over %zu (step, rank) rows: "
                         "mean %.4f GB/s, max %.4f (%s rank %ld), min %.4f (%s rank %ld): "
                         "difference %.4f GB/s, %.1f%% of the mean (limit 5%%)%s\n",
                         types[t], rows, mean, hi, v[at_hi].step, v[at_hi].rank, lo,
                         v[at_lo].step, v[at_lo].rank, hi - lo, 100 * gap,
                         gap >= SLOW_LINK_RATIO ? ": slow link" : "");
    }
    free(v);
}

void aip__cluster_links_verdict(const aip__cluster *c, aip__cluster_links *l)
{
    size_t peers = 0, slow = 0;
    aip__cluster_links_mark(l);
    for (size_t k = 0; k < l->n; k++)
        peers += l->v[k].src != l->v[k].dst;
    if (l->n)
        aip__cluster_say(c, "link matrix: %zu links between global ranks, %zu between two ranks\n",
                         l->n, peers);
    if (l->unmapped)
        aip__cluster_say(c,
                         "link matrix: %zu link records left out: a group-local rank no rank "
                         "reported a self link for\n",
                         l->unmapped);
    const char *seen[16];
    size_t n_seen = 0;
    for (size_t k = 0; k < l->n; k++) {
        const char *tr = l->v[k].transport;
        int dup = !strcmp(tr, "LOCAL");
        for (size_t s = 0; s < n_seen && !dup; s++)
            dup = !strcmp(seen[s], tr);
        if (dup || n_seen == 16)
            continue;
        seen[n_seen++] = tr;
        slow += judge(c, l, tr);
    }
    if (!l->n)
        aip__cluster_say(c, "no link matrix: no rank has a communication_matrix.json with "
                            "links\n");
    else if (!peers)
        aip__cluster_say(c, "no slow link: no transfers between two ranks are recorded "
                            "(collectives give each rank's own bytes only)\n");
    else if (!slow)
        aip__cluster_say(c, "no slow link: no link's bandwidth is more than 5%% below its "
                            "transport's median\n");
    advisor_rule(c);
}
