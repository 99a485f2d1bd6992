/*
 * test_cluster_wire.c — `aiprof cluster --mpi` moves each rank directory's
 * results between processes (cluster_wire.c); process 0's outputs must be
 * those of one process, byte for byte, so every field must come back as it
 * was: a rank directory with every field set (NaN and -0.0 included, JSON
 * of every type with its member order) packed and unpacked field by field;
 * a process's share going into process 0's cluster at the right indices;
 * and every truncation of a message refused as damaged, not read past
 * its end (the ASan build checks that, and that nothing leaks).
 */
#include "aip_test.h"
#include "cluster.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const JSON =
    "{\"step1\": {\"collective\": {\"z@world\": {\"Communication Time Info\": "
    "{\"Start Timestamp(us)\": 1795505618923798.2, \"Elapse Time(ms)\": 0.1, \"n\": 3, "
    "\"big\": -9007199254740993, \"neg0\": -0.0, \"tiny\": 5e-324, \"huge\": 1.7976931348623157e308}},"
    " \"a@world\": {}, \"Total Op Info\": {}}, \"p2p\": {}},"
    " \"list\": [1, 2.5, \"t\\u00e9xt \\\"quoted\\\"\", true, false, null, [], {}],"
    " \"\\u65e5\": \"\"}";

static void fill(aip__rank_dir *r)
{
    memset(r, 0, sizeof *r);
    r->path = strdup("/job/node3/w7_2026_ascend_pt");
    r->rank = 7;
    r->ts = -123456789012345LL;
    snprintf(r->problem, sizeof r->problem, "a problem é");
    r->n_cols = 3;
    r->cols = calloc(3, sizeof *r->cols);
    r->cols[0] = strdup("Computing");
    r->cols[1] = strdup("");
    r->cols[2] = strdup("Free");
    r->n_rows = 2;
    r->rows = calloc(2, sizeof *r->rows);
    r->rows[0].step = strdup("0");
    r->rows[1].step = strdup("");
    double v[6] = {500.0, -0.0, NAN, 1e-310, 0.1, 18000.25};
    for (int j = 0; j < 2; j++) {
        r->rows[j].v = calloc(3, sizeof(double));
        memcpy(r->rows[j].v, v + 3 * j, 3 * sizeof(double));
    }
    r->comm = json_loads(JSON, 0, NULL);
    r->matrix = NULL; /* absent: must stay absent */
    r->host = strdup("node3/4f2a");
    r->clock_offset_us = -2750.5;
    r->clock_samples = 12;
    r->meta = json_loads("{\"distributed_args\": {\"tensor_model_parallel_size\": 2}}", 0, NULL);
    r->host_uid = strdup("4f2a");
    r->host_name = NULL; /* absent: must stay absent */
    r->n_devices = 2;
    r->devices = calloc(2, sizeof *r->devices);
    r->devices[0] = -1;
    r->devices[1] = 7;
    r->first_us = 1.7e15 + 0.5;
    r->last_us = NAN;
    r->analyse = 1;
}

static int same_bits(double a, double b)
{
    return !memcmp(&a, &b, sizeof a);
}

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Every field, as it was (a field added to aip__rank_dir gets a line here too). */
static void check_same(const aip__rank_dir *a, const aip__rank_dir *b)
{
    ASSERT_TRUE(same_text(a->path, b->path));
    ASSERT_EQ(a->rank, b->rank);
    ASSERT_EQ(a->ts, b->ts);
    ASSERT_STREQ(a->problem, b->problem);
    ASSERT_EQ(a->n_cols, b->n_cols);
    for (size_t k = 0; k < a->n_cols; k++)
        ASSERT_STREQ(a->cols[k], b->cols[k]);
    ASSERT_EQ(a->n_rows, b->n_rows);
    for (size_t j = 0; j < a->n_rows; j++) {
        ASSERT_STREQ(a->rows[j].step, b->rows[j].step);
        for (size_t k = 0; k < a->n_cols; k++)
            ASSERT_TRUE(same_bits(a->rows[j].v[k], b->rows[j].v[k]));
    }
    ASSERT_EQ(!a->comm, !b->comm);
    ASSERT_EQ(!a->matrix, !b->matrix);
    if (a->comm) {
        ASSERT_TRUE(json_equal(a->comm, b->comm));
        /* the same text, so the same member order and numbers */
        char *x = json_dumps(a->comm, 0), *y = json_dumps(b->comm, 0);
        ASSERT_STREQ(x, y);
        free(x);
        free(y);
        json_t *n = json_object_get(json_object_get(json_object_get(json_object_get(
                                        json_object_get(b->comm, "step1"), "collective"),
                                        "z@world"), "Communication Time Info"), "big");
        ASSERT_TRUE(json_is_integer(n));
        ASSERT_EQ(json_integer_value(n), -9007199254740993LL);
    }
    ASSERT_TRUE(same_bits(a->first_us, b->first_us));
    ASSERT_TRUE(same_bits(a->last_us, b->last_us));
    ASSERT_EQ(a->analyse, b->analyse);
    ASSERT_TRUE(same_text(a->host, b->host));
    ASSERT_TRUE(same_bits(a->clock_offset_us, b->clock_offset_us));
    ASSERT_EQ(a->clock_samples, b->clock_samples);
    ASSERT_EQ(!a->meta, !b->meta);
    if (a->meta)
        ASSERT_TRUE(json_equal(a->meta, b->meta));
    ASSERT_TRUE(same_text(a->host_uid, b->host_uid));
    ASSERT_TRUE(same_text(a->host_name, b->host_name));
    ASSERT_EQ(a->n_devices, b->n_devices);
    for (size_t i = 0; i < a->n_devices; i++)
        ASSERT_EQ(a->devices[i], b->devices[i]);
}

