/*
 * cluster_report.c — what `aiprof cluster` writes and says once the ranks
 * are read (cluster.c): cluster_step_trace_time.csv and
 * communication_group.json in msprof-analyze's layout, and the slow-rank
 * verdict with the numbers behind it.  Only the per-rank summaries held
 * in the cluster (cluster.h) are used.
 */
#include "cluster.h"
#include "cluster_comm.h"
#include "error.h"
#include "fs.h"
#include "outbuf.h"
#include "text_escape.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shortest text that reads back as the same double, laid out as Python's
 * repr() of a float (msprof-analyze writes the values it parsed that way):
 * fixed notation with at least one decimal for exponents -4..15 (500.0,
 * 0.0001, 1460.71), else 1e+16, 1.5e-05. */
void aip__cluster_fmt_double(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, cap, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    char e[40];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    snprintf(e, sizeof e, "%.*e", prec - 1, v);
    /* e: [-]D[.DDD]e±XX → sign, digits, exponent */
    const char *p = e;
    int neg = *p == '-';
    p += neg;
    char dig[24];
    size_t n = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && n < sizeof dig - 1)
            dig[n++] = *p;
    dig[n] = 0;
    int exp10 = atoi(p + 1);
    while (n > 1 && dig[n - 1] == '0') /* %.*e keeps trailing zeros of 1.0e+02 */
        dig[--n] = 0;
    size_t o = 0;
    char out[64];
    if (neg)
        out[o++] = '-';
    if (exp10 < -4 || exp10 >= 16) {
        out[o++] = dig[0];
        if (n > 1) {
            out[o++] = '.';
            memcpy(out + o, dig + 1, n - 1);
            o += n - 1;
        }
        snprintf(out + o, sizeof out - o, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int k = -1; k > exp10; k--)
            out[o++] = '0';
        memcpy(out + o, dig, n);
        out[o + n] = 0;
    } else {
        size_t point = (size_t)exp10 + 1;
        for (size_t k = 0; k < point; k++)
            out[o++] = k < n ? dig[k] : '0';
        out[o++] = '.';
        if (n > point) {
            memcpy(out + o, dig + point, n - point);
            o += n - point;
        } else {
            out[o++] = '0';
        }
        out[o] = 0;
    }
    snprintf(buf, cap, "%s", out);
}

const aip__rank_dir *aip__cluster_first_used(const aip__cluster *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->r[i].problem[0])
            return &c->r[i];
    return NULL;
}

void aip__cluster_check_columns(aip__cluster *c)
{
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    for (size_t i = 0; ref && i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        int same = r->n_cols == ref->n_cols;
        for (size_t k = 0; same && k < r->n_cols; k++)
            same = !strcmp(r->cols[k], ref->cols[k]);
        if (!same)
            aip__cluster_problem(r, "step_trace_time.csv has other columns than rank %ld's",
                                 ref->rank);
    }
}

/* A Step or column name as a CSV cell: RFC 4180 quoted when it holds a
 * comma, quote or line break (names come from the ranks' files, any
 * bytes), as every CSV aiprof writes (text_escape.h). */
static int put_cell(FILE *f, const char *s)
{
    size_t n = strlen(s);
    char small[256], *buf = AIP_CSV_ESC_MAX(n) <= sizeof small ? small
                                                                : malloc(AIP_CSV_ESC_MAX(n));
    if (!buf)
        return -1;
    fwrite(buf, 1, aip__csv_cell(s, n, buf), f);
    if (buf != small)
        free(buf);
    return 0;
}

static void put_values(FILE *f, const double *v, size_t n)
{
    char num[64];
    for (size_t k = 0; k < n; k++) {
        aip__cluster_fmt_double(num, sizeof num, v[k]);
        fprintf(f, ",%s", num);
    }
}

typedef struct csv_stage {
    FILE *f;
    const aip__cluster *c;
    size_t n_cols;
    int bad; /* out of memory */
} csv_stage;

/* One "stage" row (aip__cluster_stage_rows); Index is the stage as Python
 * prints a tuple ("(0, 2)", "(3,)"; ranks in no stage: "()"), which
 * csv.writer quotes when it holds a comma. */
