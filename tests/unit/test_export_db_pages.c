/*
 * test_export_db_pages.c — the direct tables of db_pages.c: a database
 * whose INTEGER tables are written as b-tree pages must hold exactly what
 * SQLite's own inserts give (same rows, same rowids, same order, same
 * schema) and pass PRAGMA integrity_check, for one-leaf tables, two-level
 * and three-level trees, INTEGER PRIMARY KEY tables, two inserts sharing a
 * table, every integer size SQLite distinguishes, with the leaves copied or
 * the side file becoming the database; errors (keys out of order, a failed
 * write) are reported and leave no file behind.
 */
#include "aip_test.h"
#include "db.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static const aip__db_col wide_cols[] = {
    {"c0", "INTEGER"},  {"c1", "INTEGER"},  {"c2", "INTEGER"},  {"c3", "INTEGER"},
    {"c4", "INTEGER"},  {"c5", "INTEGER"},  {"c6", "INTEGER"},  {"c7", "INTEGER"},
    {"c8", "INTEGER"},  {"c9", "INTEGER"},  {"c10", "INTEGER"}, {"c11", "INTEGER"},
    {"c12", "INTEGER"}, {"c13", "INTEGER"}, {"c14", "INTEGER"}, {"c15", "INTEGER"},
    {"c16", "INTEGER"}};
static const aip__db_table t_wide = {"WIDE", wide_cols, 17, -1};
static const aip__db_col keyed_cols[] = {{"v", "INTEGER"}, {"id", "INTEGER"}};
static const aip__db_table t_keyed = {"KEYED", keyed_cols, 2, 1};
static const aip__db_col mixed_cols[] = {{"a", "INTEGER"}, {"b", "INTEGER"}, {"c", "INTEGER"}};
static const aip__db_table t_mixed = {"MIXED", mixed_cols, 3, -1};
static const aip__db_col text_cols[] = {{"id", "INTEGER"}, {"s", "TEXT"}};
static const aip__db_table t_text = {"TEXTS", text_cols, 2, 0};
static const aip__db_table t_empty = {"EMPTY", mixed_cols, 3, -1};
static const aip__db_table t_one = {"ONE", mixed_cols, 3, -1};
static const aip__db_table *const tables[] = {&t_wide, &t_keyed, &t_mixed, &t_text, &t_empty,
                                              &t_one};

/* Every integer size of SQLite's record format, and NULL (INT64_MIN+1
 * marks NULL here). */
static const int64_t samples[] = {0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32769,
                                  8388607, 8388608, -8388609, 2147483647, 2147483648LL,
                                  -2147483649LL, 140737488355327LL, 140737488355328LL,
                                  INT64_MAX, INT64_MIN, INT64_MIN + 1};
#define N_SAMPLES (sizeof samples / sizeof samples[0])

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void put(aip__db_insert *ins, int col, int64_t v)
{
    if (v == INT64_MIN + 1)
        aip__db_null(ins, col);
    else
        aip__db_i64(ins, col, v);
}

/* Write the test database at `path`: `wide` rows of WIDE, `keyed` of
 * KEYED (keys from -3 up with gaps; `bad_key`: one out of order). */
