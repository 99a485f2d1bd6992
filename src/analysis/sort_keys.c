/*
 * sort_keys.c — the stable integer sort and the one-pass permutation of
 * sort_keys.h, used by derive's device passes.
 *
 * The sort is an LSD radix sort on 11-bit digits of (key − smallest key):
 * only the digits the keys' range spans are passed over (a profile's ns
 * timestamps span 2^30–2^40: three or four passes), and a pass whose
 * digit is the same for every key is skipped.  Input that is already in
 * order (the common case for one thread's records) costs one check.
 * Records are best moved out of place (aip__permute_copy) where the
 * memory for a second array is there.
 */
#include "sort_keys.h"
#include "error.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)
#define SMALL 32 /* below this, insertion sort */

aip_status aip__sort_keys(aip__sort_key *v, size_t n)
{
    size_t i = 1;
    while (i < n && v[i - 1].key <= v[i].key)
        i++;
    if (i >= n)
        return AIP_OK;
    if (n < SMALL) {
        for (i = 1; i < n; i++) { /* stable: moves past strictly greater keys only */
            aip__sort_key x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1].key > x.key; j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return AIP_OK;
    }
    uint64_t lo = v[0].key, hi = v[0].key;
    for (i = 1; i < n; i++) {
        if (v[i].key < lo)
            lo = v[i].key;
        if (v[i].key > hi)
            hi = v[i].key;
    }
    uint64_t range = hi - lo;
    aip__sort_key *tmp = malloc(n * sizeof *tmp);
    size_t *count = malloc(BUCKETS * sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return aip__fail(AIP_ERR_NOMEM, "no memory to sort %zu records", n);
    }
    aip__sort_key *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 64 && (range >> shift); shift += DIGIT_BITS) {
        memset(count, 0, BUCKETS * sizeof *count);
        for (i = 0; i < n; i++)
            count[((src[i].key - lo) >> shift) & (BUCKETS - 1)]++;
        size_t d0 = ((src[0].key - lo) >> shift) & (BUCKETS - 1);
        if (count[d0] == n)
            continue; /* every key has this digit: the order stays */
        size_t at = 0;
        for (unsigned b = 0; b < BUCKETS; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (i = 0; i < n; i++)
            dst[count[((src[i].key - lo) >> shift) & (BUCKETS - 1)]++] = src[i];
        aip__sort_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(tmp);
    free(count);
    return AIP_OK;
}

typedef struct tie_ctx {
    int (*cmp)(uint64_t a, uint64_t b, const void *ctx);
    const void *ctx;
} tie_ctx;

static int cmp_tie(const void *a, const void *b, void *arg)
{
    const tie_ctx *t = arg;
    const aip__sort_key *x = a, *y = b;
    int c = t->cmp(x->idx, y->idx, t->ctx);
    if (c)
        return c;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

void aip__sort_ties(aip__sort_key *v, size_t n,
                    int (*cmp)(uint64_t a, uint64_t b, const void *ctx), const void *ctx)
{
    tie_ctx t = {cmp, ctx};
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && v[j].key == v[i].key)
            j++;
        if (j - i > 16) {
            qsort_r(v + i, j - i, sizeof *v, cmp_tie, &t);
        } else {
            for (size_t a = i + 1; a < j; a++) { /* a few: insertion */
                aip__sort_key x = v[a];
                size_t b = a;
                for (; b > i && cmp_tie(&v[b - 1], &x, &t) > 0; b--)
                    v[b] = v[b - 1];
                v[b] = x;
            }
        }
        i = j;
    }
}

aip_status aip__permute(void *base, size_t n, size_t size, const aip__sort_key *order)
{
    size_t i = 0;
    while (i < n && order[i].idx == i)
        i++;
    if (i == n)
        return AIP_OK; /* already in order */
    uint8_t *done = calloc((n + 7) / 8, 1);
    unsigned char *hold = malloc(size);
    if (!done || !hold) {
        free(done);
        free(hold);
        return aip__fail(AIP_ERR_NOMEM, "no memory to sort %zu records", n);
    }
    unsigned char *b = base;
    for (; i < n; i++) {
        if (done[i / 8] >> (i % 8) & 1 || order[i].idx == i)
            continue;
        /* the cycle through i: position j takes the record from order[j].idx */
        memcpy(hold, b + i * size, size);
        size_t j = i;
        for (;;) {
            size_t from = (size_t)order[j].idx;
            done[j / 8] |= (uint8_t)(1u << (j % 8));
            if (from == i) {
                memcpy(b + j * size, hold, size);
                break;
            }
            memcpy(b + j * size, b + from * size, size);
            j = from;
        }
    }
    free(done);
    free(hold);
    return AIP_OK;
}

aip_status aip__permute_copy(void **base, size_t *cap, size_t n, size_t size,
                             const aip__sort_key *order)
{
    size_t i = 0;
    while (i < n && order[i].idx == i)
        i++;
    if (i == n)
        return AIP_OK;
    void *fresh = NULL;
    size_t fresh_cap = 0;
    if (aip__array_grow(&fresh, &fresh_cap, n, size))
        return aip__permute(*base, n, size, order);
    unsigned char *dst = fresh;
    const unsigned char *src = *base;
    memcpy(dst, src, i * size); /* the part already in place */
    for (; i < n; i++) {
        if (i + 8 < n)
            __builtin_prefetch(src + order[i + 8].idx * size);
        memcpy(dst + i * size, src + order[i].idx * size, size);
    }
    aip__array_free(*base);
    *base = dst;
    *cap = fresh_cap;
    return AIP_OK;
}
