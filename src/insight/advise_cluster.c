/*
 * advise_cluster.c — `aiprof advise` on several result directories (a
 * cluster directory, a folder of runs, several rank directories): each
 * directory is advised as one (advise.c), and the ranks of the job are
 * judged across by `aiprof cluster`'s own rules — the slow rank
 * (aip__cluster_slow_ranks, cluster_report.c) and the slow links
 * (aip__cluster_links_mark, cluster_links.c), over the ranks read and
 * split in memory (aip__cluster_open) — so the verdict and the advice can
 * never disagree.  Every finding, the job's and the ranks', is ranked in
 * one list by severity, then time at stake per step (docs/ADVISE.md
 * "Several directories").
 *
 * A slow rank makes its peers wait inside their collectives, so their own
 * comm_not_overlapped findings would count that wait a second time: when
 * a rank is named slow, each rank's wait for the last arrival (the
 * cross-rank split's Wait Time) is taken out of its comm_not_overlapped
 * finding and said to belong to the slow rank.
 */
#include "insight.h"
#include "cluster.h"
#include "cluster_comm.h"
#include "cluster_links.h"
#include "result.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

#define AIP_SLOW_LINKS_SHOWN 3

static aip__finding *job_add(aip__advise_job *j, const aip__finding *f, size_t who)
{
    size_t cap = j->cap;
    if (aip__model_grow((void **)&j->f, &cap, j->n + 1, sizeof *j->f) ||
        aip__model_grow((void **)&j->who, &j->cap, j->n + 1, sizeof *j->who))
        return NULL;
    j->f[j->n] = *f;
    j->who[j->n] = who;
    return &j->f[j->n++];
}

/* The one severity scale of advise.c, for a finding of the job: `steps`
 * rows, `mean_step_ns` the median rank's step. */
static void job_stake(aip__finding *f, size_t steps, double mean_step_ns, double total_ns)
{
    aip__advise_ctx k = {.n_steps = steps ? steps : 1, .mean_step_ns = (int64_t)mean_step_ns};
    aip__advise_stake(&k, f, (int64_t)total_ns);
}

static size_t rank_steps(const aip__cluster *c, long rank, const aip__cluster_slow *sr)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->r[i].rank == rank && !c->r[i].problem[0])
            return sr->v[i].steps;
    return 0;
}

/* Per slow rank one finding: its excess Computing + Free is the time every
 * step of the job waits for it. */
static aip_status slow_rank_findings(aip__advise_job *j, const aip__cluster *c,
                                     const aip__cluster_slow *sr, size_t *slow_at)
{
    for (size_t i = 0; i < c->n; i++) {
        const aip__cluster_rank_verdict *x = &sr->v[i];
        if (c->r[i].problem[0] || !x->slow)
            continue;
        size_t steps = x->steps ? x->steps : 1;
        double peers_wait = 0;
        size_t peers = 0;
        for (size_t k = 0; k < c->n; k++) {
            size_t sp, un;
            double w, t, idle;
            if (k == i || c->r[k].problem[0] || !c->r[k].comm)
                continue;
            aip__cluster_rank_split_sums(&c->r[k], &sp, &un, &w, &t, &idle);
            peers_wait += w / (double)(sr->v[k].steps ? sr->v[k].steps : 1);
            peers++;
        }
        aip__finding f = {.rule = "slow_rank"};
        job_stake(&f, steps, 1e3 * sr->median_step_us / (double)steps, 1e3 * x->excess_us);
        snprintf(f.title, sizeof f.title,
                 "Rank %ld is slow: its steps take %.1f%% of the median step longer than its "
                 "peers'; they wait for it", c->r[i].rank,
                 sr->median_step_us > 0 ? 100 * x->excess_us / sr->median_step_us : 0.0);
        aip__evidence_add(&f, "rank %ld: Computing + Free %.3f ms per step (Computing %.3f, "
                          "Free %.3f), %.3f ms above the ranks' median %.3f ms (limit 5%% of "
                          "the median step %.3f ms)", c->r[i].rank, x->busy_us / 1e3 / steps,
                          x->computing_us / 1e3 / steps, x->free_us / 1e3 / steps,
                          x->excess_us / 1e3 / steps, sr->median_busy_us / 1e3 / steps,
                          sr->median_step_us / 1e3 / steps);
        if (sr->n_ops)
            aip__evidence_add(&f, "; it arrived last at %zu of %zu collectives (shortest "
                              "elapse time)", x->votes, sr->n_ops);
        if (peers)
            aip__evidence_add(&f, "; its %zu peers waited %.3f ms per step on average for the "
                              "last arrival (cross-rank split)", peers, peers_wait / (double)peers);
        aip__evidence_add(&f, "; %zu ranks judged", sr->used);
        f.advice = "Find what this rank does that its peers do not: `aiprof compare PEER_DIR "
                   "SLOW_DIR` sets a peer's ops, kernels and steps beside its own; look for "
                   "uneven data or work per rank, a slower device or host, its data loading, "
                   "or other processes on its host.";
        slow_at[i] = j->n;
        if (!job_add(j, &f, AIP_ADVISE_JOB))
            return aip__fail(AIP_ERR_NOMEM, "no memory for the findings");
    }
    return AIP_OK;
}

