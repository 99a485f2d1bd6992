/*
 * compare_html.c — `aiprof compare --html FILE`: the text's tables as one
 * self-contained page (no script, no outside resource: it opens from a
 * mail or an air-gapped machine).  Every recorded name, shape and path is
 * escaped (aip__html_escape: entities for & < > " ', control bytes and
 * invalid UTF-8 as U+FFFD), and each figure is printed with the text's
 * format, so the page and the terminal say the same numbers
 * (docs/ADVISE.md "HTML").
 */
#include "insight.h"
#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

static void put_html(aip__out *o, const char *s)
{
    size_t n = strnlen(s, 65536);
    char *d = aip__out_reserve(o, AIP_HTML_ESC_MAX(n));
    aip__out_commit(o, d + aip__html_escape(s, n, d));
}

static void head(aip__out *o, const char *base, const char *cur, double threshold)
{
    AIP_OUT_LIT(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<title>aiprof compare</title><style>"
                   "body{font:14px sans-serif;margin:1.5em}"
                   "table{border-collapse:collapse;margin:.5em 0 1.5em}"
                   "th,td{border:1px solid #ccc;padding:2px 6px}"
                   "td.n{text-align:right;font-family:monospace}"
                   "tr.up td.d{color:#b00}tr.down td.d{color:#070}"
                   "</style></head><body>\n<h1>aiprof compare</h1>\n<p>base: <code>");
    put_html(o, base);
    AIP_OUT_LIT(o, "</code><br>new: <code>");
    put_html(o, cur);
    aip__out_printf(o, "</code><br>changes below %.2f%% of the base's mean step (memory: of its "
                    "peak) left out; times per step, ms</p>\n", 100 * threshold);
}

static void row_cells(aip__out *o, const aip__cmp_row *r, int with_section)
{
    aip__out_printf(o, "<tr class=\"%s\">", r->diff > 0 ? "up" : "down");
    if (with_section)
        aip__out_printf(o, "<td>%s</td>", r->section);
    AIP_OUT_LIT(o, "<td class=\"name\">");
    put_html(o, r->name);
    AIP_OUT_LIT(o, "</td><td class=\"shape\">");
    put_html(o, r->shapes ? r->shapes : "");
    aip__out_printf(o, "</td><td class=\"n\">%llu</td><td class=\"n\">%.3f</td>"
                    "<td class=\"n\">%llu</td><td class=\"n\">%.3f</td>"
                    "<td class=\"n d\">%+.3f</td>",
                    (unsigned long long)r->count[0], aip__compare_value(r, r->per_step[0]),
                    (unsigned long long)r->count[1], aip__compare_value(r, r->per_step[1]),
                    aip__compare_value(r, r->diff));
    if (r->per_step[0] > 0)
        aip__out_printf(o, "<td class=\"n\">%.2f</td></tr>\n", r->per_step[1] / r->per_step[0]);
    else
        AIP_OUT_LIT(o, "<td class=\"n\">new</td></tr>\n");
}

static void table_head(aip__out *o, const char *id, int with_section, int memory)
{
    aip__out_printf(o, "<table id=\"%s\"><tr>%s<th>name</th><th>input shapes</th>"
                    "<th>base n</th><th>base %s</th><th>new n</th><th>new %s</th>"
                    "<th>diff %s</th><th>ratio</th></tr>\n", id,
                    with_section ? "<th>section</th>" : "", memory ? "MiB" : "ms",
                    memory ? "MiB" : "ms", memory ? "MiB" : "ms");
}

void aip__compare_html(const aip__cmp *c, double threshold, const char *base, const char *cur,
                       aip__out *o)
{
    head(o, base, cur, threshold);
    aip__out_printf(o, "<p>base %zu steps (mean %.3f ms), new %zu steps (mean %.3f ms)</p>\n",
                    c->n_steps[0], c->mean_step_ns[0] / 1e6, c->n_steps[1],
                    c->mean_step_ns[1] / 1e6);
    const char *section = NULL;
    size_t shown = 0;
    for (size_t i = 0; i < c->n; i++) {
        const aip__cmp_row *r = &c->rows[i];
        if (!aip__compare_shown(c, r, threshold))
            continue;
        if (r->section != section) {
            if (section)
                AIP_OUT_LIT(o, "</table>\n");
            section = r->section;
            aip__out_printf(o, "<h2>%s</h2>\n", section);
            table_head(o, section, 0, !strcmp(section, "memory"));
        }
        row_cells(o, r, 0);
        shown++;
    }
    if (section)
        AIP_OUT_LIT(o, "</table>\n");
    if (!shown)
        AIP_OUT_LIT(o, "<p>No change above the threshold.</p>\n");
    AIP_OUT_LIT(o, "</body></html>\n");
}

