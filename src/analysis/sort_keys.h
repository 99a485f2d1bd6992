/*
 * sort_keys.h — sorting big record arrays of the model by integer keys
 * (sort_keys.c), for derive's device passes: millions of tasks and calls
 * sorted with qsort cost ~1 µs each (comparisons through a function
 * pointer, and glibc sorts records over 32 bytes indirectly anyway).
 *
 * The caller fills one aip__sort_key per record (its key, its index),
 * sorts them (stable LSD radix sort: a few passes over 16-byte pairs), and
 * moves the records into that order once (aip__permute).  Stable sorts
 * compose: sorting by a minor key and then by a major one gives the order
 * of both, as qsort's comparison of both would — glibc's qsort is a stable
 * merge sort, so the orders, ties included, are the ones it gave.
 */
#ifndef AIP_SORT_KEYS_H
#define AIP_SORT_KEYS_H

#include "aiprof.h"

#include <stddef.h>
#include <stdint.h>

typedef struct aip__sort_key {
    uint64_t key;
    uint64_t idx;             /* the record's index before sorting */
} aip__sort_key;

/* The key of a signed value, in the same order. */
static inline uint64_t aip__sort_key_i64(int64_t v) { return (uint64_t)v ^ (1ull << 63); }

/* aip__sort_keys() : v[0..n) in ascending key order, stable (equal keys
 * keep their order).  @return AIP_ERR_NOMEM (named) or AIP_OK; v is
 * unchanged on failure. */
aip_status aip__sort_keys(aip__sort_key *v, size_t n);

/* aip__sort_ties() : every run of equal keys in sorted v (length > 1)
 * sorted by cmp(a, b, ctx) on the records' indices, ties by index, so a
 * minor order that is no integer key applies within the runs. */
void aip__sort_ties(aip__sort_key *v, size_t n,
                    int (*cmp)(uint64_t a, uint64_t b, const void *ctx), const void *ctx);

/* aip__permute() : records base[0..n) of `size` bytes moved so that
 * record i becomes the one that was at order[i].idx (in place, by cycles).
 * @return AIP_ERR_NOMEM (named) or AIP_OK; base is unchanged on failure. */
aip_status aip__permute(void *base, size_t n, size_t size, const aip__sort_key *order);

/* aip__permute_copy() : as aip__permute, into a new array: *base, an
 * array of aip__array_grow() with *cap records, replaced by a new one of
 * n records in order (*cap set to its capacity), the old one freed.  Records are read in any order but written in
 * sequence, so the CPU fetches many at once; the in-place cycles chase
 * one record after another, a cache miss each, one at a time (5-10 times
 * slower on arrays bigger than the cache).  Without memory for the copy
 * it permutes in place.  @return AIP_ERR_NOMEM (named) or AIP_OK. */
aip_status aip__permute_copy(void **base, size_t *cap, size_t n, size_t size,
                             const aip__sort_key *order);

#endif
