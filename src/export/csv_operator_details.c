/*
 * csv_operator_details.c — operator_details.csv: one row per framework op
 * (cpu_op) in the per-thread op trees, in start order per thread, threads
 * by tid, processes in raw file order.  ProfilerStep#N is an annotation in
 * the model and never a row.
 *
 * Host Self/Total Duration come from the span tree (self = total minus the
 * direct children's totals).  The seed's four Device columns are sums of
 * the device kernels an op launched.  Raw format 1.0 has no device records
 * (aiprof has no device back end), so those cells are empty — the header
 * keeps all nine columns for readers that look them up by name, and an
 * empty cell says "no data" where a zero would claim a measured 0 us
 * (docs/ANALYSIS.md).
 */
#include "export.h"
#include "text_escape.h"
#include "error.h"

static aip_status put_cell(aip__out *o, aip__esc_cache *c, uint32_t id)
{
    size_t n;
    const char *s = aip__esc_get(c, id, &n);
    if (!s)
        return aip__fail(AIP_ERR_NOMEM, "no memory for CSV strings");
    aip__out_put(o, s, n);
    return AIP_OK;
}

aip_status aip__export_operator_details(const aip__model *m, aip__out *o)
{
    AIP_OUT_LIT(o, AIP_OPERATOR_DETAILS_HEADER "\r\n");
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        aip__esc_cache c;
        s = aip__esc_init(&c, p, AIP_ESC_CSV);
        for (size_t ti = 0; ti < p->n_threads && !s; ti++) {
            const aip__thread *t = &p->threads[ti];
            for (size_t i = 0; i < t->n_spans && !s; i++) {
                const aip__span *sp = &t->spans[i];
                if (sp->kind != AIP_SPAN_OP)
                    continue;
                aip__op_fields f;
                aip__model_op_fields(t, sp, &f);
                s = put_cell(o, &c, sp->name);
                AIP_OUT_LIT(o, ",");
                if (!s && f.has_shapes)
                    s = put_cell(o, &c, f.input_shapes);
                AIP_OUT_LIT(o, ",");
                if (!s && f.has_stack)
                    s = put_cell(o, &c, f.call_stack);
                AIP_OUT_LIT(o, ",");
                char *d = aip__out_reserve(o, 88);
                d = aip__fmt_us3(d, t->self_ns[i]);
                *d++ = ',';
                d = aip__fmt_us3(d, sp->end - sp->start);
                memcpy(d, ",,,,\r\n", 6);  /* the four Device cells */
                aip__out_commit(o, d + 6);
            }
        }
        aip__esc_free(&c);
    }
    return s ? s : o->status;
}
