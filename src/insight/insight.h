/*
 * insight.h — answers drawn from the derived model (docs/ADVISE.md):
 * `aiprof advise` runs rules over one result directory's model and ranks
 * what they find by the time at stake per step (advise.c, the rules in
 * advise_host.c and advise_device.c, the output in advise_out.c); `aiprof
 * compare` sets two models side by side (compare.c, compare_out.c).  Both
 * read only what src/result/ loads and src/analysis/ derives: no second
 * parser of anything.
 */
#ifndef AIP_INSIGHT_H
#define AIP_INSIGHT_H

#include "model.h"
#include "outbuf.h"
#include "hash_table.h"

#include <stddef.h>
#include <stdint.h>

#define AIP_FINDING_WHERE 3

/* One finding.  `evidence` may hold recorded names: it is plain text,
 * escaped by the writer for its output (terminal, JSON). */
typedef struct aip__finding {
    const char *rule;          /* rule id, docs/ADVISE.md */
    unsigned severity;         /* aip_severity */
    int64_t ns_per_step;       /* time at stake per step */
    double share;              /* of the mean step time */
    char title[200];
    char evidence[1200];
    const char *advice;        /* what to try */
    size_t n_where;
    int64_t where_ns[AIP_FINDING_WHERE];   /* wall ns of the places to look */
    int64_t where_dur[AIP_FINDING_WHERE];  /* how long each lasted */
} aip__finding;

/* What every rule needs: the model, its steps (or the whole profile as
 * one window), the findings so far. */
typedef struct aip__advise_ctx {
    const aip__model *m;
    const aip__step *steps;    /* m->steps, or &whole */
    size_t n_steps;
    aip__step whole;
    int64_t steps_ns;          /* summed step durations */
    int64_t mean_step_ns;
    aip__finding *f;
    size_t n, cap;
} aip__advise_ctx;

/* advise.c */
/* aip__advise_build() : run every rule over `m`; findings ranked
 * (severity, then time at stake).  Free with aip__advise_free. */
aip_status aip__advise_build(const aip__model *m, aip__advise_ctx *c);
void aip__advise_free(aip__advise_ctx *c);
/* aip__advise_add() : a new zeroed finding (NULL: no memory). */
aip__finding *aip__advise_add(aip__advise_ctx *c, const char *rule);
/* aip__advise_stake() : set ns_per_step, share and severity from the total
 * time at stake over the steps. */
void aip__advise_stake(const aip__advise_ctx *c, aip__finding *f, int64_t total_ns);
/* aip__in_steps() : how much of [s, e) lies inside the steps. */
int64_t aip__in_steps(const aip__advise_ctx *c, int64_t s, int64_t e);
/* aip__evidence_add() : append printf text to f->evidence (cut if full). */
void aip__evidence_add(aip__finding *f, const char *fmt, ...) AIP_PRINTF(2, 3);
/* Keep the `AIP_FINDING_WHERE` longest (start, duration) pairs. */
void aip__where_keep(aip__finding *f, int64_t start, int64_t dur);
/* aip__severity_name() : "info", "low", "medium", "high". */
const char *aip__severity_name(unsigned s);

/* The rules: advise_host.c (host-only model) and advise_device.c (device
 * tasks, communication, memory). */
aip_status aip__rule_gc(aip__advise_ctx *c);
aip_status aip__rule_dataloader(aip__advise_ctx *c);
aip_status aip__rule_sync(aip__advise_ctx *c);
aip_status aip__rule_osrt(aip__advise_ctx *c);
aip_status aip__rule_profiler_steps(aip__advise_ctx *c);
aip_status aip__rule_small_kernels(aip__advise_ctx *c);
aip_status aip__rule_device_idle(aip__advise_ctx *c);
aip_status aip__rule_comm(aip__advise_ctx *c);
aip_status aip__rule_memory(aip__advise_ctx *c); /* advise_memory.c */

/* advise_out.c */
void aip__advise_text(const aip__advise_ctx *c, const char *dir, aip__out *o);
void aip__advise_json(const aip__advise_ctx *c, const char *dir, aip__out *o);
/* One finding written out (advise_out.c): text as `pos`. [severity] rule
 * (whose): ..., `first_ns` the start of the profile its places are
 * measured from; JSON: its fields from "rule" to "where" (no braces). */
void aip__finding_text(const aip__finding *f, size_t pos, const char *whose, int64_t first_ns,
                       aip__out *o);
void aip__finding_json_fields(const aip__finding *f, aip__out *o);
void aip__json_str(aip__out *o, const char *s);

/* `aiprof advise` on several result directories (advise_cluster.c): each
 * advised, the ranks of one job judged across (the slow-rank and
 * slow-link rules of `aiprof cluster`, src/cluster/), every finding
 * ranked together (advise_cluster_out.c writes them). */
typedef struct aip__advise_rank {
    const char *dir;          /* borrowed from the job's cluster */
    long rank;                /* global rank; -1 none */
    const char *problem;      /* why it is out of the cross-rank rules; "" none */
    char error[256];          /* why it could not be advised; "" none */
    size_t n_steps;
    int whole;                /* no ProfilerStep#N: one window */
    int64_t mean_step_ns, first_ns;
} aip__advise_rank;

