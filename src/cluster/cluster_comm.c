/*
 * cluster_comm.c — wait vs transit across ranks (cluster_comm.h).  A
 * collective cannot finish anywhere before its last participant arrives,
 * so with every rank's start and end of one collective on one clock, a
 * rank's elapse time splits into the wait for the last arrival, the
 * transit until the first participant is released, and idle time after
 * that.  Steps:
 *
 * 1. Match: a collective is its key `<name>@<group>` in communication.json
 *    (the name carries the group's sequence number, the same on every
 *    member: docs/COMMUNICATION.md), whatever step each rank put it in.
 *    One hash table over the keys: linear in ranks x ops.  It is matched
 *    when every rank of its group (the ranks that list an op of that group,
 *    as communication_group.json has them) lists it exactly once.
 * 2. Clocks: ranks on one host (profiler_info's host_uid / hostname) share
 *    one wall clock, offset 0 between them.  The first rank's host is the
 *    reference; another host's offset is the median, over the matched
 *    collectives that release every rank together (allReduce, allGather,
 *    barrier, alltoall(v), reduceScatter: no rank leaves before the last
 *    has arrived and the data has gone round) of its ranks' end minus an
 *    aligned participant's end.  Hosts are aligned in rounds through any
 *    host aligned before, so a chain of groups suffices.  The error of the
 *    estimate is the release skew (how far apart a collective lets its
 *    ranks go: one message latency, microseconds on a LAN), not the wait.
 * 3. Split (aip__cc_split) on aligned clocks; the op's bandwidth block
 *    gets the same transit time (its Transit Time, Bandwidth = size /
 *    transit, Size Distribution), never the elapse, which holds the wait;
 *    the ranks' totals and the matrix's self links follow from the split
 *    ops (cluster_comm_back.c); Synchronization Time = Wait
 *    Time (msprof: the notify waits before the first transfer; on a host
 *    the only wait visible is the one for the last arrival), ratios as
 *    msprof-analyze's: wait / (wait + transit), sync / (sync + transit),
 *    rounded to 4 places.
 *
 * What is not matched, or on a host whose clock could not be aligned,
 * keeps its elapse time and gets a note saying why (AIP__CC_NOTE), never
 * an invented split.  Point-to-point ops are not split (a send is not
 * released with its receive).
 */
#include "cluster_comm.h"
#include "py_round.h"
#include "error.h"
#include "fs.h"
#include "hash_table.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void aip__cc_split(const int64_t *start, const int64_t *end, size_t n, int64_t *wait,
                   int64_t *transit, int64_t *idle)
{
    if (!n)
        return;
    int64_t last_in = start[0], first_out = end[0];
    for (size_t i = 1; i < n; i++) {
        last_in = start[i] > last_in ? start[i] : last_in;
        first_out = end[i] < first_out ? end[i] : first_out;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = start[i], e = end[i] > start[i] ? end[i] : start[i];
        int64_t w_end = last_in < e ? last_in : e;
        int64_t w = w_end > s ? w_end - s : 0;
        int64_t t_from = last_in > s ? last_in : s, t_to = first_out < e ? first_out : e;
        int64_t t = t_to > t_from ? t_to - t_from : 0;
        wait[i] = w;
        transit[i] = t;
        idle[i] = (e - s) - w - t;
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t aip__cc_median(int64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return v[(n - 1) / 2];
}

/* ---- match -------------------------------------------------------------- */

static void note(json_t *time, const char *fmt, ...) AIP_PRINTF(2, 3);

typedef struct rec {      /* one rank's record of one collective */
    json_t *op;           /* its entry in r->comm */
    json_t *time;         /* its "Communication Time Info" there */
    uint32_t rank, coll;  /* index in c->r; its collective */
    int64_t start, end;   /* ns on the rank's own clock */
} rec;

typedef struct coll {
    const char *key;      /* "<name>@<group>" (a key of some r->comm) */
    uint64_t hash;
    uint32_t group, n, at, last_rank;
    unsigned char dup, sync;
} coll;

typedef struct group {
    const char *name;     /* after the key's last '@' */
    size_t len;
    uint64_t hash;
    uint32_t n_ranks, last_rank;
} group;

typedef struct pass {
    aip__cluster *c;
    rec *rec;
    size_t n_rec, cap_rec;
    coll *coll;
    size_t cap_coll;
    aip__ht coll_ht;
    group *grp;
    size_t cap_grp;
    aip__ht grp_ht;
    uint32_t *by_coll;    /* record numbers grouped by collective */
    int64_t *off;         /* per rank: ns to subtract; INT64_MIN = not aligned */
} pass;

static uint64_t coll_hash(const void *ctx, uint32_t i) { return ((const pass *)ctx)->coll[i].hash; }
static uint64_t grp_hash(const void *ctx, uint32_t i) { return ((const pass *)ctx)->grp[i].hash; }

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? 2 * *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* The group of `key` (after its last '@'), counting rank `rank` once. */
static int add_group(pass *p, const char *key, uint32_t rank, uint32_t *out)
{
    const char *at = strrchr(key, '@');
    const char *name = at ? at + 1 : key;
    size_t len = strlen(name);
    uint64_t h = aip__fnv1a(name, len);
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&p->grp_ht, h, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&p->grp_ht, &pr))
        if (p->grp[i].len == len && !memcmp(p->grp[i].name, name, len)) {
            if (p->grp[i].last_rank != rank) {
                p->grp[i].last_rank = rank;
                p->grp[i].n_ranks++;
            }
            *out = i;
            return 0;
        }
    if (grow((void **)&p->grp, &p->cap_grp, p->grp_ht.n + 1, sizeof *p->grp) ||
        aip__ht_add(&p->grp_ht, &pr, grp_hash, p))
        return -1;
    p->grp[p->grp_ht.n - 1] = (group){name, len, h, 1, rank};
    *out = (uint32_t)p->grp_ht.n - 1;
    return 0;
}

