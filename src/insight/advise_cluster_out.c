/*
 * advise_cluster_out.c — `aiprof advise` on several directories written
 * out (advise_cluster.c builds it): the directories with their rank, steps
 * and what kept one out of the cross-rank rules, then every finding in one
 * ranked list, each saying whose it is (the job's, or a rank's and its
 * directory).  Text for a terminal (recorded names and paths with control
 * bytes neutralised), JSON with every string escaped (docs/ADVISE.md
 * "Several directories").
 */
#include "insight.h"
#include "summary.h"

#include <stdio.h>
#include <string.h>

/* "job", or "rank N: DIR" / "DIR" (no rank). */
static void whose(const aip__advise_job *j, size_t who, char *buf, size_t cap)
{
    if (who == AIP_ADVISE_JOB) {
        snprintf(buf, cap, "job");
        return;
    }
    const aip__advise_rank *r = &j->ranks[who];
    if (r->rank >= 0)
        snprintf(buf, cap, "rank %ld: %s", r->rank, r->dir);
    else
        snprintf(buf, cap, "%s", r->dir);
}

/* Where a finding's places are measured from: its rank's profile, the
 * first directory's for the job's. */
static int64_t origin(const aip__advise_job *j, size_t who)
{
    if (who != AIP_ADVISE_JOB)
        return j->ranks[who].first_ns;
    for (size_t i = 0; i < j->n_ranks; i++)
        if (j->ranks[i].first_ns)
            return j->ranks[i].first_ns;
    return 0;
}

void aip__advise_job_text(const aip__advise_job *j, aip__out *o)
{
    aip__out_printf(o, "aiprof advise: %zu result director%s; %zu rank%s judged across "
                    "(median step %.3f ms), %zu slow\n", j->n_ranks, j->n_ranks == 1 ? "y" : "ies",
                    j->used, j->used == 1 ? "" : "s", j->median_step_ns / 1e6, j->n_slow);
    for (size_t i = 0; i < j->n_ranks; i++) {
        const aip__advise_rank *r = &j->ranks[i];
        if (r->rank >= 0)
            aip__out_printf(o, "  rank %4ld  ", r->rank);
        else
            AIP_OUT_LIT(o, "  rank    -  ");
        aip__summary_put_term(o, r->dir, strlen(r->dir), 300);
        if (r->error[0]) {
            AIP_OUT_LIT(o, ": not advised: ");
            aip__summary_put_term(o, r->error, strlen(r->error), sizeof r->error);
        } else {
            aip__out_printf(o, ": %zu %s, mean %.3f ms", r->n_steps,
                            r->whole ? "window (whole profile)" : "steps", r->mean_step_ns / 1e6);
        }
        if (r->problem && r->problem[0]) {
            AIP_OUT_LIT(o, "; not judged across: ");
            aip__summary_put_term(o, r->problem, strlen(r->problem), 400);
        }
        AIP_OUT_LIT(o, "\n");
    }
    aip__out_printf(o, "%zu finding%s (ranked by severity, then time at stake per step)\n", j->n,
                    j->n == 1 ? "" : "s");
    if (!j->n)
        AIP_OUT_LIT(o, "\nNothing found: no rule of docs/ADVISE.md had data to fire on.\n");
    for (size_t i = 0; i < j->n; i++) {
        char who[600];
        whose(j, j->who[i], who, sizeof who);
        AIP_OUT_LIT(o, "\n");
        aip__finding_text(&j->f[i], i + 1, who, origin(j, j->who[i]), o);
    }
}

void aip__advise_job_json(const aip__advise_job *j, aip__out *o)
{
    AIP_OUT_LIT(o, "{\"result_dirs\":[");
    for (size_t i = 0; i < j->n_ranks; i++) {
        const aip__advise_rank *r = &j->ranks[i];
        if (i)
            AIP_OUT_LIT(o, ",");
        AIP_OUT_LIT(o, "\n{\"result_dir\":");
        aip__json_str(o, r->dir);
        if (r->rank >= 0)
            aip__out_printf(o, ",\"global_rank\":%ld", r->rank);
        else
            AIP_OUT_LIT(o, ",\"global_rank\":null");
        aip__out_printf(o, ",\"steps\":%zu,\"whole_profile\":%s,\"mean_step_ns\":%lld,"
                        "\"judged_across\":%s,\"problem\":", r->n_steps,
                        r->whole ? "true" : "false", (long long)r->mean_step_ns,
                        r->problem && r->problem[0] ? "false" : "true");
        aip__json_str(o, r->problem ? r->problem : "");
        AIP_OUT_LIT(o, ",\"error\":");
        aip__json_str(o, r->error);
        AIP_OUT_LIT(o, "}");
    }
    aip__out_printf(o, "\n],\"judged_across\":%zu,\"slow_ranks\":%zu,\"median_step_ns\":%.0f,"
                    "\"findings\":[", j->used, j->n_slow, j->median_step_ns);
    for (size_t i = 0; i < j->n; i++) {
        size_t w = j->who[i];
        aip__out_printf(o, "%s\n{\"rank\":%zu,\"scope\":\"%s\",\"global_rank\":", i ? "," : "",
                        i + 1, w == AIP_ADVISE_JOB ? "job" : "directory");
        if (w != AIP_ADVISE_JOB && j->ranks[w].rank >= 0)
            aip__out_printf(o, "%ld", j->ranks[w].rank);
        else
            AIP_OUT_LIT(o, "null");
        AIP_OUT_LIT(o, ",\"result_dir\":");
        if (w == AIP_ADVISE_JOB)
            AIP_OUT_LIT(o, "null");
        else
            aip__json_str(o, j->ranks[w].dir);
        AIP_OUT_LIT(o, ",");
        aip__finding_json_fields(&j->f[i], o);
        AIP_OUT_LIT(o, "}");
    }
    AIP_OUT_LIT(o, "\n]}\n");
}
