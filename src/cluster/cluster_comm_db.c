/*
 * cluster_comm_db.c — the communication tables of
 * cluster_analysis_output/cluster_analysis.db: ClusterCommunicationTime,
 * ClusterCommunicationBandwidth and ClusterCommunicationMatrix, with the
 * columns msprof-analyze's db mode writes (recipes communication_time_sum
 * and communication_matrix_sum, written there by pandas: names, order and
 * the types pandas gives those columns' values), from the same trees as
 * cluster_communication(_matrix).json (cluster_comm_json.c), one step at a
 * time as aip__cc_stream() hands them over (one transaction all the same):
 * the cluster's sums are never all in memory.
 *
 * Other tables of the same database are written by another writer of the
 * cluster pass, in either order: each changes a copy of the file
 * (cluster_dbfile.c: 0640, never through a symbolic link, renamed into
 * place when complete) and only these three tables are dropped and
 * created; values go in as bound parameters only.
 *
 * Rows: one per rank and op (time), per rank, op, transport and size bin
 * (bandwidth), per op entry and global link (matrix), then the "Total Op
 * Info" rows of each (step, rank, group) / (step, group) as the JSON
 * totals hold them.  A split field of an op that was not split is NULL
 * here (the JSON keeps msprof's 0 and says why in its note).
 */
#include "cluster_comm.h"
#include "error.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const TIME_SQL =
    "CREATE TABLE \"ClusterCommunicationTime\" (\"step\" TEXT, \"rank_id\" INTEGER, "
    "\"hccl_op_name\" TEXT, \"group_name\" TEXT, \"start_timestamp\" REAL, \"elapsed_time\" REAL, "
    "\"transit_time\" REAL, \"wait_time\" REAL, \"synchronization_time\" REAL, \"idle_time\" "
    "REAL, \"synchronization_time_ratio\" REAL, \"wait_time_ratio\" REAL)";
static const char *const BW_SQL =
    "CREATE TABLE \"ClusterCommunicationBandwidth\" (\"step\" TEXT, \"rank_id\" INTEGER, "
    "\"hccl_op_name\" TEXT, \"group_name\" TEXT, \"band_type\" TEXT, \"transit_size\" REAL, "
    "\"transit_time\" REAL, \"bandwidth\" REAL, \"large_packet_ratio\" REAL, \"package_size\" "
    "REAL, \"count\" INTEGER, \"total_duration\" REAL)";
static const char *const MATRIX_SQL =
    "CREATE TABLE \"ClusterCommunicationMatrix\" (\"step\" TEXT, \"hccl_op_name\" TEXT, "
    "\"group_name\" TEXT, \"src_rank\" REAL, \"dst_rank\" REAL, \"transport_type\" TEXT, "
    "\"op_name\" TEXT, \"transit_size\" REAL, \"transit_time\" REAL, \"bandwidth\" REAL)";

typedef struct db {
    sqlite3 *db;
    const char *path;
    int rc;
} db;

static int check(db *d, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW && d->rc == SQLITE_OK) {
        d->rc = rc;
        aip__fail(AIP_ERR_IO, "%s: %s failed: %s", d->path, what, sqlite3_errmsg(d->db));
    }
    return d->rc != SQLITE_OK;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s, size_t n)
{
    sqlite3_bind_text(st, i, s, (int)n, SQLITE_TRANSIENT);
}