static int sync_type(const char *key)
{
    static const char *const types[] = {"allReduce", "allGather", "barrier", "alltoall",
                                        "alltoallv", "reduceScatter"};
    if (strncmp(key, "hcom_", 5))
        return 0;
    const char *end = strstr(key + 5, "__");
    size_t n = end ? (size_t)(end - key - 5) : 0;
    for (size_t i = 0; n && i < sizeof types / sizeof *types; i++)
        if (strlen(types[i]) == n && !memcmp(key + 5, types[i], n))
            return 1;
    return 0;
}

static int add_rec(pass *p, const char *key, json_t *op, uint32_t rank, uint32_t grp)
{
    json_t *time = json_object_get(op, "Communication Time Info");
    json_t *ts = json_object_get(time, "Start Timestamp(us)");
    json_t *el = json_object_get(time, "Elapse Time(ms)");
    /* a start past ±9e15 us or an elapse past a day is no clock reading:
     * left out of the match (the others are then not matched either) */
    if (!json_is_number(ts) || !json_is_number(el) || !(fabs(json_number_value(ts)) < 9e15) ||
        !(json_number_value(el) >= 0 && json_number_value(el) < 864e5)) {
        note(time, "not split: its start or elapse time is not a usable number");
        return 0;
    }
    uint64_t h = aip__fnv1a_str(key);
    aip__ht_probe pr;
    uint32_t k = AIP__HT_NONE;
    for (uint32_t i = aip__ht_first(&p->coll_ht, h, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&p->coll_ht, &pr))
        if (p->coll[i].hash == h && !strcmp(p->coll[i].key, key)) {
            k = i;
            break;
        }
    if (k == AIP__HT_NONE) {
        if (grow((void **)&p->coll, &p->cap_coll, p->coll_ht.n + 1, sizeof *p->coll) ||
            aip__ht_add(&p->coll_ht, &pr, coll_hash, p))
            return -1;
        k = (uint32_t)p->coll_ht.n - 1;
        p->coll[k] = (coll){key, h, grp, 0, 0, UINT32_MAX, 0, (unsigned char)sync_type(key)};
    }
    coll *cl = &p->coll[k];
    if (cl->last_rank == rank)
        cl->dup = 1; /* listed twice by one rank: which is which is unknown */
    cl->last_rank = rank;
    cl->n++;
    if (grow((void **)&p->rec, &p->cap_rec, p->n_rec + 1, sizeof *p->rec))
        return -1;
    /* µs with 3 decimals and ms with 6: ns, exactly where the double holds
     * it (µs * 1e3 as a double would lose the ns of a 1.7e18 ns clock) */
    double us = json_number_value(ts), whole = floor(us);
    int64_t start = (int64_t)whole * 1000 + llround((us - whole) * 1e3);
    p->rec[p->n_rec++] =
        (rec){op, time, rank, k, start, start + llround(json_number_value(el) * 1e6)};
    return 0;
}

