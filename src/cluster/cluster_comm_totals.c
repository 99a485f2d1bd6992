/*
 * cluster_comm_totals.c — a collective's "<type>-total@<group>" entry in a
 * rank's communication_matrix.json, which the rank alone does not write
 * (src/analysis/comm_derive.c): its only link is the rank's self link,
 * whose transfer time needs the other ranks, and msprof-analyze's
 * communication_matrix_sum divides every total's size by its time.  Once
 * `aiprof cluster` has split every op of the type, the total has a time:
 * aip__cc_add_totals() puts it back where analyse would have written it
 * (right after the type's top1 / middle / bottom entries) with the sum of
 * the ops' sizes, and aip__cc_fill_ranks() gives it the sum of their
 * transit times like every self link; aip__cc_strip_totals() takes it out
 * again at the start of every pass (the write-back is reversible).
 */
#include "cluster_comm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIME_INFO "Communication Time Info"
#define BW_INFO "Communication Bandwidth Info"

/* "<type>-<label>@<group>": type length and label, or 0. */
static size_t split_key(const char *key, const char **label, const char **group)
{
    const char *dash = strchr(key, '-'), *at = strrchr(key, '@');
    if (!dash || !at || at < dash)
        return 0;
    *label = dash + 1;
    *group = at + 1;
    return (size_t)(dash - key);
}

/* "hcom_<type>__..." of the lower-case `type` (n bytes) in `group`? */
int aip__cc_op_of_type(const char *op, const char *type, size_t n, const char *group)
{
    const char *at = strrchr(op, '@');
    if (strncmp(op, "hcom_", 5) || !at || strcmp(at + 1, group))
        return 0;
    const char *t = op + 5, *end = strstr(t, "__");
    if (!end || (size_t)(end - t) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i] >= 'A' && t[i] <= 'Z' ? (char)(t[i] - 'A' + 'a') : t[i];
        if (c != type[i])
            return 0;
    }
    return 1;
}

void aip__cc_strip_totals(json_t *matrix)
{
    const char *step, *key, *label, *group;
    json_t *sv, *ov;
    void *tmp;
    json_object_foreach(matrix, step, sv) {
        json_t *coll = json_object_get(sv, "collective");
        json_object_foreach_safe(coll, tmp, key, ov)
            if (split_key(key, &label, &group) && !strncmp(label, "total@", 6))
                json_object_del(coll, key);
    }
}

/* The total entry of `type` in `group`, untimed, from the step's ops
 * (`ops`, the collective class of its communication.json) and its top1
 * entry (`top`: the self link's name and the op it names); the time is
 * aip__cc_fill_ranks()'s, as for the other self links.  NULL when an op of
 * the type was not split (the total would have no time), or no memory. */
static json_t *total_entry(json_t *ops, const char *type, size_t n, const char *group,
                           json_t *top)
{
    const char *op, *lk = NULL, *tt;
    json_t *ov, *l = NULL, *v;
    double mb = 0;
    size_t count = 0;
    json_object_foreach(ops, op, ov) {
        if (!aip__cc_op_of_type(op, type, n, group))
            continue;
        if (!json_is_number(json_object_get(json_object_get(ov, TIME_INFO),
                                            "Transit Time(ms)")))
            return NULL;
        json_object_foreach(json_object_get(ov, BW_INFO), tt, v)
            mb += json_number_value(json_object_get(v, "Transit Size(MB)"));
        count++;
    }
    json_object_foreach(top, lk, l)
        break;
    if (!count || !lk || !json_is_object(l) || !json_is_string(json_object_get(l, "Op Name")))
        return NULL;
    /* the sum as the text writer prints sizes: MB with 6 decimals */
    char buf[64];
    snprintf(buf, sizeof buf, "%.6f", mb);
    return json_pack("{s:{s:s, s:f, s:O}}", lk, "Transport Type", "LOCAL", "Transit Size(MB)",
                     strtod(buf, NULL), "Op Name", json_object_get(l, "Op Name"));
}

/* One step's collective entries, each type's total after its other
 * entries; -1: no memory. */
static int step_totals(json_t *sv, json_t *ops)
{
    json_t *coll = json_object_get(sv, "collective"), *out = json_object();
    const char *key, *label, *group;
    json_t *ov;
    if (!coll || !out) {
        json_decref(out);
        return out ? 0 : -1;
    }
    int err = 0;
    void *it = json_object_iter(coll);
    while (it && !err) {
        key = json_object_iter_key(it);
        ov = json_object_iter_value(it);
        err = json_object_set(out, key, ov) != 0;
        it = json_object_iter_next(coll, it);
        size_t n = split_key(key, &label, &group);
        const char *next = it ? json_object_iter_key(it) : NULL;
        const char *nl, *ng;
        if (!n || (next && split_key(next, &nl, &ng) == n && !strncmp(next, key, n) &&
                   !strcmp(ng, group)))
            continue; /* not the type's last entry */
        char total[512];
        if (snprintf(total, sizeof total, "%.*s-total@%s", (int)n, key, group) >=
                (int)sizeof total ||
            json_object_get(coll, total))
            continue;
        char top[512];
        snprintf(top, sizeof top, "%.*s-top1@%s", (int)n, key, group);
        json_t *e = total_entry(ops, key, n, group, json_object_get(coll, top));
        if (e)
            err = json_object_set_new(out, total, e) != 0;
    }
    if (err) {
        json_decref(out);
        return -1;
    }
    return json_object_set_new(sv, "collective", out) ? -1 : 0;
}

int aip__cc_add_totals(json_t *matrix, json_t *comm)
{
    const char *step;
    json_t *sv;
    json_object_foreach(matrix, step, sv) {
        json_t *ops = json_object_get(json_object_get(comm, step), "collective");
        if (ops && step_totals(sv, ops))
            return -1;
    }
    return 0;
}
