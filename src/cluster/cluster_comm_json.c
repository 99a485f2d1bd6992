/*
 * cluster_comm_json.c — cluster_communication.json and
 * cluster_communication_matrix.json as msprof-analyze's text mode writes
 * them (cluster_analyse/analysis/communication_analysis.py,
 * comm_matrix_analysis.py, base_analysis.py), from the ranks' split
 * communication.json (cluster_comm.c) and communication_matrix.json:
 *
 *   { "<rank set as a Python tuple>": { "<step>": { "<op>@<group>":
 *       { "<rank>": <the rank's op> }, ..., "Total Op Info@<group>":
 *       { "<rank>": <sums> } } } }
 *
 * The rank set is that of the op's group for its class (collective /
 * p2p: the ranks listing the group in either file), so a group's
 * collective and p2p ops share a block when their sets are equal, as
 * there.  Totals sum every time field but the start and the ratios, which
 * are recomputed (wait / (wait + transit), sync / (sync + transit)); sizes
 * and times per transport, the size distributions merged.  The matrix
 * sums each link over the ranks, maps group-local ranks to global ranks
 * through the self links ("<l>-<l>" reported by global rank g), drops a
 * link whose end maps to none (counted), and totals the links of the
 * non-top/middle/bottom entries per group.  The text is Python's
 * json.dumps() (aip__cc_dump_python), so the files compare byte for byte
 * where the content is equal; ranks come in rank order (msprof-analyze:
 * the file system's order of the directories).
 */
#include "cluster_comm.h"
#include "py_round.h"
#include "error.h"
#include "fs.h"
#include "outbuf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EPS 1e-15 /* msprof-analyze's Constant.EPS */

static const char *const CLASSES[] = {"collective", "p2p"};

/* ---- Python's json.dumps --------------------------------------------------- */

static void put_string(const char *s, size_t n, FILE *f)
{
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        /* a run that needs no escape in one write: per-byte stdio calls
         * were a tenth of the pass's CPU (every rank's op names twice) */
        size_t run = i;
        while (run < n && (unsigned char)s[run] >= 0x20 && (unsigned char)s[run] < 0x7f &&
               s[run] != '"' && s[run] != '\\')
            run++;
        if (run > i) {
            fwrite(s + i, 1, run - i, f);
            i = run;
            continue;
        }
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            fputc('\\', f);
            fputc(ch, f);
            i++;
        } else if (ch >= 0x20 && ch < 0x7f) {
            fputc(ch, f);
            i++;
        } else if (ch < 0x80) {
            const char *e = ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : ch == '\t' ? "\\t"
                          : ch == '\b' ? "\\b" : ch == '\f' ? "\\f" : NULL;
            if (e)
                fputs(e, f);
            else
                fprintf(f, "\\u%04x", ch);
            i++;
        } else { /* UTF-8 (jansson checked it) → \uXXXX, surrogate pairs past U+FFFF */
            int len = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : 2;
            unsigned long cp = ch & (0x3f >> (len - 1));
            for (int k = 1; k < len && i + (size_t)k < n; k++)
                cp = (cp << 6) | ((unsigned char)s[i + (size_t)k] & 0x3f);
            i += (size_t)len;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                fprintf(f, "\\u%04lx\\u%04lx", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else {
                fprintf(f, "\\u%04lx", cp);
            }
        }
    }
    fputc('"', f);
}

int aip__cc_dump_python(const json_t *v, FILE *f)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        int first = 1;
        fputc('{', f);
        json_object_foreach((json_t *)v, k, x) {
            if (!first)
                fputs(", ", f);
            first = 0;
            put_string(k, strlen(k), f);
            fputs(": ", f);
            aip__cc_dump_python(x, f);
        }
        fputc('}', f);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        fputc('[', f);
        json_array_foreach((json_t *)v, i, x) {
            if (i)
                fputs(", ", f);
            aip__cc_dump_python(x, f);
        }
        fputc(']', f);
        break;
    }
    case JSON_STRING:
        put_string(json_string_value(v), json_string_length(v), f);
        break;
    case JSON_INTEGER:
        fprintf(f, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL: {
        double d = json_real_value(v);
        if (isnan(d))
            fputs("NaN", f);
        else if (isinf(d))
            fputs(d > 0 ? "Infinity" : "-Infinity", f);
        else {
            aip__cluster_fmt_double(num, sizeof num, d);
            fputs(num, f);
        }
        break;
    }
    case JSON_TRUE:
        fputs("true", f);
        break;
    case JSON_FALSE:
        fputs("false", f);
        break;
    default:
        fputs("null", f);
    }
    return ferror(f) ? -1 : 0;
}

