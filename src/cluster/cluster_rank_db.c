/*
 * cluster_rank_db.c — a rank exported as databases only (export type db,
 * torch_npu's ExportType.Db): no step_trace_time.csv nor communication*.json,
 * but ASCEND_PROFILER_OUTPUT/analysis.db, which msprof-analyze's cluster
 * pass reads in their place (StepTraceTime; CommAnalyzerTime,
 * CommAnalyzerBandwidth, CommAnalyzerMatrix).  This turns those tables
 * back into what cluster.c holds for a text rank — the step rows under the
 * CSV's column names, and communication.json / communication_matrix.json
 * as JSON trees with the text files' keys and fields — so every later step
 * of the cross-rank pass is the same for both kinds of rank.
 *
 * Numbers: the db holds doubles of the values the text files print with a
 * fixed number of decimals (µs with 3, ms and MB with 6, GB/s and ratios
 * with 4; src/export/json_comm.c, csv_step_trace.c); each is passed
 * through that same text, so a db rank gives the cluster outputs a text
 * rank gives, byte for byte.  What a rank alone does not know (the split,
 * transit time, bandwidth, size distribution, a collective's self-link
 * time) is NULL in the db and left out here, as the text files leave it
 * out; where `aiprof cluster` wrote it back, it is read as written.  A
 * collective's "<type>-total" matrix row is absent, as from the text file,
 * until `aiprof cluster` inserts it timed (cluster_comm_totals.c); every
 * pass takes it out again before its own split (aip__cc_strip).
 * Opened read-only, never through a symbolic link; values only selected.
 */
#include "cluster.h"
#include "error.h"
#include "fs.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const step_cols[] = {
    "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage",
    "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"};
#define N_STEP_COLS (sizeof step_cols / sizeof *step_cols)

/* v as the text files print it with `decimals`, read back. */
static double as_text(double v, int decimals)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return strtod(buf, NULL);
}

static json_t *num(double v, int decimals) { return json_real(as_text(v, decimals)); }

/* The text writer's integer 0 for what one rank cannot split. */
static json_t *split_num(double v, int decimals)
{
    return v == 0 ? json_integer(0) : num(v, decimals);
}

static const char *col_text(sqlite3_stmt *q, int i)
{
    const unsigned char *t = sqlite3_column_text(q, i);
    return t ? (const char *)t : "";
}

static int read_steps(sqlite3 *db, aip__rank_dir *r)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT step, computing, communication_not_overlapped, overlapped, "
                           "communication, free, stage, bubble, "
                           "communication_not_overlapped_and_exclude_receive, preparing "
                           "FROM StepTraceTime ORDER BY rowid",
                           -1, &q, NULL) != SQLITE_OK) {
        aip__cluster_problem(r, "ASCEND_PROFILER_OUTPUT/analysis.db has no readable "
                                "StepTraceTime table (%s)", sqlite3_errmsg(db));
        sqlite3_finalize(q);
        return 0;
    }
    int nomem = !(r->cols = calloc(N_STEP_COLS, sizeof *r->cols));
    for (size_t k = 0; !nomem && k < N_STEP_COLS; k++)
        nomem = !(r->cols[r->n_cols++] = strdup(step_cols[k]));
    int rc;
    while (!nomem && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        aip__step_trace_row *rows = realloc(r->rows, (r->n_rows + 1) * sizeof *rows);
        if (!rows) {
            nomem = 1;
            break;
        }
        r->rows = rows;
        aip__step_trace_row *row = &rows[r->n_rows++];
        row->step = strdup(col_text(q, 0));
        row->v = calloc(N_STEP_COLS, sizeof *row->v);
        if (!row->step || !row->v) {
            nomem = 1;
            break;
        }
        for (size_t k = 0; k < N_STEP_COLS; k++)
            row->v[k] = as_text(sqlite3_column_double(q, (int)k + 1), 3);
    }
    sqlite3_finalize(q);
    if (!nomem && !r->n_rows)
        aip__cluster_problem(r, "ASCEND_PROFILER_OUTPUT/analysis.db: StepTraceTime has no rows");
    return nomem ? -1 : 0;
}

/* tree[step][type] (both types made with a new step, as the text files
 * always hold both), NULL when out of memory. */
