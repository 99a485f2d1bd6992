/*
 * summary_mstx.c — the summary's "mstx ranges" section: every mstx range of
 * the profile (push/pop ranges of one thread, and start/end ranges, which
 * may end on another thread — the program's own and torch_npu's automatic
 * ones: communication, dataloader, save_checkpoint) grouped by domain and
 * message over all processes, with its count, total, mean and longest
 * duration, the longest total first; marks and range starts that have no
 * end (no duration to give) are counted apart.  Op statistics leave the
 * start/end ranges out (they do not nest in a thread's ops), so this is
 * where their times add up.
 */
#include "summary.h"
#include "error.h"
#include "svg_chart.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    const char *domain, *name;
    size_t dlen, nlen;
    int64_t dur;
} entry;

static int cmp_key(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = aip__text_cmp(x->domain, x->dlen, y->domain, y->dlen);
    return c ? c : aip__text_cmp(x->name, x->nlen, y->name, y->nlen);
}

static int cmp_total(const void *a, const void *b)
{
    const aip__sum_range *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    int c = aip__text_cmp(x->domain, x->dlen, y->domain, y->dlen);
    return c ? c : aip__text_cmp(x->name, x->nlen, y->name, y->nlen);
}

static void text_of(const aip__process *p, uint32_t id, const char **s, size_t *n, int domain)
{
    if (domain && !id) {
        *s = "default";
        *n = 7;
        return;
    }
    *s = aip__model_str(p, id, n);
}

static size_t count_ranges(const aip__model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_procs; i++) {
        const aip__process *p = &m->procs[i];
        n += p->range_starts.n;
        for (size_t t = 0; t < p->n_threads; t++)
            for (size_t k = 0; k < p->threads[t].n_spans; k++)
                n += p->threads[t].spans[k].kind == AIP_SPAN_RANGE;
    }
    return n;
}

aip_status aip__summary_mstx_build(aip__summary_data *s)
{
    const aip__model *m = s->m;
    for (size_t i = 0; i < m->n_procs; i++)
        s->mstx_marks += m->procs[i].marks.n;
    size_t cap = count_ranges(m), n = 0;
    if (!cap)
        return AIP_OK;
    entry *e = malloc(cap * sizeof *e);
    if (!e)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the summary's mstx ranges");
    for (size_t i = 0; i < m->n_procs; i++) {
        const aip__process *p = &m->procs[i];
        for (size_t t = 0; t < p->n_threads; t++) {
            const aip__thread *th = &p->threads[t];
            for (size_t k = 0; k < th->n_spans; k++) {
                const aip__span *sp = &th->spans[k];
                if (sp->kind != AIP_SPAN_RANGE)
                    continue;
                entry *x = &e[n++];
                text_of(p, aip__model_range_domain(th, sp), &x->domain, &x->dlen, 1);
                text_of(p, sp->name, &x->name, &x->nlen, 0);
                x->dur = sp->end - sp->start;
            }
        }
        for (size_t k = 0; k < p->range_starts.n; k++) {
            const aip__range_point *r = &p->range_starts.v[k];
            if (r->match < 0) {
                s->mstx_unended++;
                continue;
            }
            entry *x = &e[n++];
            text_of(p, r->domain, &x->domain, &x->dlen, 1);
            text_of(p, r->name, &x->name, &x->nlen, 0);
            int64_t end = p->range_ends.v[r->match].ts;
            x->dur = end > r->ts ? end - r->ts : 0;
        }
    }
    if (n > 1)
        qsort(e, n, sizeof *e, cmp_key);
    aip__sum_range *g = n ? malloc(n * sizeof *g) : NULL;
    if (n && !g) {
        free(e);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the summary's mstx ranges");
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ng || cmp_key(&e[i - 1], &e[i])) {
            g[ng++] = (aip__sum_range){e[i].domain, e[i].name, e[i].dlen, e[i].nlen, 0, 0, 0};
        }
        aip__sum_range *r = &g[ng - 1];
        r->count++;
        r->total_ns = aip__sat_add(r->total_ns, e[i].dur);
        if (e[i].dur > r->max_ns)
            r->max_ns = e[i].dur;
    }
    free(e);
    if (ng > 1)
        qsort(g, ng, sizeof *g, cmp_total);
    s->mstx_ranges = g;
    s->n_mstx_ranges = ng;
    return AIP_OK;
}