/* ---- shared ----------------------------------------------------------------- */

static const char *group_of(const char *key)
{
    const char *at = strrchr(key, '@');
    return at ? at + 1 : key;
}

/* a + b as Python adds: an int while both are ints. */
static json_t *add(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer(json_integer_value(a) + json_integer_value(b));
    return json_real(json_number_value(a) + json_number_value(b));
}

static int add_into(json_t *obj, const char *key, const json_t *v)
{
    json_t *old = json_object_get(obj, key);
    json_t *zero = old ? NULL : json_integer(0);
    int err = json_object_set_new(obj, key, add(old ? old : zero, v));
    json_decref(zero);
    return err;
}

/* msprof-analyze's compute_ratio. */
static json_t *py_ratio(double a, double b)
{
    if (fabs(b) < EPS)
        return json_integer(0);
    return json_real(aip__py_round(a / b, 4));
}

/* obj[key], made an empty object when absent. */
static json_t *child(json_t *obj, const char *key)
{
    json_t *x = json_object_get(obj, key);
    if (!x && json_object_set_new(obj, key, x = json_object()))
        return NULL;
    return x;
}

/* Per class, group → "(r0, r1, ...)": the ranks (in rank order) that list
 * the group in communication.json or communication_matrix.json. */
static json_t *rank_sets(const aip__cluster *c)
{
    json_t *lists = json_object(), *sets = json_object();
    int err = !lists || !sets;
    for (int k = 0; !err && k < 2; k++) {
        json_t *by_group = child(lists, CLASSES[k]);
        for (size_t i = 0; !err && by_group && i < c->n; i++) {
            const aip__rank_dir *r = &c->r[i];
            json_t *files[2] = {r->comm, r->matrix};
            for (int fi = 0; !r->problem[0] && fi < 2; fi++) {
                const char *step, *op;
                json_t *sv, *ov;
                json_object_foreach(files[fi], step, sv)
                    json_object_foreach(json_object_get(sv, CLASSES[k]), op, ov) {
                        if (!strncmp(op, "Total", 5))
                            continue;
                        json_t *l = json_object_get(by_group, group_of(op));
                        if (!l && json_object_set_new(by_group, group_of(op), l = json_array()))
                            err = 1;
                        size_t n = json_array_size(l);
                        if (!err && (!n || json_integer_value(json_array_get(l, n - 1)) != r->rank))
                            err = json_array_append_new(l, json_integer(r->rank)) != 0;
                    }
            }
        }
        err |= !by_group;
    }
    for (int k = 0; !err && k < 2; k++) {
        json_t *out = child(sets, CLASSES[k]), *l;
        const char *g;
        json_object_foreach(json_object_get(lists, CLASSES[k]), g, l) {
            size_t n = json_array_size(l), cap = 4 + 24 * n, at = 0;
            char *text = malloc(cap);
            if (!text || !out) {
                free(text);
                err = 1;
                break;
            }
            text[at++] = '(';
            for (size_t i = 0; i < n; i++)
                at += (size_t)snprintf(text + at, cap - at, "%s%lld", i ? ", " : "",
                                       (long long)json_integer_value(json_array_get(l, i)));
            snprintf(text + at, cap - at, "%s)", n == 1 ? "," : "");
            err = json_object_set_new(out, g, json_string(text)) != 0;
            free(text);
        }
    }
    json_decref(lists);
    if (err) {
        json_decref(sets);
        return NULL;
    }
    return sets;
}

