/*
 * csv_step_trace.c — step_trace_time.csv from the model's step rows, with
 * the host-only definitions of docs/RESULT_LAYOUT.md: Computing = union of
 * top-level op time in the step, communication columns and Bubble 0,
 * Free = step − Computing, Stage = step − Bubble, Preparing = first
 * top-level op start − step start.  Device_id is `host`; µs, 3 decimals.
 */
#include "export.h"

aip_status aip__export_step_trace(const aip_model *m, aip_out *o)
{
    AIP_OUT_LIT(o, AIP_STEP_TRACE_HEADER "\r\n");
    for (size_t i = 0; i < m->n_step_rows; i++) {
        const aip_step_row *r = &m->step_rows[i];
        int64_t dur = r->end - r->start, bubble = 0, comm = 0, comm_not_overlapped = 0;
        int64_t free_ns = dur - r->computing;
        char *d = aip__out_reserve(o, 400);
        memcpy(d, "host,", 5);
        d += 5;
        if (r->has_number)
            d = aip__fmt_i64(d, r->number);
        *d++ = ',';
        d = aip__fmt_us3(d, r->computing);
        *d++ = ',';
        d = aip__fmt_us3(d, comm_not_overlapped);
        *d++ = ',';
        d = aip__fmt_us3(d, comm - comm_not_overlapped); /* Overlapped */
        *d++ = ',';
        d = aip__fmt_us3(d, comm);
        *d++ = ',';
        d = aip__fmt_us3(d, free_ns > 0 ? free_ns : 0);
        *d++ = ',';
        d = aip__fmt_us3(d, dur - bubble); /* Stage */
        *d++ = ',';
        d = aip__fmt_us3(d, bubble);
        *d++ = ',';
        d = aip__fmt_us3(d, comm_not_overlapped - bubble > 0 ? comm_not_overlapped - bubble : 0);
        *d++ = ',';
        d = aip__fmt_us3(d, r->preparing);
        memcpy(d, "\r\n", 2);
        aip__out_commit(o, d + 2);
    }
    return o->status;
}
