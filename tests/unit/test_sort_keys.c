/*
 * test_sort_keys.c — the stable radix sort and permutation of
 * src/analysis/sort_keys.c against a stable reference (insertion by a full
 * comparison), on the inputs derive gives it: sorted, reversed, many
 * duplicates, keys spanning the whole 64 bits, negative times, tiny and
 * large arrays; and the record order derive's device tasks get (start,
 * longer first, correlation) equal to qsort's with the same comparison;
 * and derive's link of tasks to calls by correlation id, with dense ids
 * (a table) and sparse ones (a search), repeated ids and unmatched tasks.
 */
#include "aip_test.h"
#include "sort_keys.h"
#include "analysis_int.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The reference: a stable merge of index order by key. */
static int ref_cmp(const void *a, const void *b)
{
    const aip__sort_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Sort n keys made by `make` and compare with the reference. */
static int check(size_t n, uint64_t (*make)(size_t i, size_t n))
{
    aip__sort_key *v = malloc((n + 1) * sizeof *v), *r = malloc((n + 1) * sizeof *r);
    for (size_t i = 0; i < n; i++)
        v[i] = r[i] = (aip__sort_key){make(i, n), i};
    int ok = aip__sort_keys(v, n) == AIP_OK;
    qsort(r, n, sizeof *r, ref_cmp); /* idx breaks ties: stable by construction */
    for (size_t i = 0; ok && i < n; i++)
        ok = v[i].key == r[i].key && v[i].idx == r[i].idx;
    free(v);
    free(r);
    return ok;
}

static uint64_t k_sorted(size_t i, size_t n) { return (void)n, 1000 + 3 * i; }
static uint64_t k_reversed(size_t i, size_t n) { return n - i; }
static uint64_t k_dups(size_t i, size_t n) { return (void)i, (void)n, next() % 7; }
static uint64_t k_wide(size_t i, size_t n) { return (void)i, (void)n, next(); }
static uint64_t k_times(size_t i, size_t n)
{
    (void)n;
    /* ns around the epoch's 1.7e18, runs of 4 interleaved threads */
    return aip__sort_key_i64(1700000000000000000ll + (int64_t)((i % 4) * 1000003 + i / 4 * 350));
}
static uint64_t k_negative(size_t i, size_t n)
{
    (void)i, (void)n;
    return aip__sort_key_i64((int64_t)(next() % 2001) - 1000);
}
static uint64_t k_one_digit(size_t i, size_t n) { return (void)n, (i * 7919) % 2048 << 22; }

static void test_sort_orders(void)
{
    static const size_t sizes[] = {0, 1, 2, 5, 31, 32, 33, 100, 4096, 100003};
    uint64_t (*const makers[])(size_t, size_t) = {k_sorted, k_reversed, k_dups, k_wide,
                                                  k_times, k_negative, k_one_digit};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
            if (!check(sizes[s], makers[m]))
                fprintf(stderr, "size %zu, maker %zu\n", sizes[s], m);
            ASSERT_TRUE(check(sizes[s], makers[m]));
        }
}

static void test_signed_key_order(void)
{
    ASSERT_TRUE(aip__sort_key_i64(-1) < aip__sort_key_i64(0));
    ASSERT_TRUE(aip__sort_key_i64(INT64_MIN) < aip__sort_key_i64(-1));
    ASSERT_TRUE(aip__sort_key_i64(INT64_MAX) > aip__sort_key_i64(0));
}

typedef struct rec {
    int64_t start, end;
    uint64_t corr;
    char pad[40]; /* a record bigger than the key, as a device task */
    uint32_t original;
} rec;

static int rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return (x->original > y->original) - (x->original < y->original);
}

static int tie(uint64_t a, uint64_t b, const void *ctx)
{
    const rec *x = (const rec *)ctx + a, *y = (const rec *)ctx + b;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static void ties_and_permute(size_t n, int64_t starts)
{
    rec *v = calloc(n, sizeof *v), *r = calloc(n, sizeof *r);
    for (size_t i = 0; i < n; i++) {
        v[i].start = (int64_t)(next() % (uint64_t)starts) - 100; /* equal starts */
        v[i].end = v[i].start + (int64_t)(next() % 5);
        v[i].corr = next() % 3;                     /* full ties too */
        v[i].original = (uint32_t)i;
        r[i] = v[i];
    }
    aip__sort_key *k = malloc(n * sizeof *k);
    for (size_t i = 0; i < n; i++)
        k[i] = (aip__sort_key){aip__sort_key_i64(v[i].start), i};
    ASSERT_EQ(aip__sort_keys(k, n), AIP_OK);
    aip__sort_ties(k, n, tie, v);
    /* out of place: into a new array of n records */
    rec *w = NULL;
    size_t cap = 0;
    ASSERT_EQ(aip__array_grow((void **)&w, &cap, n + 5, sizeof *w), AIP_OK);
    memcpy(w, v, n * sizeof *w);
    ASSERT_EQ(aip__permute_copy((void **)&w, &cap, n, sizeof *w, k), AIP_OK);
    ASSERT_EQ(aip__permute(v, n, sizeof *v, k), AIP_OK);
    qsort(r, n, sizeof *r, rec_cmp); /* stable by the original index */
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(v[i].original, r[i].original);
        ASSERT_EQ(w[i].original, r[i].original);
    }
    ASSERT_TRUE(cap >= n);
    aip__array_free(w);
    /* an identity order leaves the records as they are */
    for (size_t i = 0; i < n; i++)
        k[i] = (aip__sort_key){0, i};
    ASSERT_EQ(aip__permute(v, n, sizeof *v, k), AIP_OK);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(v[i].original, r[i].original);
    free(k);
    free(v);
    free(r);
}

