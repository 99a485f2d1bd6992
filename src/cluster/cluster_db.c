/*
 * cluster_db.c — `aiprof cluster`'s share of cluster_analysis.db:
 * ClusterStepTraceTime, CommunicationGroupMapping, HostInfo, RankDeviceMap
 * and ClusterBaseInfo, with msprof-analyze's exact schemas (its
 * TablesConfig through DBManager.create_tables, and pandas' to_sql for
 * CommunicationGroupMapping) and rows as its db mode fills them.  The
 * cross-rank communication tables go into the same file from their own
 * writer; each writer changes a copy of the file (cluster_dbfile.c: 0640,
 * never through a symbolic link, renamed into place when complete),
 * dropping and creating only its own tables, so the order of the writers
 * does not matter and other tools' tables stay.  Values are
 * bound parameters, never pasted into SQL.
 *
 * Differences, on purpose: where msprof-analyze pads the DP/PP/TP Index
 * columns with 0 because no distributed_args were given, aiprof leaves
 * them NULL (0 would be a made-up index).  CommunicationGroup (a table
 * msprof-analyze has a layout for but never writes) is not written.
 */
#include "cluster.h"
#include "error.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The DDL as msprof-analyze issues it, text for text. */
static const char *const ddl[][2] = {
    {"ClusterStepTraceTime",
     "CREATE TABLE IF NOT EXISTS ClusterStepTraceTime(step TEXT,type TEXT,\"index\" TEXT,"
     "computing NUMERIC,communication_not_overlapped NUMERIC,overlapped NUMERIC,"
     "communication NUMERIC,free NUMERIC,stage NUMERIC,bubble NUMERIC,"
     "communication_not_overlapped_and_exclude_receive NUMERIC,preparing NUMERIC,"
     "dp_index INTEGER,pp_index INTEGER,tp_index INTEGER)"},
    {"CommunicationGroupMapping", "CREATE TABLE \"CommunicationGroupMapping\" (\n\"type\" TEXT,\n"
                                  "  \"rank_set\" TEXT,\n  \"group_name\" TEXT,\n"
                                  "  \"group_id\" TEXT,\n  \"pg_name\" TEXT\n)"},
    {"HostInfo", "CREATE TABLE IF NOT EXISTS HostInfo(hostUid TEXT,hostName TEXT)"},
    {"RankDeviceMap", "CREATE TABLE IF NOT EXISTS RankDeviceMap(rankId INTEGER,deviceId "
                      "INTEGER,hostUid TEXT,profilePath TEXT)"},
    {"ClusterBaseInfo", "CREATE TABLE IF NOT EXISTS ClusterBaseInfo(key TEXT,value TEXT)"},
};

/* step_trace_time.csv's columns in ClusterStepTraceTime's order. */
static const char *const step_cols[] = {
    "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage",
    "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"};
#define N_STEP_COLS (sizeof step_cols / sizeof *step_cols)

typedef struct dbw {
    sqlite3 *db;
    aip_status s;
    const char *path;
} dbw;

static void fail(dbw *w, const char *what)
{
    if (!w->s)
        w->s = aip__fail(AIP_ERR_IO, "%s: %s: %s", w->path, what, sqlite3_errmsg(w->db));
}