static void stage_row(void *ctx, const char *step, int st, const double *v)
{
    csv_stage *cs = ctx;
    const aip__cluster_parallel *p = &cs->c->par;
    cs->bad |= put_cell(cs->f, step);
    fputs(st >= 0 ? ",stage,\"(" : ",stage,(", cs->f);
    for (size_t k = 0; st >= 0 && k < p->stage_len[st]; k++)
        fprintf(cs->f, "%s%ld", k ? ", " : "", p->stages[st][k]);
    fputs(st < 0 ? ")" : p->stage_len[st] == 1 ? ",)\"" : ")\"", cs->f);
    put_values(cs->f, v, cs->n_cols);
    fputs(p->ptd_ok ? ",NA,NA,NA\n" : "\n", cs->f);
}

static int stage_rows(FILE *f, const aip__cluster *c)
{
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    csv_stage cs = {f, c, ref ? ref->n_cols : 0, 0};
    return aip__cluster_stage_rows(c, stage_row, &cs) || cs.bad ? -1 : 0;
}

/* msprof-analyze's columns: Step, Type, Index, then the ranks' own columns
 * in their order (+ DP/PP/TP Index with distributed_args); one "rank" row
 * per rank and step, then the "stage" rows of pipeline-parallel jobs. */
aip_status aip__cluster_write_step_trace(aip__cluster *c, const char *out_dir)
{
    aip__cluster_check_columns(c);
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    const aip__cluster_parallel *p = &c->par;
    aip__out o;
    FILE *f;
    aip_status s = aip__cluster_out_open(&o, &f, out_dir, "cluster_step_trace_time.csv");
    if (s)
        return s;
    int bad = 0;
    fputs("Step,Type,Index", f);
    for (size_t k = 0; ref && k < ref->n_cols; k++) {
        fputc(',', f);
        bad |= put_cell(f, ref->cols[k]);
    }
    fputs(p->ptd_ok ? ",DP Index,PP Index,TP Index\n" : "\n", f);
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        int have = p->ptd_ok && r->rank >= 0 && (size_t)r->rank < p->n_ptd &&
                   p->ptd[r->rank][0] >= 0;
        for (size_t j = 0; j < r->n_rows; j++) {
            bad |= put_cell(f, r->rows[j].step);
            fprintf(f, ",rank,%ld", r->rank);
            put_values(f, r->rows[j].v, r->n_cols);
            if (have)
                fprintf(f, ",%ld,%ld,%ld", p->ptd[r->rank][0], p->ptd[r->rank][1],
                        p->ptd[r->rank][2]);
            else if (p->ptd_ok)
                fputs(",NA,NA,NA", f);
            fputc('\n', f);
        }
    }
    bad |= stage_rows(f, c);
    s = aip__cluster_out_close(&o, f, bad);
    return bad && s == AIP_ERR_IO ? aip__fail(AIP_ERR_NOMEM, "out of memory") : s;
}

/* communication_group.json: the rank sets per type and
 * comm_group_parallel_info, as cluster_parallel.c built them. */
aip_status aip__cluster_write_groups(aip__cluster *c, const char *out_dir)
{
    json_t *root = json_object();
    json_t *lists[2] = {json_array(), json_array()};
    size_t i;
    json_t *g;
    json_array_foreach(c->par.groups, i, g) /* the sets seen, before parallel_group_info */
        json_array_append(
            lists[strcmp(json_string_value(json_object_get(g, "type")), "collective") != 0],
            json_array_get(c->par.seen_sets, i));
    aip_status s = AIP_ERR_NOMEM;
    char path[PATH_MAX];
    if (root && lists[0] && lists[1] && c->par.groups &&
        !json_object_set(root, "collective", lists[0]) &&
        !json_object_set(root, "p2p", lists[1]) &&
        !json_object_set(root, "comm_group_parallel_info", c->par.groups)) {
        /* json_dump_file's text, through the one safe writer */
        char *text = json_dumps(root, 0);
        s = !text ? aip__fail(AIP_ERR_NOMEM, "out of memory")
                  : aip__join(path, sizeof path, out_dir, "communication_group.json");
        if (text && !s)
            s = aip__write_file(path, text, strlen(text));
        free(text);
    }
    json_decref(lists[0]);
    json_decref(lists[1]);
    json_decref(root);
    return s;
}

static double col_sum(const aip__rank_dir *r, const char *col)
{
    double sum = 0;
    for (size_t k = 0; k < r->n_cols; k++)
        if (!strcmp(r->cols[k], col))
            for (size_t j = 0; j < r->n_rows; j++)
                sum += r->rows[j].v[k];
    return sum;
}

/* The slow_rank recipe's evidence: a collective ends together on every
 * rank, so the rank that arrived last has the shortest elapse time; each
 * collective (step, name@group) seen on two or more ranks votes for it. */
