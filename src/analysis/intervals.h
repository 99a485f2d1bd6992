/*
 * intervals.h — time intervals as pairs v[2k] (start), v[2k + 1] (end) in
 * one int64_t array: the growable vector the step traces and the overlap
 * analysis build their unions in (host_compute.c, device_sections.c), the
 * in-place union of any such array (comm_derive.c), the clipped length
 * of a union and of two unions' common part (steps.c, device_steps.c).  Touching pairs merge: [1, 3) and
 * [3, 5) are one [1, 5).
 */
#ifndef AIP_ANALYSIS_INTERVALS_H
#define AIP_ANALYSIS_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

typedef struct aip__intervals {
    int64_t *v;   /* pairs; free() it */
    size_t n;     /* pairs held */
    size_t cap;   /* pairs room */
    int unsorted; /* aip__intervals_push_sorted() met a pair out of order */
} aip__intervals;

/* aip__intervals_push() : append [a, b) when b > a (empty pairs are
 * nothing to count).  @return 0, or -1 when out of memory (x unchanged). */
int aip__intervals_push(aip__intervals *x, int64_t a, int64_t b);

/* aip__intervals_push_sorted() : for pairs that come sorted by start:
 * [a, b) merges into the last pair at or after index `from` when it starts
 * inside or at its end, nothing to sort.  A pair that starts before the
 * last one is appended and sets x->unsorted, for aip__intervals_merge().
 * @return 0, or -1 when out of memory. */
int aip__intervals_push_sorted(aip__intervals *x, size_t from, int64_t a, int64_t b);

/* aip__intervals_merge() : the pairs from index `from` on become their
 * union (sorted, disjoint, in place); clears x->unsorted. */
void aip__intervals_merge(aip__intervals *x, size_t from);

/* aip__intervals_union() : the n pairs of v become their union in place,
 * sorted by start; @return the number of pairs left.  Pairs are taken as
 * they are (an empty or reversed pair is not dropped). */
size_t aip__intervals_union(int64_t *v, size_t n);

/* aip__intervals_sort() : the n pairs of v sorted by start, then end. */
void aip__intervals_sort(int64_t *v, size_t n);

/* aip__intervals_clip() : length of the sorted disjoint pairs iv (n pairs)
 * inside [a, b]; *first (when not NULL and still < 0) the earliest such
 * time. */
int64_t aip__intervals_clip(const int64_t *iv, size_t n, int64_t a, int64_t b, int64_t *first);

/* aip__intervals_both() : length of what both sorted disjoint lists x
 * and y (nx, ny pairs) cover inside [a, b]. */
int64_t aip__intervals_both(const int64_t *x, size_t nx, const int64_t *y, size_t ny, int64_t a,
                            int64_t b);

#endif
