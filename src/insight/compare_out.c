/*
 * compare_out.c — `aiprof compare`'s rows written out: terminal tables,
 * one per section, each ranked by the change per step (recorded names with
 * control bytes neutralised), and one CSV with the columns of
 * msprof-analyze compare's OperatorStatistic sheet (Top, Operator Name,
 * Base / Comparison Device Duration(ms) and Operator Number, Diff
 * Duration(ms), Diff Ratio), a Section, Input Shape and Unit column
 * beside them (docs/ADVISE.md "compare").  Both leave out rows whose
 * change is below the threshold.
 */
#include "insight.h"
#include "summary.h"
#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

static int is_memory(const aip__cmp_row *r) { return !strcmp(r->section, "memory"); }

/* ms per step (or MiB for memory) */
double aip__compare_value(const aip__cmp_row *r, double v)
{
    return is_memory(r) ? v / 1048576.0 : v / 1e6;
}

uint64_t aip__compare_put_name(aip__out *o, const aip__cmp_row *r)
{
    uint64_t before = o->total + o->len;
    aip__summary_put_term(o, r->name, strlen(r->name), 40);
    if (r->shapes) {
        AIP_OUT_LIT(o, " ");
        aip__summary_put_term(o, r->shapes, strlen(r->shapes), 24);
    }
    return o->total + o->len - before;
}

void aip__compare_text(const aip__cmp *c, double threshold, aip__out *o)
{
    aip__out_printf(o, "aiprof compare: base %zu steps (mean %.3f ms), new %zu steps (mean "
                    "%.3f ms, %+.1f%%)\nchanges below %.2f%% of the base's mean step (memory: "
                    "of its peak) left out; times per step, ms (step section: per step row)\n",
                    c->n_steps[0], c->mean_step_ns[0] / 1e6, c->n_steps[1],
                    c->mean_step_ns[1] / 1e6,
                    c->mean_step_ns[0] > 0
                        ? 100 * (c->mean_step_ns[1] - c->mean_step_ns[0]) / c->mean_step_ns[0]
                        : 0, 100 * threshold);
    const char *section = NULL;
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < c->n; i++) {
        const aip__cmp_row *r = &c->rows[i];
        if (!aip__compare_shown(c, r, threshold)) {
            hidden++;
            continue;
        }
        if (r->section != section) {
            section = r->section;
            aip__out_printf(o, "\n[%s]%*s %10s %12s %10s %12s %12s %8s\n", section,
                            (int)(52 - strlen(section)), "", "base n",
                            is_memory(r) ? "base MiB" : "base ms", "new n",
                            is_memory(r) ? "new MiB" : "new ms",
                            is_memory(r) ? "diff MiB" : "diff ms", "ratio");
        }
        shown++;
        char *d = aip__out_reserve(o, 8);
        *d++ = ' ';
        *d++ = ' ';
        aip__out_commit(o, d);
        uint64_t w = aip__compare_put_name(o, r);
        aip__out_printf(o, "%*s %10llu %12.3f %10llu %12.3f %+12.3f ", w < 52 ? (int)(52 - w) : 0,
                        "", (unsigned long long)r->count[0], aip__compare_value(r, r->per_step[0]),
                        (unsigned long long)r->count[1], aip__compare_value(r, r->per_step[1]),
                        aip__compare_value(r, r->diff));
        if (r->per_step[0] > 0)
            aip__out_printf(o, "%8.2f\n", r->per_step[1] / r->per_step[0]);
        else
            AIP_OUT_LIT(o, "     new\n");
    }
    if (!shown)
        AIP_OUT_LIT(o, "\nNo change above the threshold.\n");
    aip__out_printf(o, "\n%zu rows shown, %zu within the threshold\n", shown, hidden);
}

static void put_cell(aip__out *o, const char *s)
{
    size_t n = strnlen(s, 65536);
    char *d = aip__out_reserve(o, AIP_CSV_ESC_MAX(n));
    aip__out_commit(o, d + aip__csv_cell(s, n, d));
}

void aip__compare_csv_head(int with_rank, aip__out *o)
{
    if (with_rank)
        AIP_OUT_LIT(o, "Rank,");
    AIP_OUT_LIT(o, "Section,Top,Operator Name,Input Shape,Unit,Base Device Duration(ms),"
                   "Base Operator Number,Comparison Device Duration(ms),"
                   "Comparison Operator Number,Diff Duration(ms),Diff Ratio\r\n");
}

void aip__compare_csv_rows(const aip__cmp *c, double threshold, const long *rank, aip__out *o)
{
    size_t top = 0;
    const char *section = NULL;
    for (size_t i = 0; i < c->n; i++) {
        const aip__cmp_row *r = &c->rows[i];
        if (!aip__compare_shown(c, r, threshold))
            continue;
        if (r->section != section) {
            section = r->section;
            top = 0;
        }
        if (rank)
            aip__out_printf(o, "%ld,", *rank);
        aip__out_printf(o, "%s,%zu,", r->section, ++top);
        put_cell(o, r->name);
        AIP_OUT_LIT(o, ",");
        put_cell(o, r->shapes ? r->shapes : "");
        aip__out_printf(o, ",%s,%.6f,%llu,%.6f,%llu,%.6f,", is_memory(r) ? "MiB" : "ms/step",
                        aip__compare_value(r, r->per_step[0]), (unsigned long long)r->count[0],
                        aip__compare_value(r, r->per_step[1]), (unsigned long long)r->count[1],
                        aip__compare_value(r, r->diff));
        if (r->per_step[0] > 0)
            aip__out_printf(o, "%.6f\r\n", r->per_step[1] / r->per_step[0]);
        else
            AIP_OUT_LIT(o, "inf\r\n");
    }
}

void aip__compare_csv(const aip__cmp *c, double threshold, aip__out *o)
{
    aip__compare_csv_head(0, o);
    aip__compare_csv_rows(c, threshold, NULL, o);
}
