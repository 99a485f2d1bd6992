/*
 * csv_operator_details.c — operator_details.csv: one row per node of the
 * per-thread op trees — framework ops (cpu_op) and record_function / user
 * scopes (annotations), as torch_npu's op tree has both — in start order
 * per thread, threads by tid, processes in raw file order.  ProfilerStep#N
 * is the one scope that is never a row (the seed excludes it).
 *
 * Host Self/Total Duration come from the span tree (self = total minus the
 * direct children's totals).  The seed's Device Self/Total Duration are
 * the summed durations of the device tasks the op launched itself (as the
 * innermost op open) or with the ops inside it (device_stats.c).  An op
 * that launched no device task has empty Device cells: "no data", where a
 * zero would claim a measured 0 us (docs/ANALYSIS.md); the header keeps
 * all nine columns for readers that look them up by name.  The With
 * AICore columns count Ascend AI Core tasks, which no device back end here
 * has: N/A for an op with device tasks.
 */
#include "export.h"
#include "text_escape.h"
#include "error.h"

#include <stdlib.h>

/* The four Device cells and the line end. */
static char *put_device(char *d, const int64_t *self, const int64_t *total, size_t i)
{
    if (!total || total[i] < 0) {
        memcpy(d, ",,,,\r\n", 6);
        return d + 6;
    }
    *d++ = ',';
    if (self[i] >= 0)
        d = aip__fmt_us3(d, self[i]);
    *d++ = ',';
    d = aip__fmt_us3(d, total[i]);
    memcpy(d, ",N/A,N/A\r\n", 10);
    return d + 10;
}

aip_status aip__export_operator_details(const aip__model *m, aip__out *o)
{
    AIP_OUT_LIT(o, AIP_OPERATOR_DETAILS_HEADER "\r\n");
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        aip__esc_cache c;
        int64_t *call_ns = NULL;
        s = aip__esc_init(&c, p, AIP_ESC_CSV);
        if (s)
            break;
        s = aip__device_call_ns(p, &call_ns);
        uint8_t *is_step = s ? NULL : aip__step_name_flags(p);
        if (!s && !is_step)
            s = aip__fail(AIP_ERR_NOMEM, "no memory for the step names");
        for (size_t ti = 0; ti < p->n_threads && !s; ti++) {
            const aip__thread *t = &p->threads[ti];
            int64_t *dev_self = NULL, *dev_total = NULL;
            if (call_ns)
                s = aip__op_device_ns(p, ti, call_ns, &dev_self, &dev_total);
            for (size_t i = 0; i < t->n_spans && !s; i++) {
                const aip__span *sp = &t->spans[i];
                if (sp->kind != AIP_SPAN_OP &&
                    (sp->kind != AIP_SPAN_ANNOTATION ||
                     (sp->name < p->strings.n_ent && is_step[sp->name])))
                    continue;
                aip__op_fields f;
                aip__model_op_fields(t, sp, &f);
                s = aip__esc_put(o, &c, sp->name);
                AIP_OUT_LIT(o, ",");
                if (!s && f.has_shapes)
                    s = aip__esc_put(o, &c, f.input_shapes);
                AIP_OUT_LIT(o, ",");
                if (!s && f.has_stack)
                    s = aip__esc_put(o, &c, f.call_stack);
                AIP_OUT_LIT(o, ",");
                char *d = aip__out_reserve(o, 128);
                d = aip__fmt_us3(d, t->self_ns[i]);
                *d++ = ',';
                d = aip__fmt_us3(d, sp->end - sp->start);
                aip__out_commit(o, put_device(d, dev_self, dev_total, i));
            }
            free(dev_self);
            free(dev_total);
        }
        free(call_ns);
        free(is_step);
        aip__esc_free(&c);
    }
    return s ? s : o->status;
}
