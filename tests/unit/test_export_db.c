/*
 * test_export_db.c — the databases against the seed: every table's columns
 * and types as documented (seed 表1–9 of ascend_pytorch_profiler_{Rank_ID}.db,
 * analysis.db 表4; reference §2.4–2.5), which tables exist for which
 * switches, and what the rows say for a profile whose facts are known
 * (rich_profile.h): names through STRING_IDS, connections, call chains,
 * memory, steps, GC, metadata, hostile strings.
 */
#include "aip_test.h"
#include "rich_profile.h"

#include "aiprof.h"

#include <sqlite3.h>

static char root[64];

/* The seed's DDL, typed from the documentation (not from the code). */
typedef struct col { const char *name, *type; } col;
typedef struct table { const char *name; col cols[16]; const char *pk; } table;

static const table seed_tables[] = {
    {"STRING_IDS", {{"id", "INTEGER"}, {"value", "TEXT"}}, "id"},
    {"PYTORCH_API", {{"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"globalTid", "INTEGER"},
                     {"connectionId", "INTEGER"}, {"name", "INTEGER"}, {"sequenceNumber", "INTEGER"},
                     {"fwdThreadId", "INTEGER"}, {"inputDtypes", "INTEGER"}, {"inputShapes", "INTEGER"},
                     {"callchainId", "INTEGER"}, {"type", "INTEGER"}}, NULL},
    {"CONNECTION_IDS", {{"id", "INTEGER"}, {"connectionId", "INTEGER"}}, NULL},
    {"PYTORCH_CALLCHAINS", {{"id", "INTEGER"}, {"stack", "INTEGER"}, {"stackDepth", "INTEGER"}}, NULL},
    {"ENUM_API_TYPE", {{"id", "INTEGER"}, {"name", "TEXT"}}, "id"},
    {"MEMORY_RECORD", {{"component", "INTEGER"}, {"timestamp", "INTEGER"}, {"totalAllocated", "INTEGER"},
                       {"totalReserved", "INTEGER"}, {"totalActive", "INTEGER"}, {"streamPtr", "INTEGER"},
                       {"deviceId", "INTEGER"}}, NULL},
    {"OP_MEMORY", {{"name", "INTEGER"}, {"size", "INTEGER"}, {"allocationTime", "INTEGER"},
                   {"releaseTime", "INTEGER"}, {"activeReleaseTime", "INTEGER"}, {"duration", "INTEGER"},
                   {"activeDuration", "INTEGER"}, {"allocationTotalAllocated", "INTEGER"},
                   {"allocationTotalReserved", "INTEGER"}, {"allocationTotalActive", "INTEGER"},
                   {"releaseTotalAllocated", "INTEGER"}, {"releaseTotalReserved", "INTEGER"},
                   {"releaseTotalActive", "INTEGER"}, {"streamPtr", "INTEGER"}, {"deviceId", "INTEGER"}},
     NULL},
    {"RANK_DEVICE_MAP", {{"rankId", "INTEGER"}, {"deviceId", "INTEGER"}}, NULL},
    {"HOST_INFO", {{"hostUid", "TEXT"}, {"hostName", "TEXT"}}, NULL},
    {"META_DATA", {{"name", "TEXT"}, {"value", "TEXT"}}, NULL},
    {"STEP_TIME", {{"id", "INTEGER"}, {"startNs", "INTEGER"}, {"endNs", "INTEGER"}}, NULL},
    {"GC_RECORD", {{"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"globalTid", "INTEGER"}}, NULL},
    /* msprof's tables that msprof-analyze queries unconditionally: present,
     * empty, without a device or communication (COMPUTE_TASK_INFO's 17
     * columns do not fit this list: host_only_tables() checks it) */
    {"CANN_API", {{"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"type", "INTEGER"},
                  {"globalTid", "INTEGER"}, {"connectionId", "INTEGER"}, {"name", "INTEGER"}},
     "connectionId"},
    {"TASK", {{"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"deviceId", "INTEGER"},
              {"connectionId", "INTEGER"}, {"globalTaskId", "INTEGER"}, {"globalPid", "INTEGER"},
              {"taskType", "INTEGER"}, {"contextId", "INTEGER"}, {"streamId", "INTEGER"},
              {"taskId", "INTEGER"}, {"modelId", "INTEGER"}}, NULL},
    {"COMMUNICATION_OP", {{"opName", "INTEGER"}, {"startNs", "INTEGER"}, {"endNs", "INTEGER"},
                          {"connectionId", "INTEGER"}, {"groupName", "INTEGER"}, {"opId", "INTEGER"},
                          {"relay", "INTEGER"}, {"retry", "INTEGER"}, {"dataType", "INTEGER"},
                          {"algType", "INTEGER"}, {"count", "NUMERIC"}, {"opType", "INTEGER"},
                          {"deviceId", "INTEGER"}, {"rankSize", "INTEGER"}}, "opId"},
    {"ENUM_HCCL_DATA_TYPE", {{"id", "INTEGER"}, {"name", "TEXT"}}, "id"},
};


static const table analysis_tables[] = {
    {"StepTraceTime", {{"deviceId", "INTEGER"}, {"step", "TEXT"}, {"computing", "NUMERIC"},
                       {"communication_not_overlapped", "NUMERIC"}, {"overlapped", "NUMERIC"},
                       {"communication", "NUMERIC"}, {"free", "NUMERIC"}, {"stage", "NUMERIC"},
                       {"bubble", "NUMERIC"},
                       {"communication_not_overlapped_and_exclude_receive", "NUMERIC"},
                       {"preparing", "NUMERIC"}}, NULL},
};

static sqlite3 *open_db(const char *dir, const char *name)
{
    char p[400];
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/%s", dir, name);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(p, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bad query %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -777 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static char *q_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

/* 1 if `t` exists with exactly the documented columns, types and key. */
static int schema_matches(sqlite3 *db, const table *t)
{
    char sql[200];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", t->name);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return 0;
    int i = 0, ok = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *type = (const char *)sqlite3_column_text(st, 2);
        int pk = sqlite3_column_int(st, 5);
        if (i >= 16 || !t->cols[i].name || strcmp(name, t->cols[i].name) ||
            strcmp(type, t->cols[i].type) || pk != (t->pk && !strcmp(t->pk, name))) {
            fprintf(stderr, "%s column %d: got %s %s pk=%d\n", t->name, i, name, type, pk);
            ok = 0;
        }
        i++;
    }
    sqlite3_finalize(st);
    return ok && i > 0 && (i == 16 || !t->cols[i].name);
}

static int64_t n_tables(sqlite3 *db)
{
    return q_int(db, "SELECT count(*) FROM sqlite_master WHERE type='table'");
}

static void analyse(const char *dir)
{
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    aip_status s = aip_analyse_dir(dir, &o);
    if (s)
        fprintf(stderr, "analyse %s: %s\n", dir, aip_last_error());
}

/* The host-only database's device and communication tables: there and
 * empty; HCCL's data types listed. */
static void host_only_tables(sqlite3 *db)
{
    const char *empty[] = {"CANN_API", "TASK", "COMPUTE_TASK_INFO", "COMMUNICATION_OP"};
    for (size_t i = 0; i < 4; i++) {
        char sql[120];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", empty[i]);
        ASSERT_EQ(q_int(db, sql), 1);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", empty[i]);
        ASSERT_EQ(q_int(db, sql), 0);
    }
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM pragma_table_info('COMPUTE_TASK_INFO')"), 17);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM ENUM_HCCL_DATA_TYPE"), 14);
    ASSERT_EQ(q_int(db, "SELECT id FROM ENUM_HCCL_DATA_TYPE WHERE name = 'FP32'"), 4);
    ASSERT_EQ(q_int(db, "SELECT id FROM ENUM_HCCL_DATA_TYPE WHERE name = 'BFP16'"), 11);
    ASSERT_EQ(q_int(db, "SELECT id FROM ENUM_HCCL_DATA_TYPE WHERE name = 'RESERVED'"), 255);
}

static void test_schema_every_switch_on(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/rich_ascend_pt", root);
    rich_dir(d, rich_info_json, rich_metadata_json);
    analyse(d);
    sqlite3 *db = open_db(d, "ascend_pytorch_profiler.db");
    ASSERT_TRUE(db != NULL);
    for (size_t i = 0; i < sizeof seed_tables / sizeof seed_tables[0]; i++)
        ASSERT_TRUE(schema_matches(db, &seed_tables[i]));
    /* exactly those (and COMPUTE_TASK_INFO, and MSTX_EVENTS with
     * ENUM_MSTX_EVENT_TYPE for its mstx events): without a device or
     * communication, the other device tables are not written */
    ASSERT_EQ(n_tables(db), (int64_t)(sizeof seed_tables / sizeof seed_tables[0]) + 3);
    host_only_tables(db);
    sqlite3_close(db);
    db = open_db(d, "analysis.db");
    ASSERT_TRUE(db != NULL);
    ASSERT_TRUE(schema_matches(db, &analysis_tables[0]));
    ASSERT_EQ(n_tables(db), 1);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM StepTraceTime"), 2);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM StepTraceTime WHERE deviceId = -1 AND step = '1' "
                        "AND typeof(computing) IN ('real', 'integer')"), 1);
    sqlite3_close(db);
}

/* with_stack's Python calls are PYTORCH_API rows of type 50003 `trace`
 * (torch_npu's python_trace rows): times, thread and name only. */
static void test_python_calls_are_trace_rows(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/py_ascend_pt", root);
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, RICH_PID, "Python", 1e9);
    const char *s[] = {"aten::mm", "train.py(10): step"};
    rb_strings(&b, 1, s, NULL, 2);
    rb_clock(&b, 0, 0, RICH_R0);
    ev_op(&e, 1, 4000, 8000);
    aip__rec_pyfunc py = {{AIP_REC_PYFUNC, 0, sizeof py, 2}, 2000, 15000, 1, 0, 0, 0};
    rb_put(&e, &py, sizeof py);
    rb_events(&b, RICH_TID, &e);
    rb_end(&b);
    rb_result_dir(d, RICH_PID, &b, rich_info_json);
    rb_free(&e);
    rb_free(&b);
    analyse(d);
    sqlite3 *db = open_db(d, "ascend_pytorch_profiler.db");
    ASSERT_TRUE(db != NULL);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001"), 1);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50003"), 1);
    ASSERT_EQ(q_int(db, "SELECT startNs FROM PYTORCH_API WHERE type = 50003"),
              (int64_t)(RICH_R0 + 2000));
    ASSERT_EQ(q_int(db, "SELECT endNs FROM PYTORCH_API WHERE type = 50003"),
              (int64_t)(RICH_R0 + 15000));
    ASSERT_EQ(q_int(db, "SELECT globalTid FROM PYTORCH_API WHERE type = 50003"),
              ((int64_t)RICH_PID << 32) | RICH_TID);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50003 AND "
                        "sequenceNumber IS NULL AND callchainId IS NULL"), 1);
    char *v = q_text(db, "SELECT s.value FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                         "WHERE a.type = 50003");
    ASSERT_STREQ(v, "train.py(10): step");
    free(v);
    v = q_text(db, "SELECT name FROM ENUM_API_TYPE WHERE id = 50003");
    ASSERT_STREQ(v, "trace");
    free(v);
    sqlite3_close(db);
}

