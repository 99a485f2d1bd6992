/*
 * cluster_comm_rankfiles.c — aip__cc_write_back() (cluster_comm.h): the
 * split that cluster_comm.c measured, written into each used rank's
 * ASCEND_PROFILER_OUTPUT: communication.json and communication_matrix.json
 * as the cluster holds them (r->comm, r->matrix, after
 * cluster_comm_back.c; without the notes saying why an op was not split,
 * whose text msprof-analyze would try to add up), and the same figures into analysis.db's
 * CommAnalyzerTime, CommAnalyzerBandwidth and CommAnalyzerMatrix rows (a
 * collective's total row inserted: the rank leaves it out until it has a
 * time, cluster_comm_totals.c).
 *
 * Every file is replaced, never edited in place: the JSON through
 * aip__write_file() (temp + rename, a link at the path refused); the
 * database is copied to a temp file created O_NOFOLLOW, opened by SQLite
 * with SQLITE_OPEN_NOFOLLOW, updated with bound parameters only and
 * renamed over the original.  A rank whose files cannot be written (say,
 * its directory lies on another host's disk) is named on the report and
 * the others go on: the cluster's own outputs do not depend on it.
 */
#include "cluster_comm.h"
#include "error.h"
#include "fs.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DB_MAX ((size_t)1 << 30)

static const char *const CLASSES[] = {"collective", "p2p"};

/* The Python json.dumps() text of v, as the cluster's own files. */
static aip_status write_json(const char *path, const json_t *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return aip__fail(AIP_ERR_NOMEM, "no memory for %s", path);
    int bad = aip__cc_dump_python(v, f) || fputc('\n', f) == EOF;
    if (fclose(f) || bad) {
        free(buf);
        return aip__fail(AIP_ERR_NOMEM, "no memory for %s", path);
    }
    aip_status s = aip__write_file(path, buf, len);
    free(buf);
    return s;
}

/* ---- analysis.db ---------------------------------------------------------- */

typedef struct upd {
    sqlite3 *db;
    sqlite3_stmt *time, *bw, *mx, *total;
    int rc;
} upd;

static void bind_num(sqlite3_stmt *st, int i, const json_t *v)
{
    if (json_is_number(v))
        sqlite3_bind_double(st, i, json_number_value(v));
    else
        sqlite3_bind_null(st, i);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s, size_t n)
{
    sqlite3_bind_text(st, i, s, (int)n, SQLITE_TRANSIENT);
}

static void run(upd *u, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE && u->rc == SQLITE_OK)
        u->rc = rc;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* "<name>@<group>": name and group as bound parameters at i, i + 1. */
static void bind_key(sqlite3_stmt *st, int i, const char *key)
{
    const char *at = strrchr(key, '@');
    size_t n = at ? (size_t)(at - key) : strlen(key);
    bind_text(st, i, key, n);
    bind_text(st, i + 1, at ? at + 1 : "", at ? strlen(at + 1) : 0);
}

static void update_comm(upd *u, const json_t *comm)
{
    const char *step, *op, *tt;
    json_t *sv, *ov, *v;
    json_object_foreach((json_t *)comm, step, sv)
        for (int k = 0; k < 2; k++)
            json_object_foreach(json_object_get(sv, CLASSES[k]), op, ov) {
                if (!strncmp(op, "Total", 5))
                    continue; /* analysis.db holds no totals */
                json_t *t = json_object_get(ov, "Communication Time Info");
                bind_num(u->time, 1, json_object_get(t, "Transit Time(ms)"));
                bind_num(u->time, 2, json_object_get(t, "Wait Time(ms)"));
                bind_num(u->time, 3, json_object_get(t, "Synchronization Time(ms)"));
                bind_num(u->time, 4, json_object_get(t, "Idle Time(ms)"));
                bind_key(u->time, 5, op);
                bind_text(u->time, 7, step, strlen(step));
                bind_text(u->time, 8, CLASSES[k], strlen(CLASSES[k]));
                run(u, u->time);
                json_object_foreach(json_object_get(ov, "Communication Bandwidth Info"), tt, v) {
                    bind_num(u->bw, 1, json_object_get(v, "Transit Time(ms)"));
                    bind_num(u->bw, 2, json_object_get(v, "Bandwidth(GB/s)"));
                    bind_num(u->bw, 3, json_object_get(v, "Transit Time(ms)"));
                    bind_key(u->bw, 4, op);
                    bind_text(u->bw, 6, step, strlen(step));
                    bind_text(u->bw, 7, CLASSES[k], strlen(CLASSES[k]));
                    bind_text(u->bw, 8, tt, strlen(tt));
                    run(u, u->bw);
                }
            }
}

/* A collective's total that the rank left out (no time until the split,
 * cluster_comm_totals.c): a new row. */