/* tree[set][step][op][rank] = the rank's entry, for every op of `file`. */
static int spread(const aip__cluster *c, const json_t *sets, int matrix, json_t *tree)
{
    char rank[24];
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        json_t *file = matrix ? r->matrix : r->comm;
        if (r->problem[0] || !file)
            continue;
        snprintf(rank, sizeof rank, "%ld", r->rank);
        const char *step, *kind, *op;
        json_t *sv, *kv, *ov;
        json_object_foreach(file, step, sv)
            json_object_foreach(sv, kind, kv) {
                int k = !strcmp(kind, "p2p") ? 1 : !strcmp(kind, "collective") ? 0 : -1;
                if (k < 0)
                    continue;
                json_object_foreach(kv, op, ov) {
                    if (!strncmp(op, "Total", 5))
                        continue;
                    const char *set = json_string_value(
                        json_object_get(json_object_get(sets, CLASSES[k]), group_of(op)));
                    json_t *o = child(child(child(tree, set ? set : "()"), step), op);
                    if (!o || (!json_object_get(o, rank) && json_object_set(o, rank, ov)))
                        return -1; /* setdefault: the first entry stays */
                }
            }
    }
    return 0;
}

/* ---- cluster_communication.json -------------------------------------------- */

static int combine_time(const json_t *src, json_t *total)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)src, k, v) {
        if (!strcmp(k, "Wait Time Ratio") || !strcmp(k, "Synchronization Time Ratio") ||
            !strcmp(k, "Start Timestamp(us)") || !json_is_number(v))
            continue;
        json_t *old = json_object_get(total, k);
        /* defaultdict(float): 0.0 + v, a float */
        if (json_object_set_new(total, k, json_real((old ? json_number_value(old) : 0.0) +
                                                    json_number_value(v))))
            return -1;
    }
    return 0;
}

static int combine_bandwidth(const json_t *src, json_t *total)
{
    const char *tt, *k;
    json_t *part, *v;
    json_object_foreach((json_t *)src, tt, part) {
        json_t *t = json_object_get(total, tt);
        if (!t) {
            t = json_pack("{s:i, s:i, s:{}}", "Transit Time(ms)", 0, "Transit Size(MB)", 0,
                          "Size Distribution");
            if (!t || json_object_set_new(total, tt, t))
                return -1;
        }
        json_object_foreach(part, k, v) {
            if ((!strcmp(k, "Transit Time(ms)") || !strcmp(k, "Transit Size(MB)")) &&
                json_is_number(v) && add_into(t, k, v))
                return -1;
            if (!strcmp(k, "Size Distribution")) {
                json_t *dist = json_object_get(t, k), *bin;
                const char *size;
                json_object_foreach(v, size, bin) {
                    json_t *sum = json_object_get(dist, size);
                    if (!sum && json_object_set_new(dist, size, sum = json_pack("[i,i]", 0, 0)))
                        return -1;
                    for (size_t i = 0; i < 2; i++)
                        if (json_is_number(json_array_get(bin, i)) &&
                            json_array_set_new(sum, i,
                                               add(json_array_get(sum, i), json_array_get(bin, i))))
                            return -1;
                }
            }
        }
    }
    return 0;
}

/* compute_total_info of communication_analysis.py for one step's ops. */
static int comm_totals(json_t *ops)
{
    json_t *by_group = json_object();
    const char *op, *rank, *part;
    json_t *ranks, *info, *v;
    int err = !by_group;
    json_object_foreach(ops, op, ranks) {
        json_t *g = err ? NULL : child(by_group, group_of(op));
        json_object_foreach(ranks, rank, info) {
            json_t *t = json_object_get(g, rank);
            if (!t && (!g || json_object_set_new(g, rank, t = json_pack("{s:{}, s:{}}",
                                                                      "Communication Time Info",
                                                                      "Communication Bandwidth Info")))) {
                err = 1;
                break;
            }
            json_object_foreach(info, part, v) {
                if (!strcmp(part, "Communication Time Info"))
                    err |= combine_time(v, json_object_get(t, part));
                else if (!strcmp(part, "Communication Bandwidth Info"))
                    err |= combine_bandwidth(v, json_object_get(t, part));
            }
        }
    }
    const char *g;
    json_t *gv;
    char key[512];
    json_object_foreach(by_group, g, gv) {
        json_object_foreach(gv, rank, info) {
            json_t *t = json_object_get(info, "Communication Time Info");
            double wait = json_number_value(json_object_get(t, "Wait Time(ms)"));
            double transit = json_number_value(json_object_get(t, "Transit Time(ms)"));
            double sync = json_number_value(json_object_get(t, "Synchronization Time(ms)"));
            err |= json_object_set_new(t, "Wait Time Ratio", py_ratio(wait, wait + transit));
            err |= json_object_set_new(t, "Synchronization Time Ratio",
                                       py_ratio(sync, sync + transit));
            const char *tt;
            json_object_foreach(json_object_get(info, "Communication Bandwidth Info"), tt, v)
                err |= json_object_set_new(
                    v, "Bandwidth(GB/s)",
                    py_ratio(json_number_value(json_object_get(v, "Transit Size(MB)")),
                             json_number_value(json_object_get(v, "Transit Time(ms)"))));
        }
        snprintf(key, sizeof key, "Total Op Info@%s", g);
        err |= json_object_set(ops, key, gv);
    }
    json_decref(by_group);
    return err ? -1 : 0;
}