/* One finding for the slow links: at stake, what each would have taken
 * at its transport's median bandwidth less what it took. */
static aip_status slow_link_finding(aip__advise_job *j, const aip__cluster *c,
                                    const aip__cluster_slow *sr, const aip__cluster_links *l)
{
    double total_ns = 0;
    size_t n = 0, steps = 0, shown[AIP_SLOW_LINKS_SHOWN];
    double excess[AIP_SLOW_LINKS_SHOWN];
    for (size_t k = 0; k < l->n; k++) {
        const aip__cluster_link *x = &l->v[k];
        if (!x->slow || !(x->median_gbps > 0))
            continue;
        double e = 1e6 * (x->ms - x->mb / x->median_gbps);
        size_t s = rank_steps(c, x->src, sr);
        steps = s > steps ? s : steps;
        total_ns += e > 0 ? e : 0;
        size_t at = n < AIP_SLOW_LINKS_SHOWN ? n : AIP_SLOW_LINKS_SHOWN;
        for (; at > 0 && excess[at - 1] < e; at--)
            if (at < AIP_SLOW_LINKS_SHOWN) {
                excess[at] = excess[at - 1];
                shown[at] = shown[at - 1];
            }
        if (at < AIP_SLOW_LINKS_SHOWN) {
            excess[at] = e;
            shown[at] = k;
        }
        n++;
    }
    if (!n)
        return AIP_OK;
    steps = steps ? steps : 1;
    aip__finding f = {.rule = "slow_link"};
    job_stake(&f, steps, 1e3 * sr->median_step_us / (double)steps, total_ns);
    snprintf(f.title, sizeof f.title, "%zu link%s between ranks more than 5%% below %s "
             "transport's median bandwidth", n, n == 1 ? "" : "s", n == 1 ? "its" : "their");
    for (size_t s = 0; s < n && s < AIP_SLOW_LINKS_SHOWN; s++) {
        const aip__cluster_link *x = &l->v[shown[s]];
        long end = aip__cluster_link_slow_end(c, x);
        aip__evidence_add(&f, "%s%ld->%ld %s %.4f GB/s (%.6f MB in %.6f ms, %zu records), "
                          "%.1f%% below the median %.4f GB/s, %.3f ms more than at the median%s",
                          s ? "; " : "", x->src, x->dst, x->transport, x->gbps, x->mb, x->ms,
                          x->records, 100 * (x->median_gbps - x->gbps) / x->median_gbps,
                          x->median_gbps, excess[s] / 1e6,
                          end >= 0 ? " (an end is the slow rank: the time includes waiting "
                                     "for it)" : "");
    }
    if (n > AIP_SLOW_LINKS_SHOWN)
        aip__evidence_add(&f, "; %zu more (aiprof cluster lists them)", n - AIP_SLOW_LINKS_SHOWN);
    f.advice = "Where an end is a slow rank, fix that rank first. Otherwise check the link's "
               "path (NIC, PCIe / NVLink topology, switch), other traffic on it and the "
               "transport chosen; `aiprof cluster --html` shows the link matrix.";
    return job_add(j, &f, AIP_ADVISE_JOB) ? AIP_OK
                                          : aip__fail(AIP_ERR_NOMEM, "no memory for the findings");
}