static json_t *class_of(json_t *tree, const char *step, const char *type)
{
    json_t *s = json_object_get(tree, step);
    if (!s) {
        s = json_object();
        if (!s || json_object_set_new(tree, step, s) ||
            json_object_set_new(s, "collective", json_object()) ||
            json_object_set_new(s, "p2p", json_object()))
            return NULL;
    }
    return json_object_get(s, !strcmp(type, "p2p") ? "p2p" : "collective");
}

/* obj[key], made an empty object when absent; NULL out of memory. */
static json_t *child(json_t *obj, const char *key)
{
    json_t *x = json_object_get(obj, key);
    if (!x && (!(x = json_object()) || json_object_set_new(obj, key, x)))
        return NULL;
    return x;
}

static json_t *op_of(json_t *tree, sqlite3_stmt *q, int name_col, int step_col)
{
    json_t *cls = class_of(tree, col_text(q, step_col), col_text(q, step_col + 1));
    if (!cls)
        return NULL;
    const char *name = col_text(q, name_col), *group = col_text(q, name_col + 1);
    size_t n = strlen(name) + strlen(group) + 2;
    char *key = malloc(n);
    if (!key)
        return NULL;
    snprintf(key, n, "%s@%s", name, group);
    json_t *op = child(cls, key);
    free(key);
    return op;
}

/* Python's round(a / (a + b), 4) as msprof-analyze's ratios, 0 when 0. */
static json_t *ratio(double a, double b)
{
    return a + b > 0 ? num(a / (a + b), 4) : json_integer(0);
}

static int is_null(sqlite3_stmt *q, int i) { return sqlite3_column_type(q, i) == SQLITE_NULL; }

/* add's keys into `into`, add's reference taken; -1 on failure. */
static int merge_new(json_t *into, json_t *add)
{
    int err = !add || json_object_update(into, add);
    json_decref(add);
    return err ? -1 : 0;
}

/* A Time Info as the text file has it: the start and the elapse, and the
 * split only where `aiprof cluster` wrote it (NULL: absent, not 0). */
static int comm_time(sqlite3 *db, json_t *tree)
{
    sqlite3_stmt *q = NULL;
    int err = sqlite3_prepare_v2(db,
                                 "SELECT hccl_op_name, group_name, start_timestamp, elapse_time, "
                                 "transit_time, wait_time, synchronization_time, idle_time, step, "
                                 "type FROM CommAnalyzerTime ORDER BY rowid",
                                 -1, &q, NULL) != SQLITE_OK;
    while (!err && sqlite3_step(q) == SQLITE_ROW) {
        json_t *op = op_of(tree, q, 0, 8);
        double transit = sqlite3_column_double(q, 4), wait = sqlite3_column_double(q, 5);
        double sync = sqlite3_column_double(q, 6);
        json_t *t = op ? json_pack("{s:o, s:o}", "Start Timestamp(us)",
                                   num(sqlite3_column_double(q, 2), 3), "Elapse Time(ms)",
                                   num(sqlite3_column_double(q, 3), 6))
                       : NULL;
        if (t && !is_null(q, 4))
            err = merge_new(t, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
                                                  "Transit Time(ms)", split_num(transit, 6),
                                                  "Wait Time(ms)", split_num(wait, 6),
                                                  "Synchronization Time(ms)",
                                                  split_num(sync, 6), "Idle Time(ms)",
                                                  split_num(sqlite3_column_double(q, 7), 6),
                                                  "Wait Time Ratio", ratio(wait, transit),
                                                  "Synchronization Time Ratio",
                                                  ratio(sync, transit)));
        err = err || !t || json_object_set_new(op, "Communication Time Info", t);
    }
    sqlite3_finalize(q);
    return err;
}

/* A bandwidth block as the text file has it: size and large packet ratio;
 * transit time, bandwidth and the size distribution only where `aiprof
 * cluster` wrote them (NULL: absent). */
