/*
 * db.c — SQLite output files (see db.h).
 *
 * Speed matters (a profile holds millions of rows) and durability does
 * not: nobody sees the file before it is complete and renamed, so the
 * journal is off, writes are not synced, and each transaction takes
 * AIP_DB_BATCH rows.  SQLite's page cache is capped so that a big profile
 * does not add hundreds of MB of resident memory on top of the model.
 */
#include "db.h"
#include "error.h"
#include "fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static aip_status db_fail(aip_db *d, const char *what)
{
    if (!d->status)
        d->status = aip__fail(AIP_ERR_IO, "%s: %s failed: %s", d->path, what,
                              d->db ? sqlite3_errmsg(d->db) : "no database");
    return d->status;
}

static aip_status exec(aip_db *d, const char *sql)
{
    if (d->status)
        return d->status;
    if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(d, sql);
    return AIP_OK;
}

aip_status aip__db_open(aip_db *d, const char *path)
{
    memset(d, 0, sizeof *d);
    if (snprintf(d->path, sizeof d->path, "%s", path) >= (int)sizeof d->path ||
        snprintf(d->tmp, sizeof d->tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof d->tmp)
        return aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    /* Created here rather than by SQLite: our mode (0640), O_NOFOLLOW, and a
     * fresh empty file even if a stale one was left by a killed analysis. */
    unlink(d->tmp);
    int fd = aip__open_output(d->tmp);
    if (fd < 0) {
        d->tmp[0] = 0;
        return AIP_ERR_IO; /* message set by aip__open_output */
    }
    close(fd);
    int rc = sqlite3_open_v2(d->tmp, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc != SQLITE_OK) {
        aip_status s = db_fail(d, "open");
        aip__db_abort(d);
        return s;
    }
    exec(d, "PRAGMA journal_mode=OFF");
    exec(d, "PRAGMA synchronous=OFF");
    exec(d, "PRAGMA locking_mode=EXCLUSIVE");
    exec(d, "PRAGMA temp_store=MEMORY");
    exec(d, "PRAGMA cache_size=-16384"); /* 16 MiB */
    exec(d, "BEGIN");
    if (d->status) {
        aip_status s = d->status;
        aip__db_abort(d);
        return s;
    }
    return AIP_OK;
}

/* Identifiers come from our own tables (db_*.c), never from data; still,
 * refuse anything but [A-Za-z0-9_] rather than quote it. */
static int plain_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

aip_status aip__db_create(aip_db *d, const aip_db_table *t)
{
    if (d->status)
        return d->status;
    char sql[2048];
    size_t n = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE %s (", t->name);
    int ok = plain_name(t->name);
    for (int i = 0; i < t->n_cols && n < sizeof sql; i++) {
        ok = ok && plain_name(t->cols[i].name) && plain_name(t->cols[i].type);
        n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%s %s%s", i ? ", " : "",
                              t->cols[i].name, t->cols[i].type,
                              i == t->pk_col ? " PRIMARY KEY" : "");
    }
    if (!ok || n + 2 >= sizeof sql)
        return d->status = aip__fail(AIP_ERR_INVALID_ARG, "bad table definition %s", t->name);
    memcpy(sql + n, ")", 2);
    return exec(d, sql);
}

aip_status aip__db_insert_begin(aip_db *d, const aip_db_table *t, aip_db_insert *ins)
{
    memset(ins, 0, sizeof *ins);
    ins->d = d;
    ins->n_cols = t->n_cols;
    if (aip__db_create(d, t))
        return d->status;
    char sql[1024];
    size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (", t->name);
    for (int i = 0; i < t->n_cols && n + 4 < sizeof sql; i++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, i ? ",?" : "?");
    if (n + 2 >= sizeof sql)
        return d->status = aip__fail(AIP_ERR_INVALID_ARG, "table %s is too wide", t->name);
    memcpy(sql + n, ")", 2);
    if (sqlite3_prepare_v2(d->db, sql, -1, &ins->st, NULL) != SQLITE_OK)
        return db_fail(d, "prepare insert");
    return AIP_OK;
}

void aip__db_row(aip_db_insert *ins)
{
    aip_db *d = ins->d;
    if (d->status || !ins->st)
        return;
    if (sqlite3_step(ins->st) != SQLITE_DONE) {
        db_fail(d, "insert");
        return;
    }
    sqlite3_reset(ins->st);
    ins->rows++;
    d->rows++;
    if (++d->rows_in_txn >= AIP_DB_BATCH) {
        d->rows_in_txn = 0;
        exec(d, "COMMIT");
        exec(d, "BEGIN");
    }
}

void aip__db_insert_end(aip_db_insert *ins)
{
    if (ins->st)
        sqlite3_finalize(ins->st);
    ins->st = NULL;
}

void aip__db_abort(aip_db *d)
{
    if (d->db)
        sqlite3_close(d->db);
    d->db = NULL;
    if (d->tmp[0])
        unlink(d->tmp);
}

aip_status aip__db_close(aip_db *d)
{
    exec(d, "COMMIT");
    if (d->db && sqlite3_close(d->db) != SQLITE_OK)
        db_fail(d, "close"); /* a statement left open: a bug, not data */
    else
        d->db = NULL;
    struct stat st;
    if (!d->status && lstat(d->path, &st) == 0 && S_ISLNK(st.st_mode))
        d->status = aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link",
                              d->path);
    if (!d->status && rename(d->tmp, d->path) != 0)
        d->status = aip__fail(AIP_ERR_IO, "cannot rename %s to %s: %s", d->tmp, d->path,
                              strerror(errno));
    if (d->status)
        aip__db_abort(d);
    return d->status;
}
