/*
 * cluster_comm_back.c — the cross-rank split in each rank's own files
 * (docs/CLUSTER.md "Written back into the ranks").  A rank analysed alone
 * writes only what it measured: an op's start and elapse time, its size,
 * and no transit / wait / synchronization / idle time, bandwidth or size
 * distribution (src/export/json_comm.c).  cluster_comm.c splits every
 * matched collective; here that split
 *  - goes into the op's bandwidth block too (aip__cc_set_transit), so that
 *    a record has one transit time and its bandwidth divides by it, never
 *    by time spent waiting;
 *  - gives each rank's "Total Op Info" its sums where every op of the
 *    class was split, and a collective's self link in the matrix the
 *    transit time of its ops, its type's total entry included (which the
 *    rank leaves out until then: cluster_comm_totals.c) (aip__cc_fill_ranks);
 *  - is written into the rank's communication.json,
 *    communication_matrix.json and analysis.db (aip__cc_write_back,
 *    cluster_comm_rankfiles.c), so that msprof-analyze reading the rank
 *    directories finds the measured split.
 * It is reversible: every pass first takes the split figures out again
 * (aip__cc_strip), and `aiprof analyse` rewrites the files from the raw
 * data.
 */
#include "cluster_comm.h"
#include "error.h"
#include "fs.h"
#include "py_round.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_INFO "Communication Time Info"
#define BW_INFO "Communication Bandwidth Info"
#define TOTAL "Total Op Info"

static const char *const SPLIT_KEYS[] = {"Transit Time(ms)", "Wait Time(ms)",
                                         "Synchronization Time(ms)", "Idle Time(ms)",
                                         "Wait Time Ratio", "Synchronization Time Ratio",
                                         AIP__CC_NOTE};
static const char *const CLASSES[] = {"collective", "p2p"};

/* ---- strip -------------------------------------------------------------- */

static void strip_bandwidth(json_t *bw)
{
    const char *tt;
    json_t *v;
    json_object_foreach(bw, tt, v) {
        json_object_del(v, "Transit Time(ms)");
        json_object_del(v, "Bandwidth(GB/s)");
        json_object_del(v, "Size Distribution");
    }
}

/* "<src>-<dst>" with src == dst: a self link. */
static int self_link(const char *key, long *rank)
{
    char *end;
    long a = strtol(key, &end, 10);
    if (end == key || *end != '-')
        return 0;
    const char *b = end + 1;
    long d = strtol(b, &end, 10);
    if (end == b || *end)
        return 0;
    *rank = a;
    return a == d;
}

void aip__cc_strip(aip__rank_dir *r)
{
    const char *step, *op, *lk;
    json_t *sv, *ov, *l;
    json_object_foreach(r->comm, step, sv)
        for (int k = 0; k < 2; k++)
            json_object_foreach(json_object_get(sv, CLASSES[k]), op, ov) {
                json_t *t = json_object_get(ov, TIME_INFO);
                for (size_t i = 0; i < sizeof SPLIT_KEYS / sizeof *SPLIT_KEYS; i++)
                    json_object_del(t, SPLIT_KEYS[i]);
                strip_bandwidth(json_object_get(ov, BW_INFO));
            }
    aip__cc_strip_totals(r->matrix);
    json_object_foreach(r->matrix, step, sv)
        json_object_foreach(json_object_get(sv, "collective"), op, ov) {
            long me;
            json_object_foreach(ov, lk, l)
                if (self_link(lk, &me)) {
                    json_object_del(l, "Transit Time(ms)");
                    json_object_del(l, "Bandwidth(GB/s)");
                }
        }
}

/* ---- fill ----------------------------------------------------------------- */

/* msprof-analyze's compute_ratio: 0 (an int) for a zero divisor. */
static json_t *ratio(double a, double b)
{
    if (!(fabs(b) >= 1e-15))
        return json_integer(0);
    return json_real(aip__py_round(a / b, 4));
}

static int set_bandwidth(json_t *v, double ms)
{
    double mb = json_number_value(json_object_get(v, "Transit Size(MB)"));
    return json_object_set_new(v, "Transit Time(ms)", json_real(ms)) ||
           json_object_set_new(v, "Bandwidth(GB/s)", ratio(mb, ms));
}

int aip__cc_set_transit(json_t *op, int64_t ns)
{
    const char *tt;
    json_t *v;
    double ms = (double)ns / 1e6;
    json_object_foreach(json_object_get(op, BW_INFO), tt, v) {
        if (!json_is_object(v))
            continue; /* not a block: nothing to fill */
        char size[64];
        snprintf(size, sizeof size, "%.6f",
                 json_number_value(json_object_get(v, "Transit Size(MB)")));
        json_t *dist = json_pack("{s:[i,f]}", size, 1, ms);
        if (!dist || json_object_set_new(v, "Size Distribution", dist) || set_bandwidth(v, ms))
            return -1;
    }
    return 0;
}