static int comm_bandwidth(sqlite3 *db, json_t *tree)
{
    sqlite3_stmt *q = NULL;
    int err = sqlite3_prepare_v2(db,
                                 "SELECT hccl_op_name, group_name, transport_type, transit_size, "
                                 "transit_time, bandwidth, large_packet_ratio, package_size, "
                                 "count, total_duration, step, type FROM CommAnalyzerBandwidth "
                                 "ORDER BY rowid",
                                 -1, &q, NULL) != SQLITE_OK;
    while (!err && sqlite3_step(q) == SQLITE_ROW) {
        json_t *op = op_of(tree, q, 0, 10);
        json_t *bw = op ? child(op, "Communication Bandwidth Info") : NULL;
        json_t *tr = bw ? json_object_get(bw, col_text(q, 2)) : NULL;
        int timed = !is_null(q, 4);
        if (bw && !tr) {
            tr = json_pack("{s:o, s:o}", "Transit Size(MB)", num(sqlite3_column_double(q, 3), 6),
                           "Large Packet Ratio", num(sqlite3_column_double(q, 6), 4));
            if (tr && timed &&
                merge_new(tr, json_pack("{s:{}, s:o, s:o}", "Size Distribution",
                                                 "Transit Time(ms)",
                                                 num(sqlite3_column_double(q, 4), 6),
                                                 "Bandwidth(GB/s)",
                                                 num(sqlite3_column_double(q, 5), 4))))
                tr = NULL;
            if (!tr || json_object_set_new(bw, col_text(q, 2), tr))
                tr = NULL;
        }
        if (!timed) {
            err = !tr;
            continue;
        }
        char size[64];
        snprintf(size, sizeof size, "%.6f", sqlite3_column_double(q, 7));
        double count = sqlite3_column_double(q, 8);
        json_t *bin = json_pack("[o, o]",
                                count == floor(count) && fabs(count) < 1e15
                                    ? json_integer((json_int_t)count)
                                    : json_real(count),
                                num(sqlite3_column_double(q, 9), 6));
        err = !tr || !bin ||
              json_object_set_new(json_object_get(tr, "Size Distribution"), size, bin);
    }
    sqlite3_finalize(q);
    return err;
}

static int comm_matrix(sqlite3 *db, json_t *tree)
{
    sqlite3_stmt *q = NULL;
    int err = sqlite3_prepare_v2(db,
                                 "SELECT hccl_op_name, group_name, src_rank, dst_rank, "
                                 "transport_type, transit_size, transit_time, bandwidth, step, "
                                 "type, op_name FROM CommAnalyzerMatrix ORDER BY rowid",
                                 -1, &q, NULL) != SQLITE_OK;
    while (!err && sqlite3_step(q) == SQLITE_ROW) {
        json_t *entry = op_of(tree, q, 0, 8);
        char link[96];
        snprintf(link, sizeof link, "%s-%s", col_text(q, 2), col_text(q, 3));
        /* a collective's self link has no time until `aiprof cluster` */
        json_t *l = entry ? (is_null(q, 6)
                                 ? json_pack("{s:s, s:o, s:s}", "Transport Type", col_text(q, 4),
                                             "Transit Size(MB)",
                                             num(sqlite3_column_double(q, 5), 6), "Op Name",
                                             col_text(q, 10))
                                 : json_pack("{s:s, s:o, s:o, s:o, s:s}", "Transport Type",
                                             col_text(q, 4), "Transit Size(MB)",
                                             num(sqlite3_column_double(q, 5), 6),
                                             "Transit Time(ms)",
                                             num(sqlite3_column_double(q, 6), 6),
                                             "Bandwidth(GB/s)",
                                             num(sqlite3_column_double(q, 7), 4), "Op Name",
                                             col_text(q, 10)))
                          : NULL;
        err = !l || json_object_set_new(entry, link, l);
    }
    sqlite3_finalize(q);
    return err;
}

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *q = NULL;
    int yes = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                                 -1, &q, NULL) == SQLITE_OK &&
              sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC) == SQLITE_OK &&
              sqlite3_step(q) == SQLITE_ROW;
    sqlite3_finalize(q);
    return yes;
}

int aip__cluster_read_rank_db(aip__rank_dir *r, const char *db_path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) !=
        SQLITE_OK) {
        aip__cluster_problem(r, "cannot open ASCEND_PROFILER_OUTPUT/analysis.db: %s",
                             db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return 0;
    }
    int nomem = read_steps(db, r);
    if (!nomem && !r->problem[0] && has_table(db, "CommAnalyzerTime")) {
        int bad = !(r->comm = json_object()) || comm_time(db, r->comm) ||
                  (has_table(db, "CommAnalyzerBandwidth") && comm_bandwidth(db, r->comm));
        if (!bad && has_table(db, "CommAnalyzerMatrix"))
            bad = !(r->matrix = json_object()) || comm_matrix(db, r->matrix);
        if (bad)
            aip__cluster_problem(r, "ASCEND_PROFILER_OUTPUT/analysis.db: the CommAnalyzer "
                                    "tables cannot be read (%s)", sqlite3_errmsg(db));
    }
    sqlite3_close(db);
    return nomem ? -1 : 0;
}