/* ---- cluster_communication_matrix.json --------------------------------------- */

/* "<src>-<dst>" → src and dst as Python's split('-')[0], [1] give them. */
static int link_ends(const char *key, char *src, char *dst, size_t cap)
{
    const char *d = strchr(key, '-');
    if (!d)
        return -1;
    const char *e = strchr(d + 1, '-');
    size_t a = (size_t)(d - key), b = e ? (size_t)(e - d - 1) : strlen(d + 1);
    if (a >= cap || b >= cap)
        return -1;
    memcpy(src, key, a);
    src[a] = 0;
    memcpy(dst, d + 1, b);
    dst[b] = 0;
    return 0;
}

static int combine_link(json_t *acc, const json_t *one)
{
    json_t *tt = json_object_get(one, "Transport Type"), *name = json_object_get(one, "Op Name");
    json_t *zero = json_integer(0);
    int err = !zero || json_object_set_new(acc, "Transport Type", tt ? json_incref(tt) : json_null());
    err = err || json_object_set_new(acc, "Op Name", name ? json_incref(name) : json_string(""));
    static const char *const sums[] = {"Transit Time(ms)", "Transit Size(MB)"};
    for (int i = 0; !err && i < 2; i++) {
        json_t *v = json_object_get(one, sums[i]);
        err = add_into(acc, sums[i], json_is_number(v) ? v : zero);
    }
    json_decref(zero);
    return err ? -1 : 0;
}

static json_t *new_link(void)
{
    return json_pack("{s:s, s:i, s:i, s:s}", "Transport Type", "", "Transit Time(ms)", 0,
                     "Transit Size(MB)", 0, "Op Name", "");
}

static int link_bandwidth(json_t *l)
{
    return json_object_set_new(
        l, "Bandwidth(GB/s)",
        py_ratio(json_number_value(json_object_get(l, "Transit Size(MB)")),
                 json_number_value(json_object_get(l, "Transit Time(ms)"))));
}

/* msprof-analyze's check_add_op: no top / middle / bottom in the key. */
static int adds_to_total(const char *op)
{
    return !strstr(op, "middle") && !strstr(op, "top") && !strstr(op, "bottom");
}

/* merge_same_links + combine_link_info of comm_matrix_analysis.py for one
 * step's ops; *dropped counts links with an unmapped end. */
