/*
 * bench_median.h — the median of a bench's rounds: what the benches print
 * beside their anchor, since one round on a shared machine is noise.
 */
#ifndef AIP_BENCH_MEDIAN_H
#define AIP_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median() : of v[0..n), n >= 1; sorts v in place. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
