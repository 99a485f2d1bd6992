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
 * for the single whole-profile row.
 *
 * CommAnalyzerTime / CommAnalyzerBandwidth / CommAnalyzerMatrix (reference
 * §2.5) hold the rows of communication.json and communication_matrix.json
 * (src/analysis/comm_derive.c; same units: ms, MB, GB/s; step "step<N>",
 * type "collective" / "p2p"), created only when communication ops were
 * recorded at profiler_level Level1 or Level2 (as the JSON files: the seed
 * derives them from the analyze output of a Level1+ collection).  What one rank cannot know (the wait / transit / idle split,
 * the transit time and bandwidth of its ops and of a collective's self
 * link: docs/COMMUNICATION.md) is NULL, where the JSON files leave the key
 * out; `aiprof cluster` writes the measured values in (cluster_comm_back.c).
 */
#include "db_pytorch.h"
#include "comm_derive.h"

#include <stdio.h>
#include <string.h>

static const aip__db_col cols[] = {
    {"deviceId", "INTEGER"}, {"step", "TEXT"}, {"computing", "NUMERIC"},
    {"communication_not_overlapped", "NUMERIC"}, {"overlapped", "NUMERIC"},
    {"communication", "NUMERIC"}, {"free", "NUMERIC"}, {"stage", "NUMERIC"},
    {"bubble", "NUMERIC"}, {"communication_not_overlapped_and_exclude_receive", "NUMERIC"},
    {"preparing", "NUMERIC"}};
static const aip__db_table tbl_step_trace_time = {"StepTraceTime", cols, 11, -1};

/* The double nearest the decimal "µs.nnn" the CSV files print, so a
 * reader of analysis.db and a reader of step_trace_time.csv get the same
 * value (msprof-analyze's db mode copies these columns as they are): one
 * division is correctly rounded while ns is exact in a double (2^53 ns,
 * 104 days); 7 + 0.690 would read 7.6899999999999995 beside the CSV's
 * 7.690.  Epoch-scale values keep whole µs and the rest apart, since
 * (double)ns alone keeps only 256 ns steps at 2^60 ns. */
static double us(int64_t ns)
{
    if (ns > -(INT64_C(1) << 53) && ns < (INT64_C(1) << 53))
        return (double)ns / 1000.0;
    return (double)(ns / 1000) + (double)(ns % 1000) / 1000.0;
}

static const aip__db_col comm_time_cols[] = {
    {"hccl_op_name", "TEXT"}, {"group_name", "TEXT"}, {"start_timestamp", "NUMERIC"},
    {"elapse_time", "NUMERIC"}, {"transit_time", "NUMERIC"}, {"wait_time", "NUMERIC"},
    {"synchronization_time", "NUMERIC"}, {"idle_time", "NUMERIC"}, {"step", "TEXT"},
    {"type", "TEXT"}};
static const aip__db_table tbl_comm_time = {"CommAnalyzerTime", comm_time_cols, 10, -1};
static const aip__db_col comm_bw_cols[] = {
    {"hccl_op_name", "TEXT"}, {"group_name", "TEXT"}, {"transport_type", "TEXT"},
    {"transit_size", "NUMERIC"}, {"transit_time", "NUMERIC"}, {"bandwidth", "NUMERIC"},
    {"large_packet_ratio", "NUMERIC"}, {"package_size", "NUMERIC"}, {"count", "NUMERIC"},
    {"total_duration", "NUMERIC"}, {"step", "TEXT"}, {"type", "TEXT"}};
static const aip__db_table tbl_comm_bw = {"CommAnalyzerBandwidth", comm_bw_cols, 12, -1};
static const aip__db_col comm_matrix_cols[] = {
    {"hccl_op_name", "TEXT"}, {"group_name", "TEXT"}, {"src_rank", "TEXT"},
    {"dst_rank", "TEXT"}, {"transport_type", "TEXT"}, {"transit_size", "NUMERIC"},
    {"transit_time", "NUMERIC"}, {"bandwidth", "NUMERIC"}, {"step", "TEXT"},
    {"type", "TEXT"}, {"op_name", "TEXT"}};
static const aip__db_table tbl_comm_matrix = {"CommAnalyzerMatrix", comm_matrix_cols, 11, -1};

