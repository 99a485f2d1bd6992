/*
 * test_comm_rows.c — the per-rank communication analysis beyond the common
 * case (test_comm_outputs.c): the names, classes and groups of unusual ops
 * (non-blocking and c10d names, an unknown name, an op of no group,
 * sendrecv, a peer the group does not list) and the matrix's blocks by
 * type, from the derived tables; and step_trace_time's rows per device
 * with device tasks, whose communication columns come from the same ops
 * with the overlap taken against the device's kernels.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#define FAKE_DEV_OFFSET 7000000000000ll /* device clock = monotonic + 7000 s */
#include "clock.h"
#include "comm.h"
#include "comm_derive.h"
#include "csv_read.h"
#include "collector.h"
#include "device.h"
#include "fake_device.h"
#include "model.h"
#include "model_helpers.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp[PATH_MAX];

static void op(uint32_t group, const char *name, uint8_t kind, uint32_t peer, uint64_t bytes,
               uint64_t start, uint64_t end)
{
    aip__comm_op_info o = {.name = name, .group = group, .peer = peer, .root = AIP_RAW_NO_RANK,
                           .bytes = bytes, .count = bytes, .dtype = "int8", .tag = -1,
                           .kind = kind, .lib = AIP_COMMLIB_MPI, .start = start, .end = end};
    o.seq = kind == AIP_COMM_COLLECTIVE ? aip__comm_next_seq(group) : 0;
    aip__comm_op(&o);
}

/* Names, classes and groups of the unusual cases, from the derived tables:
 * non-blocking and c10d names, an unknown name, an op of no group, a
 * sendrecv, a peer the group does not list; several types in one group
 * give one matrix block each, by type. */
static void test_names(void)
{
    static const uint32_t g3[3] = {4, 5, 6};
    uint32_t g = aip__comm_group(0x5300, "g3", 2, 3, g3);
    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    uint64_t t = aip__ticks(), D = 100000; /* ticks apart: distinct ns */
    op(g, "MPI_Ibcast", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 8, t + 1 * D, t + 2 * D);
    op(g, "c10d::reduce_scatter_", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 8, t + 3 * D, t + 4 * D);
    op(g, "frobnicate", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 8, t + 5 * D, t + 6 * D);
    op(AIP_COMM_NONE, "MPI_Allreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 8, t + 7 * D,
       t + 8 * D);
    op(g, "MPI_Sendrecv", AIP_COMM_SENDRECV, 4, 16, t + 9 * D, t + 10 * D);
    op(g, "MPI_Recv", AIP_COMM_RECV, 9, 16, t + 11 * D, t + 12 * D);
    op(g, "MPI_Recv", AIP_COMM_RECV, 9, 16, t + 13 * D, t + 14 * D);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    aip__comm_tables tb;
    ASSERT_EQ(aip__comm_tables_build(&m, &tb), AIP_OK);
    ASSERT_EQ(tb.n_rows, 7);
    ASSERT_EQ(tb.outside_steps, 0);
    /* by class, then group label (g3's: msprof-analyze's double_hash of
     * "g3", 13048110658792; digits sort before "ungrouped"), then start */
    const char *want[] = {"hcom_broadcast__0_0_1", "hcom_reduceScatter__1_0_1",
                          "hcom_invalid__2_0_1", "hcom_allReduce__0_0_1",
                          "hcom_batchSendRecv__0_0_1", "hcom_receive__0_9_1",
                          "hcom_receive__1_9_1"};
#define G3 "13048110658792"
    const char *groups[] = {G3, G3, G3, "ungrouped", G3, G3, G3};
    for (int i = 0; i < 7; i++) {
        ASSERT_STREQ(tb.rows[i].name, want[i]);
        ASSERT_TRUE(tb.rows[i].group_len == strlen(groups[i]) &&
                    memcmp(tb.rows[i].group, groups[i], tb.rows[i].group_len) == 0);
        ASSERT_EQ(tb.rows[i].p2p, i >= 4);
        ASSERT_EQ(tb.rows[i].has_step, 0);
    }
    /* blocks: g3 collective broadcast, invalid, reduceScatter (by type),
     * ungrouped allReduce, g3 p2p batchSendRecv, receive */
    const char *block_type[] = {"broadcast", "invalid", "reduceScatter", "allReduce",
                                "batchSendRecv", "receive"};
    size_t bi = 0;
    for (size_t i = 0; i < tb.n_links; i++) {
        if (i && (tb.links[i].of->type != tb.links[i - 1].of->type ||
                  tb.links[i].of->p2p != tb.links[i - 1].of->p2p ||
                  tb.links[i].of->group != tb.links[i - 1].of->group))
            bi++;
        ASSERT_TRUE(bi < 6);
        ASSERT_STREQ(tb.links[i].of->type, block_type[bi]);
    }
    ASSERT_EQ(bi, 5);
    /* the receives: self link 2-2 and 9-2 (a peer the group does not list
     * keeps its global rank), each with top1, middle, bottom1, bottom2, total */
    size_t n_recv = 0;
    for (size_t i = 0; i < tb.n_links; i++)
        if (strcmp(tb.links[i].of->type, "receive") == 0) {
            ASSERT_TRUE((tb.links[i].src == 2 && tb.links[i].dst == 2) ||
                        (tb.links[i].src == 9 && tb.links[i].dst == 2));
            n_recv++;
        }
    ASSERT_EQ(n_recv, 10);
    aip__comm_tables_free(&tb);
    aip__model_free(&m);
    aip_session_destroy(s);
}

