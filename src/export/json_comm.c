/*
 * json_comm.c — communication.json and communication_matrix.json (the
 * seed's per-rank communication files; reference §2.3), from the rows of
 * src/analysis/comm_derive.c.  Keys: "step<N>" (or "step" without steps),
 * then "collective" / "p2p", then "<op>@<group>" (communication.json) or
 * "<type>-<top1|middle|bottom1..3|total>@<group>" (matrix) with
 * "<src>-<dst>" group-local links.
 *
 * Units as the seed's: µs (3 decimals) for the start, ms for times, MB
 * (2^20 bytes) for sizes, bandwidth = MB / ms (GB/s).  A rank alone cannot
 * split an op's elapse time into wait / transit / idle (that needs the
 * other ranks' times of the same op: cluster analysis), so the keys of the
 * split, the transit time, the bandwidth and the size distribution (whose
 * second figure is a transit time) are left out, as is the time of a
 * collective's self link in the matrix: never written as 0, which would
 * read as a measurement.  A collective's "total" matrix entry, whose only
 * link is that untimed self link, is left out altogether (torch_npu writes
 * no total without a time, and msprof-analyze's communication_matrix_sum
 * divides each total's size by its time).  `aiprof cluster` writes the measured figures
 * into these files (docs/COMMUNICATION.md, cluster_comm_back.c).
 */
#include "export.h"
#include "comm_derive.h"
#include "text_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ms(aip__out *o, int64_t ns)
{
    aip__out_commit(o, aip__fmt_fixed(aip__out_reserve(o, 40), ns, 1000000, 6));
}

static void mb(aip__out *o, uint64_t bytes)
{
    aip__out_commit(o, aip__fmt_fixed(aip__out_reserve(o, 40), (int64_t)bytes, 1048576, 6));
}

static void bandwidth(aip__out *o, uint64_t bytes, int64_t ns)
{
    double gbs = ns > 0 ? ((double)bytes / AIP_COMM_MB) / ((double)ns / 1e6) : 0.0;
    aip__out_printf(o, "%.4f", gbs);
}

static void quoted(aip__out *o, const char *s, size_t n)
{
    char *d = aip__out_reserve(o, AIP_JSON_ESC_MAX(n));
    aip__out_commit(o, d + aip__json_quote(s, n, d));
}

static void step_key(aip__out *o, const aip__comm_row *r)
{
    if (r->has_step)
        aip__out_printf(o, "\"step%lld\": {", (long long)r->step);
    else
        AIP_OUT_LIT(o, "\"step\": {");
}

/* "name@group" as one JSON string. */
static void op_key(aip__out *o, const char *name, const char *group, size_t group_len)
{
    size_t n = strlen(name);
    char *buf = malloc(n + 1 + group_len);
    if (!buf) {
        o->status = o->status ? o->status : AIP_ERR_NOMEM;
        return;
    }
    memcpy(buf, name, n);
    buf[n] = '@';
    memcpy(buf + n + 1, group, group_len);
    quoted(o, buf, n + 1 + group_len);
    free(buf);
}

/* The two blocks of one op or of a class's total ("Total Op Info"): only
 * what the rank itself measured.  Transit / wait / synchronization / idle
 * time, the bandwidth and the size distribution's durations need the other
 * ranks (docs/COMMUNICATION.md): they are absent here, not 0, and
 * `aiprof cluster` writes them in. */
static void op_info(aip__out *o, const aip__comm_row *rows, size_t n)
{
    int64_t start = rows[0].start, elapse = 0;
    uint64_t bytes = 0, large = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].start < start)
            start = rows[i].start;
        elapse += rows[i].elapse;
        bytes += rows[i].bytes;
        large += rows[i].bytes >= AIP_COMM_LARGE_PACKET;
    }
    AIP_OUT_LIT(o, "{\"Communication Time Info\": {\"Start Timestamp(us)\": ");
    aip__out_us3(o, start);
    AIP_OUT_LIT(o, ", \"Elapse Time(ms)\": ");
    ms(o, elapse);
    AIP_OUT_LIT(o, "}, \"Communication Bandwidth Info\": {\"");
    aip__out_str(o, aip__comm_transport_name(rows[0].transport));
    AIP_OUT_LIT(o, "\": {\"Transit Size(MB)\": ");
    mb(o, bytes);
    AIP_OUT_LIT(o, ", \"Large Packet Ratio\": ");
    aip__out_printf(o, "%.4f", (double)large / (double)n);
    AIP_OUT_LIT(o, "}}}");
}

