/*
 * db.h — the SQLite writer under every .db output.
 *
 * A database is built in a temporary file beside its target (created 0640
 * through fs.h, never through a symlink) and renamed into place when
 * complete, like every other output (outbuf.h).  Rows go in with prepared
 * statements and bound parameters only, in transactions of AIP_DB_BATCH
 * rows; the file is private until renamed, so there is no journal and no
 * fsync.  Errors are sticky, as in aip_out: callers keep binding and adding
 * rows, and aip__db_close() reports the first failure.
 */
#ifndef AIP_DB_H
#define AIP_DB_H

#include "aiprof.h"

#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define AIP_DB_BATCH 200000 /* rows per transaction */

typedef struct aip_db_col {
    const char *name;
    const char *type;         /* "INTEGER", "TEXT", "NUMERIC" */
} aip_db_col;

/* A table's layout as the seed documents it. */
typedef struct aip_db_table {
    const char *name;
    const aip_db_col *cols;
    int n_cols;
    int pk_col;               /* column declared PRIMARY KEY, -1 = none */
} aip_db_table;

typedef struct aip_db {
    sqlite3 *db;
    aip_status status;        /* first error, sticky */
    uint64_t rows_in_txn;
    uint64_t rows;            /* rows added in total */
    char path[PATH_MAX];
    char tmp[PATH_MAX];
} aip_db;

typedef struct aip_db_insert {
    aip_db *d;
    sqlite3_stmt *st;
    int n_cols;
    uint64_t rows;
} aip_db_insert;

/* aip__db_open() : start building the database `path` (via a temp name). */
aip_status aip__db_open(aip_db *d, const char *path);
/* aip__db_create() : CREATE TABLE as documented. */
aip_status aip__db_create(aip_db *d, const aip_db_table *t);
/* aip__db_close() : commit, close and rename into place; on any error
 * (sticky or now) the temporary file is removed.  @return the status. */
aip_status aip__db_close(aip_db *d);
/* aip__db_abort() : discard the database. */
void aip__db_abort(aip_db *d);

/* aip__db_insert_begin() : a prepared INSERT for every column of `t`
 * (creating the table first). */
aip_status aip__db_insert_begin(aip_db *d, const aip_db_table *t, aip_db_insert *ins);
/* aip__db_row() : insert the bound row.  Bindings stay as they are (no
 * per-row clearing on the hot path): bind every column of every row, NULL
 * included.  Commits every AIP_DB_BATCH rows. */
void aip__db_row(aip_db_insert *ins);
void aip__db_insert_end(aip_db_insert *ins);

/* Column binding; `col` counts from 0.  Text must be valid UTF-8 without
 * NUL (aip__utf8_clean()); it is copied by SQLite. */
static inline void aip__db_i64(aip_db_insert *ins, int col, int64_t v)
{
    sqlite3_bind_int64(ins->st, col + 1, v);
}
static inline void aip__db_f64(aip_db_insert *ins, int col, double v)
{
    sqlite3_bind_double(ins->st, col + 1, v);
}
static inline void aip__db_null(aip_db_insert *ins, int col)
{
    sqlite3_bind_null(ins->st, col + 1);
}
static inline void aip__db_text(aip_db_insert *ins, int col, const char *s, size_t n)
{
    sqlite3_bind_text(ins->st, col + 1, s, (int)n, SQLITE_TRANSIENT);
}

#endif
