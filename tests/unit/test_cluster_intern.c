/*
 * test_cluster_intern.c — equal values of the ranks' files held once
 * (cluster_intern.c, issue 30's memory bound): after two ranks are shared,
 * their equal numbers, strings and global_ranks lists are one instance;
 * values that print differently are never merged (0.0 / -0.0, 1 / 1.0, a
 * string with a NUL byte and its prefix); what aip__cc_dump_python writes
 * of a rank is the same before and after; a rank's values outlive the
 * other rank's trees (ASan checks the reference counts and leaks).
 */
#include "aip_test.h"
#include "cluster.h"
#include "cluster_comm.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const COMM =
    "{\"step1\": {\"collective\": {\"hcom_allReduce__1_0_1@world\": {\"Communication Time Info\": "
    "{\"Start Timestamp(us)\": 1700000000004419.0, \"Elapse Time(ms)\": 3.4, \"Wait Time(ms)\": 0,"
    " \"Idle Time(ms)\": 0.0, \"neg\": -0.0, \"one\": 1, \"onef\": 1.0},"
    " \"Communication Bandwidth Info\": {\"SDMA\": {\"Transit Size(MB)\": 4.0,"
    " \"Size Distribution\": {\"4\": [1, 3.4]}}}}}, \"p2p\": {}}}";
static const char *const META =
    "{\"parallel_group_info\": {\"world\": {\"group_name\": \"default_group\","
    " \"group_rank\": %d, \"global_ranks\": [0, 1, 2, 3]}, \"odd\": {\"global_ranks\": 7}}}";

/* NULL when not JSON: the caller's ASSERT says so */
static json_t *load(const char *text)
{
    json_error_t e;
    return json_loads(text, 0, &e);
}

/* aip__cc_dump_python's text of `v`; NULL on a failure */
static char *dump(const json_t *v)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    if (!f)
        return NULL;
    int bad = aip__cc_dump_python(v, f);
    fclose(f);
    if (bad) {
        free(text);
        return NULL;
    }
    return text;
}

static json_t *field(const aip__rank_dir *r, const char *key)
{
    json_t *op = json_object_get(
        json_object_get(json_object_get(r->comm, "step1"), "collective"),
        "hcom_allReduce__1_0_1@world");
    return json_object_get(json_object_get(op, "Communication Time Info"), key);
}

static void test_shared_and_unchanged(void)
{
    aip__cluster c = {0};
    aip__rank_dir r[2];
    char meta[512], *before[2];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 2; i++) {
        r[i].comm = load(COMM);
        r[i].matrix = load("{\"step1\": {\"collective\": {\"x@world\": {\"0-1\": "
                           "{\"Op Name\": \"hcom_allReduce__1_0_1@world\", \"p\": \"a\"}}}}}");
        snprintf(meta, sizeof meta, META, i);
        r[i].meta = load(meta);
        ASSERT_TRUE(r[i].comm && r[i].matrix && r[i].meta);
        /* a string with a NUL byte (json_stringn; the files' parser refuses
         * one, an unpacked message may hold it) against its prefix */
        json_t *lk = json_object_get(json_object_get(json_object_get(json_object_get(
                                         r[i].matrix, "step1"), "collective"), "x@world"), "0-1");
        ASSERT_EQ(json_object_set_new(lk, "s", json_stringn("a\0b", 3)), 0);
        before[i] = dump(r[i].comm);
        ASSERT_TRUE(before[i] != NULL);
        ASSERT_EQ(aip__cluster_rank_share(&c, &r[i]), 0);
    }
    /* equal values: one instance */
    ASSERT_TRUE(field(&r[0], "Elapse Time(ms)") == field(&r[1], "Elapse Time(ms)"));
    ASSERT_TRUE(field(&r[0], "Wait Time(ms)") == field(&r[1], "Wait Time(ms)"));
    json_t *l0 = json_object_get(json_object_get(json_object_get(r[0].meta,
                                 "parallel_group_info"), "world"), "global_ranks");
    json_t *l1 = json_object_get(json_object_get(json_object_get(r[1].meta,
                                 "parallel_group_info"), "world"), "global_ranks");
    ASSERT_TRUE(l0 == l1);
    /* values that print differently stay apart */
    ASSERT_TRUE(field(&r[1], "Wait Time(ms)") != field(&r[1], "Idle Time(ms)")); /* 0 / 0.0 */
    ASSERT_TRUE(field(&r[1], "Idle Time(ms)") != field(&r[1], "neg"));          /* 0.0 / -0.0 */
    ASSERT_TRUE(field(&r[1], "one") != field(&r[1], "onef"));                   /* 1 / 1.0 */
    json_t *link = json_object_get(json_object_get(json_object_get(json_object_get(
                                       r[1].matrix, "step1"), "collective"), "x@world"), "0-1");
    ASSERT_TRUE(json_object_get(link, "s") != json_object_get(link, "p"));
    ASSERT_EQ(json_string_length(json_object_get(link, "s")), 3);
    /* the text is the rank's own */
    for (int i = 0; i < 2; i++) {
        char *after = dump(r[i].comm);
        ASSERT_TRUE(after != NULL);
        ASSERT_STREQ(after, before[i]);
        free(after);
        free(before[i]);
    }
    /* rank 1's values outlive rank 0's trees, then the tables */
    char *keep = dump(r[1].comm);
    aip__rank_dir_free(&r[0]);
    char *again = dump(r[1].comm);
    ASSERT_TRUE(keep && again);
    ASSERT_STREQ(again, keep);
    free(again);
    free(keep);
    aip__rank_dir_free(&r[1]);
    aip__cluster_intern_free(&c.leaves);
    aip__cluster_intern_free(&c.rank_lists);
}

int main(void)
{
    static const aip_test_case cases[] = {TEST_CASE(test_shared_and_unchanged)};
    return aip_test_run(cases, sizeof cases / sizeof *cases);
}