static void exec(dbw *w, const char *sql)
{
    if (!w->s && sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail(w, sql);
}

static sqlite3_stmt *prep(dbw *w, const char *sql)
{
    sqlite3_stmt *q = NULL;
    if (!w->s && sqlite3_prepare_v2(w->db, sql, -1, &q, NULL) != SQLITE_OK)
        fail(w, sql);
    return q;
}

static void run(dbw *w, sqlite3_stmt *q)
{
    if (!w->s && q && sqlite3_step(q) != SQLITE_DONE)
        fail(w, "insert");
    if (q) {
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
    }
}

static void bind_text(sqlite3_stmt *q, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(q, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(q, i);
}

static void bind_index(sqlite3_stmt *q, int i, const aip__cluster_parallel *p, long rank, int k)
{
    if (!p->ptd_ok)
        sqlite3_bind_null(q, i);
    else if (rank >= 0 && (size_t)rank < p->n_ptd && p->ptd[rank][k] >= 0)
        sqlite3_bind_int64(q, i, p->ptd[rank][k]);
    else
        sqlite3_bind_text(q, i, "NA", -1, SQLITE_STATIC);
}

static int col_at(const aip__rank_dir *r, const char *name)
{
    for (size_t k = 0; k < r->n_cols; k++)
        if (!strcmp(r->cols[k], name))
            return (int)k;
    return -1;
}

typedef struct db_stage {
    dbw *w;
    sqlite3_stmt *q;
    const aip__cluster *c;
    int at[N_STEP_COLS]; /* each column's place in the ranks' columns; -1 none */
} db_stage;

/* One "stage" row (aip__cluster_stage_rows); index "(0,1)". */
static void stage_row(void *ctx, const char *step, int st, const double *v)
{
    db_stage *ds = ctx;
    const aip__cluster_parallel *p = &ds->c->par;
    char idx[4096] = "(";
    size_t n = 1;
    for (size_t k = 0; st >= 0 && k < p->stage_len[st] && n < sizeof idx - 24; k++)
        n += (size_t)snprintf(idx + n, sizeof idx - n, "%s%ld", k ? "," : "", p->stages[st][k]);
    snprintf(idx + n, sizeof idx - n, ")");
    sqlite3_stmt *q = ds->q;
    bind_text(q, 1, step[0] ? step : NULL);
    bind_text(q, 2, "stage");
    bind_text(q, 3, idx);
    for (size_t k = 0; k < N_STEP_COLS; k++)
        if (ds->at[k] >= 0)
            sqlite3_bind_double(q, 4 + (int)k, v[ds->at[k]]);
    for (int k = 0; k < 3; k++)
        if (p->ptd_ok)
            sqlite3_bind_text(q, 13 + k, "NA", -1, SQLITE_STATIC);
    run(ds->w, q);
}

static void stage_rows(dbw *w, sqlite3_stmt *q, const aip__cluster *c)
{
    const aip__rank_dir *ref = aip__cluster_first_used(c);
    if (!ref)
        return;
    db_stage ds = {w, q, c, {0}};
    for (size_t k = 0; k < N_STEP_COLS; k++)
        ds.at[k] = col_at(ref, step_cols[k]);
    if (aip__cluster_stage_rows(c, stage_row, &ds) && !w->s)
        w->s = aip__fail(AIP_ERR_NOMEM, "no memory for the stage rows of %s", w->path);
}

static void step_trace(dbw *w, const aip__cluster *c)
{
    sqlite3_stmt *q = prep(w, "INSERT INTO ClusterStepTraceTime VALUES "
                              "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (size_t i = 0; q && i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        int at[N_STEP_COLS];
        for (size_t k = 0; k < N_STEP_COLS; k++)
            at[k] = col_at(r, step_cols[k]);
        char idx[24];
        snprintf(idx, sizeof idx, "%ld", r->rank);
        for (size_t j = 0; j < r->n_rows; j++) {
            bind_text(q, 1, r->rows[j].step[0] ? r->rows[j].step : NULL);
            bind_text(q, 2, "rank");
            bind_text(q, 3, idx);
            for (size_t k = 0; k < N_STEP_COLS; k++)
                if (at[k] >= 0)
                    sqlite3_bind_double(q, 4 + (int)k, r->rows[j].v[at[k]]);
            for (int k = 0; k < 3; k++)
                bind_index(q, 13 + k, &c->par, r->rank, k);
            run(w, q);
        }
    }
    if (q)
        stage_rows(w, q, c);
    sqlite3_finalize(q);
}

static int cmp_group(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int t = strcmp(json_string_value(json_object_get(x, "type")),
                   json_string_value(json_object_get(y, "type")));
    return t ? t
             : strcmp(json_string_value(json_object_get(x, "group_name")),
                      json_string_value(json_object_get(y, "group_name")));
}

/* The recipe's rows: grouped (so sorted) by type and group_name, rank_set
 * as "(0,1,2)". */
static void group_mapping(dbw *w, const aip__cluster *c)
{
    size_t n = json_array_size(c->par.groups);
    json_t **g = malloc((n ? n : 1) * sizeof *g);
    if (!g) {
        w->s = w->s ? w->s : aip__fail(AIP_ERR_NOMEM, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        g[i] = json_array_get(c->par.groups, i);
    qsort(g, n, sizeof *g, cmp_group);
    sqlite3_stmt *q = prep(w, "INSERT INTO CommunicationGroupMapping VALUES (?,?,?,?,?)");
    for (size_t i = 0; q && i < n; i++) {
        json_t *set = json_object_get(g[i], "rank_set");
        size_t len = 2 + 21 * json_array_size(set), at = 1, k;
        char *text = malloc(len + 1);
        json_t *v;
        if (!text) {
            w->s = w->s ? w->s : aip__fail(AIP_ERR_NOMEM, "out of memory");
            break;
        }
        text[0] = '(';
        json_array_foreach(set, k, v)
            at += (size_t)snprintf(text + at, len - at, "%s%lld", k ? "," : "",
                                   (long long)json_integer_value(v));
        snprintf(text + at, len + 1 - at, ")");
        bind_text(q, 1, json_string_value(json_object_get(g[i], "type")));
        bind_text(q, 2, text);
        bind_text(q, 3, json_string_value(json_object_get(g[i], "group_name")));
        bind_text(q, 4, json_string_value(json_object_get(g[i], "group_id")));
        bind_text(q, 5, json_string_value(json_object_get(g[i], "pg_name")));
        run(w, q);
        free(text);
    }
    sqlite3_finalize(q);
    free(g);
}

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* HostInfo: one row per host, in rank order; RankDeviceMap: a row per
 * device of every rank that has its ascend_pytorch_profiler db. */
static void hosts(dbw *w, const aip__cluster *c)
{
    sqlite3_stmt *h = prep(w, "INSERT INTO HostInfo VALUES (?,?)");
    sqlite3_stmt *d = prep(w, "INSERT INTO RankDeviceMap VALUES (?,?,?,?)");
    for (size_t i = 0; h && d && i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0])
            continue;
        int dup = !r->host_uid && !r->host_name;
        for (size_t k = 0; k < i && !dup; k++)
            dup = !c->r[k].problem[0] && same(c->r[k].host_uid, r->host_uid) &&
                  same(c->r[k].host_name, r->host_name);
        if (!dup) {
            bind_text(h, 1, r->host_uid);
            bind_text(h, 2, r->host_name);
            run(w, h);
        }
        char abs[PATH_MAX]; /* msprof-analyze gives the directory's absolute path */
        const char *where = realpath(r->path, abs) ? abs : r->path;
        for (size_t k = 0; k < r->n_devices; k++) {
            sqlite3_bind_int64(d, 1, r->rank);
            sqlite3_bind_int64(d, 2, r->devices[k]);
            bind_text(d, 3, r->host_uid);
            bind_text(d, 4, where);
            run(w, d);
        }
    }
    sqlite3_finalize(h);
    sqlite3_finalize(d);
}

/* ClusterBaseInfo: distributed_args without "rank", as json.dumps writes
 * them (", " and ": " separators, ASCII). */
static void base_info(dbw *w, const aip__cluster *c)
{
    json_t *args = c->par.dist_args ? json_copy(c->par.dist_args) : NULL;
    if (!args)
        return;
    json_object_del(args, "rank");
    char *text = json_dumps(args, JSON_ENSURE_ASCII | JSON_INDENT(0) | JSON_PRESERVE_ORDER);
    json_decref(args);
    if (!text) {
        w->s = w->s ? w->s : aip__fail(AIP_ERR_NOMEM, "out of memory");
        return;
    }
    sqlite3_stmt *q = prep(w, "INSERT INTO ClusterBaseInfo VALUES (?,?)");
    if (q) {
        bind_text(q, 1, "distributed_args");
        bind_text(q, 2, text);
        run(w, q);
    }
    sqlite3_finalize(q);
    free(text);
}

aip_status aip__cluster_write_db(const aip__cluster *c, const char *out_dir)
{
    aip__cluster_dbfile f;
    aip_status s = aip__cluster_db_open(&f, out_dir);
    if (s)
        return s;
    dbw w = {f.db, AIP_OK, f.path};
    exec(&w, "BEGIN");
    char sql[128];
    for (size_t t = 0; t < sizeof ddl / sizeof *ddl; t++) {
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", ddl[t][0]);
        exec(&w, sql);
        /* msprof-analyze creates HostInfo, RankDeviceMap and ClusterBaseInfo
         * only when it has rows for them */
        exec(&w, ddl[t][1]);
    }
    step_trace(&w, c);
    group_mapping(&w, c);
    hosts(&w, c);
    base_info(&w, c);
    if (!c->par.dist_args)
        exec(&w, "DROP TABLE ClusterBaseInfo");
    exec(&w, "COMMIT");
    /* on a failure the copy is removed: the database stays as it was */
    return aip__cluster_db_close(&f, w.s);
}
