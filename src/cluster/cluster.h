/*
 * cluster.h — the cross-rank pass of `aiprof cluster` (aip_cluster_run,
 * include/aiprof.h): cluster.c finds, analyses and reads the rank directories
 * into a cluster, cluster_check.c drops those of other runs, cluster_report.c
 * writes cluster_analysis_output/'s CSV and JSON and the verdict,
 * cluster_meta.c / cluster_parallel.c read the ranks' metadata, hosts and
 * parallel groups, cluster_db.c writes cluster_analysis.db, cluster_links.c
 * the link matrix and slow links, cluster_html.c the --html report.
 */
#ifndef AIP_CLUSTER_H
#define AIP_CLUSTER_H

#include "aiprof.h"
#include "error.h"
#include "hash_table.h"

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>

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
    char *host;               /* "hostname/host_uid" of profiler_info (cluster_meta.c), the key
                                 of its clock; NULL: unknown */
    double clock_offset_us;   /* its clock minus the reference's (cluster_comm.c); NAN: none */
    long clock_samples;       /* -1 reference's host, 0 not aligned, N collectives used */
    /* cluster_meta.c (read with the summaries; serialised for --mpi
     * in cluster_wire.c too): profiler_metadata.json, the host and the devices */
    json_t *meta;             /* profiler_metadata.json, NULL if absent/unreadable */
    char *host_uid;           /* HOST_INFO's hostUid, NULL if unknown */
    char *host_name;          /* HOST_INFO's hostName, else profiler_info's hostname */
    long long *devices;       /* RANK_DEVICE_MAP's deviceIds (-1: no device) */
    size_t n_devices;         /* 0: the rank has no ascend_pytorch_profiler db */
    int unreadable;           /* the directory itself could not be listed (problem says why) */
    int level;                /* profiler_info's _profiler_level (aip_profiler_level); -1:
                                 unknown.  Below Level1 a rank writes no communication.json
                                 (the seed), which the verdict says */
} aip__rank_dir;

/* What the ranks' profiler_metadata.json say about the job
 * (cluster_parallel.c), built once after the ranks are chosen. */
typedef struct aip__cluster_parallel {
    json_t *dist_args;        /* distributed_args of the first rank having them (borrowed) */
    int ptd_ok;               /* DP/PP/TP Index columns are written */
    char ptd_problem[256];    /* why distributed_args gave no columns; "" */
    long (*ptd)[3];           /* per rank id < n_ptd: DP, PP, TP index; -1: NA */
    size_t n_ptd;
    json_t *groups;           /* comm_group_parallel_info: [{type, rank_set, group_name,
                                 group_id, pg_name}] */
    json_t *seen_sets;        /* per group: its ranks as the files list them */
    long **stages;            /* msprof-analyze's pipeline stages: rank lists */
    size_t *stage_len, n_stages;
} aip__cluster_parallel;

/* What the job should hold and does not (cluster_complete.c, docs/CLUSTER.md
 * "Missing and truncated ranks"): the ranks expected, those with no
 * directory (as ranges), those whose data ends early, and the folders and
 * rank directories that could not be read. */
typedef struct aip__cluster_gaps {
    long expected;            /* ranks 0 .. expected - 1 */
    char source[160];         /* what says so */
    long (*missing)[2];       /* [first, last] ranges of ranks without a directory */
    size_t n_ranges, n_missing;
    char **truncated;         /* per r[i]: why its data ends early; NULL: it does not */
    size_t n_truncated, n_unreadable;
} aip__cluster_gaps;

/* Equal JSON values of the ranks' files, held once (cluster_intern.c). */
typedef struct aip__cluster_intern {
    json_t **v;
    uint64_t *hash;
    size_t cap;
    aip__ht ht;
} aip__cluster_intern;