static void test_rows(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/rich_ascend_pt", root);
    sqlite3 *db = open_db(d, "ascend_pytorch_profiler.db");
    ASSERT_TRUE(db != NULL);
    /* 10 ops + 2 steps (op type); 1 push/pop range + 1 mark + 1 start/end range (mstx) */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50001"), 12);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API WHERE type = 50004"), 3);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                        "WHERE s.value = 'aten::mm'"), 2);
    ASSERT_EQ(q_int(db, "SELECT min(id) FROM STRING_IDS"), 1 << 28);
    ASSERT_EQ(q_int(db, "SELECT startNs FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                        "WHERE s.value = 'aten::linear'"), (int64_t)(RICH_R0 + 2000));
    ASSERT_EQ(q_int(db, "SELECT globalTid FROM PYTORCH_API LIMIT 1"),
              ((int64_t)RICH_PID << 32) | RICH_TID);
    /* the cross-thread range: start on 4242, end on 4250 */
    ASSERT_EQ(q_int(db, "SELECT endNs - startNs FROM PYTORCH_API a JOIN STRING_IDS s ON "
                        "a.name = s.id WHERE s.value = 'cross-thread'"), 20000);
    /* shapes and dtypes through STRING_IDS */
    char *v = q_text(db, "SELECT s.value FROM PYTORCH_API a JOIN STRING_IDS s ON "
                         "a.inputShapes = s.id LIMIT 1");
    ASSERT_STREQ(v, "[[2, 3], [3, 4]]");
    free(v);
    /* fwdbwd: linear (seq 1, forward) and AddmmBackward0 share one
     * connection; the mark and the start/end range one each to MSTX_EVENTS */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM CONNECTION_IDS"), 4);
    ASSERT_EQ(q_int(db, "SELECT count(DISTINCT connectionId) FROM CONNECTION_IDS "
                        "WHERE connectionId < 4000000000"), 1);
    ASSERT_EQ(q_int(db, "SELECT min(connectionId) FROM CONNECTION_IDS"), (int64_t)5 << 28);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API a JOIN CONNECTION_IDS c ON "
                        "a.connectionId = c.id WHERE c.connectionId < 4000000000"), 2);
    /* MSTX_EVENTS as msprof writes the mstx API's events: the mark
     * (marker_ex), the start/end range ending on another thread, the
     * push/pop range unlinked; each linked one reaches its PYTORCH_API row
     * through CONNECTION_IDS (msprof-analyze's mstx_sum join) */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM MSTX_EVENTS"), 3);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM MSTX_EVENTS WHERE eventType = 3 AND startNs = endNs "
                        "AND connectionId = 4000000001"), 1);
    ASSERT_EQ(q_int(db, "SELECT (endNs - startNs) * 10000 + (endGlobalTid & 65535) FROM "
                        "MSTX_EVENTS WHERE eventType = 2 AND connectionId = 4000000002"),
              20000 * 10000 + 4250);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM MSTX_EVENTS WHERE eventType = 1 AND "
                        "connectionId = 4000000000 AND rangeId = 4294967295 AND "
                        "domainId = 65535"), 1);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM MSTX_EVENTS e JOIN CONNECTION_IDS c ON "
                        "e.connectionId = c.connectionId JOIN PYTORCH_API a ON a.connectionId = "
                        "c.id AND a.startNs = e.startNs AND a.endNs = e.endNs AND a.name = "
                        "e.message AND a.type = 50004"), 2);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM ENUM_MSTX_EVENT_TYPE WHERE (id, name) IN "
                        "(VALUES (0, 'marker'), (1, 'push/pop'), (2, 'start/end'), "
                        "(3, 'marker_ex'))"), 4);
    ASSERT_EQ(q_int(db, "SELECT fwdThreadId FROM PYTORCH_API a JOIN STRING_IDS s ON a.name = s.id "
                        "WHERE s.value = 'AddmmBackward0'"), RICH_TID);
    /* call stacks: two frames, shared by the two ops that carry the stack */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_CALLCHAINS"), 2);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM PYTORCH_API WHERE callchainId = 0"), 2);
    v = q_text(db, "SELECT s.value FROM PYTORCH_CALLCHAINS c JOIN STRING_IDS s ON c.stack = s.id "
                   "WHERE c.stackDepth = 1");
    ASSERT_STREQ(v, "model.py(5): forward");
    free(v);
    /* memory: 10 records, each a PTA and a PTA+GE row; 5 allocations */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM MEMORY_RECORD"), 20);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM MEMORY_RECORD m JOIN STRING_IDS s ON "
                        "m.component = s.id WHERE s.value = 'PTA+GE'"), 10);
    ASSERT_EQ(q_int(db, "SELECT min(component) FROM MEMORY_RECORD"), (int64_t)2 << 28);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM OP_MEMORY"), 5);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM OP_MEMORY WHERE releaseTime IS NULL"), 1);
    ASSERT_EQ(q_int(db, "SELECT duration FROM OP_MEMORY WHERE size = 1024"), 10000);
    v = q_text(db, "SELECT s.value FROM OP_MEMORY o JOIN STRING_IDS s ON o.name = s.id "
                   "WHERE o.size = 4096");
    ASSERT_STREQ(v, "aten::mm");
    free(v);
    ASSERT_EQ(q_int(db, "SELECT totalActive - totalAllocated FROM MEMORY_RECORD LIMIT 1"), 0);
    /* the rest */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM STEP_TIME"), 2);
    ASSERT_EQ(q_int(db, "SELECT endNs - startNs FROM STEP_TIME WHERE id = 2"), 100000);
    ASSERT_EQ(q_int(db, "SELECT endNs - startNs FROM GC_RECORD"), 1000);
    ASSERT_EQ(q_int(db, "SELECT rankId * 10 + deviceId FROM RANK_DEVICE_MAP"), -11);
    v = q_text(db, "SELECT hostName FROM HOST_INFO");
    ASSERT_STREQ(v, "testhost");
    free(v);
    /* the recording host's id from INFO: "testhost" is not this machine */
    v = q_text(db, "SELECT hostUid FROM HOST_INFO");
    ASSERT_STREQ(v, "9876543210");
    free(v);
    v = q_text(db, "SELECT value FROM META_DATA WHERE name = 'ENV_VARIABLES'");
    ASSERT_STREQ(v, "{\"HCCL_ALGO\": \"ring\", \"ASCEND_GLOBAL_LOG_LEVEL\": \"\"}");
    free(v);
    v = q_text(db, "SELECT value FROM META_DATA WHERE name = 'nested'");
    ASSERT_STREQ(v, "{\"a\": [1, 2], \"u\": \"\\u65e5\", \"q\": \"'\\\"\"}");
    free(v);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM META_DATA"), 3);
    /* hostile names: intact (valid UTF-8, invalid bytes as U+FFFD) */
    v = q_text(db, "SELECT value FROM STRING_IDS WHERE value LIKE 'quote%'");
    ASSERT_STREQ(v, "quote\"comma,=cmd\n</script><b>&amp;");
    free(v);
    v = q_text(db, "SELECT value FROM STRING_IDS WHERE value LIKE 'bad%'");
    ASSERT_STREQ(v, "bad\xef\xbf\xbd\xef\xbf\xbdutf8");
    free(v);
    sqlite3_close(db);
}