/* A rank's own comm_not_overlapped counts the wait for the slow rank:
 * that part goes to the slow_rank finding. */
static void fold_wait(aip__advise_ctx *k, const aip__rank_dir *r,
                      const aip__cluster_rank_verdict *x)
{
    size_t sp, un;
    double w, t, idle;
    if (!r->comm || !x->steps)
        return;
    aip__cluster_rank_split_sums(r, &sp, &un, &w, &t, &idle);
    int64_t wait = (int64_t)(1e6 * w / (double)x->steps);
    for (size_t i = 0; i < k->n && wait > 0; i++) {
        aip__finding *f = &k->f[i];
        if (strcmp(f->rule, "comm_not_overlapped"))
            continue;
        int64_t moved = wait < f->ns_per_step ? wait : f->ns_per_step;
        aip__advise_stake(k, f, (f->ns_per_step - moved) * (int64_t)k->n_steps);
        aip__evidence_add(f, "; %.3f ms per step of it was waiting for the last rank to arrive "
                          "(cross-rank split): counted under slow_rank, not here", moved / 1e6);
    }
}

/* Advise directory i; its findings join the job's. */
static aip_status advise_one(aip__advise_job *j, aip__cluster *c, size_t i,
                             const aip__cluster_slow *sr, const size_t *slow_at, int quiet)
{
    aip__advise_rank *ar = &j->ranks[i];
    aip__run_log rl;
    aip__model m;
    aip__advise_ctx k;
    aip_status st = aip__result_open(ar->dir, quiet, &rl, &m);
    if (!st)
        st = aip__advise_build(&m, &k);
    if (st) {
        snprintf(ar->error, sizeof ar->error, "%s", aip_last_error());
        aip__model_free(&m);
        aip__runlog_free(&rl);
        return st == AIP_ERR_NOMEM ? st : AIP_OK;
    }
    ar->n_steps = k.n_steps;
    ar->whole = k.steps != m.steps;
    ar->mean_step_ns = k.mean_step_ns;
    ar->first_ns = m.first_ns;
    if (j->n_slow && !c->r[i].problem[0])
        fold_wait(&k, &c->r[i], &sr->v[i]);
    if (slow_at[i] != AIP_ADVISE_JOB) /* the slow rank's longest steps: where to look */
        for (size_t s = 0; s < k.n_steps; s++)
            aip__where_keep(&j->f[slow_at[i]], k.steps[s].start,
                            k.steps[s].end - k.steps[s].start);
    for (size_t f = 0; f < k.n && !st; f++)
        if (!job_add(j, &k.f[f], i))
            st = aip__fail(AIP_ERR_NOMEM, "no memory for the findings");
    aip__advise_free(&k);
    aip__model_free(&m);
    aip__runlog_free(&rl);
    return st;
}

static int by_rank_order(const void *a, const void *b, void *ctx)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const aip__finding *all = ctx, *fx = &all[x], *fy = &all[y];
    if (fx->severity != fy->severity)
        return fx->severity > fy->severity ? -1 : 1;
    if (fx->ns_per_step != fy->ns_per_step)
        return fx->ns_per_step > fy->ns_per_step ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Rank the findings in place (stable: ties keep job, then directory order). */
static aip_status rank_findings(aip__advise_job *j)
{
    size_t *ord = malloc((j->n ? j->n : 1) * sizeof *ord);
    aip__finding *f = malloc((j->n ? j->n : 1) * sizeof *f);
    size_t *who = malloc((j->n ? j->n : 1) * sizeof *who);
    if (!ord || !f || !who) {
        free(ord);
        free(f);
        free(who);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the findings");
    }
    for (size_t i = 0; i < j->n; i++)
        ord[i] = i;
    qsort_r(ord, j->n, sizeof *ord, by_rank_order, j->f);
    for (size_t i = 0; i < j->n; i++) {
        f[i] = j->f[ord[i]];
        who[i] = j->who[ord[i]];
    }
    free(ord);
    free(j->f);
    free(j->who);
    j->f = f;
    j->who = who;
    j->cap = j->n ? j->n : 1;
    return AIP_OK;
}

