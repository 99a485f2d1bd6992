/*
 * cluster_html.c — `aiprof cluster --html`: cluster_analysis_output/
 * cluster_report.html, one self-contained page (inline SVG and CSS, no
 * script, no network resource) with
 * - the per-rank step breakdown: Computing, Communication(Not Overlapped)
 *   and Free summed over the steps, stacked per rank (the three add up to
 *   the ranks' step time), and a table of every step_trace_time column;
 * - the communication matrix: a heat map of the link matrix between global
 *   ranks (cluster_links.c; sender rows, receiver columns, colour by the
 *   bytes moved), and the links as a table.
 * Slow ranks and slow links (the verdict's) are outlined in red and named.
 * Every text from the inputs (paths, column and group names) is escaped
 * (svg_chart.h's aip__out_html).
 */
#include "cluster_links.h"
#include "fs.h"
#include "outbuf.h"
#include "svg_chart.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TABLE_LINKS 500 /* the link table lists the slow ones and at most this many */

static double col_sum(const aip__rank_dir *r, const char *col)
{
    double s = 0;
    for (size_t k = 0; k < r->n_cols; k++)
        if (!strcmp(r->cols[k], col))
            for (size_t j = 0; j < r->n_rows; j++)
                s += r->rows[j].v[k];
    return s;
}

static aip_status breakdown(aip__out *o, const aip__cluster *c, const unsigned char *slow)
{
    static const char *const layers[] = {"Computing", "Communication(Not Overlapped)", "Free"};
    static const char *const colors[] = {"steelblue", "darkorange", "lightgray"};
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += !c->r[i].problem[0];
    double *v = calloc(3 * (n + 1), sizeof *v);
    char (*lab)[24] = calloc(n + 1, sizeof *lab);
    const char **labels = calloc(n + 1, sizeof *labels);
    unsigned char *mark = calloc(n + 1, 1);
    if (!v || !lab || !labels || !mark) {
        free(v);
        free(lab);
        free(labels);
        free(mark);
        return AIP_ERR_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        for (int l = 0; l < 3; l++)
            v[(size_t)l * n + k] = col_sum(r, layers[l]) / 1e3;
        snprintf(lab[k], sizeof lab[k], "%ld", r->rank);
        labels[k] = lab[k];
        mark[k] = slow && slow[i];
        k++;
    }
    const double *vals[3] = {v, v + n, v + 2 * n};
    AIP_OUT_LIT(o, "<h2>Step breakdown per rank</h2>\n<p>Summed over the steps of "
                   "step_trace_time.csv (ms): Computing + Communication(Not Overlapped) + Free "
                   "= the step time. Slow ranks are outlined in red.</p>\n");
    aip__svg_stack chart = {960, 360, "step-breakdown", "Rank", "Time (ms)", labels, n, vals,
                            layers, colors, 3, mark};
    aip__svg_stacked_bars(o, &chart);
    /* every column, per rank */
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    AIP_OUT_LIT(o, "<table id=\"rank-table\"><tr><th>Rank</th>");
    for (size_t j = 0; ref && j < ref->n_cols; j++) {
        AIP_OUT_LIT(o, "<th>");
        aip__out_html_str(o, ref->cols[j]);
        AIP_OUT_LIT(o, " (ms)</th>");
    }
    AIP_OUT_LIT(o, "<th>Directory</th></tr>\n");
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        int s = slow && slow[i];
        aip__out_printf(o, "<tr%s><td>%ld%s</td>", s ? " class=\"slow\"" : "", r->rank,
                        s ? " (slow)" : "");
        for (size_t j = 0; j < r->n_cols; j++)
            aip__out_printf(o, "<td>%.3f</td>", col_sum(r, r->cols[j]) / 1e3);
        AIP_OUT_LIT(o, "<td class=\"path\">");
        aip__out_html_str(o, r->path);
        AIP_OUT_LIT(o, "</td></tr>\n");
    }
    AIP_OUT_LIT(o, "</table>\n");
    free(v);
    free(lab);
    free(labels);
    free(mark);
    return AIP_OK;
}

