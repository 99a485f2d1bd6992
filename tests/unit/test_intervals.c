/*
 * test_intervals.c — the interval vector and unions of
 * src/analysis/intervals.h: touching pairs merge, empty pairs are dropped
 * by push but kept by union, sorted pushes merge on the fly and flag a pair
 * out of order, merge from an index leaves the pairs before it alone,
 * growth past the first allocation keeps every pair, sorting sorted runs
 * gives qsort's order, and clip and both
 * measure unions inside a window.
 */
#include "aip_test.h"
#include "intervals.h"

/* 1 when the n pairs of v are the pairs of want (a flat list of 2n
 * numbers); prints both lists otherwise. */
static int same_pairs(const int64_t *v, size_t n, const int64_t *want, size_t n_want)
{
    if (n * 2 == n_want && (n == 0 || !memcmp(v, want, n_want * sizeof *v)))
        return 1;
    fprintf(stderr, "pairs:");
    for (size_t i = 0; i < 2 * n; i++)
        fprintf(stderr, " %" PRId64, v[i]);
    fprintf(stderr, "; want:");
    for (size_t i = 0; i < n_want; i++)
        fprintf(stderr, " %" PRId64, want[i]);
    fprintf(stderr, "\n");
    return 0;
}
#define ASSERT_PAIRS(v, n, ...)                                                        \
    do {                                                                               \
        const int64_t want_[] = {__VA_ARGS__};                                         \
        ASSERT_TRUE(same_pairs(v, n, want_, sizeof want_ / sizeof *want_));            \
    } while (0)

static void test_push_drops_empty(void)
{
    aip__intervals x = {0};
    ASSERT_EQ(aip__intervals_push(&x, 5, 5), 0);
    ASSERT_EQ(aip__intervals_push(&x, 7, 6), 0);
    ASSERT_EQ(x.n, 0);
    ASSERT_EQ(aip__intervals_push(&x, 1, 2), 0);
    ASSERT_PAIRS(x.v, x.n, 1, 2);
    free(x.v);
}

static void test_push_sorted_merges(void)
{
    aip__intervals x = {0};
    /* [1,3) [2,4) touch [4,6) -> [1,6); [8,9) apart; [8,8) empty */
    const int64_t in[][2] = {{1, 3}, {2, 4}, {4, 6}, {5, 5}, {8, 9}, {8, 8}};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        ASSERT_EQ(aip__intervals_push_sorted(&x, 0, in[i][0], in[i][1]), 0);
    ASSERT_EQ(x.unsorted, 0);
    ASSERT_PAIRS(x.v, x.n, 1, 6, 8, 9);
    free(x.v);
}

static void test_unsorted_then_merge_tail(void)
{
    aip__intervals x = {0};
    ASSERT_EQ(aip__intervals_push(&x, 100, 200), 0); /* before `from`: untouched */
    ASSERT_EQ(aip__intervals_push_sorted(&x, 1, 10, 20), 0);
    ASSERT_EQ(aip__intervals_push_sorted(&x, 1, 30, 40), 0);
    ASSERT_EQ(x.unsorted, 0);
    ASSERT_EQ(aip__intervals_push_sorted(&x, 1, 15, 31), 0); /* out of order */
    ASSERT_EQ(x.unsorted, 1);
    ASSERT_EQ(x.n, 4);
    aip__intervals_merge(&x, 1);
    ASSERT_EQ(x.unsorted, 0);
    ASSERT_PAIRS(x.v, x.n, 100, 200, 10, 40);
    aip__intervals_merge(&x, 2); /* nothing after index 2: no change */
    ASSERT_EQ(x.n, 2);
    free(x.v);
}

static void test_growth_keeps_every_pair(void)
{
    aip__intervals x = {0};
    for (int64_t i = 999; i >= 0; i--) /* disjoint, reversed order */
        ASSERT_EQ(aip__intervals_push(&x, 10 * i, 10 * i + 5), 0);
    ASSERT_EQ(x.n, 1000);
    ASSERT_TRUE(x.cap >= 1000);
    aip__intervals_merge(&x, 0);
    ASSERT_EQ(x.n, 1000);
    for (size_t i = 0; i < x.n; i++) {
        ASSERT_EQ(x.v[2 * i], 10 * (int64_t)i);
        ASSERT_EQ(x.v[2 * i + 1], 10 * (int64_t)i + 5);
    }
    free(x.v);
}