#define AIP_ADVISE_JOB ((size_t)-1) /* a finding about the job, not one rank */

typedef struct aip__advise_job {
    void *cluster;            /* aip__cluster (src/cluster/cluster.h) */
    aip__advise_rank *ranks;
    size_t n_ranks, used, n_slow;
    double median_step_ns;    /* per step, over the ranks in the cross-rank rules */
    aip__finding *f;          /* ranked: severity, then time at stake */
    size_t *who;              /* per finding: index in ranks, or AIP_ADVISE_JOB */
    size_t n, cap;
} aip__advise_job;

aip_status aip__advise_job_build(const char *const *paths, size_t n, int quiet,
                                 aip__advise_job *j);
void aip__advise_job_free(aip__advise_job *j);
void aip__advise_job_text(const aip__advise_job *j, aip__out *o);
void aip__advise_job_json(const aip__advise_job *j, aip__out *o);

/* The summary's "Advice" section (advise_summary.c): `ctx` is an
 * aip__advise_ctx; the summary's callbacks (summary.h). */
void aip__advise_summary_text(const void *ctx, aip__out *o);
void aip__advise_summary_html(const void *ctx, aip__out *o);

/* compare.c: one model reduced to named rows, two of them side by side. */
typedef struct aip__cmp_row {
    const char *section;       /* "step", "op", "kernel", "api", "memory", "comm" */
    char *name;                /* malloc'd, raw text (escaped on output) */
    char *shapes;              /* malloc'd or NULL (ops with input shapes) */
    uint64_t count[2];
    int64_t total[2];          /* ns (memory: bytes) */
    double per_step[2];        /* total / steps of its run */
    double diff;               /* per-step change, ns (memory: bytes) */
} aip__cmp_row;

typedef struct aip__cmp {
    aip__cmp_row *rows;
    size_t n, cap;
    uint64_t *hash;            /* parallel to rows (for the index) */
    size_t hash_cap;
    aip__ht index;             /* (section, name, shapes) -> row */
    size_t n_steps[2];
    double mean_step_ns[2];
} aip__cmp;

aip_status aip__compare_build(const aip__model *base, const aip__model *cur, aip__cmp *c);
void aip__compare_free(aip__cmp *c);
/* aip__compare_shown() : whether a row's change is above `threshold`
 * (share of the base's mean step time; memory: of the base peak). */
int aip__compare_shown(const aip__cmp *c, const aip__cmp_row *r, double threshold);
void aip__compare_text(const aip__cmp *c, double threshold, aip__out *o);
void aip__compare_csv(const aip__cmp *c, double threshold, aip__out *o);
/* The CSV's header and rows (compare_out.c): with_rank / `rank` put a
 * Rank column first (two jobs); rank is then the rank's key. */
void aip__compare_csv_head(int with_rank, aip__out *o);
void aip__compare_csv_rows(const aip__cmp *c, double threshold, const long *rank, aip__out *o);
/* ms per step, or MiB for memory rows: the figure every output shows. */
double aip__compare_value(const aip__cmp_row *r, double v);
/* aip__compare_put_name() : a row's name (40 columns at most) and input
 * shapes (24), terminal-escaped, to `o`; returns the columns written, for
 * the padding that follows. */
uint64_t aip__compare_put_name(aip__out *o, const aip__cmp_row *r);
/* aip__compare_find() : the row (section, name) without shapes; NULL. */
const aip__cmp_row *aip__compare_find(const aip__cmp *c, const char *section, const char *name);

/* Two jobs (compare_job.c): their ranks matched by global rank (by order
 * for directories without one), each pair compared. */
typedef struct aip__cmp_rank {
    long rank;                /* global rank; < 0: -1 - position among unranked */
    char *dir[2];             /* base, new; NULL: only in the other job */
    int compared;
    char error[256];          /* why the pair could not be compared */
    aip__cmp cmp;
} aip__cmp_rank;

typedef struct aip__cmp_job {
    aip__cmp_rank *ranks;
    size_t n, cap;
} aip__cmp_job;

aip_status aip__compare_job_build(const char *base, const char *cur, int quiet, aip__cmp_job *j);
void aip__compare_job_free(aip__cmp_job *j);
/* compare_job_out.c: the per-rank step breakdown and each rank's top
 * `top` changes (text), every row shown per rank (CSV, a Rank column). */
void aip__compare_job_text(const aip__cmp_job *j, double threshold, size_t top, aip__out *o);
void aip__compare_job_csv(const aip__cmp_job *j, double threshold, aip__out *o);
/* compare_html.c: the same tables as the text as one self-contained page. */
void aip__compare_html(const aip__cmp *c, double threshold, const char *base, const char *cur,
                       aip__out *o);
void aip__compare_job_html(const aip__cmp_job *j, double threshold, size_t top,
                           const char *base, const char *cur, aip__out *o);
/* The rows a rank's "top changes" show (compare_job_out.c): up to `top`
 * time rows outside the step section, by the size of the change, then
 * every memory row shown; returns how many indices went to `out`. */
size_t aip__compare_top(const aip__cmp *c, double threshold, size_t top, size_t *out);

#endif
