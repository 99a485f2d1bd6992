/*
 * test_comm_model.c — communication from the recording interface
 * (src/core/comm.h) through the raw file to the analysis model: groups with
 * their global ranks (also one too big to list whole), collectives with
 * their per-group sequence numbers, point-to-point operations with peers
 * and tags, non-blocking flags, groups described again in every trace, a
 * forgotten key naming a new group, and nothing recorded without CPU
 * activity.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "comm.h"
#include "model.h"
#include "model_helpers.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

static char tmp[PATH_MAX];

static void op(uint32_t group, const char *name, uint8_t kind, uint32_t peer, uint64_t bytes,
               int nonblocking)
{
    aip__comm_op_info o = {.name = name, .group = group, .peer = peer, .root = AIP_RAW_NO_RANK,
                           .bytes = bytes, .count = bytes / 4, .dtype = "float32",
                           .tag = kind == AIP_COMM_COLLECTIVE ? -1 : 7, .kind = kind,
                           .lib = AIP_COMMLIB_MPI, .nonblocking = (uint8_t)nonblocking};
    o.seq = kind == AIP_COMM_COLLECTIVE ? aip__comm_next_seq(group) : 0;
    o.start = aip__ticks();
    o.end = aip__ticks();
    aip__comm_op(&o);
}

static void test_groups_and_ops_round_trip(void)
{
    static const uint32_t world[4] = {0, 1, 2, 3}, pair[2] = {3, 1};
    static uint32_t huge[20000];
    for (uint32_t i = 0; i < 20000; i++)
        huge[i] = i;
    uint32_t gw = aip__comm_group(0x44000000, "MPI_COMM_WORLD", 2, 4, world);
    uint32_t gp = aip__comm_group(0x84000001, "pair", 1, 2, pair);
    uint32_t gh = aip__comm_group(0x84000002, "huge", 5, 20000, huge);
    ASSERT_TRUE(gw != AIP_COMM_NONE && gp != AIP_COMM_NONE && gh != AIP_COMM_NONE);
    ASSERT_EQ(aip__comm_group(0x44000000, "other", 0, 1, NULL), gw);

    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_TRUE(aip__comm_recording());
    op(gw, "MPI_Allreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 4096, 0);
    op(gw, "MPI_Bcast", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 64, 0);
    op(gp, "MPI_Isend", AIP_COMM_SEND, 1, 128, 1);
    op(gh, "MPI_Barrier", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 0, 0);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);

    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->comm_bad_records, 0);
    const aip__comm_group_info *w = aip__model_comm_group(p, gw);
    ASSERT_TRUE(w != NULL);
    ASSERT_STREQ(S(p, w->name), "MPI_COMM_WORLD");
    ASSERT_EQ(w->my_rank, 2);
    ASSERT_EQ(w->n_ranks, 4);
    ASSERT_EQ(w->listed, 4);
    ASSERT_EQ(w->ranks[3], 3);
    const aip__comm_group_info *pr = aip__model_comm_group(p, gp);
    ASSERT_TRUE(pr != NULL && pr->listed == 2 && pr->ranks[0] == 3 && pr->ranks[1] == 1);
    const aip__comm_group_info *h = aip__model_comm_group(p, gh);
    ASSERT_TRUE(h != NULL);
    ASSERT_EQ(h->n_ranks, 20000);
    ASSERT_EQ(h->listed, AIP_COMM_MAX_LISTED);
    ASSERT_TRUE(h->ranks_cut);
    ASSERT_EQ(h->ranks[AIP_COMM_MAX_LISTED - 1], AIP_COMM_MAX_LISTED - 1);

    ASSERT_EQ(p->comm_ops.n, 4);
    const aip__comm_event *o = p->comm_ops.v;
    ASSERT_STREQ(S(p, o[0].name), "MPI_Allreduce");
    ASSERT_EQ(o[0].seq, 0);
    ASSERT_EQ(o[1].seq, 1);
    ASSERT_EQ(o[0].bytes, 4096);
    ASSERT_EQ(o[0].count, 1024);
    ASSERT_STREQ(S(p, o[0].dtype), "float32");
    ASSERT_EQ(o[0].kind, AIP_COMM_COLLECTIVE);
    ASSERT_EQ(o[0].lib, AIP_COMMLIB_MPI);
    ASSERT_EQ(o[0].peer, AIP_RAW_NO_RANK);
    ASSERT_EQ(o[2].peer, 1);
    ASSERT_EQ(o[2].tag, 7);
    ASSERT_EQ(o[2].kind, AIP_COMM_SEND);
    ASSERT_TRUE(o[2].flags & AIP_COMMF_NONBLOCKING);
    ASSERT_EQ(o[3].seq, 0); /* sequences are per group */
    for (int i = 0; i < 4; i++)
        ASSERT_TRUE(o[i].start > 0 && o[i].end >= o[i].start);
    aip__model_free(&m);

    /* A second trace describes the groups again; sequences continue. */
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    op(gw, "MPI_Allreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 4096, 0);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_EQ(load(s, &m), 0);
    p = &m.procs[0];
    ASSERT_TRUE(aip__model_comm_group(p, gw) != NULL);
    ASSERT_TRUE(aip__model_comm_group(p, gp) == NULL); /* not named in this trace */
    ASSERT_EQ(p->comm_ops.n, 1);
    ASSERT_EQ(p->comm_ops.v[0].seq, 2);
    aip__model_free(&m);
    aip_session_destroy(s);

    /* A freed communicator's handle may name a new one. */
    aip__comm_group_forget(0x84000001);
    uint32_t again = aip__comm_group(0x84000001, "pair2", 0, 2, pair);
    ASSERT_TRUE(again != AIP_COMM_NONE && again != gp);
}

static void test_no_cpu_activity_records_no_comm(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_NPU;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_TRUE(!aip__comm_recording());
    aip_mark("d", "m"); /* something to write */
    op(0, "MPI_Allreduce", AIP_COMM_COLLECTIVE, AIP_RAW_NO_RANK, 8, 0);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    ASSERT_EQ(m.procs[0].comm_ops.n, 0);
    aip__model_free(&m);
    aip_session_destroy(s);
}

static void test_many_groups(void)
{
    /* the key map grows and keeps every key */
    uint32_t ids[3000];
    for (uint32_t i = 0; i < 3000; i++) {
        ids[i] = aip__comm_group(0x1000000ull + i * 64, "g", 0, 1, NULL);
        ASSERT_TRUE(ids[i] != AIP_COMM_NONE);
    }
    for (uint32_t i = 0; i < 3000; i++)
        ASSERT_EQ(aip__comm_group(0x1000000ull + i * 64, "g", 0, 1, NULL), ids[i]);
    for (uint32_t i = 0; i < 3000; i += 2)
        aip__comm_group_forget(0x1000000ull + i * 64);
    for (uint32_t i = 1; i < 3000; i += 2)
        ASSERT_EQ(aip__comm_group(0x1000000ull + i * 64, "g", 0, 1, NULL), ids[i]);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "comm_model");
    static const aip_test_case cases[] = {
        TEST_CASE(test_groups_and_ops_round_trip),
        TEST_CASE(test_no_cpu_activity_records_no_comm),
        TEST_CASE(test_many_groups),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