static size_t pos_of(const long *ranks, size_t n, long rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void heat_map(aip__out *o, const aip__cluster *c, const aip__cluster_links *l)
{
    size_t n = 0;
    long *ranks = malloc((c->n + 1) * sizeof *ranks);
    if (!ranks)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (!c->r[i].problem[0] && (!n || ranks[n - 1] != c->r[i].rank))
            ranks[n++] = c->r[i].rank;
    double max_mb = 0;
    for (size_t k = 0; k < l->n; k++)
        max_mb = l->v[k].mb > max_mb ? l->v[k].mb : max_mb;
    const int left = 60, top = 40, side = 720;
    double cell = n ? (double)side / (double)n : side;
    int w = left + side + 20, h = top + side + 50;
    aip__out_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"link-heatmap\" "
                    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
                    "font-family=\"sans-serif\">\n", w, h, w, h);
    aip__out_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
                    "stroke=\"#333\"/>\n", left, top, side, side);
    size_t every = n > 32 ? (n + 31) / 32 : 1;
    AIP_OUT_LIT(o, "<g class=\"ticks\" font-size=\"10\" fill=\"#333\">");
    for (size_t i = 0; i < n; i += every) {
        aip__out_printf(o, "<text class=\"src\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%ld</text>",
                        left - 4, top + cell * ((double)i + 0.5) + 3, ranks[i]);
        aip__out_printf(o, "<text class=\"dst\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%ld"
                        "</text>", left + cell * ((double)i + 0.5), top - 6, ranks[i]);
    }
    AIP_OUT_LIT(o, "</g>\n");
    aip__out_printf(o, "<text x=\"%d\" y=\"14\" text-anchor=\"middle\" font-size=\"12\">"
                    "receiver (dst) rank</text><text transform=\"translate(14,%d) rotate(-90)\" "
                    "text-anchor=\"middle\" font-size=\"12\">sender (src) rank</text>\n",
                    left + side / 2, top + side / 2);
    for (size_t k = 0; k < l->n; k++) {
        const aip__cluster_link *x = &l->v[k];
        size_t i = pos_of(ranks, n, x->src), j = pos_of(ranks, n, x->dst);
        if (i >= n || j >= n)
            continue;
        /* log of the bytes: a ring's few KB stay visible beside MB of collectives */
        double t = max_mb > 0 ? log1p(x->mb * 1048576) / log1p(max_mb * 1048576) : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        int rr = (int)(255 - t * (255 - 8)), gg = (int)(255 - t * (255 - 48)),
            bb = (int)(255 - t * (255 - 107));
        aip__out_printf(o, "<rect class=\"link%s\" data-src=\"%ld\" data-dst=\"%ld\" "
                        "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                        "fill=\"rgb(%d,%d,%d)\"%s><title>%ld-&gt;%ld ",
                        x->slow ? " slow" : "", x->src, x->dst, left + cell * (double)j,
                        top + cell * (double)i, cell, cell, rr, gg, bb,
                        x->slow ? " stroke=\"red\" stroke-width=\"2\"" : "", x->src, x->dst);
        aip__out_html_str(o, x->transport);
        aip__out_printf(o, ": %.6f MB in %.6f ms, %.4f GB/s%s</title></rect>\n", x->mb, x->ms,
                        x->gbps, x->slow ? " (slow link)" : "");
    }
    aip__out_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\">colour: Transit Size, log of the "
                    "bytes, white 0 to dark blue %.6f MB; red outline: slow link</text>\n",
                    left, top + side + 30, max_mb);
    AIP_OUT_LIT(o, "</svg>\n");
    free(ranks);
}

static void link_table(aip__out *o, const aip__cluster_links *l)
{
    AIP_OUT_LIT(o, "<table id=\"link-table\"><tr><th>Src</th><th>Dst</th><th>Transport</th>"
                   "<th>Transit Size (MB)</th><th>Transit Time (ms)</th>"
                   "<th>Bandwidth (GB/s)</th><th>Records</th></tr>\n");
    size_t shown = 0;
    for (size_t k = 0; k < l->n; k++) {
        const aip__cluster_link *x = &l->v[k];
        if (!x->slow && shown >= MAX_TABLE_LINKS)
            continue;
        shown++;
        aip__out_printf(o, "<tr%s><td>%ld</td><td>%ld</td><td>", x->slow ? " class=\"slow\"" : "",
                        x->src, x->dst);
        aip__out_html_str(o, x->transport);
        aip__out_printf(o, "%s</td><td>%.6f</td><td>%.6f</td><td>%.4f</td><td>%zu</td></tr>\n",
                        x->slow ? " (slow)" : "", x->mb, x->ms, x->gbps, x->records);
    }
    AIP_OUT_LIT(o, "</table>\n");
    if (shown < l->n)
        aip__out_printf(o, "<p>%zu of %zu links listed (the slow ones and the first %d).</p>\n",
                        shown, l->n, MAX_TABLE_LINKS);
}

