/*
 * test_cluster_comm.c — the arithmetic of aiprof cluster's wait vs transit
 * (cluster_comm.c): aip__cc_split on hand-made collectives (the usual
 * case, a rank released before the last arrives, one rank, random ones:
 * wait + transit + idle = elapse exactly, none negative), the median used
 * for clock offsets, and the Python json.dumps() text of the cluster
 * files (aip__cc_dump_python).
 */
#include "aip_test.h"
#include "cluster_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void split_n(const int64_t *s, const int64_t *e, size_t n, int64_t *w, int64_t *t,
                    int64_t *i)
{
    aip__cc_split(s, e, n, w, t, i);
    for (size_t k = 0; k < n; k++) {
        ASSERT_TRUE(w[k] >= 0 && t[k] >= 0 && i[k] >= 0);
        ASSERT_EQ(w[k] + t[k] + i[k], e[k] - s[k]);
    }
}

/* Last arrival at 30, first release at 50: wait = 30 - own start,
 * transit = 20 for every rank, idle = own end - 50. */
static void test_split_usual(void)
{
    int64_t s[] = {0, 10, 30}, e[] = {50, 55, 52}, w[3], t[3], i[3];
    split_n(s, e, 3, w, t, i);
    ASSERT_EQ(w[0], 30);
    ASSERT_EQ(t[0], 20);
    ASSERT_EQ(i[0], 0);
    ASSERT_EQ(w[1], 20);
    ASSERT_EQ(t[1], 20);
    ASSERT_EQ(i[1], 5);
    ASSERT_EQ(w[2], 0); /* the last to arrive waits for nobody */
    ASSERT_EQ(t[2], 20);
    ASSERT_EQ(i[2], 2);
}

/* A rooted collective may let a rank go before the last arrives (or the
 * clocks are off): no transit then, and nothing negative. */
static void test_split_early_release(void)
{
    int64_t s[] = {0, 40}, e[] = {10, 60}, w[2], t[2], i[2];
    split_n(s, e, 2, w, t, i);
    ASSERT_EQ(w[0], 10); /* all of it before the last arrival */
    ASSERT_EQ(t[0], 0);
    ASSERT_EQ(i[0], 0);
    ASSERT_EQ(w[1], 0);
    ASSERT_EQ(t[1], 0);
    ASSERT_EQ(i[1], 20);
}

static void test_split_one_rank(void)
{
    int64_t s[] = {100}, e[] = {175}, w[1], t[1], i[1];
    split_n(s, e, 1, w, t, i);
    ASSERT_EQ(w[0], 0);
    ASSERT_EQ(t[0], 75);
    ASSERT_EQ(i[0], 0);
}

/* Random collectives: the identity holds, and when every rank is inside
 * over [last arrival, first release] the split is exactly the definition. */
static void test_split_random(void)
{
    srand(7);
    int64_t s[16], e[16], w[16], t[16], i[16];
    for (int round = 0; round < 2000; round++) {
        size_t n = 1 + (size_t)(rand() % 16);
        int64_t last = 0, first = INT64_MAX;
        for (size_t k = 0; k < n; k++) {
            s[k] = rand() % 1000000;
            e[k] = s[k] + rand() % 1000000;
            last = s[k] > last ? s[k] : last;
            first = e[k] < first ? e[k] : first;
        }
        split_n(s, e, n, w, t, i);
        for (size_t k = 0; first >= last && k < n; k++) {
            ASSERT_EQ(w[k], last - s[k]);
            ASSERT_EQ(t[k], first - last);
            ASSERT_EQ(i[k], e[k] - first);
        }
    }
}

static void test_median(void)
{
    int64_t a[] = {9, -3, 7, 1000000, 5};
    ASSERT_EQ(aip__cc_median(a, 5), 7);
    int64_t b[] = {4, 2, 8, 6};
    ASSERT_EQ(aip__cc_median(b, 4), 4); /* the lower middle: a measured value */
    int64_t c[] = {-12};
    ASSERT_EQ(aip__cc_median(c, 1), -12);
}

/* json.dumps({"(0, 1)": {"a\"\\\n\u00e9\U0001f600": [1, 0.1, 1e-05, 2.0, None,
 * True, -0.0, 16.487143, 0.15717400000000004]}}) */
static void test_python_text(void)
{
    json_t *v = json_pack("{s:{s:[i,f,f,f,n,b,f,f,f]}}", "(0, 1)",
                          "a\"\\\n\xc3\xa9\xf0\x9f\x98\x80", 1, 0.1, 1e-05, 2.0, 1, -0.0,
                          16.487143, 0.15717400000000004);
    ASSERT_TRUE(v != NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_EQ(aip__cc_dump_python(v, f), 0);
    fclose(f);
    ASSERT_STREQ(buf, "{\"(0, 1)\": {\"a\\\"\\\\\\n\\u00e9\\ud83d\\ude00\": [1, 0.1, 1e-05, 2.0, "
                      "null, true, -0.0, 16.487143, 0.15717400000000004]}}");
    free(buf);
    json_decref(v);
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_split_usual),   TEST_CASE(test_split_early_release),
        TEST_CASE(test_split_one_rank), TEST_CASE(test_split_random),
        TEST_CASE(test_median),         TEST_CASE(test_python_text),
    };
    return aip_test_run(cases, sizeof cases / sizeof cases[0]);
}
