/*
 * compare_job_out.c — `aiprof compare` on two jobs written out
 * (compare_job.c builds it): the per-rank step breakdown (the step trace's
 * Step, Computing, Free and Communication(Not Overlapped), mean per step
 * row, base / new / change), then each rank's top changes — the ops,
 * kernels, API calls and communication ops whose time per step changed
 * most, and its memory peaks — as a terminal table; and as CSV every row
 * shown of every rank, the single comparison's columns with a Rank column
 * first (docs/ADVISE.md "Two jobs").
 */
#include "insight.h"
#include "summary.h"

#include <stdlib.h>
#include <string.h>

static const char *const step_cols[] = {"Step", "Computing", "Free",
                                        "Communication(Not Overlapped)"};
#define N_STEP_COLS 4

static double absd(double v) { return v < 0 ? -v : v; }

static int by_change(const void *a, const void *b, void *ctx)
{
    const aip__cmp *c = ctx;
    double x = absd(c->rows[*(const size_t *)a].diff);
    double y = absd(c->rows[*(const size_t *)b].diff);
    if (x != y)
        return x > y ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

size_t aip__compare_top(const aip__cmp *c, double threshold, size_t top, size_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const char *s = c->rows[i].section;
        if (strcmp(s, "step") && strcmp(s, "memory") &&
            aip__compare_shown(c, &c->rows[i], threshold))
            out[n++] = i;
    }
    if (n)
        qsort_r(out, n, sizeof *out, by_change, (void *)c);
    n = n < top ? n : top;
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->rows[i].section, "memory") && aip__compare_shown(c, &c->rows[i], threshold))
            out[n++] = i;
    return n;
}

static void put_rank(aip__out *o, const aip__cmp_rank *r)
{
    if (r->rank >= 0)
        aip__out_printf(o, "%4ld", r->rank);
    else
        aip__out_printf(o, "  #%ld", -1 - r->rank); /* by position: no rank id */
}

static void step_table(const aip__cmp_job *j, aip__out *o)
{
    AIP_OUT_LIT(o, "\n[step] per rank: mean per step row, ms (base / new / change)\nrank");
    for (int k = 0; k < N_STEP_COLS; k++)
        aip__out_printf(o, "  %32s", step_cols[k]);
    AIP_OUT_LIT(o, "\n");
    for (size_t i = 0; i < j->n; i++) {
        const aip__cmp_rank *r = &j->ranks[i];
        put_rank(o, r);
        if (!r->compared) {
            AIP_OUT_LIT(o, "  ");
            const char *why = r->error[0] ? r->error
                              : !r->dir[0] ? "only in NEW: " : "only in BASE: ";
            aip__summary_put_term(o, why, strlen(why), 300);
            if (!r->error[0])
                aip__summary_put_term(o, r->dir[r->dir[0] ? 0 : 1],
                                      strlen(r->dir[r->dir[0] ? 0 : 1]), 300);
            AIP_OUT_LIT(o, "\n");
            continue;
        }
        for (int k = 0; k < N_STEP_COLS; k++) {
            const aip__cmp_row *x = aip__compare_find(&r->cmp, "step", step_cols[k]);
            if (x)
                aip__out_printf(o, "  %10.3f / %8.3f / %+9.3f", x->per_step[0] / 1e6,
                                x->per_step[1] / 1e6, x->diff / 1e6);
            else
                aip__out_printf(o, "  %32s", "-");
        }
        AIP_OUT_LIT(o, "\n");
    }
}

static void top_table(const aip__cmp_rank *r, double threshold, size_t top, aip__out *o)
{
    size_t *idx = malloc((r->cmp.n ? r->cmp.n : 1) * sizeof *idx);
    if (!idx)
        return;
    size_t n = aip__compare_top(&r->cmp, threshold, top, idx);
    AIP_OUT_LIT(o, "\n[rank");
    put_rank(o, r);
    aip__out_printf(o, "] top changes: base %.3f ms per step, new %.3f ms\n",
                    r->cmp.mean_step_ns[0] / 1e6, r->cmp.mean_step_ns[1] / 1e6);
    if (!n)
        AIP_OUT_LIT(o, "  no change above the threshold\n");
    for (size_t k = 0; k < n; k++) {
        const aip__cmp_row *x = &r->cmp.rows[idx[k]];
        aip__out_printf(o, "  %-7s ", x->section);
        uint64_t w = aip__compare_put_name(o, x);
        int mem = !strcmp(x->section, "memory");
        aip__out_printf(o, "%*s %8llu %10.3f -> %8llu %10.3f %s, %+10.3f\n",
                        w < 52 ? (int)(52 - w) : 0, "", (unsigned long long)x->count[0],
                        aip__compare_value(x, x->per_step[0]), (unsigned long long)x->count[1],
                        aip__compare_value(x, x->per_step[1]), mem ? "MiB" : "ms/step",
                        aip__compare_value(x, x->diff));
    }
    free(idx);
}

void aip__compare_job_text(const aip__cmp_job *j, double threshold, size_t top, aip__out *o)
{
    size_t both = 0;
    for (size_t i = 0; i < j->n; i++)
        both += j->ranks[i].compared;
    aip__out_printf(o, "aiprof compare: two jobs, %zu rank%s compared, %zu not\nchanges below "
                    "%.2f%% of a rank's base mean step (memory: of its peak) left out; top %zu "
                    "per rank\n", both, both == 1 ? "" : "s", j->n - both, 100 * threshold, top);
    step_table(j, o);
    for (size_t i = 0; i < j->n; i++)
        if (j->ranks[i].compared)
            top_table(&j->ranks[i], threshold, top, o);
}

void aip__compare_job_csv(const aip__cmp_job *j, double threshold, aip__out *o)
{
    aip__compare_csv_head(1, o);
    for (size_t i = 0; i < j->n; i++)
        if (j->ranks[i].compared)
            aip__compare_csv_rows(&j->ranks[i].cmp, threshold, &j->ranks[i].rank, o);
}
