/*
 * cluster.h — the cross-rank pass of `aiprof cluster` (aip_cluster_analyse,
 * include/aiprof.h): cluster.c finds, analyses and reads the rank directories
 * into a cluster, cluster_check.c drops those of other runs, cluster_report.c
 * writes cluster_analysis_output/ and the verdict.
 */
#ifndef AIP_CLUSTER_H
#define AIP_CLUSTER_H

#include "aiprof.h"
#include "error.h"

#include <jansson.h>
#include <stddef.h>

#define AIP__CLUSTER_SLOW_SPREAD 0.05 /* msprof-analyze's docs: > 5 % between ranks */

typedef struct aip__step_trace_row {
    char *step; /* the Step cell, may be "" */
    double *v;  /* one per column */
} aip__step_trace_row;

/* One rank directory.  Every field travels between the processes of
 * `aiprof cluster --mpi`: a field added here gets its line in wire_rank()
 * (cluster_wire.c). */
typedef struct aip__rank_dir {
    char *path;
    long rank;         /* -1: none found */
    long long ts;      /* {ts} of {worker}_{ts}_ascend_pt, -1 if none */
    char problem[384]; /* why it is not used; "" = used */
    char **cols;       /* step_trace_time.csv columns after Step/Device_id */
    size_t n_cols;
    aip__step_trace_row *rows;
    size_t n_rows;
    json_t *comm;             /* communication.json, NULL if absent */
    json_t *matrix;           /* communication_matrix.json, NULL if absent */
    double first_us, last_us; /* span of its collectives' start times; NAN if none */
    int analyse;              /* no step_trace_time.csv yet, FRAMEWORK/ there */
} aip__rank_dir;

typedef struct aip__cluster {
    const char *dir;
    aip__rank_dir *r;
    size_t n, cap;
    int quiet, fd;
    int part, parts; /* --mpi: this process reads r[i] with i % parts == part */
} aip__cluster;

void aip__cluster_say(const aip__cluster *c, const char *fmt, ...) AIP_PRINTF(2, 3);
void aip__cluster_problem(aip__rank_dir *r, const char *fmt, ...) AIP_PRINTF(2, 3);
int aip__cluster_cmp_double(const void *a, const void *b);

/* aip__cluster_first_used() : the first rank (by rank) without a problem, or NULL. */
const aip__rank_dir *aip__cluster_first_used(const aip__cluster *c);

/* aip__cluster_fmt_double() : `v` as Python's repr() writes a float (the
 * text msprof-analyze's cluster_step_trace_time.csv holds). */
void aip__cluster_fmt_double(char *buf, size_t cap, double v);

/* cluster_check.c: a rank found twice keeps the newer run ({ts} of the
 * directory name, as msprof-analyze); a run not overlapping the median
 * rank's collectives in time is another job's. */
void aip__cluster_drop_duplicates(aip__cluster *c);
void aip__cluster_drop_other_jobs(aip__cluster *c);

/* Writers (cluster_report.c); a rank whose columns differ from the first
 * used rank's gets a problem and is left out. */
aip_status aip__cluster_write_step_trace(aip__cluster *c, const char *out_dir);
aip_status aip__cluster_write_groups(aip__cluster *c, const char *out_dir);

/* aip__cluster_verdict() : the per-rank table and the slow ranks, to c->fd. */
void aip__cluster_verdict(const aip__cluster *c, size_t used);

/* aip__cluster_run() : aip_cluster_analyse(); with `mpi` (cluster_mpi.c) as
 * one process of an MPI job: this process reads its share of the rank
 * directories, and only process 0 writes the outputs and the verdict. */
typedef struct aip__cluster_mpi aip__cluster_mpi;
aip_status aip__cluster_run(const char *dir, long jobs, int quiet, int report_fd,
                            size_t *bad_dirs, aip__cluster_mpi *mpi);
void aip__cluster_mpi_share(const aip__cluster_mpi *m, int *part, int *parts);
aip_status aip__cluster_gather(aip__cluster *c, aip__cluster_mpi *m, aip_status s);

/* cluster_wire.c: one rank directory's results as bytes (--mpi).
 * aip__rank_dir_pack(): a malloc'd buffer.  aip__rank_dir_unpack(): a
 * new rank directory from `buf`, `used` its bytes; AIP_ERR_CORRUPT when
 * short or damaged.  aip__rank_dir_free(): everything it holds. */
aip_status aip__rank_dir_pack(aip__rank_dir *r, unsigned char **buf, size_t *len);
aip_status aip__rank_dir_unpack(const unsigned char *buf, size_t len, size_t *used,
                                aip__rank_dir *r);
void aip__rank_dir_free(aip__rank_dir *r);
/* A process's share of `c` (or `status`'s error) as bytes, and process 0's
 * unpacking of process `from`'s share into `c`. */
aip_status aip__cluster_pack_share(aip__cluster *c, aip_status status, unsigned char **buf,
                                   size_t *len);
aip_status aip__cluster_unpack_share(aip__cluster *c, int from, const unsigned char *buf,
                                     size_t len);

#endif