static void test_tables_follow_switches(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/plain_ascend_pt", root);
    /* no profiler_info (defaults), no metadata; the raw file has memory,
     * steps and GC, so those tables exist; no stack switch but stacks */
    rich_dir(d, NULL, NULL);
    analyse(d);
    sqlite3 *db = open_db(d, "ascend_pytorch_profiler.db");
    ASSERT_TRUE(db != NULL);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM META_DATA"), 0);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'MEMORY_RECORD'"), 1);
    sqlite3_close(db);
    /* a profile with nothing but two ops: the minimal set */
    snprintf(d, sizeof d, "%s/min_ascend_pt", root);
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 7, "prog", 1e9);
    const char *names[] = {"a"};
    rb_strings(&b, 1, names, NULL, 1);
    rb_clock(&b, 0, 0, RICH_R0);
    ev_op(&e, 1, 100, 200);
    ev_op(&e, 1, 300, 400);
    rb_events(&b, 7, &e);
    rb_end(&b);
    rb_result_dir(d, 7, &b, "{\"config\": {\"experimental_config\": {\"_export_type\": [\"db\"]}}, "
                            "\"rank_id\": 3}");
    rb_free(&b);
    rb_free(&e);
    analyse(d);
    db = open_db(d, "ascend_pytorch_profiler_3.db");
    ASSERT_TRUE(db != NULL);
    const char *want[] = {"PYTORCH_API", "ENUM_API_TYPE", "RANK_DEVICE_MAP", "HOST_INFO",
                          "META_DATA", "STRING_IDS", "CONNECTION_IDS", "STEP_TIME"};
    for (size_t i = 0; i < 8; i++) {
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", want[i]);
        ASSERT_EQ(q_int(db, sql), 1);
    }
    host_only_tables(db);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM CONNECTION_IDS"), 0);
    /* no schedule, no steps: STEP_TIME is there, empty, as torch_npu's */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM STEP_TIME"), 0);
    ASSERT_EQ(n_tables(db), 13);
    ASSERT_EQ(q_int(db, "SELECT rankId FROM RANK_DEVICE_MAP"), 3);
    sqlite3_close(db);
    db = open_db(d, "analysis.db");
    ASSERT_TRUE(db != NULL);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM StepTraceTime WHERE step IS NULL"), 1);
    sqlite3_close(db);
}