static double ms(int64_t ns) { return (double)ns / 1e6; }
static double mb(uint64_t bytes) { return (double)bytes / AIP_COMM_MB; }
static double gbs(uint64_t bytes, int64_t ns) { return ns > 0 ? mb(bytes) / ms(ns) : 0.0; }

static void text(aip__db_insert *ins, int col, const char *s)
{
    aip__db_text(ins, col, s, strlen(s));
}

/* step and type, the last two columns before Matrix's op_name. */
static void step_type(aip__db_insert *ins, int col, const aip__comm_row *r)
{
    char step[32];
    if (r->has_step)
        snprintf(step, sizeof step, "step%lld", (long long)r->step);
    else
        snprintf(step, sizeof step, "step");
    text(ins, col, step);
    text(ins, col + 1, r->p2p ? "p2p" : "collective");
}

static void comm_tables(aip__db *d, const aip__comm_tables *t)
{
    aip__db_insert ins;
    if (!aip__db_insert_begin(d, &tbl_comm_time, &ins)) {
        for (size_t i = 0; i < t->n_rows; i++) {
            const aip__comm_row *r = &t->rows[i];
            text(&ins, 0, r->name);
            aip__db_text(&ins, 1, r->group, r->group_len);
            aip__db_f64(&ins, 2, us(r->start));
            aip__db_f64(&ins, 3, ms(r->elapse));
            for (int c = 4; c < 8; c++) /* not known to one rank: NULL, not 0 */
                aip__db_null(&ins, c);
            step_type(&ins, 8, r);
            aip__db_row(&ins);
        }
        aip__db_insert_end(&ins);
    }
    if (!aip__db_insert_begin(d, &tbl_comm_bw, &ins)) {
        for (size_t i = 0; i < t->n_rows; i++) {
            const aip__comm_row *r = &t->rows[i];
            text(&ins, 0, r->name);
            aip__db_text(&ins, 1, r->group, r->group_len);
            text(&ins, 2, aip__comm_transport_name(r->transport));
            aip__db_f64(&ins, 3, mb(r->bytes));
            aip__db_null(&ins, 4);
            aip__db_null(&ins, 5);
            aip__db_f64(&ins, 6, r->bytes >= AIP_COMM_LARGE_PACKET ? 1.0 : 0.0);
            aip__db_f64(&ins, 7, mb(r->bytes));
            aip__db_f64(&ins, 8, 1.0);
            aip__db_null(&ins, 9);
            step_type(&ins, 10, r);
            aip__db_row(&ins);
        }
        aip__db_insert_end(&ins);
    }
    if (!aip__db_insert_begin(d, &tbl_comm_matrix, &ins)) {
        for (size_t i = 0; i < t->n_links; i++) {
            const aip__comm_link *l = &t->links[i];
            char name[64], src[16], dst[16];
            snprintf(name, sizeof name, "%s-%s", l->of->type_lower, l->label);
            snprintf(src, sizeof src, "%u", l->src);
            snprintf(dst, sizeof dst, "%u", l->dst);
            text(&ins, 0, name);
            aip__db_text(&ins, 1, l->of->group, l->of->group_len);
            text(&ins, 2, src);
            text(&ins, 3, dst);
            text(&ins, 4, aip__comm_transport_name(l->transport));
            aip__db_f64(&ins, 5, mb(l->bytes));
            if (l->timed) {
                aip__db_f64(&ins, 6, ms(l->time));
                aip__db_f64(&ins, 7, gbs(l->bytes, l->time));
            } else {
                aip__db_null(&ins, 6);
                aip__db_null(&ins, 7);
            }
            step_type(&ins, 8, l->of);
            text(&ins, 10, l->op_name);
            aip__db_row(&ins);
        }
        aip__db_insert_end(&ins);
    }
}

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
    if (!aip__info_comm_summaries(&m->info))
        return aip__db_close(&d);
    aip__comm_tables t;
    s = aip__comm_tables_build(m, &t);
    if (s) {
        aip__db_abort(&d);
        return s;
    }
    if (t.n_rows)
        comm_tables(&d, &t);
    aip__comm_tables_free(&t);
    return aip__db_close(&d);
}