static void vote(const aip__cluster *c, size_t *votes, size_t *n_ops)
{
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    *n_ops = 0;
    if (!ref || !ref->comm)
        return;
    const char *step, *op;
    json_t *sv, *ov;
    json_object_foreach(ref->comm, step, sv)
        json_object_foreach(json_object_get(sv, "collective"), op, ov) {
            if (!strncmp(op, "Total", 5))
                continue;
            size_t best = (size_t)-1, seen = 0;
            double best_ms = INFINITY;
            for (size_t i = 0; i < c->n; i++) {
                const aip__rank_dir *r = &c->r[i];
                if (r->problem[0] || !r->comm)
                    continue;
                json_t *e = json_object_get(
                    json_object_get(
                        json_object_get(
                            json_object_get(json_object_get(r->comm, step), "collective"), op),
                        "Communication Time Info"),
                    "Elapse Time(ms)");
                if (!json_is_number(e))
                    continue;
                seen++;
                if (json_number_value(e) < best_ms) {
                    best_ms = json_number_value(e);
                    best = i;
                }
            }
            if (seen >= 2) {
                votes[best]++;
                (*n_ops)++;
            }
        }
}

/* A rank's time outside communication: Computing + Free.  A slow rank
 * shows there (compute on a device, or host work and stalls when there is
 * no device: Computing is 0 then), while its peers wait for it inside their
 * collectives, so their Communication grows instead. */
static double busy(const aip__rank_dir *r)
{
    return col_sum(r, "Computing") + col_sum(r, "Free");
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, aip__cluster_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int col_index(const aip__rank_dir *r, const char *col)
{
    for (size_t k = 0; k < r->n_cols; k++)
        if (!strcmp(r->cols[k], col))
            return (int)k;
    return -1;
}

/* msprof-analyze advisor's slow-rank rule (slow_rank_analyzer.py), told
 * beside ours so the two can be compared: over every (step, rank) row of
 * cluster_step_trace_time, the spread max − min of Computing, Communication
 * (Not Overlapped: its bean's "communication") and Free, against the mean of
 * the rows' sum of the three; above 5 % that part "has some issues in the cluster".  Rows of
 * unequal steps (a short last step) count too, as they do there. */
static void advisor_rule(const aip__cluster *c)
{
    static const char *const cols[] = {"Computing", "Communication(Not Overlapped)", "Free"};
    double lo[3], hi[3], total = 0;
    size_t rows = 0;
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        int at[3];
        for (int k = 0; k < 3; k++)
            at[k] = col_index(r, cols[k]);
        if (r->problem[0] || at[0] < 0 || at[1] < 0 || at[2] < 0)
            continue;
        for (size_t j = 0; j < r->n_rows; j++, rows++)
            for (int k = 0; k < 3; k++) {
                double v = r->rows[j].v[at[k]];
                lo[k] = v < lo[k] ? v : lo[k];
                hi[k] = v > hi[k] ? v : hi[k];
                total += v;
            }
    }
    if (!rows || !(total > 0))
        return;
    double mean = total / (double)rows;
    for (int k = 0; k < 3; k++) {
        double ratio = (hi[k] - lo[k]) / mean;
        aip__cluster_say(c,
                         "advisor rule: %s max difference %.3f ms over the step rows, %.1f%% "
                         "of their mean time %.3f ms (limit 5%%)%s\n",
                         cols[k], (hi[k] - lo[k]) / 1e3, 100 * ratio, mean / 1e3,
                         ratio > AIP__CLUSTER_SLOW_SPREAD ? ": has issues in the cluster" : "");
    }
}

/* The slow-rank rule (docs/CLUSTER.md), for the verdict below and for
 * `aiprof advise` (src/insight/advise_cluster.c).  A rank is slow when its
 * Computing + Free exceeds the ranks' median by more than 5 % of the
 * median step time (Computing + Communication(Not Overlapped) + Free):
 * msprof-analyze's rule of thumb, a spread above 5 % between ranks in
 * cluster_step_trace_time.  Measured against the step and not against Free
 * alone, so that a few hundred us of scheduling noise in a small Free is
 * not a slow rank.  Where the ranks have collectives, the slow_rank
 * recipe's witness must agree: the rank arrived last (shortest elapse
 * time) at no fewer collectives than its fair share (ops / ranks); a rank
 * that merely varies does not.  Marks c->slow when it is allocated. */