/* The ranks the job should have and does not (cluster_complete.c). */
static void job_gaps(aip__out *o, const aip__cluster *c)
{
    const aip__cluster_gaps *g = &c->gaps;
    if (!aip__cluster_incomplete(c)) {
        aip__out_printf(o, "<p id=\"job-complete\">Job complete: %ld of %ld ranks expected (",
                        g->expected, g->expected);
        aip__out_html_str(o, g->source);
        AIP_OUT_LIT(o, ").</p>\n");
        return;
    }
    aip__out_printf(o, "<h2 class=\"slow\">Job incomplete</h2>\n<p id=\"job-incomplete\">%ld "
                       "ranks expected (", g->expected);
    aip__out_html_str(o, g->source);
    aip__out_printf(o, "); %zu missing, %zu truncated, %zu directories unreadable.</p>\n<ul>\n",
                    g->n_missing, g->n_truncated, g->n_unreadable);
    for (size_t k = 0; k < g->n_ranges; k++)
        if (g->missing[k][0] == g->missing[k][1])
            aip__out_printf(o, "<li>missing rank %ld: no result directory</li>\n",
                            g->missing[k][0]);
        else
            aip__out_printf(o, "<li>missing ranks %ld-%ld: no result directory</li>\n",
                            g->missing[k][0], g->missing[k][1]);
    for (size_t i = 0; i < c->n; i++)
        if (g->truncated[i]) {
            aip__out_printf(o, "<li>truncated rank %ld: ", c->r[i].rank);
            aip__out_html_str(o, g->truncated[i]);
            AIP_OUT_LIT(o, "</li>\n");
        }
    for (size_t i = 0; i < c->n_unreadable; i++) {
        AIP_OUT_LIT(o, "<li>unreadable folder ");
        aip__out_html_str(o, c->unreadable[i]);
        AIP_OUT_LIT(o, "</li>\n");
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->r[i].unreadable) {
            AIP_OUT_LIT(o, "<li>unreadable rank directory ");
            aip__out_html_str(o, c->r[i].path);
            AIP_OUT_LIT(o, ": ");
            aip__out_html_str(o, c->r[i].problem);
            AIP_OUT_LIT(o, "</li>\n");
        }
    AIP_OUT_LIT(o, "</ul>\n");
}

aip_status aip__cluster_write_html(const aip__cluster *c, const aip__cluster_links *l,
                                   const unsigned char *slow, const char *out_dir)
{
    char path[PATH_MAX];
    aip_status s = aip__join(path, sizeof path, out_dir, "cluster_report.html");
    aip__out o;
    if (s || (s = aip__out_open(&o, path)))
        return s;
    AIP_OUT_LIT(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<title>aiprof cluster report</title>\n<style>body{font-family:sans-serif;"
                    "margin:1.5em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px "
                    "solid #ccc;padding:2px 6px;text-align:right}td.path{text-align:left}"
                    "tr.slow td{color:#b00;font-weight:bold}</style></head><body>\n"
                    "<h1>aiprof cluster report</h1>\n<p id=\"dir\">");
    aip__out_html_str(&o, c->dir);
    size_t used = 0, bad = 0, n_slow = 0, slow_links = 0;
    for (size_t i = 0; i < c->n; i++) {
        used += !c->r[i].problem[0];
        bad += c->r[i].problem[0] != 0;
        n_slow += slow && slow[i];
    }
    for (size_t k = 0; k < l->n; k++)
        slow_links += l->v[k].slow;
    aip__out_printf(&o, ": %zu ranks analysed, %zu directories not used; %zu slow ranks",
                    used, bad, n_slow);
    for (size_t i = 0, first = 1; slow && i < c->n; i++)
        if (slow[i]) {
            aip__out_printf(&o, "%s%ld", first ? " (" : ", ", c->r[i].rank);
            first = 0;
        }
    aip__out_printf(&o, "%s, %zu slow links.</p>\n", n_slow ? ")" : "", slow_links);
    s = breakdown(&o, c, slow);
    AIP_OUT_LIT(&o, "<h2>Communication matrix</h2>\n<p>Between global ranks, summed over the "
                    "steps and ops of every rank's communication_matrix.json; a transfer counts "
                    "once, from its sender. The diagonal is each rank's own (LOCAL) "
                    "bytes.</p>\n");
    if (l->n) {
        heat_map(&o, c, l);
        link_table(&o, l);
    } else {
        AIP_OUT_LIT(&o, "<p id=\"no-links\">No communication_matrix.json in the ranks: no "
                        "link matrix.</p>\n");
    }
    job_gaps(&o, c);
    if (bad) {
        AIP_OUT_LIT(&o, "<h2>Directories not used</h2>\n<ul>\n");
        for (size_t i = 0; i < c->n; i++) {
            if (!c->r[i].problem[0])
                continue;
            AIP_OUT_LIT(&o, "<li>");
            aip__out_html_str(&o, c->r[i].path);
            AIP_OUT_LIT(&o, ": ");
            aip__out_html_str(&o, c->r[i].problem);
            AIP_OUT_LIT(&o, "</li>\n");
        }
        AIP_OUT_LIT(&o, "</ul>\n");
    }
    AIP_OUT_LIT(&o, "</body></html>\n");
    return aip__out_finish(&o, s);
}
