/*
 * cluster_check.c — which of the rank directories that `aiprof cluster`
 * read belong to one job: a rank found twice keeps its newer run, and a
 * run whose collectives do not overlap the others' in time is another
 * job's.  Both get a problem (cluster.h) and are named, not used.
 */
#include "cluster.h"

#include <math.h>
#include <stdlib.h>

/* A rank found twice: keep the newer run ({ts}), as msprof-analyze does. */
void aip__cluster_drop_duplicates(aip__cluster *c)
{
    for (size_t i = 0; i < c->n; i++) {
        aip__rank_dir *a = &c->r[i];
        if (a->problem[0])
            continue;
        for (size_t j = i + 1; j < c->n && c->r[j].rank == a->rank; j++) {
            aip__rank_dir *b = &c->r[j];
            if (b->problem[0])
                continue;
            aip__rank_dir *old = b->ts > a->ts ? a : b, *kept = old == a ? b : a;
            aip__cluster_problem(old,
                                 "rank %ld also in %s (a newer run, kept): another job's or an "
                                 "earlier run's directory",
                                 old->rank, kept->path);
            if (old == a)
                break;
        }
    }
}

int aip__cluster_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A run whose collectives do not overlap the median rank's span in time
 * is not one job with the others: every rank of a job takes part in the
 * same collectives at the same times. */
void aip__cluster_drop_other_jobs(aip__cluster *c)
{
    double *firsts = malloc((c->n ? c->n : 1) * sizeof *firsts);
    if (!firsts)
        return;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!c->r[i].problem[0] && !isnan(c->r[i].first_us))
            firsts[n++] = c->r[i].first_us;
    if (n < 2) {
        free(firsts);
        return;
    }
    qsort(firsts, n, sizeof *firsts, aip__cluster_cmp_double);
    double med = firsts[(n - 1) / 2];
    const aip__rank_dir *ref = NULL;
    for (size_t i = 0; i < c->n && !ref; i++)
        if (!c->r[i].problem[0] && c->r[i].first_us == med)
            ref = &c->r[i];
    for (size_t i = 0; ref && i < c->n; i++) {
        aip__rank_dir *r = &c->r[i];
        if (r->problem[0] || isnan(r->first_us) || r == ref)
            continue;
        if (r->last_us < ref->first_us || r->first_us > ref->last_us)
            aip__cluster_problem(r,
                                 "from another job: its collectives ran %.0f..%.0f us, the others' "
                                 "%.0f..%.0f us (no overlap)",
                                 r->first_us, r->last_us, ref->first_us, ref->last_us);
    }
    free(firsts);
}