aip_status aip__cluster_slow_ranks(const aip__cluster *c, aip__cluster_slow *out)
{
    memset(out, 0, sizeof *out);
    size_t used = 0;
    for (size_t i = 0; i < c->n; i++)
        used += !c->r[i].problem[0];
    double *v = malloc(2 * (used ? used : 1) * sizeof *v);
    size_t *votes = calloc(c->n ? c->n : 1, sizeof *votes);
    out->v = calloc(c->n ? c->n : 1, sizeof *out->v);
    if (!v || !votes || !out->v) {
        free(v);
        free(votes);
        aip__cluster_slow_free(out);
        return aip__fail(AIP_ERR_NOMEM, "out of memory judging the ranks");
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        aip__cluster_rank_verdict *x = &out->v[i];
        x->computing_us = col_sum(r, "Computing");
        x->free_us = col_sum(r, "Free");
        x->comm_not_overlapped_us = col_sum(r, "Communication(Not Overlapped)");
        x->busy_us = busy(r);
        x->steps = r->n_rows;
        v[n] = x->busy_us;
        v[used + n] = v[n] + x->comm_not_overlapped_us;
        n++;
    }
    out->used = n;
    if (n) {
        out->median_busy_us = median(v, n);
        out->median_step_us = median(v + used, n);
    }
    vote(c, votes, &out->n_ops);
    double fair = n ? (double)out->n_ops / (double)n : 0, step = out->median_step_us;
    for (size_t i = 0; i < c->n; i++) {
        aip__cluster_rank_verdict *x = &out->v[i];
        if (c->r[i].problem[0])
            continue;
        x->votes = votes[i];
        x->excess_us = x->busy_us - out->median_busy_us;
        x->slow = step > 0 && x->excess_us / step > AIP__CLUSTER_SLOW_SPREAD &&
                  !(out->n_ops && (double)votes[i] < fair);
        out->n_slow += (size_t)x->slow;
        if (c->slow)
            c->slow[i] = (unsigned char)x->slow;
    }
    free(v);
    free(votes);
    return AIP_OK;
}

void aip__cluster_slow_free(aip__cluster_slow *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The verdict: the per-rank table and the slow ranks of
 * aip__cluster_slow_ranks() with the numbers behind them. */
void aip__cluster_verdict(const aip__cluster *c, size_t used)
{
    (void)used;
    aip__cluster_slow sr;
    if (aip__cluster_slow_ranks(c, &sr))
        return;
    double med = sr.median_busy_us, step = sr.median_step_us;
    size_t n_ops = sr.n_ops;
    aip__cluster_say(c, "rank  Computing(ms)  Free(ms)  Communication(Not Overlapped)(ms)  "
                        "Computing+Free - median (%% of step)  shortest collective\n");
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        const aip__cluster_rank_verdict *x = &sr.v[i];
        if (r->problem[0])
            continue;
        aip__cluster_say(c, "%4ld  %13.3f  %8.3f  %33.3f  %+35.1f%%  %zu of %zu\n", r->rank,
                         x->computing_us / 1e3, x->free_us / 1e3,
                         x->comm_not_overlapped_us / 1e3,
                         step > 0 ? 100 * x->excess_us / step : 0.0, x->votes, n_ops);
    }
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        const aip__cluster_rank_verdict *x = &sr.v[i];
        if (r->problem[0] || !x->slow)
            continue;
        aip__cluster_say(c,
                         "slow rank: %ld — Computing + Free %.3f ms (Computing %.3f, Free "
                         "%.3f), %.3f ms above the ranks' median %.3f ms: %.1f%% of the median "
                         "step time %.3f ms (limit %.0f%%); its peers wait for it",
                         r->rank, x->busy_us / 1e3, x->computing_us / 1e3, x->free_us / 1e3,
                         x->excess_us / 1e3, med / 1e3, 100 * x->excess_us / step, step / 1e3,
                         100 * AIP__CLUSTER_SLOW_SPREAD);
        if (n_ops)
            aip__cluster_say(c,
                             "; it arrived last at %zu of %zu collectives (shortest "
                             "elapse time)",
                             x->votes, n_ops);
        aip__cluster_say(c, "\n");
    }
    if (!sr.n_slow)
        aip__cluster_say(c,
                         "no slow rank: no rank's Computing + Free exceeds the median %.3f ms "
                         "by more than %.0f%% of the step time %.3f ms%s\n",
                         med / 1e3, 100 * AIP__CLUSTER_SLOW_SPREAD, step / 1e3,
                         n_ops ? " while arriving last at its share of the collectives" : "");
    advisor_rule(c);
    aip__cluster_comm_verdict(c);
    aip__cluster_slow_free(&sr);
}
