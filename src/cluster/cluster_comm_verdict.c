/*
 * cluster_comm_verdict.c — the per-rank side of the communication pass of
 * `aiprof cluster` (cluster_comm.h): what the verdict says of the clocks
 * (each rank's host, r->host, is read with its metadata: cluster_meta.c)
 * and of each rank's wait, transit and idle time.
 */
#include "cluster_comm.h"
#include "fs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- verdict -------------------------------------------------------------- */

/* Whether used rank r lacks communication data because of its level
 * (1), for no known reason (2: it recorded none, or its level is unknown),
 * or has it (0). */
static int why_no_comm(const aip__rank_dir *r)
{
    if (r->problem[0] || r->comm || r->matrix)
        return 0;
    return r->level >= 0 && r->level < AIP_LEVEL1 ? 1 : 2;
}

/* The ranks with why_no_comm() == `kind`, as "0-3, 5" (c->r is in rank
 * order); @return how many. */
static size_t rank_ranges(const aip__cluster *c, int kind, char *line, size_t cap)
{
    size_t n = 0, count = 0, len = 0;
    line[0] = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (why_no_comm(&c->r[i]) != kind)
            continue;
        long first = c->r[i].rank, last = first;
        while (i + 1 < c->n && why_no_comm(&c->r[i + 1]) == kind && c->r[i + 1].rank == last + 1)
            last = c->r[++i].rank;
        count += (size_t)(last - first + 1);
        if (len + 64 >= cap) {
            if (!strstr(line, "..."))
                snprintf(line + len, cap - len, ", ...");
            continue;
        }
        len += (size_t)(first == last
                            ? snprintf(line + len, cap - len, "%s%ld", n ? ", " : "", first)
                            : snprintf(line + len, cap - len, "%s%ld-%ld", n ? ", " : "", first,
                                       last));
        n++;
    }
    return count;
}

/* Which ranks have no communication data and why: below Level1 the seed
 * writes no communication.json (torch_npu's Level0, aiprof's default
 * outside a distributed launch), which is not a failure of the ranks but
 * of the collection's settings; ranks at Level1 without any are named when
 * others have some. */
static void absent_verdict(const aip__cluster *c, int any)
{
    char line[1024];
    size_t n = rank_ranges(c, 1, line, sizeof line);
    if (n)
        aip__cluster_say(c,
                         "no communication data from rank%s %s: profiled at profiler_level "
                         "Level0 (or Level_none), and communication.json and "
                         "communication_matrix.json are written at Level1 and Level2 only (the "
                         "seed); profile again with aiprof run --profiler-level Level1 or "
                         "experimental_config profiler_level=Level1\n",
                         n > 1 ? "s" : "", line);
    n = any ? rank_ranges(c, 2, line, sizeof line) : 0;
    if (n)
        aip__cluster_say(c,
                         "no communication data from rank%s %s: no communication.json (no "
                         "communication was recorded)\n",
                         n > 1 ? "s" : "", line);
}

void aip__cluster_comm_verdict(const aip__cluster *c)
{
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    int any = 0, other = 0;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0] || !r->comm)
            continue;
        any = 1;
        other |= r->clock_samples != -1;
    }
    absent_verdict(c, any);
    if (!any || !ref)
        return;
    if (!other)
        aip__cluster_say(c, "clocks: every rank on rank %ld's host (%s): one clock, offset 0\n",
                         ref->rank, ref->host ? ref->host : "?");
    for (size_t i = 0; other && i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0] || r->clock_samples == -1)
            continue;
        if (r->clock_samples > 0)
            aip__cluster_say(c,
                             "clock: rank %ld (host %s) runs %+.3f us from rank %ld's clock "
                             "(median over %ld collective ends; error about the collectives' "
                             "release skew)\n",
                             r->rank, r->host ? r->host : "unknown", r->clock_offset_us,
                             ref->rank, r->clock_samples);
        else
            aip__cluster_say(c,
                             "clock: rank %ld (host %s) could not be aligned with rank %ld's: "
                             "its collectives are not split\n",
                             r->rank, r->host ? r->host : "unknown", ref->rank);
    }
    aip__cluster_say(c, "rank  collectives split  not split  Wait(ms)  Transit(ms)  Idle(ms)  "
                        "(wait for the last arrival, transit, idle after the first release)\n");
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0] || !r->comm)
            continue;
        size_t split, unsplit;
        double w, t, idle;
        aip__cluster_rank_split_sums(r, &split, &unsplit, &w, &t, &idle);
        aip__cluster_say(c, "%4ld  %17zu  %9zu  %8.3f  %11.3f  %8.3f\n", r->rank, split, unsplit,
                         w, t, idle);
    }
}

void aip__cluster_rank_split_sums(const aip__rank_dir *r, size_t *split, size_t *unsplit,
                                  double *wait_ms, double *transit_ms, double *idle_ms)
{
    *split = *unsplit = 0;
    *wait_ms = *transit_ms = *idle_ms = 0;
    const char *step, *key;
    json_t *sv, *ov;
    json_object_foreach(r->comm, step, sv)
        json_object_foreach(json_object_get(sv, "collective"), key, ov) {
            json_t *ti = json_object_get(ov, "Communication Time Info");
            if (!strncmp(key, "Total", 5) || !json_is_object(ov))
                continue;
            if (!json_is_object(ti) || json_object_get(ti, AIP__CC_NOTE)) {
                (*unsplit)++;
                continue;
            }
            (*split)++;
            *wait_ms += json_number_value(json_object_get(ti, "Wait Time(ms)"));
            *transit_ms += json_number_value(json_object_get(ti, "Transit Time(ms)"));
            *idle_ms += json_number_value(json_object_get(ti, "Idle Time(ms)"));
        }
}