/* a JSON number, or NULL when absent / not a number / `null_it` */
static void bind_num(sqlite3_stmt *st, int i, const json_t *v, int null_it)
{
    if (null_it || !json_is_number(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, json_number_value(v));
}

/* "<name>@<group>" → name and group (a key without '@': group ""). */
static void bind_op(sqlite3_stmt *st, int at, const char *key)
{
    const char *sep = strrchr(key, '@');
    size_t n = sep ? (size_t)(sep - key) : strlen(key);
    bind_text(st, at, key, n);
    bind_text(st, at + 1, sep ? sep + 1 : "", sep ? strlen(sep + 1) : 0);
}

static void row(db *d, sqlite3_stmt *st)
{
    check(d, sqlite3_step(st), "insert");
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static void time_rows(db *d, sqlite3_stmt *st, const char *step, const json_t *ops)
{
    static const char *const split[] = {"Transit Time(ms)", "Wait Time(ms)",
                                        "Synchronization Time(ms)", "Idle Time(ms)",
                                        "Synchronization Time Ratio", "Wait Time Ratio"};
    const char *op, *rank;
    json_t *ranks, *info;
    json_object_foreach((json_t *)ops, op, ranks)
        json_object_foreach(ranks, rank, info) {
            json_t *t = json_object_get(info, "Communication Time Info");
            int total = !strncmp(op, "Total Op Info", 13);
            int unsplit = !total && json_object_get(t, AIP__CC_NOTE) != NULL;
            bind_text(st, 1, step, strlen(step));
            sqlite3_bind_int64(st, 2, atoll(rank));
            bind_op(st, 3, op);
            if (total)
                sqlite3_bind_double(st, 5, 0);
            else
                bind_num(st, 5, json_object_get(t, "Start Timestamp(us)"), 0);
            bind_num(st, 6, json_object_get(t, "Elapse Time(ms)"), 0);
            for (int k = 0; k < 6; k++)
                bind_num(st, 7 + k, json_object_get(t, split[k]), unsplit);
            row(d, st);
        }
}

static void bandwidth_rows(db *d, sqlite3_stmt *st, const char *step, const json_t *ops)
{
    const char *op, *rank, *tt, *size;
    json_t *ranks, *info, *part, *bin;
    json_object_foreach((json_t *)ops, op, ranks)
        json_object_foreach(ranks, rank, info)
            json_object_foreach(json_object_get(info, "Communication Bandwidth Info"), tt, part) {
                json_t *lpr = json_object_get(part, "Large Packet Ratio");
                json_object_foreach(json_object_get(part, "Size Distribution"), size, bin) {
                    bind_text(st, 1, step, strlen(step));
                    sqlite3_bind_int64(st, 2, atoll(rank));
                    bind_op(st, 3, op);
                    bind_text(st, 5, tt, strlen(tt));
                    bind_num(st, 6, json_object_get(part, "Transit Size(MB)"), 0);
                    bind_num(st, 7, json_object_get(part, "Transit Time(ms)"), 0);
                    bind_num(st, 8, json_object_get(part, "Bandwidth(GB/s)"), 0);
                    if (lpr)
                        bind_num(st, 9, lpr, 0);
                    else /* totals: msprof-analyze writes 0 */
                        sqlite3_bind_double(st, 9, 0);
                    sqlite3_bind_double(st, 10, strtod(size, NULL));
                    json_t *cnt = json_array_get(bin, 0);
                    if (json_is_number(cnt))
                        sqlite3_bind_int64(st, 11, (sqlite3_int64)json_number_value(cnt));
                    bind_num(st, 12, json_array_get(bin, 1), 0);
                    row(d, st);
                }
            }
}

/* One step's ops of cluster_communication_matrix.json. */
static void matrix_rows(db *d, sqlite3_stmt *st, const char *step, const json_t *ops)
{
    const char *op, *lk;
    json_t *links, *l;
    json_object_foreach((json_t *)ops, op, links)
        json_object_foreach(links, lk, l) {
            const char *dash = strchr(lk, '-');
            const char *tt = json_string_value(json_object_get(l, "Transport Type"));
            const char *name = json_string_value(json_object_get(l, "Op Name"));
            bind_text(st, 1, step, strlen(step));
            bind_op(st, 2, op);
            sqlite3_bind_double(st, 4, strtod(lk, NULL));
            if (dash)
                sqlite3_bind_double(st, 5, strtod(dash + 1, NULL));
            if (tt)
                bind_text(st, 6, tt, strlen(tt));
            if (name)
                bind_text(st, 7, name, strlen(name));
            bind_num(st, 8, json_object_get(l, "Transit Size(MB)"), 0);
            bind_num(st, 9, json_object_get(l, "Transit Time(ms)"), 0);
            bind_num(st, 10, json_object_get(l, "Bandwidth(GB/s)"), 0);
            row(d, st);
        }
}

/* Drop and create table `name`; its INSERT prepared into *st (NULL when
 * that failed, d->rc saying why). */
static void table(db *d, const char *name, const char *create, int n_cols, sqlite3_stmt **st)
{
    char sql[256];
    *st = NULL;
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS \"%s\"", name);
    if (check(d, sqlite3_exec(d->db, sql, NULL, NULL, NULL), "drop") ||
        check(d, sqlite3_exec(d->db, create, NULL, NULL, NULL), "create table"))
        return;
    size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO \"%s\" VALUES (?", name);
    for (int i = 1; i < n_cols; i++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, ",?");
    snprintf(sql + n, sizeof sql - n, ")");
    if (check(d, sqlite3_prepare_v2(d->db, sql, -1, st, NULL), "prepare")) {
        sqlite3_finalize(*st);
        *st = NULL;
    }
}