void aip__summary_mstx_free(aip__summary_data *s)
{
    free(s->mstx_ranges);
    s->mstx_ranges = NULL;
    s->n_mstx_ranges = 0;
}

/* Nothing to say when mstx was off and nothing was recorded (the notes
 * already say mstx was off). */
static int quiet(const aip__summary_data *s)
{
    return !s->n_mstx_ranges && !s->mstx_marks && !s->mstx_unended && !s->info->mstx;
}

static uint64_t range_count(const aip__summary_data *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->n_mstx_ranges; i++)
        n += s->mstx_ranges[i].count;
    return n;
}

void aip__summary_mstx_text(const aip__summary_data *s, aip__out *o)
{
    if (quiet(s))
        return;
    size_t top = s->n_mstx_ranges < AIP_SUMMARY_TOP ? s->n_mstx_ranges : AIP_SUMMARY_TOP;
    aip__out_printf(o, "\nmstx ranges: %llu in %zu (domain, message) groups, %llu mark(s), "
                    "%llu start(s) without end\n", (unsigned long long)range_count(s),
                    s->n_mstx_ranges, (unsigned long long)s->mstx_marks,
                    (unsigned long long)s->mstx_unended);
    if (!top)
        return;
    aip__out_printf(o, "  %12s %8s %12s %12s  %-14s %s\n", "Total(ms)", "Count", "Avg(ms)",
                    "Max(ms)", "Domain", "Message");
    for (size_t i = 0; i < top; i++) {
        const aip__sum_range *r = &s->mstx_ranges[i];
        aip__out_printf(o, "  %12.3f %8llu %12.3f %12.3f  ", (double)r->total_ns / 1e6,
                        (unsigned long long)r->count,
                        (double)r->total_ns / 1e6 / (double)r->count, (double)r->max_ns / 1e6);
        aip__summary_put_term(o, r->domain, r->dlen, 14);
        for (size_t k = r->dlen; k < 14; k++)
            AIP_OUT_LIT(o, " ");
        AIP_OUT_LIT(o, " ");
        aip__summary_put_term(o, r->name, r->nlen, 120);
        AIP_OUT_LIT(o, "\n");
    }
    if (s->n_mstx_ranges > top)
        aip__out_printf(o, "  ... %zu more\n", s->n_mstx_ranges - top);
}

void aip__summary_mstx_html(const aip__summary_data *s, aip__out *o)
{
    if (quiet(s))
        return;
    size_t top = s->n_mstx_ranges < AIP_SUMMARY_TOP ? s->n_mstx_ranges : AIP_SUMMARY_TOP;
    aip__out_printf(o, "<h2>mstx ranges</h2>\n<p id=\"mstx-stats\">%llu ranges in %zu (domain, "
                    "message) groups, %llu mark(s), %llu start(s) without end.</p>\n",
                    (unsigned long long)range_count(s), s->n_mstx_ranges,
                    (unsigned long long)s->mstx_marks, (unsigned long long)s->mstx_unended);
    if (!top)
        return;
    AIP_OUT_LIT(o, "<table id=\"mstx-ranges\"><tr><th>Message</th><th>Domain</th><th>Count</th>"
                   "<th>Total (ms)</th><th>Avg (ms)</th><th>Max (ms)</th></tr>\n");
    for (size_t i = 0; i < top; i++) {
        const aip__sum_range *r = &s->mstx_ranges[i];
        AIP_OUT_LIT(o, "<tr><td class=\"name\">");
        aip__out_html(o, r->name, r->nlen);
        AIP_OUT_LIT(o, "</td><td class=\"name\">");
        aip__out_html(o, r->domain, r->dlen);
        aip__out_printf(o, "</td><td>%llu</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>\n",
                        (unsigned long long)r->count, (double)r->total_ns / 1e6,
                        (double)r->total_ns / 1e6 / (double)r->count, (double)r->max_ns / 1e6);
    }
    AIP_OUT_LIT(o, "</table>\n");
}
