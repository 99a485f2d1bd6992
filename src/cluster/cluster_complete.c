/*
 * cluster_complete.c — does `aiprof cluster` see the whole job?  A rank
 * killed before it wrote anything, one killed mid-run (SIGKILL, OOM,
 * MPI_Abort), or a folder of ranks the user cannot read must not pass as a
 * smaller healthy job: the verdict, the HTML report and the exit status
 * (3, cli/cluster_cmd.c) name them.  docs/CLUSTER.md "Missing and
 * truncated ranks" is the rule, in short:
 *
 * - expected: ranks 0 .. N-1, N the largest of the world_size of the
 *   distributed_args the layout accepted, every member of a communication
 *   group (the groups' files and parallel_group_info's global_ranks), and
 *   the largest rank used + 1 (ranks are numbered from 0 without gaps);
 * - missing: an expected rank with no result directory at all (a directory
 *   that is there but not used is named as such, not as missing);
 * - truncated: a used rank whose data ends before the others' — fewer
 *   step rows than the rank with the most, or fewer collectives of a
 *   collective group than another member (every member of a group takes
 *   part in each of its collectives); where its last collective starts
 *   against the latest rank's (clocks aligned where cluster_comm.c could)
 *   says how early;
 * - unreadable: a rank directory or a folder the search could not list
 *   (its ranks are then missing too).
 * Pure computation on the loaded summaries; no I/O.
 */
#include "cluster.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS (1L << 24) /* as world_size's bound (cluster_parallel.c) */

static long group_max_rank(const aip__cluster *c)
{
    long max = -1;
    size_t i, k;
    json_t *g, *v;
    json_array_foreach(c->par.groups, i, g)
        json_array_foreach(json_object_get(g, "rank_set"), k, v)
            if (json_is_integer(v) && json_integer_value(v) > max &&
                json_integer_value(v) < MAX_RANKS)
                max = (long)json_integer_value(v);
    return max;
}

/* g->expected and g->source. */
static void expected(const aip__cluster *c, aip__cluster_gaps *g)
{
    long used_max = -1, grp = group_max_rank(c), world = c->par.ptd ? (long)c->par.n_ptd : 0;
    for (size_t i = 0; i < c->n; i++)
        if (!c->r[i].problem[0] && c->r[i].rank > used_max && c->r[i].rank < MAX_RANKS)
            used_max = c->r[i].rank; /* a rank number is any digits a file name holds */
    g->expected = used_max + 1;
    snprintf(g->source, sizeof g->source, "rank %ld found", used_max);
    if (grp + 1 > g->expected) {
        g->expected = grp + 1;
        snprintf(g->source, sizeof g->source, "rank %ld in a communication group", grp);
    }
    if (world > g->expected) {
        g->expected = world;
        snprintf(g->source, sizeof g->source, "world_size %ld of distributed_args", world);
    }
}

/* The expected ranks without any directory, as ranges (c->r is sorted by
 * rank; a rank's number may be anything a file said: no per-rank array). */
static int missing(const aip__cluster *c, aip__cluster_gaps *g)
{
    long next = 0; /* the first rank not yet accounted for */
    for (size_t i = 0; i <= c->n && next < g->expected; i++) {
        long have = i < c->n && c->r[i].rank < g->expected ? c->r[i].rank : g->expected;
        if (have < next)
            continue;
        long last = have - 1;
        if (last >= next) {
            long(*v)[2] = realloc(g->missing, (g->n_ranges + 1) * sizeof *v);
            if (!v)
                return -1;
            g->missing = v;
            v[g->n_ranges][0] = next;
            v[g->n_ranges][1] = last;
            g->n_ranges++;
            g->n_missing += (size_t)(last - next + 1);
        }
        next = have + 1;
    }
    return 0;
}

/* Collectives per collective group in a rank's communication.json. */
static json_t *coll_counts(const aip__rank_dir *r)
{
    json_t *n = json_object();
    const char *step, *op;
    json_t *sv, *ov;
    json_object_foreach(r->comm, step, sv)
        json_object_foreach(json_object_get(sv, "collective"), op, ov) {
            if (!strncmp(op, "Total", 5) || !n)
                continue;
            const char *at = strrchr(op, '@');
            const char *grp = at ? at + 1 : op;
            json_t *k = json_object_get(n, grp);
            if (json_object_set_new(n, grp, json_integer(k ? json_integer_value(k) + 1 : 1))) {
                json_decref(n);
                n = NULL;
            }
        }
    return n;
}

static double aligned_last(const aip__rank_dir *r)
{
    return isfinite(r->clock_offset_us) ? r->last_us - r->clock_offset_us : r->last_us;
}