static void test_union_keeps_pairs_as_given(void)
{
    /* union takes pairs as they are (comm ops of zero length stay) */
    int64_t v[] = {9, 9, 4, 6, 1, 3, 3, 4, 20, 25, 21, 22};
    size_t n = aip__intervals_union(v, 6);
    ASSERT_PAIRS(v, n, 1, 6, 9, 9, 20, 25);
    ASSERT_EQ(aip__intervals_union(NULL, 0), 0);
}

static void test_sort_by_start_then_end(void)
{
    int64_t v[] = {5, 9, 1, 2, 5, 6};
    aip__intervals_sort(v, 3);
    ASSERT_PAIRS(v, 3, 1, 2, 5, 6, 5, 9);
}

static int ref_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The sort merges sorted runs (one per thread in the host step trace) and
 * falls back to qsort past 64 runs: every run count, equal starts, equal
 * pairs and reversed pairs give qsort's array. */
static void test_sort_runs_like_qsort(void)
{
    static const size_t run_counts[] = {1, 2, 3, 4, 7, 63, 64, 65, 300};
    enum { N = 3000 };
    static int64_t v[2 * N], want[2 * N];
    uint64_t seed = 12345;
    for (size_t c = 0; c < sizeof run_counts / sizeof *run_counts; c++) {
        size_t runs = run_counts[c], at = 0;
        for (size_t r = 0; r < runs; r++) {
            size_t len = N / runs + (r < N % runs);
            int64_t t = 0;
            for (size_t i = 0; i < len; i++, at++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                t += (int64_t)((seed >> 33) % 4);          /* equal starts too */
                v[2 * at] = t;
                v[2 * at + 1] = t + (int64_t)((seed >> 40) % 9) - 2; /* some reversed */
            }
            /* within a run: by start, then end */
            qsort(v + 2 * (at - len), len, 2 * sizeof *v, ref_cmp);
        }
        ASSERT_EQ(at, (size_t)N);
        memcpy(want, v, sizeof v);
        qsort(want, N, 2 * sizeof *want, ref_cmp);
        aip__intervals_sort(v, N);
        ASSERT_TRUE(!memcmp(v, want, sizeof v));
    }
}

static void test_clip_and_both(void)
{
    const int64_t iv[] = {0, 10, 20, 30, 40, 50};
    int64_t first = -1;
    ASSERT_EQ(aip__intervals_clip(iv, 3, 5, 45, &first), 5 + 10 + 5);
    ASSERT_EQ(first, 5);
    first = -1;
    ASSERT_EQ(aip__intervals_clip(iv, 3, 10, 20, &first), 0);
    ASSERT_EQ(first, -1);
    ASSERT_EQ(aip__intervals_clip(iv, 3, 25, 100, NULL), 5 + 10);
    ASSERT_EQ(aip__intervals_clip(NULL, 0, 0, 100, NULL), 0);
    /* common part of iv and [8, 22) [28, 45) inside [0, 42): 2 + 2 + 2 + 2 */
    const int64_t other[] = {8, 22, 28, 45};
    ASSERT_EQ(aip__intervals_both(iv, 3, other, 2, 0, 42), 2 + 2 + 2 + 2);
    ASSERT_EQ(aip__intervals_both(iv, 3, other, 2, 22, 28), 0);
    ASSERT_EQ(aip__intervals_both(iv, 3, NULL, 0, 0, 100), 0);
}

TEST_MAIN(TEST_CASE(test_push_drops_empty), TEST_CASE(test_push_sorted_merges),
          TEST_CASE(test_unsorted_then_merge_tail), TEST_CASE(test_growth_keeps_every_pair),
          TEST_CASE(test_union_keeps_pairs_as_given), TEST_CASE(test_sort_by_start_then_end),
          TEST_CASE(test_sort_runs_like_qsort), TEST_CASE(test_clip_and_both))
