/*
 * summary_html.c — the summary as one self-contained HTML page: the same
 * sections as the terminal text, as tables, plus a step-time bar chart, a
 * chart of the kernels' device time (summary_device.c) and the
 * memory-by-category chart, all inline SVG.  No script, no network
 * resource; every recorded string goes through HTML escaping (a name like
 * `</script>` or `<img onerror=...>` is shown, never run).
 */
#include "summary.h"
#include "osrt_export.h"
#include "svg_chart.h"

#include <stdio.h>
#include <stdlib.h>

static void overview(const aip__summary_data *s, aip__out *o)
{
    const aip__model *m = s->m;
    AIP_OUT_LIT(o, "<h2>Profile</h2>\n<table id=\"processes\"><tr><th>Process</th><th>pid</th>"
                   "<th>Host</th><th>Events</th><th>Threads</th></tr>\n");
    for (size_t i = 0; i < m->n_procs; i++) {
        const aip__process *p = &m->procs[i];
        AIP_OUT_LIT(o, "<tr><td>");
        aip__out_html_str(o, p->program ? p->program : "?");
        aip__out_printf(o, "</td><td>%lld</td><td>", (long long)p->pid);
        aip__out_html_str(o, p->hostname ? p->hostname : "?");
        aip__out_printf(o, "</td><td>%llu</td><td>%zu</td></tr>\n", (unsigned long long)p->events,
                        p->n_threads);
    }
    aip__out_printf(o, "</table>\n<p>Recorded span %.3f ms, %llu events, %llu dropped.</p>\n",
                    (double)(m->last_ns - m->first_ns) / 1e6, (unsigned long long)m->n_events,
                    (unsigned long long)m->dropped_events);
}

static void top_ops(const aip__summary_data *s, aip__out *o)
{
    size_t top = s->n_ops < AIP_SUMMARY_TOP ? s->n_ops : AIP_SUMMARY_TOP;
    aip__out_printf(o, "<h2>Top %zu of %zu ops by self time</h2>\n<table id=\"top-ops\">"
                    "<tr><th>Name</th><th>Calls</th><th>Self (ms)</th><th>Self %%</th>"
                    "<th>Total (ms)</th><th>Avg self (&micro;s)</th></tr>\n", top, s->n_ops);
    for (size_t i = 0; i < top; i++) {
        const aip__op_stat *st = &s->ops[i];
        AIP_OUT_LIT(o, "<tr><td class=\"name\">");
        aip__out_html(o, st->name, st->len);
        double self_pct =
            s->ops_self_total ? 100.0 * (double)st->self_ns / (double)s->ops_self_total : 0.0;
        aip__out_printf(o, "</td><td>%llu</td><td>%.3f</td><td>%.2f</td><td>%.3f</td>"
                        "<td>%.3f</td></tr>\n", (unsigned long long)st->count,
                        (double)st->self_ns / 1e6, self_pct, (double)st->total_ns / 1e6,
                        (double)st->self_ns / 1e3 / (double)st->count);
    }
    AIP_OUT_LIT(o, "</table>\n");
}

static aip_status steps(const aip__summary_data *s, aip__out *o)
{
    AIP_OUT_LIT(o, "<h2>Step times</h2>\n");
    if (!s->n_steps) {
        AIP_OUT_LIT(o, "<p id=\"no-steps\">No ProfilerStep#N: the profile had no schedule.</p>\n");
        return AIP_OK;
    }
    aip__out_printf(o, "<p id=\"step-stats\">%zu steps: min %.3f ms, median %.3f ms, "
                    "max %.3f ms, mean %.3f ms.</p>\n", s->n_steps, (double)s->step_min / 1e6,
                    (double)s->step_median / 1e6, (double)s->step_max / 1e6,
                    (double)s->step_mean / 1e6);
    /* the seed's FAQ on performance inflation */
    aip__out_printf(o, "<p id=\"step-profiler\">The first step (%lld) borders the profiler's "
                    "start and may include its start-up cost; the last (%lld) its stop and "
                    "save.", (long long)s->m->steps[0].number,
                    (long long)s->m->steps[s->n_steps - 1].number);
    if (s->has_inner)
        aip__out_printf(o, " The steps between: median %.3f ms.", (double)s->inner_median / 1e6);
    AIP_OUT_LIT(o, "</p>\n");
    double *v = malloc(s->n_steps * sizeof *v);
    char (*lab)[24] = malloc(s->n_steps * sizeof *lab);
    const char **labels = malloc(s->n_steps * sizeof *labels);
    if (!v || !lab || !labels) {
        free(v);
        free(lab);
        free(labels);
        return AIP_ERR_NOMEM;
    }
    for (size_t i = 0; i < s->n_steps; i++) {
        v[i] = (double)s->step_ns[i] / 1e6;
        snprintf(lab[i], sizeof lab[i], "%lld", (long long)s->m->steps[i].number);
        labels[i] = lab[i];
    }
    aip__svg_bars chart = {900, 320, "step-chart", "Step", "Step time (ms)", labels, v,
                          s->n_steps, "steelblue"};
    aip__svg_bar_chart(o, &chart);
    free(v);
    free(lab);
    free(labels);
    return AIP_OK;
}