/* Why r's data ends early, or NULL; *nomem on failure. */
static char *truncated(const aip__cluster *c, const aip__rank_dir *r, const aip__rank_dir *longest,
                       json_t *counts, json_t *most, double latest, int *nomem)
{
    char why[512] = "";
    size_t n = 0;
    if (r->n_rows < longest->n_rows)
        n += (size_t)snprintf(why, sizeof why, "%zu of the %zu steps of rank %ld (ends at step %s)",
                              r->n_rows, longest->n_rows, longest->rank,
                              r->n_rows ? r->rows[r->n_rows - 1].step : "none");
    const char *grp;
    json_t *mv;
    size_t groups = 0;
    json_object_foreach(most, grp, mv) {
        json_t *mine = json_object_get(counts, grp);
        if (!mine) /* not a member of that group */
            continue;
        if (json_integer_value(mine) >= json_integer_value(mv))
            continue;
        if (!groups++ && n < sizeof why)
            n += (size_t)snprintf(why + n, sizeof why - n,
                                  "%s%lld of the %lld collectives of group %s", n ? "; " : "",
                                  (long long)json_integer_value(mine),
                                  (long long)json_integer_value(mv), grp);
    }
    if (groups > 1 && n < sizeof why)
        n += (size_t)snprintf(why + n, sizeof why - n, " (and %zu other groups)", groups - 1);
    if (!n)
        return NULL;
    if (isfinite(latest) && isfinite(r->last_us) && n < sizeof why)
        snprintf(why + n, sizeof why - n,
                 "; its last collective starts %.3f ms before the latest rank's",
                 (latest - aligned_last(r)) / 1e3);
    (void)c;
    char *out = strdup(why);
    *nomem = !out;
    return out;
}

static int find_truncated(const aip__cluster *c, aip__cluster_gaps *g)
{
    const aip__rank_dir *longest = NULL;
    double latest = NAN;
    json_t *most = json_object(), **counts = calloc(c->n + 1, sizeof *counts);
    int nomem = !most || !counts;
    for (size_t i = 0; !nomem && i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        if (!longest || r->n_rows > longest->n_rows)
            longest = r;
        if (isfinite(r->last_us) && !(aligned_last(r) <= latest))
            latest = aligned_last(r);
        if (!(counts[i] = coll_counts(r))) {
            nomem = 1;
            break;
        }
        const char *grp;
        json_t *v;
        json_object_foreach(counts[i], grp, v) {
            json_t *m = json_object_get(most, grp);
            if (!m || json_integer_value(v) > json_integer_value(m))
                nomem |= json_object_set(most, grp, v) != 0;
        }
    }
    for (size_t i = 0; !nomem && longest && i < c->n; i++) {
        if (c->r[i].problem[0])
            continue;
        g->truncated[i] = truncated(c, &c->r[i], longest, counts[i], most, latest, &nomem);
        g->n_truncated += g->truncated[i] != NULL;
    }
    for (size_t i = 0; counts && i < c->n; i++)
        json_decref(counts[i]);
    free(counts);
    json_decref(most);
    return nomem ? -1 : 0;
}

aip_status aip__cluster_gaps_build(aip__cluster *c)
{
    aip__cluster_gaps *g = &c->gaps;
    g->n_unreadable = c->n_unreadable;
    for (size_t i = 0; i < c->n; i++)
        g->n_unreadable += c->r[i].unreadable != 0;
    expected(c, g);
    if (!(g->truncated = calloc(c->n + 1, sizeof *g->truncated)) || missing(c, g) ||
        find_truncated(c, g))
        return aip__fail(AIP_ERR_NOMEM, "out of memory");
    return AIP_OK;
}

size_t aip__cluster_incomplete(const aip__cluster *c)
{
    return c->gaps.n_missing + c->gaps.n_truncated + c->gaps.n_unreadable;
}

void aip__cluster_gaps_verdict(const aip__cluster *c)
{
    const aip__cluster_gaps *g = &c->gaps;
    if (!aip__cluster_incomplete(c)) {
        aip__cluster_say(c, "job complete: %ld of %ld ranks expected (%s), none truncated\n",
                         g->expected, g->expected, g->source);
        return;
    }
    aip__cluster_say(c,
                     "job incomplete: %ld ranks expected (%s); %zu missing, %zu truncated, "
                     "%zu directories unreadable\n",
                     g->expected, g->source, g->n_missing, g->n_truncated, g->n_unreadable);
    if (g->n_ranges) {
        char line[1024];
        size_t n = 0;
        for (size_t k = 0; k < g->n_ranges && n < sizeof line - 64; k++) {
            if (g->missing[k][0] == g->missing[k][1])
                n += (size_t)snprintf(line + n, sizeof line - n, "%s%ld", k ? ", " : "",
                                      g->missing[k][0]);
            else
                n += (size_t)snprintf(line + n, sizeof line - n, "%s%ld-%ld", k ? ", " : "",
                                      g->missing[k][0], g->missing[k][1]);
            if (k + 1 < g->n_ranges && n >= sizeof line - 64)
                snprintf(line + n, sizeof line - n, ", ...");
        }
        aip__cluster_say(c, "missing rank%s: %s (no result directory found)\n",
                         g->n_missing > 1 ? "s" : "", line);
    }
    for (size_t i = 0; i < c->n; i++)
        if (g->truncated[i])
            aip__cluster_say(c, "truncated rank: %ld — %s\n", c->r[i].rank, g->truncated[i]);
    for (size_t i = 0; i < c->n_unreadable; i++)
        aip__cluster_say(c, "unreadable folder: %s (the ranks in it are missing)\n",
                         c->unreadable[i]);
    for (size_t i = 0; i < c->n; i++)
        if (c->r[i].unreadable)
            aip__cluster_say(c, "unreadable rank directory: %s: %s\n", c->r[i].path,
                             c->r[i].problem);
}

void aip__cluster_gaps_free(aip__cluster *c)
{
    aip__cluster_gaps *g = &c->gaps;
    for (size_t i = 0; g->truncated && i < c->n; i++)
        free(g->truncated[i]);
    free(g->truncated);
    free(g->missing);
    memset(g, 0, sizeof *g);
}
