/*
 * summary_osrt.c — the "OS runtime" section of `aiprof summary` (terminal
 * text and HTML): per function, the calls host_sys OSRT recorded (those at
 * or above the threshold, docs/OSRT.md), how many failed, their total and
 * longest time, every process together, longest total first.  Nothing is
 * shown when OSRT was neither requested nor recorded; when it was
 * requested and no call reached the threshold, the section says so.
 */
#include "osrt_export.h"
#include "summary.h"
#include "svg_chart.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

const char *aip__osrt_errno_name(int error)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    return error > 0 ? strerrorname_np(error) : NULL;
#else
    (void)error;
    return NULL;
#endif
}

static int cmp_total(const void *a, const void *b)
{
    const aip__osrt_stat *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return aip__text_cmp(x->name, x->len, y->name, y->len);
}

aip_status aip__osrt_stats(const aip__model *m, aip__osrt_stat **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    aip__osrt_stat *v = NULL;
    size_t nv = 0, cap = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->osrt.n; i++) {
            const aip__osrt_call *c = &p->osrt.v[i];
            size_t len = 0;
            const char *name = aip__model_str(p, c->name, &len);
            if (!len) { /* a name id the file does not define */
                name = "(unnamed)";
                len = 9;
            }
            size_t k = 0; /* a few dozen functions at most: a linear search */
            while (k < nv && !(v[k].len == len && !memcmp(v[k].name, name, len)))
                k++;
            if (k == nv) {
                if (nv == cap) {
                    cap = cap ? 2 * cap : 32;
                    aip__osrt_stat *g = realloc(v, cap * sizeof *g);
                    if (!g) {
                        free(v);
                        return aip__fail(AIP_ERR_NOMEM, "no memory for the OS runtime summary");
                    }
                    v = g;
                }
                v[nv++] = (aip__osrt_stat){.name = name, .len = len};
            }
            int64_t d = c->end - c->start;
            v[k].calls++;
            v[k].failed += c->failed;
            /* hostile raw files hold calls of ~2^62 ns: saturate, never wrap */
            v[k].total_ns = d > INT64_MAX - v[k].total_ns ? INT64_MAX : v[k].total_ns + d;
            if (d > v[k].max_ns)
                v[k].max_ns = d;
        }
    }
    if (nv > 1)
        qsort(v, nv, sizeof *v, cmp_total);
    *out = v;
    *n = nv;
    return AIP_OK;
}

static int wanted(const aip__summary_data *s)
{
    if (s->info->host_sys & AIP_HOST_SYS_OSRT)
        return 1;
    for (size_t i = 0; i < s->m->n_procs; i++)
        if (s->m->procs[i].osrt.n)
            return 1;
    return 0;
}

void aip__summary_osrt_text(const aip__summary_data *s, aip__out *o)
{
    if (!wanted(s))
        return;
    aip__osrt_stat *v;
    size_t n;
    if (aip__osrt_stats(s->m, &v, &n)) {
        AIP_OUT_LIT(o, "\nOS runtime: not summarised (no memory)\n");
        return;
    }
    if (!n) {
        AIP_OUT_LIT(o, "\nOS runtime: no call reached the recording threshold\n");
        return;
    }
    uint64_t calls = 0;
    for (size_t i = 0; i < n; i++)
        calls += v[i].calls;
    aip__out_printf(o, "\nOS runtime: %llu calls of %zu functions (at or above the threshold)\n",
                    (unsigned long long)calls, n);
    aip__out_printf(o, "  %8s %8s %12s %12s %12s  %s\n", "Calls", "Failed", "Total(ms)",
                    "Max(ms)", "Avg(us)", "Function");
    for (size_t i = 0; i < n && i < AIP_SUMMARY_TOP; i++) {
        aip__out_printf(o, "  %8llu %8llu %12.3f %12.3f %12.3f  ",
                        (unsigned long long)v[i].calls, (unsigned long long)v[i].failed,
                        (double)v[i].total_ns / 1e6, (double)v[i].max_ns / 1e6,
                        (double)v[i].total_ns / 1e3 / (double)v[i].calls);
        aip__summary_put_term(o, v[i].name, v[i].len, 40);
        AIP_OUT_LIT(o, "\n");
    }
    if (n > AIP_SUMMARY_TOP)
        aip__out_printf(o, "  ... %zu more\n", n - AIP_SUMMARY_TOP);
    free(v);
}

void aip__summary_osrt_html(const aip__summary_data *s, aip__out *o)
{
    if (!wanted(s))
        return;
    aip__osrt_stat *v;
    size_t n;
    AIP_OUT_LIT(o, "<h2>OS runtime</h2>\n");
    if (aip__osrt_stats(s->m, &v, &n)) {
        AIP_OUT_LIT(o, "<p>Not summarised (no memory).</p>\n");
        return;
    }
    if (!n) {
        AIP_OUT_LIT(o, "<p id=\"no-osrt\">No call reached the recording threshold.</p>\n");
        return;
    }
    AIP_OUT_LIT(o, "<table id=\"osrt\"><tr><th>Function</th><th>Calls</th><th>Failed</th>"
                   "<th>Total (ms)</th><th>Max (ms)</th><th>Avg (&micro;s)</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        AIP_OUT_LIT(o, "<tr><td class=\"name\">");
        aip__out_html(o, v[i].name, v[i].len);
        aip__out_printf(o, "</td><td>%llu</td><td>%llu</td><td>%.3f</td><td>%.3f</td>"
                        "<td>%.3f</td></tr>\n", (unsigned long long)v[i].calls,
                        (unsigned long long)v[i].failed, (double)v[i].total_ns / 1e6,
                        (double)v[i].max_ns / 1e6,
                        (double)v[i].total_ns / 1e3 / (double)v[i].calls);
    }
    AIP_OUT_LIT(o, "</table>\n");
    free(v);
}
