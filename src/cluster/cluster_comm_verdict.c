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
