/*
 * compare_job.c — `aiprof compare BASE NEW` on two jobs (folders holding
 * rank result directories, as `aiprof cluster` finds them): the ranks are
 * matched by global rank (profiler_info_{rank}.json; directories without
 * one by their order), and each pair is compared as two result directories
 * are (compare.c), one pair in memory at a time.  What is kept per rank is
 * its comparison's rows; compare_job_out.c writes the per-rank step
 * breakdown and each rank's top changes (docs/ADVISE.md "Two jobs").
 */
#include "insight.h"
#include "cluster.h"
#include "result.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

/* The ranks of one side: path and key (global rank, else -1 - position). */
typedef struct side {
    aip__cluster c;
    long *key;
} side;

static aip_status side_find(const char *dir, side *s)
{
    aip_status st = aip__cluster_find(&dir, 1, &s->c);
    if (st)
        return st;
    if (!s->c.n) {
        aip__cluster_close(&s->c);
        return aip__fail(AIP_ERR_NOT_FOUND, "%s: no result directory (*ascend_pt) found", dir);
    }
    if (!(s->key = malloc(s->c.n * sizeof *s->key))) {
        aip__cluster_close(&s->c);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the ranks");
    }
    long unranked = 0;
    for (size_t i = 0; i < s->c.n; i++)
        s->key[i] = s->c.r[i].rank >= 0 ? s->c.r[i].rank : -1 - unranked++;
    return AIP_OK;
}

static void side_free(side *s)
{
    aip__cluster_close(&s->c);
    free(s->key);
}

static aip_status add_pair(aip__cmp_job *j, long key, const char *b, const char *n)
{
    if (aip__model_grow((void **)&j->ranks, &j->cap, j->n + 1, sizeof *j->ranks))
        return aip__fail(AIP_ERR_NOMEM, "no memory for the ranks");
    aip__cmp_rank *r = &j->ranks[j->n++];
    memset(r, 0, sizeof *r);
    r->rank = key;
    r->dir[0] = b ? strdup(b) : NULL;
    r->dir[1] = n ? strdup(n) : NULL;
    if ((b && !r->dir[0]) || (n && !r->dir[1]))
        return aip__fail(AIP_ERR_NOMEM, "no memory for the ranks");
    return AIP_OK;
}

/* Compare one matched pair; a directory that cannot be read is said in
 * the output (r->error), the others still compared. */
static aip_status compare_pair(aip__cmp_rank *r, int quiet)
{
    aip__run_log rl[2];
    aip__model m[2];
    aip__model_init(&m[1]);
    aip__runlog_init(&rl[1], r->dir[1], quiet);
    aip_status st = aip__result_open(r->dir[0], quiet, &rl[0], &m[0]);
    if (!st) {
        aip__runlog_free(&rl[1]);
        st = aip__result_open(r->dir[1], quiet, &rl[1], &m[1]);
    }
    if (!st)
        st = aip__compare_build(&m[0], &m[1], &r->cmp);
    if (st) {
        snprintf(r->error, sizeof r->error, "%s", aip_last_error());
    } else {
        r->compared = 1;
    }
    for (int k = 0; k < 2; k++) {
        aip__model_free(&m[k]);
        aip__runlog_free(&rl[k]);
    }
    return st == AIP_ERR_NOMEM ? st : AIP_OK;
}

aip_status aip__compare_job_build(const char *base, const char *cur, int quiet, aip__cmp_job *j)
{
    memset(j, 0, sizeof *j);
    side s[2] = {0};
    aip_status st = side_find(base, &s[0]);
    if (!st && (st = side_find(cur, &s[1])))
        side_free(&s[0]);
    if (st)
        return st;
    /* base's ranks in its order, then those only the new job has */
    for (size_t i = 0; !st && i < s[0].c.n; i++) {
        const char *other = NULL;
        for (size_t k = 0; k < s[1].c.n && !other; k++)
            if (s[1].key[k] == s[0].key[i])
                other = s[1].c.r[k].path;
        st = add_pair(j, s[0].key[i], s[0].c.r[i].path, other);
    }
    for (size_t k = 0; !st && k < s[1].c.n; k++) {
        int seen = 0;
        for (size_t i = 0; i < s[0].c.n && !seen; i++)
            seen = s[0].key[i] == s[1].key[k];
        if (!seen)
            st = add_pair(j, s[1].key[k], NULL, s[1].c.r[k].path);
    }
    side_free(&s[0]);
    side_free(&s[1]);
    for (size_t i = 0; !st && i < j->n; i++)
        if (j->ranks[i].dir[0] && j->ranks[i].dir[1])
            st = compare_pair(&j->ranks[i], quiet);
    if (st)
        aip__compare_job_free(j);
    return st;
}

void aip__compare_job_free(aip__cmp_job *j)
{
    for (size_t i = 0; i < j->n; i++) {
        free(j->ranks[i].dir[0]);
        free(j->ranks[i].dir[1]);
        if (j->ranks[i].compared)
            aip__compare_free(&j->ranks[i].cmp);
    }
    free(j->ranks);
    memset(j, 0, sizeof *j);
}

const aip__cmp_row *aip__compare_find(const aip__cmp *c, const char *section, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->rows[i].section, section) && !strcmp(c->rows[i].name, name) &&
            !c->rows[i].shapes)
            return &c->rows[i];
    return NULL;
}