static aip_status cross_rank(aip__advise_job *j, aip__cluster *c, aip__cluster_slow *sr,
                             size_t *slow_at)
{
    aip_status st = aip__cluster_slow_ranks(c, sr);
    if (st)
        return st;
    j->used = sr->used;
    j->n_slow = sr->n_slow;
    size_t steps = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!c->r[i].problem[0] && sr->v[i].steps > steps)
            steps = sr->v[i].steps;
    j->median_step_ns = steps ? 1e3 * sr->median_step_us / (double)steps : 0;
    if (sr->used < 2) /* one rank: nothing to judge across */
        return AIP_OK;
    aip__cluster_links l = {0};
    st = slow_rank_findings(j, c, sr, slow_at);
    if (!st)
        st = aip__cluster_links_build(c, &l);
    if (!st) {
        aip__cluster_links_mark(&l);
        st = slow_link_finding(j, c, sr, &l);
    }
    aip__cluster_links_free(&l);
    return st;
}

aip_status aip__advise_job_build(const char *const *paths, size_t n, int quiet,
                                 aip__advise_job *j)
{
    memset(j, 0, sizeof *j);
    aip__cluster *c = calloc(1, sizeof *c);
    if (!c)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the job");
    aip_status st = aip__cluster_open(paths, n, quiet, c);
    if (st) {
        free(c);
        return st;
    }
    j->cluster = c;
    if (!c->n) {
        aip__advise_job_free(j);
        return aip__fail(AIP_ERR_NOT_FOUND, "no result directory (*ascend_pt) found in %s%s",
                         n ? paths[0] : "", n > 1 ? " and the others given" : "");
    }
    aip__cluster_slow sr = {0};
    size_t *slow_at = malloc(c->n * sizeof *slow_at);
    j->ranks = calloc(c->n, sizeof *j->ranks);
    if (!slow_at || !j->ranks)
        st = aip__fail(AIP_ERR_NOMEM, "no memory for the job");
    for (size_t i = 0; !st && i < c->n; i++) {
        slow_at[i] = AIP_ADVISE_JOB;
        j->ranks[i] = (aip__advise_rank){.dir = c->r[i].path, .rank = c->r[i].rank,
                                         .problem = c->r[i].problem};
    }
    j->n_ranks = j->ranks ? c->n : 0;
    if (!st)
        st = cross_rank(j, c, &sr, slow_at);
    for (size_t i = 0; !st && i < c->n; i++)
        st = advise_one(j, c, i, &sr, slow_at, quiet);
    if (!st)
        st = rank_findings(j);
    aip__cluster_slow_free(&sr);
    free(slow_at);
    if (st)
        aip__advise_job_free(j);
    return st;
}

void aip__advise_job_free(aip__advise_job *j)
{
    if (j->cluster) {
        aip__cluster_close(j->cluster);
        free(j->cluster);
    }
    free(j->ranks);
    free(j->f);
    free(j->who);
    memset(j, 0, sizeof *j);
}

aip_status aip_advise_dirs(const char *const *dirs, size_t n, int fd, int json, int *worst)
{
    if (!dirs || !n)
        return aip__fail(AIP_ERR_INVALID_ARG, "result directories are required");
    if (worst)
        *worst = -1;
    int quiet = getenv("AIPROF_QUIET") && *getenv("AIPROF_QUIET") == '1';
    aip__advise_job j;
    aip_status st = aip__advise_job_build(dirs, n, quiet, &j);
    if (st)
        return st;
    for (size_t i = 0; worst && i < j.n; i++)
        if ((int)j.f[i].severity > *worst)
            *worst = (int)j.f[i].severity;
    aip__out o;
    if (fd >= 0 && !(st = aip__out_init_fd(&o, fd))) {
        if (json)
            aip__advise_job_json(&j, &o);
        else
            aip__advise_job_text(&j, &o);
        st = aip__out_close(&o);
    }
    for (size_t i = 0; !st && i < j.n_ranks; i++)
        if (j.ranks[i].error[0]) /* said in the output; the status says it too */
            st = aip__fail(AIP_ERR_IO, "%s: %s", j.ranks[i].dir, j.ranks[i].error);
    aip__advise_job_free(&j);
    return st;
}
