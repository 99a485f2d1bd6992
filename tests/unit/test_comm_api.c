/*
 * test_comm_api.c — the communication calls of aiprof_integration.h
 * (src/core/comm_api.c), what collectors outside libaiprof record through:
 * an op given through aip_comm_op() comes back from the raw file field by
 * field, times taken with aip_comm_ticks() or converted from monotonic ns;
 * groups share ids and sequences with the internal interface; nothing is
 * recorded outside a trace; aip_set_rank() names profiler_info_{rank}.json
 * over the environment, and -1 gives the environment back.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "aiprof_integration.h"
#include "comm.h"
#include "model.h"
#include "model_helpers.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char tmp[PATH_MAX];

static int exists_in(const char *dir, const char *name)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_op_round_trip(void)
{
    static const uint32_t ranks[3] = {4, 0, 9};
    uint32_t g = aip_comm_group(0xC0FFEEull, "pg", 1, 3, ranks);
    ASSERT_TRUE(g != AIP_COMM_NO_GROUP);
    ASSERT_EQ(aip__comm_group(0xC0FFEEull, "ignored", 0, 1, NULL), g);
    ASSERT_TRUE(!aip_comm_recording());
    aip_comm_op_info before = {.name = "lost", .group = g, .kind = AIP_COMM_OP_COLLECTIVE};
    aip_comm_op(&before); /* no trace: nothing */

    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_TRUE(aip_comm_recording());
    uint64_t t0 = aip_comm_ticks();
    aip_comm_op_info op = {.name = "MPI_Allgather", .start = t0, .end = aip_comm_ticks(),
                           .group = g, .peer = AIP_COMM_NO_RANK, .root = 9, .bytes = 96,
                           .count = 24, .seq = aip_comm_next_seq(g), .dtype = "MPI_INT",
                           .tag = -1, .kind = AIP_COMM_OP_COLLECTIVE, .lib = AIP_COMM_LIB_MPI};
    aip_comm_op(&op);
    uint64_t ns = aip_now_ns();
    aip_comm_op_info p2p = {.name = "irecv", .start = aip_comm_ticks_from_ns(ns),
                            .end = aip_comm_ticks_from_ns(ns + 1000000), .group = g, .peer = 4,
                            .root = AIP_COMM_NO_RANK, .bytes = 8, .count = 2, .seq = 0,
                            .dtype = "float32", .tag = 3, .kind = AIP_COMM_OP_RECV,
                            .lib = AIP_COMM_LIB_GLOO, .nonblocking = 1};
    aip_comm_op(&p2p);
    aip_comm_op(NULL); /* ignored */
    ASSERT_EQ(aip__comm_next_seq(g), 1); /* one counter for both interfaces */
    ASSERT_EQ(aip_session_stop(s), AIP_OK);

    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    const aip__process *p = &m.procs[0];
    const aip__comm_group_info *gi = aip__model_comm_group(p, g);
    ASSERT_TRUE(gi != NULL);
    ASSERT_STREQ(S(p, gi->name), "pg");
    ASSERT_EQ(gi->my_rank, 1);
    ASSERT_TRUE(gi->listed == 3 && gi->ranks[0] == 4 && gi->ranks[2] == 9);
    ASSERT_EQ(p->comm_ops.n, 2);
    const aip__comm_event *o = &p->comm_ops.v[0];
    ASSERT_STREQ(S(p, o->name), "MPI_Allgather");
    ASSERT_TRUE(o->group == g && o->root == 9 && o->peer == AIP_RAW_NO_RANK);
    ASSERT_TRUE(o->bytes == 96 && o->count == 24 && o->seq == 0 && o->tag == -1);
    ASSERT_STREQ(S(p, o->dtype), "MPI_INT");
    ASSERT_TRUE(o->kind == AIP_COMM_COLLECTIVE && o->lib == AIP_COMMLIB_MPI);
    ASSERT_TRUE(!(o->flags & AIP_COMMF_NONBLOCKING));
    const aip__comm_event *r = &p->comm_ops.v[1];
    ASSERT_STREQ(S(p, r->name), "irecv");
    ASSERT_TRUE(r->kind == AIP_COMM_RECV && r->lib == AIP_COMMLIB_GLOO && r->peer == 4);
    ASSERT_TRUE(r->tag == 3 && (r->flags & AIP_COMMF_NONBLOCKING));
    /* 1 ms given in monotonic ns comes back as 1 ms of wall time (clock rounding) */
    int64_t d = r->end - r->start;
    ASSERT_TRUE(d > 999000 && d < 1001000);
    aip__model_free(&m);
    aip_session_destroy(s);
}

static void test_set_rank_names_profiler_info(void)
{
    unsetenv("RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    aip_config c;
    base_config(&c, tmp);
    aip_set_rank(5);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(exists_in(aip_session_result_dir(s), "profiler_info_5.json"));
    ASSERT_TRUE(!exists_in(aip_session_result_dir(s), "profiler_info.json"));
    aip_session_destroy(s);

    setenv("RANK", "3", 1);
    aip_set_rank(1);       /* the library's word wins over the environment */
    s = start_new(&c);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(exists_in(aip_session_result_dir(s), "profiler_info_1.json"));
    aip_session_destroy(s);

    aip_set_rank(-1);      /* back to the environment */
    s = start_new(&c);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(exists_in(aip_session_result_dir(s), "profiler_info_3.json"));
    aip_session_destroy(s);
    unsetenv("RANK");
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "comm_api");
    static const aip_test_case cases[] = {
        TEST_CASE(test_op_round_trip),
        TEST_CASE(test_set_rank_names_profiler_info),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