/* One object per step holding ops, both classes always present. */
aip_status aip__export_communication(const aip__model *m, aip__out *o)
{
    aip__comm_tables t;
    aip_status s = aip__comm_tables_build(m, &t);
    if (s)
        return s;
    AIP_OUT_LIT(o, "{");
    for (size_t a = 0; a < t.n_rows;) {
        const aip__comm_row *r0 = &t.rows[a];
        aip__out_str(o, a ? ", " : "");
        step_key(o, r0);
        for (int cls = 0; cls < 2; cls++) {
            aip__out_printf(o, "%s\"%s\": {", cls ? ", " : "", cls ? "p2p" : "collective");
            size_t b = a;
            while (b < t.n_rows && t.rows[b].has_step == r0->has_step &&
                   t.rows[b].step == r0->step && t.rows[b].p2p == cls)
                b++;
            for (size_t i = a; i < b; i++) {
                op_key(o, t.rows[i].name, t.rows[i].group, t.rows[i].group_len);
                AIP_OUT_LIT(o, ": ");
                op_info(o, &t.rows[i], 1);
                AIP_OUT_LIT(o, ", ");
            }
            if (b > a) {
                AIP_OUT_LIT(o, "\"Total Op Info\": ");
                op_info(o, &t.rows[a], b - a);
            }
            AIP_OUT_LIT(o, "}");
            a = b;
        }
        AIP_OUT_LIT(o, "}");
    }
    AIP_OUT_LIT(o, "}\n");
    aip__comm_tables_free(&t);
    return o->status;
}

static int same_entry(const aip__comm_link *x, const aip__comm_link *y)
{
    return x->label == y->label && aip__comm_same_step(x->of, y->of) &&
           x->of->group_len == y->of->group_len &&
           memcmp(x->of->group, y->of->group, x->of->group_len) == 0 &&
           strcmp(x->of->type, y->of->type) == 0;
}

aip_status aip__export_communication_matrix(const aip__model *m, aip__out *o)
{
    aip__comm_tables t;
    aip_status s = aip__comm_tables_build(m, &t);
    if (s)
        return s;
    AIP_OUT_LIT(o, "{");
    const aip__comm_link *L = t.links;
    for (size_t a = 0; a < t.n_links;) {
        const aip__comm_row *r0 = L[a].of;
        aip__out_str(o, a ? ", " : "");
        step_key(o, r0);
        for (int cls = 0; cls < 2; cls++) {
            aip__out_printf(o, "%s\"%s\": {", cls ? ", " : "", cls ? "p2p" : "collective");
            int first_entry = 1;
            while (a < t.n_links && L[a].of->has_step == r0->has_step &&
                   L[a].of->step == r0->step && L[a].of->p2p == cls) {
                char key[64];
                snprintf(key, sizeof key, "%s-%s", L[a].of->type_lower, L[a].label);
                aip__out_str(o, first_entry ? "" : ", ");
                first_entry = 0;
                op_key(o, key, L[a].of->group, L[a].of->group_len);
                AIP_OUT_LIT(o, ": {");
                size_t b = a;
                for (; b < t.n_links && same_entry(&L[a], &L[b]); b++) {
                    aip__out_printf(o, "%s\"%u-%u\": {\"Transport Type\": \"%s\", "
                                       "\"Transit Size(MB)\": ",
                                    b > a ? ", " : "", L[b].src, L[b].dst,
                                    aip__comm_transport_name(L[b].transport));
                    mb(o, L[b].bytes);
                    if (L[b].timed) {
                        AIP_OUT_LIT(o, ", \"Transit Time(ms)\": ");
                        ms(o, L[b].time);
                        AIP_OUT_LIT(o, ", \"Bandwidth(GB/s)\": ");
                        bandwidth(o, L[b].bytes, L[b].time);
                    }
                    AIP_OUT_LIT(o, ", \"Op Name\": ");
                    quoted(o, L[b].op_name, strlen(L[b].op_name));
                    AIP_OUT_LIT(o, "}");
                }
                AIP_OUT_LIT(o, "}");
                a = b;
            }
            AIP_OUT_LIT(o, "}");
        }
        AIP_OUT_LIT(o, "}");
    }
    AIP_OUT_LIT(o, "}\n");
    aip__comm_tables_free(&t);
    return o->status;
}
