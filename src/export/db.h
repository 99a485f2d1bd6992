/*
 * db.h — the SQLite writer under every .db output.
 *
 * A database is built in a temporary file beside its target (created 0640
 * through fs.h, never through a symlink) and renamed into place when
 * complete, like every other output (outbuf.h).  Rows go in with prepared
 * statements and bound parameters only, in transactions of AIP_DB_BATCH
 * rows; the file is private until renamed, so there is no journal and no
 * fsync.  Errors are sticky, as in aip__out: callers keep binding and adding
 * rows, and aip__db_close() reports the first failure.
 *
 * Rows are collected AIP_DB_ROWS_PER_STMT at a time and inserted with one
 * multi-row INSERT: a statement per row costs SQLite about as much as the
 * row itself, and tables here have millions of rows.
 *
 * Direct tables: a table whose columns are all INTEGER (aip__db_direct_ok();
 * PYTORCH_API, TASK, CANN_API, ... hold most rows; with an INTEGER PRIMARY
 * KEY, rows must come in ascending key order) is not filled through SQLite's inserts: its rows are encoded as
 * SQLite b-tree pages by db_pages.c and spliced into the file when SQLite
 * has closed it.  Same rows, same rowids, in the same order; callers see
 * no difference.
 */
#ifndef AIP_DB_H
#define AIP_DB_H

#include "aiprof.h"

#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define AIP_DB_BATCH 200000      /* rows per transaction */
#define AIP_DB_ROWS_PER_STMT 32  /* rows per INSERT statement */
#define AIP_DB_MAX_COLS 17      /* COMPUTE_TASK_INFO */
#define AIP_DB_SIDE_RESERVE 128  /* pages for SQLite's own before direct tables' leaves */

typedef struct aip__db_col {
    const char *name;
    const char *type;         /* "INTEGER", "TEXT", "NUMERIC" */
} aip__db_col;

/* A table's layout as the seed documents it. */
typedef struct aip__db_table {
    const char *name;
    const aip__db_col *cols;
    int n_cols;
    int pk_col;               /* column declared PRIMARY KEY, -1 = none */
} aip__db_table;

struct aip__db_leaf;

/* A direct table being written (db_pages.c). */
typedef struct aip__db_direct {
    char name[64];
    uint32_t root;            /* its root page, from CREATE TABLE */
    int64_t rowid;            /* last rowid given */
    uint64_t rows;
    int pk_col;               /* INTEGER PRIMARY KEY column (the rowid), -1 */
    uint8_t *leaf;            /* the leaf being filled */
    int n_cells;
    uint32_t content;         /* start of its cell content */
    struct aip__db_leaf *leaves; /* full leaves in the side file */
    size_t n_leaves, cap_leaves;
} aip__db_direct;

typedef struct aip__db {
    sqlite3 *db;
    aip_status status;        /* first error, sticky */
    uint64_t rows_in_txn;
    uint64_t rows;            /* rows added in total */
    char path[PATH_MAX];
    char tmp[PATH_MAX];
    aip__db_direct **direct;  /* direct tables */
    size_t n_direct;
    uint32_t page_size;
    int side_fd;              /* full leaves of direct tables, 0600; 0: none yet */
    uint32_t side_pages;
    char side[PATH_MAX];
} aip__db;

enum { AIP_DBV_NULL = 0, AIP_DBV_INT, AIP_DBV_REAL, AIP_DBV_TEXT };

typedef struct aip__db_val {
    int kind;
    union {
        int64_t i;
        double d;
        struct { size_t off, len; } t; /* in the insert's text arena */
    } u;
} aip__db_val;