/* The database being written while the two files stream past. */
struct aip__cc_db {
    aip__cluster_dbfile f;
    db d;
    int table;            /* AIP__CC_*: which rows aip__cc_db_rows() writes */
    sqlite3_stmt *insert; /* its INSERT */
};

aip_status aip__cc_db_begin(aip__cc_db **out, const char *out_dir)
{
    *out = NULL;
    aip__cc_db *x = calloc(1, sizeof *x);
    if (!x)
        return aip__fail(AIP_ERR_NOMEM, "out of memory");
    aip_status s = aip__cluster_db_open(&x->f, out_dir);
    if (s) {
        free(x);
        return s;
    }
    x->d = (db){x->f.db, x->f.path, SQLITE_OK};
    if (check(&x->d, sqlite3_exec(x->d.db, "BEGIN", NULL, NULL, NULL), "begin"))
        return aip__cc_db_end(x, AIP_ERR_IO);
    *out = x;
    return AIP_OK;
}

aip_status aip__cc_db_table(aip__cc_db *x, int t)
{
    static const struct {
        const char *name, *create;
        int n_cols;
    } tables[] = {{"ClusterCommunicationTime", TIME_SQL, 12},
                  {"ClusterCommunicationBandwidth", BW_SQL, 12},
                  {"ClusterCommunicationMatrix", MATRIX_SQL, 10}};
    sqlite3_finalize(x->insert);
    x->insert = NULL;
    x->table = t;
    if (x->d.rc == SQLITE_OK)
        table(&x->d, tables[t].name, tables[t].create, tables[t].n_cols, &x->insert);
    return x->d.rc == SQLITE_OK ? AIP_OK : AIP_ERR_IO; /* check() said why */
}

void aip__cc_db_rows(void *ctx, const char *step, const json_t *ops)
{
    aip__cc_db *x = ctx;
    if (x->d.rc != SQLITE_OK || !x->insert)
        return;
    if (x->table == AIP__CC_TIME)
        time_rows(&x->d, x->insert, step, ops);
    else if (x->table == AIP__CC_BANDWIDTH)
        bandwidth_rows(&x->d, x->insert, step, ops);
    else
        matrix_rows(&x->d, x->insert, step, ops);
}

aip_status aip__cc_db_end(aip__cc_db *x, aip_status s)
{
    sqlite3_finalize(x->insert);
    if (!s && x->d.rc == SQLITE_OK)
        check(&x->d, sqlite3_exec(x->d.db, "COMMIT", NULL, NULL, NULL), "commit");
    if (!s && x->d.rc != SQLITE_OK)
        s = AIP_ERR_IO; /* check() said why */
    /* on a failure the copy is removed: the database stays as it was */
    s = aip__cluster_db_close(&x->f, s);
    free(x);
    return s;
}
