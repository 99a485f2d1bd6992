/*
 * db_analysis.c — analysis.db: the StepTraceTime table (seed analysis.db
 * 表4, reference §2.5) from the same step rows as step_trace_time.csv
 * (their columns are computed once, in src/analysis/steps.c).
 *
 * Units: µs as REAL, which is what torch_npu's code writes
 * (convert_ns2us_float) although its table says ms; tools compare these
 * with step_trace_time.csv.  deviceId is the device's id for a row of
 * device tasks, -1 for a host-only row (the seed's "no device" value; the
 * CSV says `host`); step is the ProfilerStep number as text, NULL
 * for the single whole-profile row.  The Comm* tables need communication
 * ops from a device back end and are not created.
 */
#include "db_pytorch.h"

#include <stdio.h>
#include <string.h>

static const aip__db_col cols[] = {
    {"deviceId", "INTEGER"}, {"step", "TEXT"}, {"computing", "NUMERIC"},
    {"communication_not_overlapped", "NUMERIC"}, {"overlapped", "NUMERIC"},
    {"communication", "NUMERIC"}, {"free", "NUMERIC"}, {"stage", "NUMERIC"},
    {"bubble", "NUMERIC"}, {"communication_not_overlapped_and_exclude_receive", "NUMERIC"},
    {"preparing", "NUMERIC"}};
static const aip__db_table tbl_step_trace_time = {"StepTraceTime", cols, 11, -1};

static double us(int64_t ns) { return (double)ns / 1000.0; }

aip_status aip__export_analysis_db(const aip__model *m, aip__out *o)
{
    aip__db d;
    aip_status s = o->status ? o->status : aip__db_open(&d, o->path);
    if (s)
        return s;
    aip__db_insert ins;
    if (!aip__db_insert_begin(&d, &tbl_step_trace_time, &ins)) {
        for (size_t i = 0; i < m->n_step_rows; i++) {
            const aip__step_row *r = &m->step_rows[i];
            aip__db_i64(&ins, 0, r->device);
            char step[24];
            if (r->has_number)
                aip__db_text(&ins, 1, step,
                             (size_t)snprintf(step, sizeof step, "%lld", (long long)r->number));
            else
                aip__db_null(&ins, 1);
            int64_t v[AIP_STEP_TRACE_COLS];
            aip__step_row_columns(r, v);
            for (int c = 0; c < AIP_STEP_TRACE_COLS; c++)
                aip__db_f64(&ins, 2 + c, us(v[c]));
            aip__db_row(&ins);
        }
        aip__db_insert_end(&ins);
    }
    return aip__db_close(&d);
}