static int matrix_totals(json_t *ops, size_t *dropped)
{
    json_t *map = json_object(); /* group → local → global rank */
    const char *op, *rank, *lk;
    json_t *ranks, *links, *l;
    char src[64], dst[64], key[160];
    int err = !map;
    json_object_foreach(ops, op, ranks)
        json_object_foreach(ranks, rank, links)
            json_object_foreach(links, lk, l) {
                if (link_ends(lk, src, dst, sizeof src))
                    break;
                json_t *m = child(map, group_of(op));
                if (!m)
                    err = 1;
                else if (!strcmp(src, dst) && !json_object_get(m, src))
                    err |= json_object_set_new(m, src, json_integer(atoll(rank)));
            }
    json_t *totals = json_object();
    err |= !totals;
    void *it = json_object_iter(ops);
    while (!err && it) {
        op = json_object_iter_key(it);
        ranks = json_object_iter_value(it);
        json_t *sum = json_object(), *global = json_object();
        err = !sum || !global;
        json_object_foreach(ranks, rank, links)
            json_object_foreach(links, lk, l) {
                if (err || link_ends(lk, src, dst, sizeof src))
                    break;
                json_t *acc = json_object_get(sum, lk);
                if (!acc && json_object_set_new(sum, lk, acc = new_link()))
                    err = 1;
                else
                    err = combine_link(acc, l) != 0;
            }
        json_t *m = json_object_get(map, group_of(op));
        json_object_foreach(sum, lk, l) {
            if (err || link_ends(lk, src, dst, sizeof src))
                continue;
            json_t *gs = json_object_get(m, src), *gd = json_object_get(m, dst);
            if (!gs || !gd) {
                (*dropped)++;
                continue;
            }
            snprintf(key, sizeof key, "%lld-%lld", (long long)json_integer_value(gs),
                     (long long)json_integer_value(gd));
            err = link_bandwidth(l) || json_object_set(global, key, l);
        }
        if (!err && adds_to_total(op)) {
            json_t *t = child(totals, group_of(op));
            json_object_foreach(global, lk, l) {
                json_t *acc = json_object_get(t, lk);
                if (!t || (!acc && json_object_set_new(t, lk, acc = new_link())) ||
                    combine_link(acc, l))
                    err = 1;
            }
        }
        if (!err)
            err = json_object_iter_set_new(ops, it, global) != 0;
        else
            json_decref(global);
        json_decref(sum);
        it = json_object_iter_next(ops, it);
    }
    const char *g;
    json_t *gv;
    json_object_foreach(totals, g, gv) {
        json_object_foreach(gv, lk, l)
            err |= link_bandwidth(l);
        snprintf(key, sizeof key, "Total Op Info@%s", g);
        err |= json_object_set(ops, key, gv);
    }
    json_decref(totals);
    json_decref(map);
    return err ? -1 : 0;
}

/* ---- the two files ------------------------------------------------------------ */

aip_status aip__cc_stream(const aip__cluster *c, int matrix, const char *out_dir,
                          size_t *dropped, aip__cc_step_fn rows, void *ctx)
{
    /* the skeleton: tree[set][step][op][rank] only refers to the ranks'
     * own entries; what costs memory is each step's sums */
    json_t *sets = rank_sets(c), *tree = json_object();
    int nomem = !sets || !tree || spread(c, sets, matrix, tree);
    json_decref(sets);
    aip__out o;
    FILE *f = NULL;
    aip_status s = AIP_OK;
    if (!nomem && out_dir)
        s = aip__cluster_out_open(&o, &f, out_dir,
                                  matrix ? "cluster_communication_matrix.json"
                                         : "cluster_communication.json");
    const char *set, *step;
    json_t *sv, *ops;
    int n_sets = 0, bad = 0;
    if (f)
        fputc('{', f);
    json_object_foreach(tree, set, sv) {
        if (s || nomem || bad)
            break;
        if (f) {
            fputs(n_sets++ ? ", " : "", f);
            put_string(set, strlen(set), f);
            fputs(": {", f);
        }
        int n_steps = 0;
        json_object_foreach(sv, step, ops) {
            if ((nomem = (matrix ? matrix_totals(ops, dropped) : comm_totals(ops)) != 0))
                break;
            if (f) {
                fputs(n_steps++ ? ", " : "", f);
                put_string(step, strlen(step), f);
                fputs(": ", f);
                bad = aip__cc_dump_python(ops, f);
            }
            if (rows)
                rows(ctx, step, ops);
            json_object_clear(ops); /* done with: its sums go */
        }
        if (f)
            fputc('}', f);
    }
    json_decref(tree);
    if (f) {
        fputc('}', f);
        s = aip__cluster_out_close(&o, f, nomem || bad);
    }
    return nomem ? aip__fail(AIP_ERR_NOMEM, "out of memory summing the ranks") : s;
}
