/*
 * advise_out.c — `aiprof advise`'s findings written out: terminal text
 * (recorded names with control bytes neutralised, summary.c's
 * put_term) and JSON (every string escaped by text_escape.c).  Places to
 * look are wall-clock times: microseconds since the epoch as
 * trace_view.json's "ts" shows them, and milliseconds from the start of
 * the profile.
 */
#include "insight.h"
#include "summary.h"
#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

static void put_json_str(aip__out *o, const char *s)
{
    size_t n = strnlen(s, 8192); /* paths and findings' texts are far shorter */
    char *d = aip__out_reserve(o, AIP_JSON_ESC_MAX(n));
    aip__out_commit(o, d + aip__json_quote(s, n, d));
}

void aip__advise_text(const aip__advise_ctx *c, const char *dir, aip__out *o)
{
    AIP_OUT_LIT(o, "aiprof advise: ");
    aip__summary_put_term(o, dir, strlen(dir), 200);
    aip__out_printf(o, "\n%zu %s, mean %.3f ms; %zu finding%s (ranked by severity, then time "
                    "at stake per step)\n", c->n_steps,
                    c->steps == c->m->steps ? "steps" : "window (no ProfilerStep#N: the whole "
                    "profile)", c->mean_step_ns / 1e6, c->n, c->n == 1 ? "" : "s");
    if (!c->n)
        AIP_OUT_LIT(o, "\nNothing found: no rule of docs/ADVISE.md had data to fire on.\n");
    for (size_t i = 0; i < c->n; i++) {
        AIP_OUT_LIT(o, "\n");
        aip__finding_text(&c->f[i], i + 1, NULL, c->m->first_ns, o);
    }
}

void aip__finding_text(const aip__finding *f, size_t pos, const char *whose, int64_t first_ns,
                       aip__out *o)
{
    aip__out_printf(o, "%zu. [%s] %s", pos, aip__severity_name(f->severity), f->rule);
    if (whose) {
        AIP_OUT_LIT(o, " (");
        aip__summary_put_term(o, whose, strlen(whose), 300);
        AIP_OUT_LIT(o, ")");
    }
    AIP_OUT_LIT(o, ": ");
    aip__summary_put_term(o, f->title, strlen(f->title), 300);
    aip__out_printf(o, "\n   at stake: %.3f ms per step (%.1f%%)\n   evidence: ",
                    f->ns_per_step / 1e6, 100 * f->share);
    aip__summary_put_term(o, f->evidence, strlen(f->evidence), sizeof f->evidence);
    AIP_OUT_LIT(o, "\n");
    for (size_t w = 0; w < f->n_where; w++)
        aip__out_printf(o, "   %s ts %.3f us (+%.3f ms into the profile), lasting %.3f ms\n",
                        w ? "         " : "look at:", f->where_ns[w] / 1e3,
                        (f->where_ns[w] - first_ns) / 1e6, f->where_dur[w] / 1e6);
    AIP_OUT_LIT(o, "   try: ");
    aip__out_str(o, f->advice);
    AIP_OUT_LIT(o, "\n");
}

void aip__advise_json(const aip__advise_ctx *c, const char *dir, aip__out *o)
{
    AIP_OUT_LIT(o, "{\"result_dir\":");
    put_json_str(o, dir);
    aip__out_printf(o, ",\"steps\":%zu,\"whole_profile\":%s,\"mean_step_ns\":%lld,"
                    "\"findings\":[", c->n_steps, c->steps == c->m->steps ? "false" : "true",
                    (long long)c->mean_step_ns);
    for (size_t i = 0; i < c->n; i++) {
        aip__out_printf(o, "%s\n{\"rank\":%zu,", i ? "," : "", i + 1);
        aip__finding_json_fields(&c->f[i], o);
        AIP_OUT_LIT(o, "}");
    }
    AIP_OUT_LIT(o, "\n]}\n");
}

void aip__finding_json_fields(const aip__finding *f, aip__out *o)
{
    AIP_OUT_LIT(o, "\"rule\":");
    put_json_str(o, f->rule);
    aip__out_printf(o, ",\"severity\":\"%s\",\"ns_per_step\":%lld,\"share\":%.6f,"
                    "\"title\":", aip__severity_name(f->severity),
                    (long long)f->ns_per_step, f->share);
    put_json_str(o, f->title);
    AIP_OUT_LIT(o, ",\"evidence\":");
    put_json_str(o, f->evidence);
    AIP_OUT_LIT(o, ",\"advice\":");
    put_json_str(o, f->advice);
    AIP_OUT_LIT(o, ",\"where\":[");
    for (size_t w = 0; w < f->n_where; w++)
        aip__out_printf(o, "%s{\"ts_ns\":%lld,\"dur_ns\":%lld}", w ? "," : "",
                        (long long)f->where_ns[w], (long long)f->where_dur[w]);
    AIP_OUT_LIT(o, "]");
}

void aip__json_str(aip__out *o, const char *s)
{
    put_json_str(o, s);
}