/* Every rank's collectives into records; group sizes from both files. */
static int collect(pass *p)
{
    aip__cluster *c = p->c;
    for (size_t i = 0; i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        json_t *files[2] = {r->comm, r->matrix};
        /* a file this pass wrote back holds an earlier split: only the
         * rank's own figures go in (cluster_comm_back.c) */
        aip__cc_strip(r);
        for (int f = 0; f < 2; f++) {
            const char *step, *key;
            json_t *sv, *ov;
            json_object_foreach(files[f], step, sv)
                json_object_foreach(json_object_get(sv, "collective"), key, ov) {
                    uint32_t g;
                    if (!strncmp(key, "Total", 5))
                        continue;
                    if (add_group(p, key, (uint32_t)i, &g))
                        return -1;
                    if (f == 0 && add_rec(p, key, ov, (uint32_t)i, g))
                        return -1;
                }
        }
    }
    /* records by collective: counting sort */
    if (!(p->by_coll = malloc((p->n_rec ? p->n_rec : 1) * sizeof *p->by_coll)))
        return -1;
    uint32_t at = 0;
    for (size_t k = 0; k < p->coll_ht.n; k++) {
        p->coll[k].at = at;
        at += p->coll[k].n;
        p->coll[k].n = 0;
    }
    for (size_t j = 0; j < p->n_rec; j++) {
        coll *cl = &p->coll[p->rec[j].coll];
        p->by_coll[cl->at + cl->n++] = (uint32_t)j;
    }
    return 0;
}

static int matched(const pass *p, const coll *cl)
{
    return !cl->dup && cl->n == p->grp[cl->group].n_ranks && cl->n > 1;
}

/* ---- clocks ------------------------------------------------------------- */

typedef struct hosts {
    char **name;          /* a rank without a host is its own: "\x01<rank index>" */
    uint64_t *hash;
    size_t n;
    aip__ht ht;
} hosts;

static uint64_t host_hash(const void *ctx, uint32_t i) { return ((const hosts *)ctx)->hash[i]; }

typedef struct sample {
    uint32_t host;
    int64_t d;
} sample;

static int cmp_sample(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    if (x->host != y->host)
        return x->host < y->host ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d);
}

/* One round: every host not aligned yet that shares a synchronizing
 * collective with an aligned one gets the median of its ends minus the
 * aligned participant's.  @return hosts aligned now, or -1. */
static long align_round(pass *p, const uint32_t *host, int64_t *h_off, long *h_samples)
{
    sample *s = malloc((p->n_rec ? p->n_rec : 1) * sizeof *s);
    if (!s)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < p->coll_ht.n; k++) {
        const coll *cl = &p->coll[k];
        if (!cl->sync || !matched(p, cl))
            continue;
        int64_t ref_end = 0;
        int have = 0;
        for (uint32_t j = 0; j < cl->n && !have; j++) {
            const rec *x = &p->rec[p->by_coll[cl->at + j]];
            if (h_off[host[x->rank]] != INT64_MIN) {
                ref_end = x->end - h_off[host[x->rank]];
                have = 1;
            }
        }
        for (uint32_t j = 0; have && j < cl->n; j++) {
            const rec *x = &p->rec[p->by_coll[cl->at + j]];
            if (h_off[host[x->rank]] == INT64_MIN)
                s[n++] = (sample){host[x->rank], x->end - ref_end};
        }
    }
    qsort(s, n, sizeof *s, cmp_sample);
    long done = 0;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a; b < n && s[b].host == s[a].host; b++)
            ;
        /* the lower middle of the sorted run: a measured value, robust */
        h_off[s[a].host] = s[a + (b - a - 1) / 2].d;
        h_samples[s[a].host] = (long)(b - a);
        done++;
    }
    free(s);
    return done;
}

/* Hosts numbered by first appearance (ranks in rank order); the first
 * rank's host is the reference.  Sets p->off and each rank's
 * clock_offset_us / clock_samples. */