typedef struct aip__db_insert {
    aip__db *d;
    sqlite3_stmt *many;       /* AIP_DB_ROWS_PER_STMT rows */
    sqlite3_stmt *one;        /* one row, for the last partial batch */
    int n_cols;
    int n_params;             /* bound columns per row */
    int param_col[AIP_DB_MAX_COLS]; /* the column of each bound parameter */
    aip__db_direct *direct;   /* a direct table: no statements */
    aip__db_val fixed[AIP_DB_MAX_COLS]; /* literal columns' values (direct) */
    unsigned char is_fixed[AIP_DB_MAX_COLS];
    int row;                  /* rows collected in `vals` */
    uint64_t rows;
    aip__db_val vals[AIP_DB_ROWS_PER_STMT][AIP_DB_MAX_COLS];
    char *text;               /* texts of the collected rows */
    size_t text_len, text_cap;
} aip__db_insert;

/* aip__db_open() : start building the database `path` (via a temp name). */
aip_status aip__db_open(aip__db *d, const char *path);
/* aip__db_create() : CREATE TABLE as documented. */
aip_status aip__db_create(aip__db *d, const aip__db_table *t);
/* aip__db_close() : commit, close and rename into place; on any error
 * (sticky or now) the temporary file is removed.  @return the status. */
aip_status aip__db_close(aip__db *d);
/* aip__db_abort() : discard the database. */
void aip__db_abort(aip__db *d);

/* aip__db_insert_begin() : create table `t` and prepare its inserts.
 * `ins` is large (a batch of values): allocate it, do not put it on a
 * small stack. */
aip_status aip__db_insert_begin(aip__db *d, const aip__db_table *t, aip__db_insert *ins);
/* aip__db_insert_fixed() : another insert into the existing table `t` in
 * which column i is the SQL literal fixed[i] (a number or NULL, never
 * data) when fixed[i] is not NULL: rows that share those values skip
 * binding them, which is a fifth of SQLite's per-row cost here. */
aip_status aip__db_insert_fixed(aip__db *d, const aip__db_table *t, const char *const *fixed,
                                aip__db_insert *ins);
/* aip__db_row() : the row whose columns were set is complete.  Values are
 * not carried over: set every column of every row (NULL included). */
void aip__db_row(aip__db_insert *ins);
/* aip__db_insert_end() : insert what is still collected, release. */
void aip__db_insert_end(aip__db_insert *ins);

/* Set (tests): every table through SQLite's inserts, none direct. */
extern int aip__db_no_direct;

/* Leaves (pages) from which the side file becomes the database rather than
 * having its leaves copied: below, the reserved front's free pages would
 * be a large part of the file.  A variable for the tests. */
extern uint32_t aip__db_in_place_min_pages;

/* Direct tables (db_pages.c; used by db.c only). */
int aip__db_direct_ok(const aip__db_table *t);
/* The direct table `t` of d (after its CREATE TABLE), made on first use. */
aip_status aip__db_direct_open(aip__db *d, const aip__db_table *t, aip__db_direct **out);
/* Append a row of `n` values (integers or NULL) with the next rowid. */
void aip__db_direct_row(aip__db *d, aip__db_direct *s, const aip__db_val *col, int n);
/* Put the direct tables into the closed database file d->tmp. */
aip_status aip__db_direct_splice(aip__db *d);
/* Release the direct tables and remove the side file. */
void aip__db_direct_discard(aip__db *d);

/* Column values of the current row; `col` counts from 0.  Text must be
 * valid UTF-8 without NUL (aip__utf8_clean()); it is copied. */
static inline void aip__db_i64(aip__db_insert *ins, int col, int64_t v)
{
    ins->vals[ins->row][col].kind = AIP_DBV_INT;
    ins->vals[ins->row][col].u.i = v;
}
static inline void aip__db_f64(aip__db_insert *ins, int col, double v)
{
    ins->vals[ins->row][col].kind = AIP_DBV_REAL;
    ins->vals[ins->row][col].u.d = v;
}
static inline void aip__db_null(aip__db_insert *ins, int col)
{
    ins->vals[ins->row][col].kind = AIP_DBV_NULL;
}
void aip__db_text(aip__db_insert *ins, int col, const char *s, size_t n);

#endif