typedef struct aip__cluster {
    const char *dir;
    aip__rank_dir *r;
    size_t n, cap;
    int quiet, fd;
    int part, parts; /* --mpi: this process reads r[i] with i % parts == part */
    int progress_fd;          /* a terminal: one updating line; -1 none */
    aip__cluster_parallel par;
    unsigned char *slow;      /* per r[i]: named slow by the verdict */
    char **unreadable;        /* folders the search could not list: "PATH: reason" */
    size_t n_unreadable;
    aip__cluster_gaps gaps;
    aip__cluster_intern rank_lists; /* the ranks' global_ranks lists */
    aip__cluster_intern leaves;     /* numbers and strings of r->comm, r->matrix */
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

/* cluster_read.c: a text rank's step_trace_time.csv (`csv`), and unless
 * that gave it a problem its communication.json (`comm`) and
 * communication_matrix.json beside it; aip__cluster_comm_span(): r->first_us
 * / last_us from r->comm.  @return -1 out of memory only. */
int aip__cluster_read_text(const aip__cluster *c, aip__rank_dir *r, const char *csv,
                           const char *comm);
void aip__cluster_comm_span(aip__rank_dir *r);

/* cluster_rank_db.c: a rank exported as databases only: its step rows and
 * communication trees from ASCEND_PROFILER_OUTPUT/analysis.db (`db_path`)
 * as a text rank's files give them; a problem when unreadable.
 * @return -1 out of memory only. */
int aip__cluster_read_rank_db(aip__rank_dir *r, const char *db_path);

/* cluster_meta.c: profiler_metadata.json and the host/devices of rank r
 * (ascend_pytorch_profiler_{rank}.db's HOST_INFO and RANK_DEVICE_MAP, as
 * msprof-analyze reads them; without that db profiler_info's hostname).
 * @return -1 out of memory only. */
int aip__cluster_read_meta(const aip__cluster *c, aip__rank_dir *r);
void aip__cluster_free_meta(aip__rank_dir *r);

/* cluster_intern.c: aip__cluster_rank_share() : rank r's values that
 * equal ones of ranks read before (its metadata's global_ranks lists in
 * c->rank_lists, the numbers and strings of r->comm and r->matrix in
 * c->leaves) replaced by those, so that each is held once; nothing
 * written changes.  After the rank is read, before anything else uses it.
 * aip__cluster_intern_free() : a table's values (after the ranks').
 * @return -1 out of memory only. */
int aip__cluster_rank_share(aip__cluster *c, aip__rank_dir *r);
void aip__cluster_intern_free(aip__cluster_intern *t);

/* aip__cluster_stage_rows() : msprof-analyze's "stage" rows: per (step,
 * stage) in order of first appearance over the rank rows, the max of every
 * column (the first used rank's columns, which every used rank has) over
 * the stage's ranks; `stage` indexes c->par.stages, -1 for the ranks in no
 * stage.  emit() gets each; nothing without stages.  -1: no memory. */
typedef void (*aip__stage_row_fn)(void *ctx, const char *step, int stage, const double *v);
int aip__cluster_stage_rows(const aip__cluster *c, aip__stage_row_fn emit, void *ctx);

/* cluster_parallel.c: c->par from the used ranks (after the drops);
 * msprof-analyze's double_hash(). @return AIP_ERR_NOMEM or AIP_OK. */
aip_status aip__cluster_parallel_build(aip__cluster *c);
void aip__cluster_parallel_free(aip__cluster_parallel *p);
unsigned long long aip__cluster_double_hash(const char *s);
/* Rows of ranks whose step_trace_time.csv columns differ from the first
 * used rank's get a problem (before anything is written). */
void aip__cluster_check_columns(aip__cluster *c);

/* cluster_out.c: an output file of cluster_analysis_output/ written as
 * every output is (temp name, 0640, no symbolic link, renamed when
 * complete), through a stdio stream.  aip__cluster_out_open(): `*f` to
 * write to.  aip__cluster_out_close(): closes `f`; renames the file into
 * place unless `failed` or a write failed (then nothing is left).  */
struct aip__out;
aip_status aip__cluster_out_open(struct aip__out *o, FILE **f, const char *out_dir,
                                 const char *name);
aip_status aip__cluster_out_close(struct aip__out *o, FILE *f, int failed);

/* cluster_dbfile.c: cluster_analysis.db as a copy beside it (other tools'
 * tables kept), renamed into place when complete.  aip__cluster_db_open():
 * copy the existing file (never through a link; a regular file only) to a
 * temporary one (O_EXCL, 0640) and open the copy as f->db; SIGXFSZ is
 * blocked until the close.  aip__cluster_db_close(): close f->db; rename
 * the copy over the file unless `s` (the writer's status) or this fails,
 * else remove the copy and leave the file as it was.  @return the status. */
struct sqlite3;
typedef struct aip__cluster_dbfile {
    char path[PATH_MAX], tmp[PATH_MAX];
    struct sqlite3 *db;
    sigset_t old_mask;
} aip__cluster_dbfile;
aip_status aip__cluster_db_open(aip__cluster_dbfile *f, const char *out_dir);
aip_status aip__cluster_db_close(aip__cluster_dbfile *f, aip_status s);

/* cluster_db.c: cluster_analysis.db's ClusterStepTraceTime,
 * CommunicationGroupMapping, HostInfo, RankDeviceMap, ClusterBaseInfo
 * (only these tables are dropped and created; others in the file stay). */
aip_status aip__cluster_write_db(const aip__cluster *c, const char *out_dir);

/* cluster_complete.c: c->gaps from the used ranks (after the outputs are
 * written: the clock offsets place where a truncated rank ends), and their
 * lines in the verdict.  aip__cluster_gaps_build(): AIP_ERR_NOMEM or
 * AIP_OK.  aip__cluster_incomplete(): ranks missing + truncated + rank
 * directories and folders unreadable (0: the job is complete). */
aip_status aip__cluster_gaps_build(aip__cluster *c);
void aip__cluster_gaps_verdict(const aip__cluster *c);
size_t aip__cluster_incomplete(const aip__cluster *c);
void aip__cluster_gaps_free(aip__cluster *c);

/* The slow-rank rule's figures per rank (cluster_report.c), step trace
 * µs summed over the rank's rows: what the verdict says and what `aiprof
 * advise` ranks (src/insight/advise_cluster.c). */
typedef struct aip__cluster_rank_verdict {
    double computing_us, free_us, comm_not_overlapped_us;
    double busy_us;           /* Computing + Free */
    double excess_us;         /* busy_us - the ranks' median */
    size_t steps;             /* its step rows */
    size_t votes;             /* collectives it arrived last at */
    int slow;
} aip__cluster_rank_verdict;

typedef struct aip__cluster_slow {
    aip__cluster_rank_verdict *v; /* per c->r[i] (zero for unused ones) */
    size_t used, n_slow;
    double median_busy_us;    /* over the used ranks */
    double median_step_us;    /* median of Computing + Communication(Not Overlapped) + Free */
    size_t n_ops;             /* collectives that voted */
} aip__cluster_slow;

/* aip__cluster_slow_ranks() : the rule over the used ranks; marks c->slow
 * when allocated.  Free with aip__cluster_slow_free(). */
aip_status aip__cluster_slow_ranks(const aip__cluster *c, aip__cluster_slow *out);
void aip__cluster_slow_free(aip__cluster_slow *s);

/* aip__cluster_verdict() : the per-rank table and the slow ranks, to c->fd. */
void aip__cluster_verdict(const aip__cluster *c, size_t used);

/* aip__cluster_options() : `opt` (NULL: the defaults) into `*out`: an
 * older caller's smaller struct gives the fields it has, the rest keep their
 * defaults (the convention of aip_analyse_options and aip_config); a
 * struct_size too small to hold `jobs`: AIP_ERR_INVALID_ARG. */
aip_status aip__cluster_options(const aip_cluster_options *opt, aip_cluster_options *out);

/* aip__cluster_run() : aip_cluster_run(); with `mpi` (cluster_mpi.c) as
 * one process of an MPI job: this process reads its share of the rank
 * directories, and only process 0 writes the outputs and the verdict. */
typedef struct aip__cluster_mpi aip__cluster_mpi;
aip_status aip__cluster_run(const char *dir, const aip_cluster_options *opt,
                            size_t *bad_dirs, aip__cluster_mpi *mpi);
void aip__cluster_mpi_share(const aip__cluster_mpi *m, int *part, int *parts);
aip_status aip__cluster_gather(aip__cluster *c, aip__cluster_mpi *m, aip_status s);

/* aip__cluster_open() : (cluster.c) the rank directories of `paths` (each
 * a rank directory or a folder searched for them) read, checked and split
 * as aip__cluster_run() does, in memory only: nothing written under
 * cluster_analysis_output/, nothing said (c->fd -1); a rank not analysed
 * yet is analysed first.  c->slow is allocated (zeros).  Ranks that cannot
 * be used keep their problem.  aip__cluster_close(): everything it holds. */
aip_status aip__cluster_open(const char *const *paths, size_t n_paths, int quiet, aip__cluster *c);
/* aip__cluster_find() : only the search: c->r[] with each directory's
 * path and rank (profiler_info_{rank}.json), in the order found; nothing
 * read or analysed (`aiprof compare` on two jobs). */
aip_status aip__cluster_find(const char *const *paths, size_t n_paths, aip__cluster *c);
void aip__cluster_close(aip__cluster *c);

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