static void rank_label(aip__out *o, const aip__cmp_rank *r)
{
    if (r->rank >= 0)
        aip__out_printf(o, "%ld", r->rank);
    else
        aip__out_printf(o, "#%ld", -1 - r->rank);
}

static void job_steps(const aip__cmp_job *j, aip__out *o)
{
    static const char *const cols[] = {"Step", "Computing", "Free",
                                       "Communication(Not Overlapped)"};
    AIP_OUT_LIT(o, "<h2>step, per rank (mean per step row, ms)</h2>\n<table id=\"steps\"><tr>"
                   "<th rowspan=\"2\">rank</th>");
    for (int k = 0; k < 4; k++)
        aip__out_printf(o, "<th colspan=\"3\">%s</th>", cols[k]);
    AIP_OUT_LIT(o, "</tr><tr>");
    for (int k = 0; k < 4; k++)
        AIP_OUT_LIT(o, "<th>base</th><th>new</th><th>change</th>");
    AIP_OUT_LIT(o, "</tr>\n");
    for (size_t i = 0; i < j->n; i++) {
        const aip__cmp_rank *r = &j->ranks[i];
        AIP_OUT_LIT(o, "<tr><td>");
        rank_label(o, r);
        AIP_OUT_LIT(o, "</td>");
        if (!r->compared) {
            AIP_OUT_LIT(o, "<td colspan=\"12\">");
            put_html(o, r->error[0] ? r->error : !r->dir[0] ? "only in NEW: " : "only in BASE: ");
            if (!r->error[0])
                put_html(o, r->dir[r->dir[0] ? 0 : 1]);
            AIP_OUT_LIT(o, "</td></tr>\n");
            continue;
        }
        for (int k = 0; k < 4; k++) {
            const aip__cmp_row *x = aip__compare_find(&r->cmp, "step", cols[k]);
            if (x)
                aip__out_printf(o, "<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
                                "<td class=\"n\">%+.3f</td>", x->per_step[0] / 1e6,
                                x->per_step[1] / 1e6, x->diff / 1e6);
            else
                AIP_OUT_LIT(o, "<td>-</td><td>-</td><td>-</td>");
        }
        AIP_OUT_LIT(o, "</tr>\n");
    }
    AIP_OUT_LIT(o, "</table>\n");
}

void aip__compare_job_html(const aip__cmp_job *j, double threshold, size_t top,
                           const char *base, const char *cur, aip__out *o)
{
    head(o, base, cur, threshold);
    job_steps(j, o);
    for (size_t i = 0; i < j->n; i++) {
        const aip__cmp_rank *r = &j->ranks[i];
        if (!r->compared)
            continue;
        size_t *idx = malloc((r->cmp.n ? r->cmp.n : 1) * sizeof *idx);
        if (!idx)
            continue;
        size_t n = aip__compare_top(&r->cmp, threshold, top, idx);
        AIP_OUT_LIT(o, "<h2>rank ");
        rank_label(o, r);
        aip__out_printf(o, ": top changes (base %.3f ms per step, new %.3f ms)</h2>\n",
                        r->cmp.mean_step_ns[0] / 1e6, r->cmp.mean_step_ns[1] / 1e6);
        AIP_OUT_LIT(o, "<table id=\"rank-");
        rank_label(o, r);
        AIP_OUT_LIT(o, "\"><tr><th>section</th><th>name</th><th>input shapes</th><th>base n</th>"
                       "<th>base</th><th>new n</th><th>new</th><th>diff</th><th>ratio</th>"
                       "</tr>\n");
        for (size_t k = 0; k < n; k++)
            row_cells(o, &r->cmp.rows[idx[k]], 1);
        AIP_OUT_LIT(o, "</table>\n");
        free(idx);
    }
    AIP_OUT_LIT(o, "</body></html>\n");
}