static void test_round_trip(void)
{
    aip__rank_dir a, b;
    fill(&a);
    ASSERT_TRUE(a.comm != NULL);
    unsigned char *buf = NULL;
    size_t len = 0, used = 0;
    ASSERT_EQ(aip__rank_dir_pack(&a, &buf, &len), AIP_OK);
    ASSERT_EQ(aip__rank_dir_unpack(buf, len, &used, &b), AIP_OK);
    ASSERT_EQ(used, len);
    check_same(&a, &b);
    aip__rank_dir_free(&b);
    /* the same again, with nothing optional there */
    aip__rank_dir_free(&a);
    a.rank = -1;
    a.first_us = a.last_us = NAN;
    free(buf);
    ASSERT_EQ(aip__rank_dir_pack(&a, &buf, &len), AIP_OK);
    ASSERT_EQ(aip__rank_dir_unpack(buf, len, &used, &b), AIP_OK);
    check_same(&a, &b);
    ASSERT_TRUE(b.path == NULL && b.cols == NULL && b.rows == NULL && b.host == NULL);
    aip__rank_dir_free(&b);
    free(buf);
}

/* Every message cut short, and every byte of it changed, is refused or read
 * within its bounds: never past the end (ASan), never leaking. */
static void test_damaged(void)
{
    aip__rank_dir a, b;
    fill(&a);
    unsigned char *buf = NULL;
    size_t len = 0, used = 0;
    ASSERT_EQ(aip__rank_dir_pack(&a, &buf, &len), AIP_OK);
    for (size_t cut = 0; cut < len; cut++) {
        unsigned char *copy = malloc(cut ? cut : 1); /* exactly `cut` bytes for ASan */
        memcpy(copy, buf, cut);
        ASSERT_EQ(aip__rank_dir_unpack(copy, cut, &used, &b), AIP_ERR_CORRUPT);
        free(copy);
    }
    for (size_t at = 0; at < len; at++) {
        unsigned char *copy = malloc(len);
        memcpy(copy, buf, len);
        copy[at] ^= 0xA5;
        if (aip__rank_dir_unpack(copy, len, &used, &b) == AIP_OK)
            aip__rank_dir_free(&b);
        free(copy);
    }
    free(buf);
    aip__rank_dir_free(&a);
}

/* Process 1 of 2 reads directories 1 and 3 of four; process 0 puts them in
 * its cluster in their places and keeps its own. */
static void test_share(void)
{
    aip__cluster one = {.dir = "/job", .parts = 2, .part = 1}, zero = one;
    zero.part = 0;
    aip__rank_dir dirs[2][4];
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < 4; i++) {
            aip__rank_dir *r = &dirs[p][i];
            memset(r, 0, sizeof *r);
            char path[64];
            snprintf(path, sizeof path, "/job/w%d_ascend_pt", i);
            r->path = strdup(path);
            r->rank = i;
            r->first_us = r->last_us = NAN;
        }
    aip__rank_dir_free(&dirs[1][1]);
    fill(&dirs[1][1]);
    dirs[1][1].path = (free(dirs[1][1].path), strdup("/job/w1_ascend_pt"));
    dirs[1][3].rank = 33;
    dirs[0][0].rank = 100; /* process 0's own stays */
    one.r = dirs[1];
    one.n = 4;
    zero.r = dirs[0];
    zero.n = 4;
    unsigned char *buf = NULL;
    size_t len = 0;
    ASSERT_EQ(aip__cluster_pack_share(&one, AIP_OK, &buf, &len), AIP_OK);
    ASSERT_EQ(aip__cluster_unpack_share(&zero, 1, buf, len), AIP_OK);
    check_same(&dirs[1][1], &dirs[0][1]);
    ASSERT_EQ(dirs[0][3].rank, 33);
    ASSERT_EQ(dirs[0][0].rank, 100);
    ASSERT_EQ(dirs[0][2].rank, 2);
    /* from the wrong process (its indices are not process 2's): refused */
    zero.parts = 3;
    ASSERT_EQ(aip__cluster_unpack_share(&zero, 2, buf, len), AIP_ERR_STATE);
    zero.parts = 2;
    /* another tree (process 0 found 3 directories) */
    zero.n = 3;
    ASSERT_EQ(aip__cluster_unpack_share(&zero, 1, buf, len), AIP_ERR_STATE);
    ASSERT_TRUE(strstr(aip_last_error(), "found 4 rank directories, process 0 3") != NULL);
    zero.n = 4;
    free(buf);
    /* a process's failure comes to process 0 with its text */
    aip__fail(AIP_ERR_NOMEM, "out of memory reading the rank directories");
    ASSERT_EQ(aip__cluster_pack_share(&one, AIP_ERR_NOMEM, &buf, &len), AIP_OK);
    ASSERT_EQ(aip__cluster_unpack_share(&zero, 1, buf, len), AIP_ERR_NOMEM);
    ASSERT_STREQ(aip_last_error(), "process 1: out of memory reading the rank directories");
    free(buf);
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < 4; i++)
            aip__rank_dir_free(&dirs[p][i]);
    aip__cluster_intern_free(&zero.leaves); /* the unpacked ranks' shared values */
    aip__cluster_intern_free(&zero.rank_lists);
}

int main(void)
{
    static const aip_test_case cases[] = {TEST_CASE(test_round_trip), TEST_CASE(test_damaged),
                                          TEST_CASE(test_share)};
    return aip_test_run(cases, sizeof cases / sizeof *cases);
}
