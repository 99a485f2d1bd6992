/*
 * cluster_comm.h — the cross-rank communication pass of `aiprof cluster`
 * (docs/CLUSTER.md "Wait, transit and idle"): cluster_comm.c matches each
 * collective across the ranks of its group, aligns the hosts' clocks and
 * splits every rank's elapse time into wait, transit and idle;
 * cluster_comm_json.c writes cluster_communication.json and
 * cluster_communication_matrix.json in msprof-analyze's text layout;
 * cluster_comm_db.c writes the ClusterCommunication* tables of
 * cluster_analysis.db; cluster_comm_verdict.c reads each rank's host and
 * says what was found.  All of it reads only the per-rank summaries the
 * cluster holds (r->comm, r->matrix, r->host).
 */
#ifndef AIP_CLUSTER_COMM_H
#define AIP_CLUSTER_COMM_H

#include "cluster.h"

#include <stdint.h>
#include <stdio.h>

/* The note a rank's op gets in its "Communication Time Info" (and in the
 * verdict's counts) when its elapse time could not be split: the split
 * fields stay absent, as in the per-rank files. */
#define AIP__CC_NOTE "Split"

/* aip__cc_split() : one collective's split on aligned clocks (ns).  Ranks
 * i = 0..n-1 were inside it over [start[i], end[i]]; A = the last start
 * (the last participant's arrival), E = the earliest end.  Per rank:
 * wait = the part of [start, end] before A, transit = the part in
 * [A, E], idle = the rest, so wait + transit + idle = end - start exactly
 * and each is >= 0, also when clock error or a rooted collective that
 * releases a rank early puts E before A (transit 0 then). */
void aip__cc_split(const int64_t *start, const int64_t *end, size_t n, int64_t *wait,
                   int64_t *transit, int64_t *idle);

/* aip__cc_median() : the median of v[0..n-1] (sorted in place; n > 0;
 * the lower middle for an even n, so that it is one of the values). */
int64_t aip__cc_median(int64_t *v, size_t n);

/* aip__cluster_comm_split() : only the match, alignment and split, in
 * memory (r->comm, r->matrix, r->clock_offset_us): what `aiprof advise`
 * needs of the pass, nothing written. */
aip_status aip__cluster_comm_split(aip__cluster *c);

/* aip__cluster_comm() : match, align and split (cluster_comm.c), fill the
 * split into the ranks' r->comm, set r->clock_offset_us, then write
 * cluster_communication.json, cluster_communication_matrix.json and the
 * ClusterCommunication* tables into out_dir.  Nothing is written when no
 * rank has communication. */
aip_status aip__cluster_comm(aip__cluster *c, const char *out_dir);

/* aip__cluster_comm_verdict() : the clocks and each rank's wait / transit
 * / idle over its split collectives, to c->fd. */
void aip__cluster_comm_verdict(const aip__cluster *c);

/* aip__cluster_rank_split_sums() : rank r's collectives split and not,
 * and its Wait, Transit and Idle Time(ms) summed over the split ones (the
 * verdict's table; `aiprof advise`'s slow_rank rule). */
void aip__cluster_rank_split_sums(const aip__rank_dir *r, size_t *split, size_t *unsplit,
                                  double *wait_ms, double *transit_ms, double *idle_ms);

/* cluster_comm_back.c: the split in the ranks' own files.
 * aip__cc_strip() : take out of r->comm and r->matrix every figure that
 * only the cross-rank split gives (what an earlier write-back put there),
 * so that each pass starts from the rank's own measurements.
 * aip__cc_set_transit() : an op entry's bandwidth blocks get the split's
 * transit time `ns` (Transit Time, Bandwidth, Size Distribution); -1: no
 * memory.
 * aip__cc_fill_ranks() : after the split, each rank's "Total Op Info" and
 * its collectives' self links in r->matrix from its split ops; -1: no
 * memory.
 * aip__cc_write_back() : r->comm and r->matrix into each used rank's
 * communication.json and communication_matrix.json, and the same figures
 * into its analysis.db (temp file + rename, never through a link); a rank
 * that cannot be written is said on c->fd and skipped. */
void aip__cc_strip(aip__rank_dir *r);
int aip__cc_set_transit(json_t *op, int64_t ns);
/* cluster_comm_totals.c: a collective's "<type>-total@<group>" matrix
 * entry, which a rank alone leaves out (no time).  aip__cc_add_totals() :
 * added, untimed, to each step of `matrix` for every type whose ops in
 * `comm` were all split; -1: no memory.  aip__cc_strip_totals() : every
 * collective total taken out.  aip__cc_op_of_type() : is `op`
 * "hcom_<type>__...@<group>" with the lower-case `type` (n bytes)? */
int aip__cc_add_totals(json_t *matrix, json_t *comm);
int aip__cc_op_of_type(const char *op, const char *type, size_t n, const char *group);
void aip__cc_strip_totals(json_t *matrix);
int aip__cc_fill_ranks(aip__cluster *c);
void aip__cc_write_back(aip__cluster *c);

/* aip__cc_stream() (cluster_comm_json.c) : cluster_communication.json
 * (matrix 0) or cluster_communication_matrix.json (matrix 1) from the split
 * r->comm / r->matrix, summed one (rank set, step) at a time and each
 * step's sums freed once used, so that they are never all in memory:
 * written into out_dir (NULL: no file) and handed to `rows` (NULL: none)
 * step by step; *dropped (matrix) counts links whose end maps to no
 * global rank.  The text is aip__cc_dump_python() of the whole content. */
typedef void (*aip__cc_step_fn)(void *ctx, const char *step, const json_t *ops);
aip_status aip__cc_stream(const aip__cluster *c, int matrix, const char *out_dir,
                          size_t *dropped, aip__cc_step_fn rows, void *ctx);

/* aip__cc_dump_python() : Python's json.dumps() text of `v` (", " and ": "
 * separators, non-ASCII as \uXXXX, reals as repr()); -1 on a write error. */
int aip__cc_dump_python(const json_t *v, FILE *f);

/* cluster_comm_db.c: ClusterCommunicationTime, ClusterCommunicationBandwidth
 * and ClusterCommunicationMatrix of out_dir/cluster_analysis.db, in one
 * transaction on a copy of the database (cluster_dbfile.c; only these
 * tables are replaced), their rows streamed in by aip__cc_stream().
 * aip__cc_db_begin() : the copy opened, the transaction begun.
 * aip__cc_db_table() : table `t` (AIP__CC_TIME, _BANDWIDTH, _MATRIX, in
 * that order) dropped and created, the rows to come going into it.
 * aip__cc_db_rows() : an aip__cc_step_fn: one step's rows of that table
 * (ops of cluster_communication.json for the first two, of the matrix for
 * the third).  aip__cc_db_end() : committed and renamed into place unless
 * `s` (the caller's status) or this fails; then the database stays as it
 * was.  @return the status (begin: *db NULL on failure; table: a failure
 * is also kept for end). */
enum { AIP__CC_TIME, AIP__CC_BANDWIDTH, AIP__CC_MATRIX };
typedef struct aip__cc_db aip__cc_db;
aip_status aip__cc_db_begin(aip__cc_db **db, const char *out_dir);
aip_status aip__cc_db_table(aip__cc_db *db, int t);
void aip__cc_db_rows(void *ctx, const char *step, const json_t *ops);
aip_status aip__cc_db_end(aip__cc_db *db, aip_status s);

#endif