/* runs of ~40 equal starts (sorted by qsort_r) and of ~2 (by insertion) */
static void test_records_ties_and_permute(void)
{
    ties_and_permute(20000, 500);
    ties_and_permute(2000, 1000);
}

/* Calls of 5 threads in interleaved blocks (as chunks bring them), each
 * thread's in order or not, equal starts with correlation ids in either
 * order: derive's order is (thread, start, correlation), stable. */
typedef struct call_ref {
    uint32_t thread;
    int64_t start;
    uint64_t corr;
    size_t original;
} call_ref;

static int call_ref_cmp(const void *a, const void *b)
{
    const call_ref *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->corr != y->corr)
        return x->corr < y->corr ? -1 : 1;
    return (x->original > y->original) - (x->original < y->original);
}

static int calls_case(size_t n, int shuffled_thread)
{
    aip__process p;
    memset(&p, 0, sizeof p);
    if (aip__array_grow((void **)&p.dev_api.v, &p.dev_api.cap, n, sizeof *p.dev_api.v))
        return 0;
    p.dev_api.n = n;
    call_ref *r = calloc(n, sizeof *r);
    int64_t at[5] = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t t = (uint32_t)(i / 37 % 5);
        /* mostly ascending; equal starts now and then; one thread shuffled */
        at[t] += (int64_t)(next() % 3);
        int64_t start = (int)t == shuffled_thread ? (int64_t)(next() % 1000) : at[t];
        p.dev_api.v[i] = (aip__device_call){.start = start, .thread = t,
                                            .correlation = next() % 4, .parent_span = -1};
        p.dev_api.v[i].end = (int64_t)i; /* the original index rides along */
        r[i] = (call_ref){t, start, p.dev_api.v[i].correlation, i};
    }
    aip__model m;
    memset(&m, 0, sizeof m);
    m.procs = &p;
    m.n_procs = 1;
    int ok = aip__device_sort_calls(&m) == AIP_OK;
    qsort(r, n, sizeof *r, call_ref_cmp);
    for (size_t i = 0; ok && i < n; i++)
        ok = p.dev_api.v[i].end == (int64_t)r[i].original;
    aip__array_free(p.dev_api.v);
    free(r);
    return ok;
}

static void test_calls_order(void)
{
    ASSERT_TRUE(calls_case(5000, -1));
    ASSERT_TRUE(calls_case(5000, 2));
    ASSERT_TRUE(calls_case(3, 0));
}

/* Calls of one thread with correlation ids `corr_of(i)`, tasks asking for
 * ids around them: each task's call after derive is the first call (in the
 * derived order) with its id, or none. */
static int link_case(uint64_t (*corr_of)(size_t i), size_t n_calls, size_t n_tasks)
{
    aip__process p;
    memset(&p, 0, sizeof p);
    /* model arrays (derive moves them into new ones when it sorts) */
    if (aip__array_grow((void **)&p.dev_api.v, &p.dev_api.cap, n_calls, sizeof *p.dev_api.v) ||
        aip__array_grow((void **)&p.dev_tasks.v, &p.dev_tasks.cap, n_tasks,
                        sizeof *p.dev_tasks.v))
        return 0;
    p.dev_api.n = n_calls;
    p.dev_tasks.n = n_tasks;
    for (size_t i = 0; i < n_calls; i++)
        p.dev_api.v[i] = (aip__device_call){.start = (int64_t)(next() % 1000000),
                                            .correlation = corr_of(i), .parent_span = -1};
    for (size_t i = 0; i < n_tasks; i++) {
        size_t c = (size_t)(next() % (n_calls + 10));
        p.dev_tasks.v[i] = (aip__device_task){.start = (int64_t)i, .end = (int64_t)i + 1,
                                              .api = -1, .step = -1,
                                              .correlation = c < n_calls ? corr_of(c) + (c % 7 == 0)
                                                                         : 0};
    }
    aip__model m;
    memset(&m, 0, sizeof m);
    m.procs = &p;
    m.n_procs = 1;
    int ok = aip__device_sort_calls(&m) == AIP_OK && aip__device_sort_tasks(&m) == AIP_OK &&
             aip__device_link(&m) == AIP_OK;
    for (size_t i = 0; ok && i < n_tasks; i++) {
        const aip__device_task *t = &p.dev_tasks.v[i];
        int64_t want = -1;
        for (size_t a = 0; t->correlation && a < n_calls && want < 0; a++)
            if (p.dev_api.v[a].correlation == t->correlation)
                want = (int64_t)a;
        ok = t->api == want;
    }
    aip__array_free(p.dev_api.v);
    aip__array_free(p.dev_tasks.v);
    return ok;
}

static uint64_t corr_dense(size_t i) { return 1 + i / 2 * 2; } /* pairs share an id */
static uint64_t corr_sparse(size_t i) { return 1000000007ull * (i / 2 + 1) << 8; }

static void test_link_by_correlation(void)
{
    ASSERT_TRUE(link_case(corr_dense, 5000, 7000));
    ASSERT_TRUE(link_case(corr_sparse, 5000, 7000));
    ASSERT_TRUE(link_case(corr_dense, 1, 3));
}

TEST_MAIN(TEST_CASE(test_sort_orders), TEST_CASE(test_signed_key_order),
          TEST_CASE(test_records_ties_and_permute), TEST_CASE(test_calls_order),
          TEST_CASE(test_link_by_correlation))
