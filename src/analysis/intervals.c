/*
 * intervals.c — the interval vector and unions of intervals.h: one
 * implementation of "sort by start, merge what touches" for the host and
 * device step traces, the overlap analysis and the communication union.
 */
#include "intervals.h"

#include <stdlib.h>
#include <string.h>

int aip__intervals_push(aip__intervals *x, int64_t a, int64_t b)
{
    if (b <= a)
        return 0;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        int64_t *v = realloc(x->v, 2 * cap * sizeof *v);
        if (!v)
            return -1;
        x->v = v;
        x->cap = cap;
    }
    x->v[2 * x->n] = a;
    x->v[2 * x->n + 1] = b;
    x->n++;
    return 0;
}

int aip__intervals_push_sorted(aip__intervals *x, size_t from, int64_t a, int64_t b)
{
    if (x->n > from && a < x->v[2 * x->n - 2])
        x->unsorted = 1;
    else if (x->n > from && a <= x->v[2 * x->n - 1]) {
        if (b > x->v[2 * x->n - 1])
            x->v[2 * x->n - 1] = b;
        return 0;
    }
    return aip__intervals_push(x, a, b);
}

/* By start, then end: for valid pairs the union is the same in any order
 * of equal starts, and a reversed pair (bad input) is kept the same way
 * every time. */
static int cmp_pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Pairs [0, na) of a then [0, nb) of b, merged by cmp_pair into out. */
static void merge_runs(const int64_t *a, size_t na, const int64_t *b, size_t nb, int64_t *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        const int64_t *x = cmp_pair(b + 2 * j, a + 2 * i) < 0 ? b + 2 * j++ : a + 2 * i++;
        out[2 * k] = x[0];
        out[2 * k + 1] = x[1];
        k++;
    }
    memcpy(out + 2 * k, a + 2 * i, (na - i) * 2 * sizeof *a);
    k += na - i;
    memcpy(out + 2 * k, b + 2 * j, (nb - j) * 2 * sizeof *b);
}

/* The usual input is a few sorted runs, one per thread (host_compute.c
 * appends each thread's sorted union): merging the runs, pairwise, costs
 * n log2(runs) moves where qsort costs n log2(n) calls of its comparator,
 * the analysis' largest serial cost on a big profile.  Many short runs
 * (no order to use) or no memory for the buffer: qsort.  cmp_pair is a
 * total order on the values and equal pairs are the same values, so both
 * ways give the same array. */
#define MAX_RUNS 64

void aip__intervals_sort(int64_t *v, size_t n)
{
    size_t at[MAX_RUNS + 1], runs = 0;
    at[runs++] = 0;
    for (size_t i = 1; i < n && runs <= MAX_RUNS; i++)
        if (cmp_pair(v + 2 * i - 2, v + 2 * i) > 0)
            at[runs++] = i;
    if (n < 2 || runs == 1)
        return;
    int64_t *tmp = runs <= MAX_RUNS ? malloc(n * 2 * sizeof *v) : NULL;
    if (!tmp) {
        qsort(v, n, 2 * sizeof *v, cmp_pair);
        return;
    }
    at[runs] = n;
    int64_t *src = v, *dst = tmp;
    while (runs > 1) {
        size_t r = 0, k;
        for (k = 0; k + 1 < runs; k += 2) {
            merge_runs(src + 2 * at[k], at[k + 1] - at[k], src + 2 * at[k + 1],
                       at[k + 2] - at[k + 1], dst + 2 * at[k]);
            at[r++] = at[k];
        }
        if (k < runs) { /* an odd run out: carried over as it is */
            memcpy(dst + 2 * at[k], src + 2 * at[k], (at[k + 1] - at[k]) * 2 * sizeof *v);
            at[r++] = at[k];
        }
        at[r] = n;
        runs = r;
        int64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != v)
        memcpy(v, src, n * 2 * sizeof *v);
    free(tmp);
}

size_t aip__intervals_union(int64_t *v, size_t n)
{
    aip__intervals_sort(v, n);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && v[2 * i] <= v[2 * u - 1]) {
            if (v[2 * i + 1] > v[2 * u - 1])
                v[2 * u - 1] = v[2 * i + 1];
        } else {
            v[2 * u] = v[2 * i];
            v[2 * u + 1] = v[2 * i + 1];
            u++;
        }
    }
    return u;
}

void aip__intervals_merge(aip__intervals *x, size_t from)
{
    if (x->n > from)
        x->n = from + aip__intervals_union(x->v + 2 * from, x->n - from);
    x->unsorted = 0;
}

/* The first of the sorted disjoint pairs iv that ends after t. */
static size_t first_ending_after(const int64_t *iv, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (iv[2 * mid + 1] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int64_t aip__intervals_clip(const int64_t *iv, size_t n, int64_t a, int64_t b, int64_t *first)
{
    int64_t sum = 0;
    for (size_t i = first_ending_after(iv, n, a); i < n && iv[2 * i] < b; i++) {
        int64_t x = iv[2 * i] > a ? iv[2 * i] : a, y = iv[2 * i + 1] < b ? iv[2 * i + 1] : b;
        if (y > x) {
            if (first && *first < 0)
                *first = x;
            sum += y - x;
        }
    }
    return sum;
}

int64_t aip__intervals_both(const int64_t *x, size_t nx, const int64_t *y, size_t ny, int64_t a,
                            int64_t b)
{
    int64_t sum = 0;
    for (size_t i = first_ending_after(y, ny, a); i < ny && y[2 * i] < b; i++) {
        int64_t lo = y[2 * i] > a ? y[2 * i] : a;
        int64_t hi = y[2 * i + 1] < b ? y[2 * i + 1] : b;
        if (hi > lo)
            sum += aip__intervals_clip(x, nx, lo, hi, NULL);
    }
    return sum;
}