static int align(pass *p)
{
    aip__cluster *c = p->c;
    size_t n = c->n ? c->n : 1;
    hosts H = {calloc(n, sizeof(char *)), calloc(n, sizeof(uint64_t)), 0, {0}};
    uint32_t *host = calloc(n, sizeof *host);
    int64_t *h_off = malloc(n * sizeof *h_off);
    long *h_samples = calloc(n, sizeof *h_samples);
    p->off = malloc(n * sizeof *p->off);
    int err = !H.name || !H.hash || !host || !h_off || !h_samples || !p->off;
    for (size_t i = 0; !err && i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        char own[32];
        snprintf(own, sizeof own, "\x01%zu", i);
        const char *name = r->host ? r->host : own;
        uint64_t h = aip__fnv1a_str(name);
        aip__ht_probe pr;
        uint32_t k = AIP__HT_NONE;
        for (uint32_t j = aip__ht_first(&H.ht, h, &pr); j != AIP__HT_NONE;
             j = aip__ht_next(&H.ht, &pr))
            if (H.hash[j] == h && !strcmp(H.name[j], name)) {
                k = j;
                break;
            }
        if (k == AIP__HT_NONE) {
            H.hash[H.n] = h;
            if (!(H.name[H.n] = strdup(name)) || aip__ht_add(&H.ht, &pr, host_hash, &H)) {
                free(H.name[H.n]);
                err = 1;
                break;
            }
            k = (uint32_t)(H.n++);
        }
        host[i] = k;
    }
    if (!err) {
        for (size_t h = 0; h < H.n; h++)
            h_off[h] = INT64_MIN;
        const aip__rank_dir *first = aip__cluster_first_used(c);
        if (first) {
            h_off[host[first - c->r]] = 0;
            h_samples[host[first - c->r]] = -1;
        }
        long got;
        while ((got = align_round(p, host, h_off, h_samples)) > 0)
            ;
        err = got < 0;
    }
    for (size_t i = 0; !err && i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        p->off[i] = h_off[host[i]];
        r->clock_offset_us = p->off[i] == INT64_MIN ? NAN : (double)p->off[i] / 1e3;
        r->clock_samples = h_samples[host[i]];
    }
    for (size_t h = 0; H.name && h < H.n; h++)
        free(H.name[h]);
    free(H.name);
    free(H.hash);
    aip__ht_free(&H.ht);
    free(host);
    free(h_off);
    free(h_samples);
    return err ? -1 : 0;
}

/* ---- split ---------------------------------------------------------------- */

static void note(json_t *time, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (json_is_object(time))
        json_object_set_new(time, AIP__CC_NOTE, json_string(buf));
}

/* msprof-analyze's compute_ratio: 0 (an int) below 1e-15, else rounded
 * to 4 places. */
static json_t *ratio(int64_t a, int64_t b)
{
    if (b <= 0)
        return json_integer(0);
    return json_real(aip__py_round((double)a / (double)b, 4));
}

static void set_ms(json_t *time, const char *key, int64_t ns)
{
    json_object_set_new(time, key, json_real((double)ns / 1e6));
}