static double num(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

/* One class of one step: its Total Op Info's split sums, when every op of
 * it was split (otherwise the total stays without them). */
static int class_total(json_t *ops)
{
    json_t *total = json_object_get(ops, TOTAL), *ov;
    const char *op;
    size_t n = 0;
    if (!total)
        return 0;
    json_object_foreach(ops, op, ov) {
        if (!strcmp(op, TOTAL))
            continue;
        if (!json_is_number(json_object_get(json_object_get(ov, TIME_INFO), SPLIT_KEYS[0])))
            return 0;
        n++;
    }
    if (!n)
        return 0;
    double sum[4] = {0};
    json_t *tt_time = json_object(), *tt_dist = json_object();
    int err = !tt_time || !tt_dist;
    json_object_foreach(ops, op, ov) {
        if (err || !strcmp(op, TOTAL))
            continue;
        for (int i = 0; i < 4; i++)
            sum[i] += num(json_object_get(ov, TIME_INFO), SPLIT_KEYS[i]);
        const char *tt, *size;
        json_t *v, *bin;
        json_object_foreach(json_object_get(ov, BW_INFO), tt, v) {
            if (!json_is_object(v))
                continue;
            json_object_set_new(tt_time, tt,
                                json_real(num(tt_time, tt) + num(v, "Transit Time(ms)")));
            json_t *d = json_object_get(tt_dist, tt);
            if (!d && json_object_set_new(tt_dist, tt, d = json_object()))
                err = 1;
            json_object_foreach(json_object_get(v, "Size Distribution"), size, bin) {
                json_t *acc = json_object_get(d, size);
                double c = json_number_value(json_array_get(bin, 0));
                double t = json_number_value(json_array_get(bin, 1));
                if (acc) {
                    c += json_number_value(json_array_get(acc, 0));
                    t += json_number_value(json_array_get(acc, 1));
                }
                err |= json_object_set_new(d, size, json_pack("[I,f]", (json_int_t)c, t)) != 0;
            }
        }
    }
    json_t *time = json_object_get(total, TIME_INFO);
    if (!json_is_object(time))
        time = NULL;
    for (int i = 0; !err && time && i < 4; i++)
        err = json_object_set_new(time, SPLIT_KEYS[i], json_real(sum[i]));
    err = err || (time && (json_object_set_new(time, "Wait Time Ratio",
                                                ratio(sum[1], sum[1] + sum[0])) ||
                           json_object_set_new(time, "Synchronization Time Ratio",
                                               ratio(sum[2], sum[2] + sum[0]))));
    const char *tt;
    json_t *v;
    json_object_foreach(json_object_get(total, BW_INFO), tt, v) {
        json_t *d = json_object_get(tt_dist, tt);
        if (!json_is_object(v))
            continue;
        err = err || set_bandwidth(v, num(tt_time, tt)) ||
              json_object_set(v, "Size Distribution", d ? d : json_object());
    }
    json_decref(tt_time);
    json_decref(tt_dist);
    return err ? -1 : 0;
}

/* The transit time (ms) of a collective self-link entry `key`
 * ("<type>-<label>@<group>") from the step's split ops; -1 if any of them
 * was not split. */
static double self_transit(json_t *ops, const char *key, const json_t *link)
{
    const char *dash = strchr(key, '-'), *at = strrchr(key, '@');
    if (!dash || !at || at < dash)
        return -1;
    const char *group = at + 1;
    if (strncmp(dash + 1, "total@", 6)) { /* top1 / middle / bottomN: one op */
        const char *name = json_string_value(json_object_get(link, "Op Name"));
        char full[512];
        if (!name || snprintf(full, sizeof full, "%s@%s", name, group) >= (int)sizeof full)
            return -1;
        json_t *time = json_object_get(json_object_get(ops, full), TIME_INFO);
        json_t *v = json_object_get(time, SPLIT_KEYS[0]);
        return json_is_number(v) ? json_number_value(v) : -1;
    }
    double sum = 0;
    size_t n = 0;
    const char *op;
    json_t *ov;
    json_object_foreach(ops, op, ov) {
        if (!aip__cc_op_of_type(op, key, (size_t)(dash - key), group))
            continue;
        json_t *v = json_object_get(json_object_get(ov, TIME_INFO), SPLIT_KEYS[0]);
        if (!json_is_number(v))
            return -1;
        sum += json_number_value(v);
        n++;
    }
    return n ? sum : -1;
}

int aip__cc_fill_ranks(aip__cluster *c)
{
    for (size_t i = 0; i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        const char *step, *key, *lk;
        json_t *sv, *ov, *l;
        json_object_foreach(r->comm, step, sv)
            for (int k = 0; k < 2; k++)
                if (class_total(json_object_get(sv, CLASSES[k])))
                    return -1;
        if (aip__cc_add_totals(r->matrix, r->comm))
            return -1;
        json_object_foreach(r->matrix, step, sv) {
            json_t *ops = json_object_get(json_object_get(r->comm, step), "collective");
            json_object_foreach(json_object_get(sv, "collective"), key, ov) {
                long me;
                json_object_foreach(ov, lk, l) {
                    double ms;
                    if (json_is_object(l) && self_link(lk, &me) &&
                        (ms = self_transit(ops, key, l)) >= 0 && set_bandwidth(l, ms))
                        return -1;
                }
            }
        }
    }
    return 0;
}