/* analysis.db holds the double a reader of step_trace_time.csv parses
 * from its "7.690": msprof-analyze's db mode copies the columns as they
 * are, its text mode parses the CSV, and the two must agree (7 + 0.690
 * would be 7.6899999999999995). */
static void test_step_trace_values_match_the_csv_text(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/frac_ascend_pt", root);
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 7, "prog", 1e9);
    const char *names[] = {"a"};
    rb_strings(&b, 1, names, NULL, 1);
    rb_clock(&b, 0, 0, RICH_R0);
    ev_op(&e, 1, 1000, 8690);
    ev_op(&e, 1, 16380, 17000);
    rb_events(&b, 7, &e);
    rb_end(&b);
    rb_result_dir(d, 7, &b, "{\"config\": {}}");
    rb_free(&b);
    rb_free(&e);
    analyse(d);
    sqlite3 *db = open_db(d, "analysis.db");
    ASSERT_TRUE(db != NULL);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM StepTraceTime"), 1);
    /* the SQL literals are parsed as a CSV reader parses the text */
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM StepTraceTime WHERE computing = 8.310"), 1);
    ASSERT_EQ(q_int(db, "SELECT count(*) FROM StepTraceTime WHERE free = 7.690"), 1);
    sqlite3_close(db);
}

static void test_db_is_reproducible(void)
{
    char d[256], p[400];
    snprintf(d, sizeof d, "%s/rich_ascend_pt", root);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db", d);
    FILE *f = fopen(p, "rb");
    ASSERT_TRUE(f != NULL);
    static char a[1 << 20], b[1 << 20];
    size_t na = fread(a, 1, sizeof a, f);
    fclose(f);
    analyse(d);
    f = fopen(p, "rb");
    ASSERT_TRUE(f != NULL);
    size_t nb = fread(b, 1, sizeof b, f);
    fclose(f);
    ASSERT_EQ(na, nb);
    ASSERT_TRUE(memcmp(a, b, na) == 0);
}

static void setup(void) { rb_tempdir(root, sizeof root, "db"); }
static void teardown(void) { if (!getenv("KEEP")) rb_rmtree(root); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_schema_every_switch_on), TEST_CASE(test_rows),
          TEST_CASE(test_python_calls_are_trace_rows),
          TEST_CASE(test_tables_follow_switches), TEST_CASE(test_db_is_reproducible),
          TEST_CASE(test_step_trace_values_match_the_csv_text),
          TEST_CASE(teardown))
