/*
 * csv_step_trace.c — step_trace_time.csv: the model's step rows, whose
 * columns analysis computes (steps.c, device_steps.c; the same rows make
 * analysis.db's StepTraceTime).  Device_id is the device's id for a row of
 * device tasks, `host` for a host-only row; µs, 3 decimals.
 */
#include "export.h"

aip_status aip__export_step_trace(const aip__model *m, aip__out *o)
{
    AIP_OUT_LIT(o, AIP_STEP_TRACE_HEADER "\r\n");
    for (size_t i = 0; i < m->n_step_rows; i++) {
        const aip__step_row *r = &m->step_rows[i];
        int64_t cols[AIP_STEP_TRACE_COLS];
        aip__step_row_columns(r, cols);
        char *d = aip__out_reserve(o, 400);
        if (r->device >= 0) {
            d = aip__fmt_i64(d, r->device);
            *d++ = ',';
        } else {
            memcpy(d, "host,", 5);
            d += 5;
        }
        if (r->has_number)
            d = aip__fmt_i64(d, r->number);
        for (int c = 0; c < AIP_STEP_TRACE_COLS; c++) {
            *d++ = ',';
            d = aip__fmt_us3(d, cols[c]);
        }
        memcpy(d, "\r\n", 2);
        aip__out_commit(o, d + 2);
    }
    return o->status;
}