static aip_status write_db(const char *path, int direct, size_t wide, size_t keyed, int bad_key)
{
    aip__db_no_direct = !direct;
    rng = 88172645463325252ULL;
    aip__db d;
    aip_status s = aip__db_open(&d, path);
    if (s)
        return s;
    aip__db_insert *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    if (!aip__db_insert_begin(&d, &t_wide, a)) {
        for (size_t r = 0; r < wide; r++) {
            for (int c = 0; c < 17; c++)
                put(a, c, samples[next_rand() % N_SAMPLES]);
            aip__db_row(a);
        }
    }
    aip__db_insert_end(a);
    if (!aip__db_insert_begin(&d, &t_keyed, a)) {
        int64_t k = -3;
        for (size_t r = 0; r < keyed; r++) {
            k += 1 + (int64_t)(next_rand() % 3);
            aip__db_i64(a, 1, bad_key && r == keyed / 2 ? k - 10 : k);
            put(a, 0, samples[r % N_SAMPLES]);
            aip__db_row(a);
        }
    }
    aip__db_insert_end(a);
    /* two inserts into one table, flushed in an uneven interleaving */
    static const char *const fixed[3] = {NULL, "7", "NULL"};
    if (!aip__db_insert_begin(&d, &t_mixed, a) && !aip__db_insert_fixed(&d, &t_mixed, fixed, b)) {
        for (size_t r = 0; r < wide + 5; r++) {
            aip__db_insert *to = next_rand() % 3 ? a : b;
            aip__db_i64(to, 0, (int64_t)r);
            if (to == a) {
                put(to, 1, samples[r % N_SAMPLES]);
                aip__db_null(to, 2);
            }
            aip__db_row(to);
        }
    }
    aip__db_insert_end(b);
    aip__db_insert_end(a);
    if (!aip__db_insert_begin(&d, &t_text, a)) {
        for (int r = 0; r < 40; r++) {
            char txt[32];
            aip__db_i64(a, 0, r);
            aip__db_text(a, 1, txt, (size_t)snprintf(txt, sizeof txt, "text %d", r));
            aip__db_row(a);
        }
    }
    aip__db_insert_end(a);
    if (!aip__db_insert_begin(&d, &t_empty, a))
        aip__db_insert_end(a);
    if (!aip__db_insert_begin(&d, &t_one, a)) {
        aip__db_i64(a, 0, 1);
        aip__db_i64(a, 1, -1);
        aip__db_null(a, 2);
        aip__db_row(a);
        aip__db_insert_end(a);
    }
    free(a);
    free(b);
    s = aip__db_close(&d);
    aip__db_no_direct = 0;
    return s;
}

/* Schema, then every table's rows with their rowids, in rowid order, as
 * text; and integrity_check's answer. */
static char *contents(const char *path, char *check, size_t check_cap)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return NULL;
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
    char sql[256];
    sqlite3_stmt *st;
    snprintf(check, check_cap, "?");
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            snprintf(check, check_cap, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    for (size_t t = 0; t <= sizeof tables / sizeof tables[0]; t++) {
        if (t == 0)
            snprintf(sql, sizeof sql, "SELECT type, name, sql FROM sqlite_master ORDER BY rowid");
        else
            snprintf(sql, sizeof sql, "SELECT rowid, * FROM %s ORDER BY rowid", tables[t - 1]->name);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            free(out);
            sqlite3_close(db);
            return NULL;
        }
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const char *v = (const char *)sqlite3_column_text(st, c);
                char type = "?ifbtn"[sqlite3_column_type(st, c) % 6];
                size_t need = len + (v ? strlen(v) : 0) + 8;
                if (need > cap) {
                    while (need > cap)
                        cap *= 2;
                    out = realloc(out, cap);
                }
                len += (size_t)snprintf(out + len, cap - len, "%c%s|", type, v ? v : "");
            }
            out[len++] = '\n';
            out[len] = 0;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}

static char dir[64];

static int files_in_dir(void)
{
    int n = 0;
    DIR *dp = opendir(dir);
    struct dirent *e;
    while (dp && (e = readdir(dp)))
        n += e->d_name[0] != '.';
    if (dp)
        closedir(dp);
    return n;
}

/* Direct and SQLite-written databases of the same rows hold the same. */
static int same_as_sqlite(size_t wide, size_t keyed, uint32_t in_place_min)
{
    char p1[128], p2[128], c1[64], c2[64];
    snprintf(p1, sizeof p1, "%s/sqlite.db", dir);
    snprintf(p2, sizeof p2, "%s/direct.db", dir);
    aip__db_in_place_min_pages = in_place_min;
    int ok = write_db(p1, 0, wide, keyed, 0) == AIP_OK && write_db(p2, 1, wide, keyed, 0) == AIP_OK;
    aip__db_in_place_min_pages = 8 * AIP_DB_SIDE_RESERVE;
    char *a = ok ? contents(p1, c1, sizeof c1) : NULL, *b = ok ? contents(p2, c2, sizeof c2) : NULL;
    ok = a && b && !strcmp(a, b) && !strcmp(c1, "ok") && !strcmp(c2, "ok");
    if (!ok)
        fprintf(stderr, "differ (%zu wide rows): integrity %s / %s\n", wide, c1, c2);
    free(a);
    free(b);
    ok = ok && files_in_dir() == 2; /* no side file or temporary left */
    unlink(p1);
    unlink(p2);
    return ok;
}

