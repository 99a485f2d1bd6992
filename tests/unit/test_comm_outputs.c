/*
 * test_comm_outputs.c — the per-rank communication outputs from ops
 * recorded through src/core/comm.h: communication.json and
 * communication_matrix.json compared whole with the text this test builds
 * from the model's times (every number: start, elapse, sizes, bandwidth,
 * large packets, size distribution, matrix top1/middle/bottom/total with
 * self links, names, steps, classes, groups); analysis.db's CommAnalyzer
 * tables row by row; step_trace_time.csv's communication columns from the
 * op and comm intervals, with Computing + Not Overlapped + Free = step and
 * Communication = Overlapped + Not Overlapped; an op outside every step
 * left out; a profile without comm ops writes no communication files.
 * (test_comm_rows.c: names of the unusual cases, device rows.)
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "comm.h"
#include "csv_read.h"
#include "model.h"
#include "model_helpers.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The groups' names in the outputs: msprof-analyze's double_hash of the
 * recorded names (their parallel_group_info keys) "world" and "pair". */
#define WORLD "373545006161295238"
#define PAIR "12095933829058662"

static char tmp[PATH_MAX];

static void spin(void)
{
    uint64_t t = aip__ticks();
    while (aip__ticks() - t < 20000)
        ;
}

static void op(uint32_t group, const char *name, uint8_t kind, uint32_t peer, uint64_t bytes,
               uint64_t start, uint64_t end)
{
    aip__comm_op_info o = {.name = name, .group = group, .peer = peer, .root = AIP_RAW_NO_RANK,
                           .bytes = bytes, .count = bytes, .dtype = "int8", .tag = -1,
                           .kind = kind, .lib = AIP_COMMLIB_MPI, .start = start, .end = end};
    o.seq = kind == AIP_COMM_COLLECTIVE ? aip__comm_next_seq(group) : 0;
    /* MPI_I*: from the call to its completion, the thread free meanwhile */
    o.nonblocking = !strncmp(name, "MPI_I", 5);
    aip__comm_op(&o);
}

/* ---- expected text ------------------------------------------------- */

typedef struct sb {
    char *s;
    size_t n, cap;
} sb;