static int split_all(pass *p)
{
    size_t most = 1;
    for (size_t k = 0; k < p->coll_ht.n; k++)
        most = p->coll[k].n > most ? p->coll[k].n : most;
    int64_t *v = malloc(5 * most * sizeof *v);
    if (!v)
        return -1;
    int64_t *s = v, *e = v + most, *w = v + 2 * most, *t = v + 3 * most, *idle = v + 4 * most;
    for (size_t k = 0; k < p->coll_ht.n; k++) {
        const coll *cl = &p->coll[k];
        const group *g = &p->grp[cl->group];
        const uint32_t *ids = p->by_coll + cl->at;
        long lost = -1;
        for (uint32_t j = 0; j < cl->n && lost < 0; j++)
            if (p->off[p->rec[ids[j]].rank] == INT64_MIN)
                lost = p->c->r[p->rec[ids[j]].rank].rank;
        if (!matched(p, cl) || lost >= 0) {
            for (uint32_t j = 0; j < cl->n; j++) {
                json_t *time = p->rec[ids[j]].time;
                if (cl->dup)
                    note(time, "not split: a rank lists it twice");
                else if (g->n_ranks < 2)
                    note(time, "not split: its group has one rank");
                else if (cl->n != g->n_ranks)
                    note(time, "not split: on %u of the %u ranks of group %.*s", cl->n,
                         g->n_ranks, (int)g->len, g->name);
                else
                    note(time,
                         "not split: rank %ld's clock could not be aligned (its host shares "
                         "no collective that releases every rank together with an aligned "
                         "host)",
                         lost);
            }
            continue;
        }
        for (uint32_t j = 0; j < cl->n; j++) {
            const rec *x = &p->rec[ids[j]];
            s[j] = x->start - p->off[x->rank];
            e[j] = x->end - p->off[x->rank];
        }
        aip__cc_split(s, e, cl->n, w, t, idle);
        for (uint32_t j = 0; j < cl->n; j++) {
            json_t *time = p->rec[ids[j]].time;
            set_ms(time, "Transit Time(ms)", t[j]);
            set_ms(time, "Wait Time(ms)", w[j]);
            set_ms(time, "Synchronization Time(ms)", w[j]);
            set_ms(time, "Idle Time(ms)", idle[j]);
            json_object_set_new(time, "Wait Time Ratio", ratio(w[j], w[j] + t[j]));
            json_object_set_new(time, "Synchronization Time Ratio", ratio(w[j], w[j] + t[j]));
            if (aip__cc_set_transit(p->rec[ids[j]].op, t[j]))
                goto nomem;
        }
    }
    free(v);
    v = NULL;
    /* point-to-point: kept whole */
    aip__cluster *c = p->c;
    for (size_t i = 0; i < c->n; i++) {
        if (c->r[i].problem[0])
            continue;
        const char *step, *key;
        json_t *sv, *ov;
        json_object_foreach(c->r[i].comm, step, sv)
            json_object_foreach(json_object_get(sv, "p2p"), key, ov)
                if (strncmp(key, "Total", 5))
                    note(json_object_get(ov, "Communication Time Info"),
                         "not split: point-to-point (only collectives are matched)");
    }
    return aip__cc_fill_ranks(c);
nomem:
    free(v);
    return -1;
}

static void free_pass(pass *p)
{
    free(p->rec);
    free(p->coll);
    free(p->grp);
    free(p->by_coll);
    free(p->off);
    aip__ht_free(&p->coll_ht);
    aip__ht_free(&p->grp_ht);
}

aip_status aip__cluster_comm_split(aip__cluster *c)
{
    pass p = {.c = c};
    int err = collect(&p) || align(&p) || split_all(&p);
    free_pass(&p);
    return err ? aip__fail(AIP_ERR_NOMEM, "out of memory matching the collectives") : AIP_OK;
}

aip_status aip__cluster_comm(aip__cluster *c, const char *out_dir)
{
    int any = 0;
    for (size_t i = 0; i < c->n; i++)
        any |= !c->r[i].problem[0] && (c->r[i].comm || c->r[i].matrix);
    if (!any)
        return AIP_OK;
    aip_status split = aip__cluster_comm_split(c);
    if (split)
        return split;
    /* each file summed and written one step at a time, the database's
     * rows beside it (the bandwidth table from a second pass over
     * cluster_communication.json's steps: one table at a time keeps the
     * database's bytes what a whole-tree writer gives).  Without a
     * database (it cannot be written) the JSON files still are, and
     * its error is the pass's. */
    size_t dropped = 0;
    aip__cc_db *db = NULL;
    aip_status db_s = aip__cc_db_begin(&db, out_dir);
    aip__cc_step_fn rows = db ? aip__cc_db_rows : NULL;
    if (db)
        db_s = aip__cc_db_table(db, AIP__CC_TIME);
    aip_status s = aip__cc_stream(c, 0, out_dir, NULL, db_s ? NULL : rows, db);
    if (!s && !db_s && db && !(db_s = aip__cc_db_table(db, AIP__CC_BANDWIDTH)))
        s = aip__cc_stream(c, 0, NULL, NULL, rows, db);
    if (!s && !db_s && db)
        db_s = aip__cc_db_table(db, AIP__CC_MATRIX);
    if (!s)
        s = aip__cc_stream(c, 1, out_dir, &dropped, db_s ? NULL : rows, db);
    if (db)
        db_s = aip__cc_db_end(db, s ? s : db_s);
    if (!s)
        s = db_s;
    if (!s)
        aip__cc_write_back(c);
    if (dropped)
        aip__cluster_say(c,
                         "communication matrix: %zu links left out: a local rank of theirs maps "
                         "to no global rank (no rank reported its self link)\n",
                         dropped);
    return s;
}