static aip_status memory(const aip__summary_data *s, aip__out *o)
{
    const aip__model *m = s->m;
    AIP_OUT_LIT(o, "<h2>Memory</h2>\n");
    if (!m->n_mem_peaks && !s->n_dev_mem) {
        AIP_OUT_LIT(o, "<p id=\"no-memory\">No memory records.</p>\n");
        return AIP_OK;
    }
    AIP_OUT_LIT(o, "<table id=\"memory-peaks\"><tr><th>pid</th><th>Device</th><th>Peak allocated "
                   "(bytes)</th><th>Peak reserved (bytes)</th><th>Records</th></tr>\n");
    for (size_t i = 0; i < m->n_mem_peaks; i++) {
        const aip__mem_peak *pk = &m->mem_peaks[i];
        char dev[32];
        if (pk->device_type == AIP_DEVICE_CPU)
            snprintf(dev, sizeof dev, "cpu");
        else
            snprintf(dev, sizeof dev, "%s:%d", pk->device_type == AIP_DEVICE_NPU ? "npu" : "cuda",
                     pk->device_index);
        aip__out_printf(o, "<tr><td>%lld</td><td>%s</td><td>%lld</td><td>%lld</td><td>%llu</td>"
                        "</tr>\n", (long long)m->procs[pk->process].pid, dev,
                        (long long)pk->max_allocated, (long long)pk->max_reserved,
                        (unsigned long long)pk->records);
    }
    aip__summary_devmem_html(s, o);
    AIP_OUT_LIT(o, "</table>\n<h3>Memory by category (");
    aip__out_html_str(o, s->mem.device);
    AIP_OUT_LIT(o, ")</h3>\n<ul>");
    aip__mem_timeline_peaks(&s->mem, o);
    AIP_OUT_LIT(o, "</ul>\n");
    return aip__mem_timeline_svg(&s->mem, o, "memory-chart", 900, 400, NULL);
}

aip_status aip__summary_html(const aip__summary_data *s, aip__out *o)
{
    AIP_OUT_LIT(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
                   "<title>aiprof summary</title>\n<style>body{font-family:sans-serif;margin:24px;"
                   "color:#222;max-width:1200px}table{border-collapse:collapse;margin:8px 0}"
                   "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;font-size:13px}"
                   "th{background:#f0f0f0}th:first-child{text-align:left}"
                   "td.name{text-align:left;white-space:pre-wrap;"
                   "font-family:monospace;max-width:560px;overflow-wrap:anywhere}"
                   "li{margin:3px 0}svg{display:block;margin:8px 0;background:#fff}</style>"
                   "</head><body>\n<h1>aiprof summary</h1>\n<p id=\"dir\">");
    aip__out_html_str(o, s->dir);
    AIP_OUT_LIT(o, "</p>\n");
    overview(s, o);
    top_ops(s, o);
    aip_status st = steps(s, o);
    if (!st)
        aip__summary_device_html(s, o);
    if (!st)
        aip__summary_host_html(s, o);
    if (!st)
        aip__summary_mstx_html(s, o);
    if (!st)
        st = memory(s, o);
    if (!st)
        aip__summary_osrt_html(s, o);
    if (st)
        return st;
    if (s->advice_html)
        s->advice_html(s->advice_ctx, o);
    AIP_OUT_LIT(o, "<h2>Not collected / problems</h2>\n<ul id=\"notes\">\n");
    if (!s->n_notes)
        AIP_OUT_LIT(o, "<li>none</li>\n");
    for (size_t i = 0; i < s->n_notes; i++) {
        AIP_OUT_LIT(o, "<li>");
        aip__out_html_str(o, s->notes[i]);
        AIP_OUT_LIT(o, "</li>\n");
    }
    AIP_OUT_LIT(o, "</ul>\n</body></html>\n");
    return o->status;
}