static uint32_t fake_dev;
static void fake_sample(void) { fake_device_sample(fake_dev); }
static void fake_start(const aip_config *cfg) { fake_sample(); }
FAKE_COLLECTOR(fake, fake_start, fake_sample);

/* With device tasks the rows are per device (device_steps.c): the
 * communication columns from the same ops, overlap against the device's
 * kernels; the identities hold. */
static void test_device_rows(void)
{
    static const uint32_t world[2] = {0, 1};
    uint32_t gw = aip__comm_group(0x5200, "dev_world", 0, 2, world);
    aip__collector_register(&fake);
    fake_dev = aip__dev_device(AIP_BACKEND_OPENCL, 0x99, "Fake GPU", "Acme", AIP_DEVKIND_GPU);
    uint32_t q = aip__dev_queue(fake_dev, 0x98, NULL);
    ASSERT_TRUE(gw != AIP_COMM_NONE && fake_dev != AIP_DEV_NONE && q != AIP_DEV_NONE);
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_annotation_push("ProfilerStep#4");
    spin_us(30);
    uint64_t k0 = device_now();
    spin_us(40);
    uint64_t c0 = aip__ticks(); /* the op begins while the kernel runs */
    spin_us(40);
    uint64_t k1 = device_now();
    spin_us(40);
    uint64_t c1 = aip__ticks();
    spin_us(30);
    uint64_t r0 = aip__ticks();
    spin_us(30);
    uint64_t r1 = aip__ticks();
    spin_us(30);
    aip_annotation_pop();
    aip__dev_task_info ti = {.name = "k", .device = fake_dev, .queue = q,
                             .kind = AIP_TASK_KERNEL, .start = k0, .end = k1};
    aip__dev_task(&ti);
    op(gw, "allreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 256, c0, c1);
    op(gw, "recv", AIP_COMM_RECV, 1, 256, r0, r1);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);

    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->dev_tasks.n, 1);
    ASSERT_EQ(p->comm_ops.n, 2);
    const aip__device_task *k = &p->dev_tasks.v[0];
    const aip__comm_event *o = p->comm_ops.v;
    int64_t ovl = overlap(k->start, k->end, o[0].start, o[0].end);
    ASSERT_TRUE(ovl > 0);
    int64_t comm = (o[0].end - o[0].start) + (o[1].end - o[1].start);
    int64_t bubble = o[1].end - o[1].start;
    const aip__step *step = &m.steps[0];

    aip_analyse_options ao;
    aip_analyse_options_init(&ao);
    ao.quiet = 1;
    const char *dir = aip_session_result_dir(s);
    ASSERT_EQ(aip_analyse_dir(dir, &ao), AIP_OK);
    csv st;
    ASSERT_EQ(csv_read(&st, dir, "step_trace_time.csv"), 0);
    ASSERT_EQ(st.rows, 1);
    ASSERT_STREQ(at(&st, 0, "Device_id"), "0");
    int64_t dur = us_cell(&st, 0, "Stage") + us_cell(&st, 0, "Bubble");
    ASSERT_EQ(dur, step->end - step->start); /* the kernel ended inside the step */
    ASSERT_EQ(us_cell(&st, 0, "Computing"), k->end - k->start);
    ASSERT_EQ(us_cell(&st, 0, "Communication"), comm);
    ASSERT_EQ(us_cell(&st, 0, "Overlapped"), ovl);
    ASSERT_EQ(us_cell(&st, 0, "Communication(Not Overlapped)"), comm - ovl);
    ASSERT_EQ(us_cell(&st, 0, "Bubble"), bubble);
    ASSERT_EQ(us_cell(&st, 0, "Free"), dur - (k->end - k->start) - (comm - ovl));
    ASSERT_EQ(us_cell(&st, 0, "Communication(Not Overlapped and Exclude Receive)"),
              comm - ovl - bubble);
    ASSERT_EQ(us_cell(&st, 0, "Preparing"), k->start - step->start);
    csv_free(&st);
    aip__model_free(&m);
    aip_session_destroy(s);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "comm_rows");
    static const aip_test_case cases[] = {TEST_CASE(test_names), TEST_CASE(test_device_rows)};
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