static void test_one_leaf_tables(void) { ASSERT_TRUE(same_as_sqlite(3, 5, UINT32_MAX)); }

static void test_two_levels_leaves_copied(void)
{
    ASSERT_TRUE(same_as_sqlite(3000, 20000, UINT32_MAX));
}

static void test_two_levels_side_file_becomes_database(void)
{
    ASSERT_TRUE(same_as_sqlite(3000, 20000, 0));
    /* and the database keeps the mode of every output (0640 at most) */
    char p[128];
    snprintf(p, sizeof p, "%s/direct.db", dir);
    aip__db_in_place_min_pages = 0;
    ASSERT_EQ(write_db(p, 1, 3000, 10, 0), AIP_OK);
    aip__db_in_place_min_pages = 8 * AIP_DB_SIDE_RESERVE;
    struct stat st;
    ASSERT_EQ(stat(p, &st), 0);
    ASSERT_EQ(st.st_mode & 0137, 0);
    ASSERT_TRUE(st.st_mode & 0400);
    ASSERT_EQ(files_in_dir(), 1);
    unlink(p);
}

static void test_three_levels(void)
{
    /* ~150 bytes a row: ~210 rows a leaf, > 2184 leaves (one interior
     * page's children) */
    ASSERT_TRUE(same_as_sqlite(500000, 10, 0));
}

static void test_deterministic(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/direct.db", dir);
    size_t n1 = 0, n2 = 0;
    aip__db_in_place_min_pages = 0;
    ASSERT_EQ(write_db(p, 1, 5000, 100, 0), AIP_OK);
    char *a = aip_test_slurp(p, &n1);
    ASSERT_EQ(write_db(p, 1, 5000, 100, 0), AIP_OK);
    char *b = aip_test_slurp(p, &n2);
    aip__db_in_place_min_pages = 8 * AIP_DB_SIDE_RESERVE;
    ASSERT_TRUE(a && b && n1 == n2 && !memcmp(a, b, n1));
    free(a);
    free(b);
    unlink(p);
}

static void test_keys_out_of_order_fail_and_leave_nothing(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/direct.db", dir);
    /* after leaves went to the side file, and in a one-leaf table */
    ASSERT_TRUE(write_db(p, 1, 3000, 20000, 1) != AIP_OK);
    ASSERT_TRUE(strstr(aip_last_error(), "not ascending") != NULL);
    ASSERT_EQ(files_in_dir(), 0);
    ASSERT_TRUE(write_db(p, 1, 3, 5, 1) != AIP_OK);
    ASSERT_EQ(files_in_dir(), 0);
}

/* A write that fails (here the file-size limit, as a full disk would)
 * is reported, naming the file, and leaves nothing behind. */
static void test_write_error_reported_and_leaves_nothing(void)
{
    char p[128];
    snprintf(p, sizeof p, "%s/direct.db", dir);
    struct rlimit old, lim;
    ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 1 << 20;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN); /* EFBIG rather than the signal */
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
    aip_status s = write_db(p, 1, 20000, 10, 0); /* ~3 MB of leaves */
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    ASSERT_EQ(s, AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), "direct.db") != NULL);
    ASSERT_EQ(files_in_dir(), 0);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/aip_dbpages_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    static const aip_test_case cases[] = {
        TEST_CASE(test_one_leaf_tables),
        TEST_CASE(test_two_levels_leaves_copied),
        TEST_CASE(test_two_levels_side_file_becomes_database),
        TEST_CASE(test_three_levels),
        TEST_CASE(test_deterministic),
        TEST_CASE(test_keys_out_of_order_fail_and_leave_nothing),
        TEST_CASE(test_write_error_reported_and_leaves_nothing),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rmdir(dir);
    return rc;
}