static void insert_total(upd *u, const char *step, const char *key, const char *lk,
                         size_t lk_n, const json_t *l)
{
    const char *op = json_string_value(json_object_get(l, "Op Name"));
    bind_key(u->total, 1, key);
    bind_text(u->total, 3, lk, lk_n);
    bind_num(u->total, 4, json_object_get(l, "Transit Size(MB)"));
    bind_num(u->total, 5, json_object_get(l, "Transit Time(ms)"));
    bind_num(u->total, 6, json_object_get(l, "Bandwidth(GB/s)"));
    bind_text(u->total, 7, step, strlen(step));
    bind_text(u->total, 8, op ? op : "", op ? strlen(op) : 0);
    run(u, u->total);
}

/* Collective total rows an earlier pass inserted that this pass's split
 * does not give (their ops no longer all split): deleted.  Rows it gives
 * again stay, updated in place, so a repeated pass writes the same bytes. */
static void prune_totals(upd *u, const json_t *matrix)
{
    sqlite3_stmt *q = NULL, *del = NULL;
    int rc = sqlite3_prepare_v2(u->db,
                                "SELECT rowid, hccl_op_name, group_name, src_rank, step FROM "
                                "CommAnalyzerMatrix WHERE type='collective' AND hccl_op_name "
                                "LIKE '%-total' AND src_rank = dst_rank",
                                -1, &q, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(u->db, "DELETE FROM CommAnalyzerMatrix WHERE rowid = ?1", -1,
                                &del, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        rc = SQLITE_OK; /* a row: go on to the next */
        char key[512], link[128];
        const char *name = (const char *)sqlite3_column_text(q, 1);
        const char *group = (const char *)sqlite3_column_text(q, 2);
        const char *src = (const char *)sqlite3_column_text(q, 3);
        const char *step = (const char *)sqlite3_column_text(q, 4);
        snprintf(key, sizeof key, "%s@%s", name ? name : "", group ? group : "");
        snprintf(link, sizeof link, "%s-%s", src ? src : "", src ? src : "");
        json_t *entry = json_object_get(
            json_object_get(json_object_get(matrix, step ? step : ""), "collective"), key);
        if (json_object_get(entry, link))
            continue;
        sqlite3_bind_int64(del, 1, sqlite3_column_int64(q, 0));
        rc = sqlite3_step(del) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(del);
    }
    if (rc != SQLITE_DONE && u->rc == SQLITE_OK) /* DONE: every row seen */
        u->rc = rc;
    sqlite3_finalize(q);
    sqlite3_finalize(del);
}

static void update_matrix(upd *u, const json_t *matrix)
{
    const char *step, *key, *lk;
    json_t *sv, *ov, *l;
    json_object_foreach((json_t *)matrix, step, sv)
        json_object_foreach(json_object_get(sv, "collective"), key, ov)
            json_object_foreach(ov, lk, l) {
                const char *dash = strchr(lk, '-');
                size_t n = dash ? (size_t)(dash - lk) : 0;
                if (!n || strlen(dash + 1) != n || strncmp(lk, dash + 1, n))
                    continue; /* self links only: the others are the rank's own */
                bind_num(u->mx, 1, json_object_get(l, "Transit Time(ms)"));
                bind_num(u->mx, 2, json_object_get(l, "Bandwidth(GB/s)"));
                bind_key(u->mx, 3, key);
                bind_text(u->mx, 5, lk, (size_t)(dash - lk));
                bind_text(u->mx, 6, step, strlen(step));
                run(u, u->mx);
                if (u->rc == SQLITE_OK && sqlite3_changes(u->db) == 0)
                    insert_total(u, step, key, lk, (size_t)(dash - lk), l);
            }
}

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

static aip_status update_db(const char *tmp, const aip__rank_dir *r)
{
    upd u = {0};
    int rc = sqlite3_open_v2(tmp, &u.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc == SQLITE_OK && !has_table(u.db, "CommAnalyzerTime")) {
        sqlite3_close(u.db);
        return AIP_OK; /* nothing recorded there: nothing to update */
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(u.db, "BEGIN", NULL, NULL, NULL);
    const struct {
        const char *sql;
        sqlite3_stmt **st;
    } stmts[] = {
        {"UPDATE CommAnalyzerTime SET transit_time=?1, wait_time=?2, "
         "synchronization_time=?3, idle_time=?4 WHERE hccl_op_name=?5 AND group_name=?6 "
         "AND step=?7 AND type=?8",
         &u.time},
        {"UPDATE CommAnalyzerBandwidth SET transit_time=?1, bandwidth=?2, "
         "total_duration=?3 WHERE hccl_op_name=?4 AND group_name=?5 AND step=?6 AND "
         "type=?7 AND transport_type=?8",
         &u.bw},
        {"UPDATE CommAnalyzerMatrix SET transit_time=?1, bandwidth=?2 WHERE "
         "hccl_op_name=?3 AND group_name=?4 AND src_rank=?5 AND dst_rank=?5 AND step=?6 "
         "AND type='collective'",
         &u.mx},
        /* collective totals: only those the split timed (cluster_comm_totals.c) */
        {"INSERT INTO CommAnalyzerMatrix (hccl_op_name, group_name, src_rank, dst_rank, "
         "transport_type, transit_size, transit_time, bandwidth, step, type, op_name) "
         "VALUES (?1, ?2, ?3, ?3, 'LOCAL', ?4, ?5, ?6, ?7, 'collective', ?8)",
         &u.total},
    };
    for (size_t i = 0; i < sizeof stmts / sizeof *stmts && rc == SQLITE_OK; i++)
        rc = sqlite3_prepare_v2(u.db, stmts[i].sql, -1, stmts[i].st, NULL);
    if (rc == SQLITE_OK) {
        update_comm(&u, r->comm);
        prune_totals(&u, r->matrix);
        update_matrix(&u, r->matrix);
        rc = u.rc;
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(u.db, "COMMIT", NULL, NULL, NULL);
    aip_status s = rc == SQLITE_OK ? AIP_OK
                                   : aip__fail(AIP_ERR_IO, "updating %s: %s", tmp,
                                               u.db ? sqlite3_errmsg(u.db) : "cannot open");
    sqlite3_finalize(u.time);
    sqlite3_finalize(u.bw);
    sqlite3_finalize(u.mx);
    sqlite3_finalize(u.total);
    sqlite3_close(u.db);
    return s;
}

/* analysis.db replaced by an updated copy; nothing when it is absent. */
static aip_status write_db(const char *path, const aip__rank_dir *r)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return AIP_OK;
    if (S_ISLNK(st.st_mode))
        return aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link",
                         path);
    char *data;
    size_t size;
    aip_status s = aip__read_file_nofollow(path, DB_MAX, &data, &size);
    if (s)
        return s;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.cluster%d", path, (int)getpid()) >= (int)sizeof tmp) {
        free(data);
        return aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    }
    int fd = aip__open_output(tmp);
    if (fd < 0) {
        free(data);
        return AIP_ERR_IO;
    }
    s = aip__write_all(fd, data, size, tmp);
    free(data);
    if (close(fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed", tmp);
    if (!s)
        s = update_db(tmp, r);
    if (!s && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        s = aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link", path);
    if (!s && rename(tmp, path) != 0)
        s = aip__fail(AIP_ERR_IO, "cannot rename %s to %s", tmp, path);
    if (s)
        unlink(tmp);
    return s;
}

/* r->comm without the cluster's notes: msprof-analyze sums every field of
 * a Time Info but the start and the ratios, and a text there stops it
 * (TypeError); the notes stay in the cluster's own files. */
static json_t *without_notes(const json_t *comm)
{
    json_t *c = json_deep_copy(comm);
    const char *step, *op;
    json_t *sv, *ov;
    json_object_foreach(c, step, sv)
        for (int k = 0; k < 2; k++)
            json_object_foreach(json_object_get(sv, CLASSES[k]), op, ov)
                json_object_del(json_object_get(ov, "Communication Time Info"), AIP__CC_NOTE);
    return c;
}

/* Only into files the rank has: a rank exported as databases only gets
 * no text files (msprof-analyze refuses a directory holding both). */
static int exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static aip_status write_rank(const aip__rank_dir *r)
{
    char out[PATH_MAX], path[PATH_MAX];
    aip_status s = aip__join(out, sizeof out, r->path, "ASCEND_PROFILER_OUTPUT");
    if (!s && r->comm && !(s = aip__join(path, sizeof path, out, "communication.json")) &&
        exists(path)) {
        json_t *c = without_notes(r->comm);
        s = c ? write_json(path, c) : aip__fail(AIP_ERR_NOMEM, "no memory for %s", path);
        json_decref(c);
    }
    if (!s && r->matrix &&
        !(s = aip__join(path, sizeof path, out, "communication_matrix.json")) && exists(path))
        s = write_json(path, r->matrix);
    if (!s && !(s = aip__join(path, sizeof path, out, "analysis.db")))
        s = write_db(path, r);
    return s;
}

void aip__cc_write_back(aip__cluster *c)
{
    size_t done = 0;
    for (size_t i = 0; i < c->n; i++) {
        const aip__rank_dir *r = &c->r[i];
        if (r->problem[0] || !r->comm)
            continue;
        if (write_rank(r)) {
            aip__cluster_say(c, "split not written back into %s (rank %ld): %s\n", r->path,
                             r->rank, aip_last_error());
        } else {
            done++;
        }
    }
    if (done)
        aip__cluster_say(c,
                         "communication: the cross-rank split written into %zu rank "
                         "director%s (`aiprof analyse DIR` takes it out again)\n",
                         done, done == 1 ? "y" : "ies");
}
