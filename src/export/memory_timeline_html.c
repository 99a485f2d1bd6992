/*
 * memory_timeline_html.c — the .html memory timeline: one self-contained
 * page (no script, no network) with torch's plot drawn as inline SVG:
 * memory by category stacked over time, x "Time (ms)" from the first
 * point, y "Memory (GB)" (GiB, as torch divides by 1024**3), the layers in
 * torch's order and colours, and the peak totals the allocator reported
 * ("Max memory allocated/reserved"; torch asks the CUDA allocator, here they
 * come from the records' running totals).
 *
 * A long profile has far more points than a screen has pixels, so the
 * chart keeps, per horizontal slot (~1200 across), the point where the
 * total is highest: peaks survive, and the page stays small.
 */
#include "memory_timeline.h"
#include "svg_chart.h"

#include <stdio.h>
#include <stdlib.h>

#define SLOTS 1200
#define GIB (1024.0 * 1024.0 * 1024.0)

/* torch's _CATEGORY_TO_COLORS, in index order */
static const char *const colors[AIP_MEMCAT_COUNT] = {
    "darkgreen", "goldenrod", "black", "mediumpurple", "red", "mediumblue", "royalblue", "grey"};

static int64_t total(const int64_t *sizes)
{
    int64_t s = 0;
    for (int c = 1; c <= AIP_MEMCAT_COUNT; c++)
        s += sizes[c];
    return s;
}

/* Indices of the points to draw: per slot, the highest total. */
static size_t pick(const aip__mem_timeline *t, size_t *out)
{
    if (t->n_points <= SLOTS) {
        for (size_t i = 0; i < t->n_points; i++)
            out[i] = i;
        return t->n_points;
    }
    int64_t t0 = t->times_us[0], span = t->times_us[t->n_points - 1] - t0;
    size_t n = 0;
    for (size_t i = 0; i < t->n_points; i++) {
        size_t slot = span > 0 ? (size_t)((double)(t->times_us[i] - t0) / (double)span * (SLOTS - 1)) : 0;
        size_t prev_slot = n ? (span > 0 ? (size_t)((double)(t->times_us[out[n - 1]] - t0) /
                                                    (double)span * (SLOTS - 1)) : 0)
                             : SIZE_MAX;
        if (slot != prev_slot)
            out[n++] = i;
        else if (total(t->sizes[i]) > total(t->sizes[out[n - 1]]))
            out[n - 1] = i;
    }
    if (out[n - 1] != t->n_points - 1)
        out[n++] = t->n_points - 1; /* keep the end */
    return n;
}

static void gib_line(aip__out *o, const char *what, int64_t bytes)
{
    char b[160];
    int n = snprintf(b, sizeof b, "<li>%s: <b>%.2f GiB</b> (%lld bytes)</li>\n", what,
                     (double)bytes / GIB, (long long)bytes);
    aip__out_put(o, b, (size_t)n);
}

aip_status aip__mem_timeline_svg(const aip__mem_timeline *t, aip__out *o, const char *id, int width,
                                 int height, size_t *drawn)
{
    size_t cap = t->n_points + 1;
    size_t *idx = malloc(cap * sizeof *idx);
    double *x = malloc(cap * sizeof *x);
    double *tops = malloc(cap * AIP_MEMCAT_COUNT * sizeof *tops);
    if (!idx || !x || !tops) {
        free(idx);
        free(x);
        free(tops);
        return AIP_ERR_NOMEM;
    }
    size_t n = pick(t, idx);
    const double *top[AIP_MEMCAT_COUNT];
    for (int c = 0; c < AIP_MEMCAT_COUNT; c++)
        top[c] = tops + (size_t)c * cap;
    for (size_t i = 0; i < n; i++) {
        const int64_t *sz = t->sizes[idx[i]];
        x[i] = (double)(t->times_us[idx[i]] - t->times_us[idx[0]]) / 1000.0;
        double cum = 0;
        for (int c = 0; c < AIP_MEMCAT_COUNT; c++) {
            cum += (double)sz[c + 1] / GIB;
            tops[(size_t)c * cap + i] = cum;
        }
    }
    const char *names[AIP_MEMCAT_COUNT];
    for (int c = 0; c < AIP_MEMCAT_COUNT; c++)
        names[c] = c == AIP_MEMCAT_UNKNOWN ? "Unknown" : aip__mem_category_name((unsigned)c);
    aip__svg_area chart = {width, height, id, "Time (ms)", "Memory (GB)",
                          x, n, top, names, colors, AIP_MEMCAT_COUNT};
    aip__svg_area_chart(o, &chart);
    if (drawn)
        *drawn = n;
    free(idx);
    free(x);
    free(tops);
    return AIP_OK;
}

void aip__mem_timeline_peaks(const aip__mem_timeline *t, aip__out *o)
{
    gib_line(o, "Max memory allocated", t->max_allocated);
    gib_line(o, "Max memory reserved", t->max_reserved);
}

aip_status aip__mem_timeline_html(const aip__mem_timeline *t, aip__out *o)
{
    AIP_OUT_LIT(o, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/>"
                   "<title>Memory Timeline HTML</title>\n<style>body{font-family:sans-serif;"
                   "margin:20px;color:#222}li{margin:2px 0}.note{color:#555;font-size:13px}</style>"
                   "</head><body>\n<h1>Memory timeline (");
    aip__out_html_str(o, t->device);
    AIP_OUT_LIT(o, ")</h1>\n<ul class=\"peaks\">\n");
    aip__mem_timeline_peaks(t, o);
    char b[200];
    int k = snprintf(b, sizeof b, "<li>Memory records: %llu; points: %zu</li>\n</ul>\n",
                     (unsigned long long)t->records, t->n_points);
    aip__out_put(o, b, (size_t)k);
    if (!t->n_points)
        AIP_OUT_LIT(o, "<p class=\"empty\">No memory records for this device.</p>\n");
    aip_status s = aip__mem_timeline_svg(t, o, "memory-timeline", 1100, 520, NULL);
    if (s)
        return s;
    AIP_OUT_LIT(o, "<p class=\"note\">Categories are what the raw allocation records support: "
                   "TEMPORARY = allocated and freed inside one top-level op on one thread; "
                   "AUTOGRAD_DETAIL = allocated by an autograd node and freed before the backward "
                   "pass ended; everything else Unknown unless the framework labelled it "
                   "(docs/MEMORY.md).</p>\n</body></html>\n");
    return o->status;
}