static void put(sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = (b->n + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* Exact decimal forms, computed independently of src/export. */
static void us3(sb *b, int64_t ns)
{
    put(b, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}
static void ms6(sb *b, int64_t ns)
{
    put(b, "%lld.%06lld", (long long)(ns / 1000000), (long long)(ns % 1000000));
}
static void mb6(sb *b, uint64_t bytes)
{
    unsigned long long q =
        (unsigned long long)(((unsigned __int128)bytes * 1000000u + 524288u) / 1048576u);
    put(b, "%llu.%06llu", q / 1000000, q % 1000000);
}
static void bw(sb *b, uint64_t bytes, int64_t ns)
{
    put(b, "%.4f", ns > 0 ? ((double)bytes / 1048576.0) / ((double)ns / 1e6) : 0.0);
}

typedef struct ev {
    const char *name;          /* expected key without @group */
    const char *group;
    int64_t start, elapse;
    uint64_t bytes;
} ev;

static void info(sb *b, const ev *e, size_t n)
{
    int64_t el = 0;
    uint64_t by = 0;
    size_t large = 0;
    for (size_t i = 0; i < n; i++) {
        el += e[i].elapse;
        by += e[i].bytes;
        large += e[i].bytes >= 1048576;
    }
    put(b, "{\"Communication Time Info\": {\"Start Timestamp(us)\": ");
    us3(b, e[0].start);
    put(b, ", \"Elapse Time(ms)\": ");
    ms6(b, el);
    /* what one rank measured only: no split, transit time, bandwidth nor
     * size distribution, never 0 in their place (docs/COMMUNICATION.md) */
    put(b, "}, \"Communication Bandwidth Info\": {\"SDMA\": {\"Transit Size(MB)\": ");
    mb6(b, by);
    put(b, ", \"Large Packet Ratio\": %.4f", (double)large / (double)n);
    put(b, "}}}");
}

static void op_class(sb *b, const char *cls, const ev *e, size_t n, int comma)
{
    put(b, "%s\"%s\": {", comma ? ", " : "", cls);
    for (size_t i = 0; i < n; i++) {
        put(b, "\"%s@%s\": ", e[i].name, e[i].group);
        info(b, &e[i], 1);
        put(b, ", ");
    }
    if (n) {
        put(b, "\"Total Op Info\": ");
        info(b, e, n);
    }
    put(b, "}");
}

/* One matrix link entry. */
static void link_entry(sb *b, int comma, const char *link, const char *tt, uint64_t bytes,
                       int64_t ns, const char *op)
{
    put(b, "%s\"%s\": {\"Transport Type\": \"%s\", \"Transit Size(MB)\": ", comma ? ", " : "",
        link, tt);
    mb6(b, bytes);
    if (ns >= 0) { /* < 0: a collective's self link, untimed by one rank */
        put(b, ", \"Transit Time(ms)\": ");
        ms6(b, ns);
        put(b, ", \"Bandwidth(GB/s)\": ");
        bw(b, bytes, ns);
    }
    put(b, ", \"Op Name\": \"%s\"}", op);
}

/* index order of e[0..n) by bandwidth descending, then start */
static void by_bandwidth(const ev *e, size_t n, size_t *ix)
{
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const ev *x = &e[ix[i]], *y = &e[ix[j]];
            long double bx = (long double)x->bytes * (long double)y->elapse;
            long double by = (long double)y->bytes * (long double)x->elapse;
            if (by > bx || (by == bx && y->start < x->start)) {
                size_t t = ix[i];
                ix[i] = ix[j];
                ix[j] = t;
            }
        }
}

/* A collective type's block: self link only, carrying the buffers. */
static void coll_block(sb *b, const char *type, const char *group, const char *self,
                       const ev *e, size_t n, int comma)
{
    size_t ix[8];
    by_bandwidth(e, n, ix);
    const char *labels[] = {"top1", "middle", "bottom1", "bottom2", "bottom3"};
    size_t pick[] = {0, n / 2, n - 1, n - 2, n - 3};
    for (int l = 0; l < 5; l++) {
        if (l >= 3 && n < (size_t)(l - 1))
            break;
        const ev *x = &e[ix[pick[l]]];
        put(b, "%s\"%s-%s@%s\": {", comma || l ? ", " : "", type, labels[l], group);
        link_entry(b, 0, self, "LOCAL", x->bytes, -1, x->name);
        put(b, "}");
    }
    /* no "-total": its only link is the untimed self link, and an untimed
     * total is left out (msprof-analyze divides a total's size by its
     * time); aiprof cluster adds it with the split's time */
}

/* A p2p type's block with one op: the empty self link and the peer link. */
static void p2p_block(sb *b, const char *type, const char *self, const char *peer_link,
                      const ev *e, int comma)
{
    const char *labels[] = {"top1", "middle", "bottom1", "total"};
    for (int l = 0; l < 4; l++) {
        put(b, "%s\"%s-%s@%s\": {", comma || l ? ", " : "", type, labels[l], e->group);
        link_entry(b, 0, self, "LOCAL", 0, 0, e->name);
        link_entry(b, 1, peer_link, "SDMA", e->bytes, e->elapse, e->name);
        put(b, "}");
    }
}

static char *out_file(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/%s", dir, name);
    size_t n;
    return aip_test_slurp(path, &n);
}

static const aip__span *span_named(const aip__process *p, const char *name)
{
    for (size_t t = 0; t < p->n_threads; t++)
        for (size_t i = 0; i < p->threads[t].n_spans; i++)
            if (strcmp(S(p, p->threads[t].spans[i].name), name) == 0)
                return &p->threads[t].spans[i];
    return NULL;
}

static void test_outputs(void)
{
    static const uint32_t world[4] = {0, 1, 2, 3}, pair[2] = {1, 3};
    uint32_t gw = aip__comm_group(0x5100, "world", 1, 4, world);
    uint32_t gp = aip__comm_group(0x5101, "pair", 0, 2, pair);
    ASSERT_TRUE(gw != AIP_COMM_NONE && gp != AIP_COMM_NONE);
    aip_config c;
    base_config(&c, tmp);
    c.profiler_level = AIP_LEVEL1; /* the seed writes the communication files at Level1+ */
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);

    /* step 1: an op partly under an allreduce, then a receive */
    aip_annotation_push("ProfilerStep#1");
    spin();
    aip_op_info mm = {.name = "aten::mm", .sequence_number = -1};
    aip_op_begin(&mm);
    spin();
    uint64_t a0 = aip__ticks();
    spin();
    aip_op_end();
    spin();
    uint64_t a1 = aip__ticks();
    /* non-blocking: aten::mm computes while it is outstanding (overlap); a
     * blocking op there would be the thread waiting, not computing */
    op(gw, "MPI_Iallreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 4u << 20, a0, a1);
    spin();
    uint64_t r0 = aip__ticks();
    spin();
    uint64_t r1 = aip__ticks();
    op(gw, "MPI_Recv", AIP_COMM_RECV, 3, 1000, r0, r1);
    spin();
    aip_annotation_pop();
    /* step 2: three allreduces (two of one size), a send in the pair */
    aip_annotation_push("ProfilerStep#2");
    uint64_t t[7];
    for (int i = 0; i < 7; i++) {
        spin();
        if (i == 3 || i == 5)
            spin(); /* different lengths */
        t[i] = aip__ticks();
    }
    op(gw, "MPI_Iallreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 1000, t[0], t[1]);
    op(gw, "c10d::allreduce_", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 1000, t[1], t[2]);
    op(gw, "MPI_Allreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 2u << 20, t[3], t[5]);
    op(gp, "MPI_Send", AIP_COMM_SEND, 3, 64, t[5], t[6]);
    spin();
    aip_annotation_pop();
    spin();
    uint64_t o0 = aip__ticks();
    spin();
    op(gw, "MPI_Barrier", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 0, o0, aip__ticks());
    ASSERT_EQ(aip_session_stop(s), AIP_OK);

    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->comm_ops.n, 7);
    ASSERT_EQ(m.n_steps, 2);
    const aip__comm_event *o = p->comm_ops.v; /* by start */
    ev s1c[] = {{"hcom_allReduce__0_0_1", WORLD, o[0].start, o[0].end - o[0].start, 4u << 20}};
    ev s1p[] = {{"hcom_receive__0_3_1", WORLD, o[1].start, o[1].end - o[1].start, 1000}};
    ev s2c[] = {{"hcom_allReduce__1_0_1", WORLD, o[2].start, o[2].end - o[2].start, 1000},
                {"hcom_allReduce__2_0_1", WORLD, o[3].start, o[3].end - o[3].start, 1000},
                {"hcom_allReduce__3_0_1", WORLD, o[4].start, o[4].end - o[4].start, 2u << 20}};
    ev s2p[] = {{"hcom_send__0_1_1", PAIR, o[5].start, o[5].end - o[5].start, 64}};
    ASSERT_EQ(o[1].kind, AIP_COMM_RECV);
    ASSERT_EQ(o[5].kind, AIP_COMM_SEND);

    aip_analyse_options ao;
    aip_analyse_options_init(&ao);
    ao.quiet = 1;
    const char *dir = aip_session_result_dir(s);
    ASSERT_EQ(aip_analyse_dir(dir, &ao), AIP_OK);

    sb e = {0};
    put(&e, "{\"step1\": {");
    op_class(&e, "collective", s1c, 1, 0);
    op_class(&e, "p2p", s1p, 1, 1);
    put(&e, "}, \"step2\": {");
    op_class(&e, "collective", s2c, 3, 0);
    op_class(&e, "p2p", s2p, 1, 1);
    put(&e, "}}\n");
    char *got = out_file(dir, "communication.json");
    ASSERT_TRUE(got != NULL);
    ASSERT_STREQ(got, e.s);
    free(got);

    e.n = 0;
    put(&e, "{\"step1\": {\"collective\": {");
    coll_block(&e, "allreduce", WORLD, "1-1", s1c, 1, 0);
    put(&e, "}, \"p2p\": {");
    p2p_block(&e, "receive", "1-1", "3-1", s1p, 0);
    put(&e, "}}, \"step2\": {\"collective\": {");
    coll_block(&e, "allreduce", WORLD, "1-1", s2c, 3, 0);
    put(&e, "}, \"p2p\": {");
    p2p_block(&e, "send", "0-0", "0-1", s2p, 0);
    put(&e, "}}}\n");
    got = out_file(dir, "communication_matrix.json");
    ASSERT_TRUE(got != NULL);
    ASSERT_STREQ(got, e.s);
    free(got);
    free(e.s);

    /* step_trace_time.csv */
    const aip__span *sp = span_named(p, "aten::mm");
    ASSERT_TRUE(sp != NULL);
    csv st;
    ASSERT_EQ(csv_read(&st, dir, "step_trace_time.csv"), 0);
    ASSERT_EQ(st.rows, 2);
    for (size_t r = 0; r < 2; r++) {
        const aip__step *step = &m.steps[r];
        int64_t dur = step->end - step->start;
        int64_t comp = r == 0 ? overlap(sp->start, sp->end, step->start, step->end) : 0;
        int64_t comm = 0, bubble = 0, first = INT64_MAX;
        for (size_t i = r == 0 ? 0 : 2; i < (r == 0 ? 2u : 6u); i++) {
            comm += o[i].end - o[i].start; /* disjoint or touching in this test */
            if (o[i].kind == AIP_COMM_RECV)
                bubble += o[i].end - o[i].start;
            if (o[i].start < first)
                first = o[i].start;
        }
        int64_t ovl = r == 0 ? overlap(sp->start, sp->end, o[0].start, o[0].end) : 0;
        int64_t cno = comm - ovl;
        if (r == 0 && sp->start < first)
            first = sp->start;
        if (r == 0) /* the allreduce began under aten::mm and outlasted it */
            ASSERT_TRUE(ovl > 0 && ovl < comm);
        /* µs with 3 decimals are the ns: compare exactly */
        ASSERT_EQ(us_cell(&st, r, "Computing"), comp);
        ASSERT_EQ(us_cell(&st, r, "Communication"), comm);
        ASSERT_EQ(us_cell(&st, r, "Communication(Not Overlapped)"), cno);
        ASSERT_EQ(us_cell(&st, r, "Overlapped"), ovl);
        ASSERT_EQ(us_cell(&st, r, "Free"), dur - comp - cno);
        ASSERT_EQ(us_cell(&st, r, "Bubble"), bubble);
        ASSERT_EQ(us_cell(&st, r, "Stage"), dur - bubble);
        ASSERT_EQ(us_cell(&st, r, "Communication(Not Overlapped and Exclude Receive)"),
                  cno - bubble > 0 ? cno - bubble : 0);
        ASSERT_EQ(us_cell(&st, r, "Preparing"), first - step->start);
        /* the identities */
        ASSERT_EQ(us_cell(&st, r, "Computing") + us_cell(&st, r, "Communication(Not Overlapped)") +
                      us_cell(&st, r, "Free"),
                  dur);
        ASSERT_EQ(us_cell(&st, r, "Communication"),
                  us_cell(&st, r, "Overlapped") + us_cell(&st, r, "Communication(Not Overlapped)"));
    }
    csv_free(&st);

    /* analysis.db */
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/analysis.db", dir);
    sqlite3 *db = NULL;
    ASSERT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *q = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT t.hccl_op_name, t.group_name, t.start_timestamp, "
                                 "t.elapse_time, t.transit_time + t.wait_time + "
                                 "t.synchronization_time + t.idle_time, t.step, t.type, "
                                 "b.transport_type, b.transit_size, b.count FROM "
                                 "CommAnalyzerTime t JOIN CommAnalyzerBandwidth b USING "
                                 "(hccl_op_name, group_name) ORDER BY t.rowid",
                                 -1, &q, NULL),
              SQLITE_OK);
    const ev *all[] = {&s1c[0], &s1p[0], &s2c[0], &s2c[1], &s2c[2], &s2p[0]};
    const char *steps[] = {"step1", "step1", "step2", "step2", "step2", "step2"};
    const char *types[] = {"collective", "p2p", "collective", "collective", "collective", "p2p"};
    int n = 0;
    while (sqlite3_step(q) == SQLITE_ROW && n < 6) {
        const ev *x = all[n];
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 0), x->name);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 1), x->group);
        /* whole µs + fraction: the nearest double to the 3-decimal µs the
         * JSON holds ((double)ns alone drops 256 ns steps at epoch scale) */
        ASSERT_TRUE(sqlite3_column_double(q, 2) ==
                    (double)(x->start / 1000) + (double)(x->start % 1000) / 1000.0);
        ASSERT_TRUE(sqlite3_column_double(q, 3) == (double)x->elapse / 1e6);
        /* not split by one rank: NULL, not 0 */
        ASSERT_EQ(sqlite3_column_type(q, 4), SQLITE_NULL);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 5), steps[n]);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 6), types[n]);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 7), "SDMA");
        ASSERT_TRUE(sqlite3_column_double(q, 8) == (double)x->bytes / 1048576.0);
        ASSERT_TRUE(sqlite3_column_double(q, 9) == 1.0);
        n++;
    }
    ASSERT_EQ(n, 6);
    sqlite3_finalize(q);
    /* Matrix: as the JSON file; self links in every group, the peer links
     * with their bytes. */
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT count(*), sum(src_rank = dst_rank), "
                                 "sum(CASE WHEN src_rank <> dst_rank THEN transit_size END), "
                                 "sum(op_name LIKE 'hcom_%') FROM CommAnalyzerMatrix",
                                 -1, &q, NULL),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    /* step1: allreduce 3 entries (no untimed total) + receive 4x2; step2:
     * allreduce 5 + send 4x2 */
    ASSERT_EQ(sqlite3_column_int(q, 0), 3 + 8 + 5 + 8);
    ASSERT_EQ(sqlite3_column_int(q, 1), 3 + 4 + 5 + 4);
    ASSERT_TRUE(fabs(sqlite3_column_double(q, 2) - 4 * (1000 + 64) / 1048576.0) < 1e-12);
    ASSERT_EQ(sqlite3_column_int(q, 3), 24);
    sqlite3_finalize(q);
    /* no entry without a time is a total (msprof-analyze divides by it) */
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT count(*) FROM CommAnalyzerMatrix WHERE hccl_op_name "
                                 "LIKE '%-total' AND transit_time IS NULL",
                                 -1, &q, NULL),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    ASSERT_EQ(sqlite3_column_int(q, 0), 0);
    sqlite3_finalize(q);
    sqlite3_close(db);

    /* COMMUNICATION_OP: every op, the one outside the steps too */
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db", dir);
    ASSERT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT n.value, c.startNs, c.endNs, g.value, c.opId, "
                                 "d.name, a.value, c.count, t.value, c.deviceId, c.rankSize, "
                                 "c.connectionId IS NULL FROM COMMUNICATION_OP c "
                                 "JOIN STRING_IDS n ON n.id = c.opName "
                                 "JOIN STRING_IDS g ON g.id = c.groupName "
                                 "JOIN ENUM_HCCL_DATA_TYPE d ON d.id = c.dataType "
                                 "JOIN STRING_IDS a ON a.id = c.algType "
                                 "JOIN STRING_IDS t ON t.id = c.opType ORDER BY c.opId",
                                 -1, &q, NULL),
              SQLITE_OK);
    const char *op_names[] = {"hcom_allReduce__0_0_1", "hcom_receive__0_3_1",
                              "hcom_allReduce__1_0_1", "hcom_allReduce__2_0_1",
                              "hcom_allReduce__3_0_1", "hcom_send__0_1_1",
                              "hcom_barrier__4_0_1"};
    const char *op_types[] = {"allReduce", "receive", "allReduce", "allReduce",
                              "allReduce", "send", "barrier"};
    n = 0;
    while (sqlite3_step(q) == SQLITE_ROW && n < 7) {
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 0), op_names[n]);
        ASSERT_EQ(sqlite3_column_int64(q, 1), o[n].start);
        ASSERT_EQ(sqlite3_column_int64(q, 2), o[n].end);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 3), n == 5 ? PAIR : WORLD);
        ASSERT_EQ(sqlite3_column_int(q, 4), n);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 5), "INT8"); /* torch's int8 */
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 6), "N/A");
        ASSERT_EQ(sqlite3_column_int64(q, 7), (int64_t)o[n].count);
        ASSERT_STREQ((const char *)sqlite3_column_text(q, 8), op_types[n]);
        ASSERT_EQ(sqlite3_column_int(q, 9), -1);
        ASSERT_EQ(sqlite3_column_int(q, 10), n == 5 ? 2 : 4);
        ASSERT_EQ(sqlite3_column_int(q, 11), 1);
        n++;
    }
    ASSERT_EQ(n, 7);
    sqlite3_finalize(q);
    sqlite3_close(db);
    aip__model_free(&m);

    /* trace_view.json, both forms: the Communication process, a thread per
     * group, each op an event named as in communication.json (the
     * barrier outside the steps too). */
    for (int form = 0; form < 2; form++) {
        ao.trace_format = form ? AIP_TRACE_KINETO : AIP_TRACE_TORCH_NPU;
        ao.outputs = AIP_OUTPUTS_TRACE_VIEW;
        ASSERT_EQ(aip_analyse_dir(dir, &ao), AIP_OK);
        char *tv = out_file(dir, "trace_view.json");
        ASSERT_TRUE(tv != NULL);
        ASSERT_TRUE(strstr(tv, "{\"name\":\"Communication\"}") != NULL);
        ASSERT_TRUE(strstr(tv, "{\"sort_index\":16}") != NULL);
        ASSERT_TRUE(strstr(tv, "\"Group " WORLD " Communication\"") != NULL);
        ASSERT_TRUE(strstr(tv, "\"Group " PAIR " Communication\"") != NULL);
        const char *names[] = {"hcom_allReduce__0_0_1", "hcom_receive__0_3_1",
                               "hcom_allReduce__1_0_1", "hcom_allReduce__2_0_1",
                               "hcom_allReduce__3_0_1", "hcom_send__0_1_1",
                               "hcom_barrier__4_0_1"};
        for (int i = 0; i < 7; i++) {
            char k[80];
            snprintf(k, sizeof k, "\"ph\":\"X\",\"name\":\"%s\"", names[i]);
            ASSERT_TRUE(strstr(tv, k) != NULL);
        }
        ASSERT_TRUE(strstr(tv, "\"size(Byte)\":4194304") != NULL);
        free(tv);
    }
    aip_analyse_options_init(&ao);
    ao.quiet = 1;

    /* Without communication: no communication files. */
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    aip_op_begin(&mm);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    dir = aip_session_result_dir(s);
    ASSERT_EQ(aip_analyse_dir(dir, &ao), AIP_OK);
    got = out_file(dir, "communication.json");
    ASSERT_TRUE(got == NULL);
    got = out_file(dir, "step_trace_time.csv");
    ASSERT_TRUE(got != NULL);
    free(got);
    aip_session_destroy(s);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "comm_outputs");
    static const aip_test_case cases[] = {TEST_CASE(test_outputs)};
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
