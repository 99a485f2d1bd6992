/*
 * csv_statistic.c — op_statistic.csv and api_statistic.csv.
 *
 * Both are CANN summaries of device work in torch_npu (copied from msprof).
 *
 * - op_statistic.csv with device tasks: one row per (device, task type)
 *   (aip__task_stats: kernel name, or MEMCPY, MEMSET...), Device_id the
 *   device's id, Core Type the device's kind (GPU, CPU...), times from each
 *   task's device duration, Ratio(%) over the device's rows; devices in id
 *   order.
 *
 * Without a device, the host-only definitions (docs/ANALYSIS.md):
 *
 * - op_statistic.csv: one row per framework op name, Device_id `host`,
 *   OP Type = the op name, Core Type `CPU`, Count, Total/Min/Avg/Max Time
 *   from each call's total duration (µs), Ratio(%) = its Total Time over the
 *   sum of Total Time of all rows.  Nested ops each count their own
 *   duration, as device kernels would count theirs.
 * - api_statistic.csv (profiler_level Level1/Level2 only): one row per host
 *   API name, Device_id `host`; Level `op` for framework ops and
 *   record_function scopes (ProfilerStep#N excluded), `mstx` for mstx
 *   ranges — torch_npu's ENUM_API_TYPE names for those APIs — and
 *   `runtime` for a device back end's runtime calls (clEnqueueNDRangeKernel,
 *   clFinish...; msprof's runtime level).  Time(us) is
 *   the summed duration, Variance the population variance of the call
 *   durations in µs².
 * Rows are sorted by total time, longest first.
 */
#include "export.h"
#include "text_escape.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>

static void put_name(aip__out *o, const aip__op_stat *st)
{
    size_t max = AIP_CSV_ESC_MAX(st->len);
    char *d = max <= AIP_OUT_CAP / 2 ? aip__out_reserve(o, max) : NULL;
    if (d) {
        aip__out_commit(o, d + aip__csv_cell(st->name, st->len, d));
        return;
    }
    char *buf = malloc(max);
    if (buf) {
        aip__out_put(o, buf, aip__csv_cell(st->name, st->len, buf));
        free(buf);
    }
}

/* A double with `dec` decimals (ratios and variances: not on a hot path). */
static void put_double(aip__out *o, double v, int dec)
{
    char b[64];
    int n = snprintf(b, sizeof b, "%.*f", dec, v);
    aip__out_put(o, b, (size_t)n);
}

/* Count, Total, Min, Avg, Max and the separator before Ratio(%). */
static void put_times(aip__out *o, uint64_t count, int64_t total, int64_t min, int64_t max)
{
    char *d = aip__out_reserve(o, 140);
    d = aip__fmt_u64(d, count);
    *d++ = ',';
    d = aip__fmt_us3(d, total);
    *d++ = ',';
    d = aip__fmt_us3(d, min);
    *d++ = ',';
    d = aip__fmt_us3(d, total / (int64_t)count);
    *d++ = ',';
    d = aip__fmt_us3(d, max);
    *d++ = ',';
    aip__out_commit(o, d);
}

static aip_status device_op_statistic(aip__out *o, const aip__task_stat *st, size_t n)
{
    AIP_OUT_LIT(o, AIP_OP_STATISTIC_HEADER "\r\n");
    for (size_t i = 0; i < n;) {
        size_t e = i; /* st[i, e): one device's rows; Ratio(%) is over them */
        double sum = 0;
        for (; e < n && st[e].device == st[i].device; e++)
            sum += (double)st[e].total_ns;
        for (; i < e; i++) {
            aip__out_u64(o, st[i].device);
            AIP_OUT_LIT(o, ",");
            put_name(o, &(aip__op_stat){.name = st[i].type, .len = st[i].len});
            AIP_OUT_LIT(o, ",");
            if (st[i].core == 0xff)
                AIP_OUT_LIT(o, "N/A");
            else
                aip__out_str(o, aip__dev_kind_name(st[i].core));
            AIP_OUT_LIT(o, ",");
            put_times(o, st[i].count, st[i].total_ns, st[i].min_ns, st[i].max_ns);
            put_double(o, sum > 0 ? 100.0 * (double)st[i].total_ns / sum : 0.0, 2);
            AIP_OUT_LIT(o, "\r\n");
        }
    }
    return o->status;
}

aip_status aip__export_op_statistic(const aip__model *m, aip__out *o)
{
    aip__task_stat *ts;
    size_t n;
    aip_status s = aip__task_stats(m, &ts, &n);
    if (s)
        return s;
    if (n) {
        s = device_op_statistic(o, ts, n);
        free(ts);
        return s;
    }
    aip__op_stat *st;
    s = aip__op_stats(m, AIP_STAT_OPS, &st, &n);
    if (s)
        return s;
    AIP_OUT_LIT(o, AIP_OP_STATISTIC_HEADER "\r\n");
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)st[i].total_ns;
    for (size_t i = 0; i < n; i++) {
        AIP_OUT_LIT(o, "host,");
        put_name(o, &st[i]);
        AIP_OUT_LIT(o, ",CPU,");
        put_times(o, st[i].count, st[i].total_ns, st[i].min_ns, st[i].max_ns);
        put_double(o, sum > 0 ? 100.0 * (double)st[i].total_ns / sum : 0.0, 2);
        AIP_OUT_LIT(o, "\r\n");
    }
    free(st);
    return o->status;
}

aip_status aip__export_api_statistic(const aip__model *m, aip__out *o)
{
    aip__op_stat *st;
    size_t n;
    aip_status s = aip__op_stats(m, AIP_STAT_OPS | AIP_STAT_ANNOTATIONS | AIP_STAT_RANGES |
                                        AIP_STAT_DEVICE_API, &st, &n);
    if (s)
        return s;
    AIP_OUT_LIT(o, AIP_API_STATISTIC_HEADER "\r\n");
    for (size_t i = 0; i < n; i++) {
        if (st[i].level == AIP_STAT_LEVEL_MSTX)
            AIP_OUT_LIT(o, "host,mstx,");
        else if (st[i].level == AIP_STAT_LEVEL_RUNTIME)
            AIP_OUT_LIT(o, "host,runtime,");
        else
            AIP_OUT_LIT(o, "host,op,");
        put_name(o, &st[i]);
        char *d = aip__out_reserve(o, 160);
        *d++ = ',';
        d = aip__fmt_us3(d, st[i].total_ns);
        *d++ = ',';
        d = aip__fmt_u64(d, st[i].count);
        *d++ = ',';
        d = aip__fmt_us3(d, st[i].total_ns / (int64_t)st[i].count);
        *d++ = ',';
        d = aip__fmt_us3(d, st[i].min_ns);
        *d++ = ',';
        d = aip__fmt_us3(d, st[i].max_ns);
        *d++ = ',';
        aip__out_commit(o, d);
        put_double(o, st[i].m2_us / (double)st[i].count, 3);
        AIP_OUT_LIT(o, "\r\n");
    }
    free(st);
    return o->status;
}
