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
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static aip_status db_fail(aip__db *d, const char *what)
{
    if (!d->status)
        d->status = aip__fail(AIP_ERR_IO, "%s: %s failed: %s", d->path, what,
                              d->db ? sqlite3_errmsg(d->db) : "no database");
    return d->status;
}

static aip_status exec(aip__db *d, const char *sql)
{
    if (d->status)
        return d->status;
    if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(d, sql);
    return AIP_OK;
}

aip_status aip__db_open(aip__db *d, const char *path)
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
    int rc = sqlite3_open_v2(d->tmp, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                             NULL); /* one thread per connection: no per-call locking */
    if (rc != SQLITE_OK) {
        aip_status s = db_fail(d, "open");
        aip__db_abort(d);
        return s;
    }
    exec(d, "PRAGMA page_size=32768"); /* fewer, larger pages: faster appends */
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

aip_status aip__db_create(aip__db *d, const aip__db_table *t)
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

/* A literal may only be a number or NULL: it is pasted into SQL. */
static int plain_literal(const char *s)
{
    if (!strcmp(s, "NULL"))
        return 1;
    if (*s == '-')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static aip_status prepare(aip__db *d, const aip__db_table *t, const char *const *fixed, int rows,
                          sqlite3_stmt **st)
{
    char sql[8192];
    size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES ", t->name);
    for (int r = 0; r < rows && n + 256 < sizeof sql; r++) {
        n += (size_t)snprintf(sql + n, sizeof sql - n, r ? ",(" : "(");
        for (int i = 0; i < t->n_cols && n + 32 < sizeof sql; i++)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%s", i ? "," : "",
                                  fixed && fixed[i] ? fixed[i] : "?");
        n += (size_t)snprintf(sql + n, sizeof sql - n, ")");
    }
    if (n + 256 >= sizeof sql)
        return d->status = aip__fail(AIP_ERR_INVALID_ARG, "table %s is too wide", t->name);
    if (sqlite3_prepare_v2(d->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_fail(d, "prepare insert");
    return AIP_OK;
}

int aip__db_no_direct;

static aip_status insert_init(aip__db *d, const aip__db_table *t, const char *const *fixed,
                              aip__db_insert *ins, int create)
{
    ins->d = d;
    ins->direct = NULL;
    ins->many = ins->one = NULL;
    ins->n_cols = t->n_cols;
    ins->n_params = 0;
    ins->row = 0;
    ins->rows = 0;
    ins->text = NULL;
    ins->text_len = ins->text_cap = 0;
    if (t->n_cols > AIP_DB_MAX_COLS)
        return d->status = aip__fail(AIP_ERR_INVALID_ARG, "table %s is too wide", t->name);
    for (int i = 0; i < t->n_cols; i++) {
        if (fixed && fixed[i] && !plain_literal(fixed[i]))
            return d->status = aip__fail(AIP_ERR_INVALID_ARG, "bad literal for %s", t->name);
        ins->is_fixed[i] = fixed && fixed[i];
        if (!ins->is_fixed[i]) {
            ins->param_col[ins->n_params++] = i;
        } else if (!strcmp(fixed[i], "NULL")) {
            ins->fixed[i].kind = AIP_DBV_NULL;
        } else {
            ins->fixed[i].kind = AIP_DBV_INT;
            ins->fixed[i].u.i = strtoll(fixed[i], NULL, 10);
        }
    }
    if (create && aip__db_create(d, t))
        return d->status;
    if (!aip__db_no_direct && aip__db_direct_ok(t))
        return aip__db_direct_open(d, t, &ins->direct);
    if (prepare(d, t, fixed, AIP_DB_ROWS_PER_STMT, &ins->many) ||
        prepare(d, t, fixed, 1, &ins->one))
        return d->status;
    return AIP_OK;
}

aip_status aip__db_insert_begin(aip__db *d, const aip__db_table *t, aip__db_insert *ins)
{
    return insert_init(d, t, NULL, ins, 1);
}

aip_status aip__db_insert_fixed(aip__db *d, const aip__db_table *t, const char *const *fixed,
                                aip__db_insert *ins)
{
    return insert_init(d, t, fixed, ins, 0);
}

void aip__db_text(aip__db_insert *ins, int col, const char *s, size_t n)
{
    aip__db_val *v = &ins->vals[ins->row][col];
    if (aip__model_grow((void **)&ins->text, &ins->text_cap, ins->text_len + n + 1, 1)) {
        if (!ins->d->status)
            ins->d->status = AIP_ERR_NOMEM;
        v->kind = AIP_DBV_NULL;
        return;
    }
    memcpy(ins->text + ins->text_len, s, n);
    v->kind = AIP_DBV_TEXT;
    v->u.t.off = ins->text_len;
    v->u.t.len = n;
    ins->text_len += n;
}

static void bind_row(aip__db_insert *ins, sqlite3_stmt *st, int row, int first_param)
{
    for (int k = 0; k < ins->n_params; k++) {
        const aip__db_val *v = &ins->vals[row][ins->param_col[k]];
        int p = first_param + k;
        switch (v->kind) {
        case AIP_DBV_INT: sqlite3_bind_int64(st, p, v->u.i); break;
        case AIP_DBV_REAL: sqlite3_bind_double(st, p, v->u.d); break;
        case AIP_DBV_TEXT:
            sqlite3_bind_text(st, p, ins->text + v->u.t.off, (int)v->u.t.len, SQLITE_STATIC);
            break;
        default: sqlite3_bind_null(st, p); break;
        }
    }
}

/* Rows [from, to) of a direct table's insert: the literal columns' values
 * put into each row (the callers leave those columns unset). */
static void direct_rows(aip__db_insert *ins, int from, int to)
{
    int fixed[AIP_DB_MAX_COLS], n_fixed = 0;
    for (int i = 0; i < ins->n_cols; i++)
        if (ins->is_fixed[i])
            fixed[n_fixed++] = i;
    for (int r = from; r < to && !ins->d->status; r++) {
        for (int k = 0; k < n_fixed; k++)
            ins->vals[r][fixed[k]] = ins->fixed[fixed[k]];
        aip__db_direct_row(ins->d, ins->direct, ins->vals[r], ins->n_cols);
    }
    ins->rows += (uint64_t)(to - from);
    ins->d->rows += (uint64_t)(to - from);
}

static void step(aip__db_insert *ins, sqlite3_stmt *st, int rows)
{
    aip__db *d = ins->d;
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_fail(d, "insert");
        return;
    }
    sqlite3_reset(st);
    ins->rows += (uint64_t)rows;
    d->rows += (uint64_t)rows;
    d->rows_in_txn += (uint64_t)rows;
    if (d->rows_in_txn >= AIP_DB_BATCH) {
        d->rows_in_txn = 0;
        exec(d, "COMMIT");
        exec(d, "BEGIN");
    }
}

void aip__db_row(aip__db_insert *ins)
{
    if (++ins->row < AIP_DB_ROWS_PER_STMT)
        return;
    ins->row = 0;
    if (ins->direct && !ins->d->status)
        direct_rows(ins, 0, AIP_DB_ROWS_PER_STMT);
    if (ins->d->status || !ins->many) {
        ins->text_len = 0;
        return;
    }
    for (int r = 0; r < AIP_DB_ROWS_PER_STMT; r++)
        bind_row(ins, ins->many, r, 1 + r * ins->n_params);
    step(ins, ins->many, AIP_DB_ROWS_PER_STMT);
    ins->text_len = 0;
}

void aip__db_insert_end(aip__db_insert *ins)
{
    if (ins->direct && ins->row && !ins->d->status)
        direct_rows(ins, 0, ins->row);
    ins->direct = NULL;
    for (int r = 0; r < ins->row && !ins->d->status && ins->one; r++) {
        bind_row(ins, ins->one, r, 1);
        step(ins, ins->one, 1);
    }
    ins->row = 0;
    if (ins->many)
        sqlite3_finalize(ins->many);
    if (ins->one)
        sqlite3_finalize(ins->one);
    ins->many = ins->one = NULL;
    free(ins->text);
    ins->text = NULL;
    ins->text_len = ins->text_cap = 0;
}

void aip__db_abort(aip__db *d)
{
    if (d->db)
        sqlite3_close(d->db);
    d->db = NULL;
    aip__db_direct_discard(d);
    if (d->tmp[0])
        unlink(d->tmp);
}

aip_status aip__db_close(aip__db *d)
{
    exec(d, "COMMIT");
    if (d->db && sqlite3_close(d->db) != SQLITE_OK)
        db_fail(d, "close"); /* a statement left open: a bug, not data */
    else
        d->db = NULL;
    if (!d->status)
        aip__db_direct_splice(d); /* SQLite is done with the file */
    aip__db_direct_discard(d);
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
