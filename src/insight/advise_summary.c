/*
 * advise_summary.c — the "Advice" section of `aiprof summary` (terminal
 * text and the HTML page, summary.c / summary_html.c call it through the
 * summary's callbacks): the findings of `aiprof advise` above info, one
 * line (one table row) each, most severe first; the full evidence and
 * advice stay with `aiprof advise`.
 */
#include "insight.h"
#include "summary.h"
#include "svg_chart.h"

#include <string.h>

void aip__advise_summary_text(const void *ctx, aip__out *o)
{
    const aip__advise_ctx *c = ctx;
    size_t shown = 0;
    AIP_OUT_LIT(o, "\nAdvice (aiprof advise; docs/ADVISE.md):");
    for (size_t i = 0; i < c->n; i++) {
        const aip__finding *f = &c->f[i];
        if (f->severity == AIP_SEVERITY_INFO)
            continue;
        aip__out_printf(o, "\n  [%s] %s: ", aip__severity_name(f->severity), f->rule);
        aip__summary_put_term(o, f->title, strlen(f->title), 200);
        if (f->ns_per_step)
            aip__out_printf(o, " (%.3f ms per step)", f->ns_per_step / 1e6);
        shown++;
    }
    if (!shown)
        AIP_OUT_LIT(o, " nothing above info");
    AIP_OUT_LIT(o, "\n");
}

void aip__advise_summary_html(const void *ctx, aip__out *o)
{
    const aip__advise_ctx *c = ctx;
    AIP_OUT_LIT(o, "<h2>Advice</h2>\n<p>Findings of <code>aiprof advise</code> "
                   "(docs/ADVISE.md), most severe first; time at stake per step.</p>\n"
                   "<table id=\"advice\"><tr><th>Severity</th><th>Rule</th><th>Finding</th>"
                   "<th>At stake (ms/step)</th><th>Share</th><th>Evidence</th><th>Try</th></tr>\n");
    for (size_t i = 0; i < c->n; i++) {
        const aip__finding *f = &c->f[i];
        aip__out_printf(o, "<tr><td>%s</td><td>%s</td><td class=\"name\">",
                        aip__severity_name(f->severity), f->rule);
        aip__out_html_str(o, f->title);
        aip__out_printf(o, "</td><td>%.3f</td><td>%.1f%%</td><td class=\"name\">",
                        f->ns_per_step / 1e6, 100 * f->share);
        aip__out_html_str(o, f->evidence);
        AIP_OUT_LIT(o, "</td><td class=\"name\">");
        aip__out_html_str(o, f->advice);
        AIP_OUT_LIT(o, "</td></tr>\n");
    }
    if (!c->n)
        AIP_OUT_LIT(o, "<tr><td colspan=\"7\">no findings</td></tr>\n");
    AIP_OUT_LIT(o, "</table>\n");
}
