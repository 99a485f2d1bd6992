/*
 * test_comm_level.c — which communication outputs each profiler_level
 * writes (the seed: communication.json and communication_matrix.json, 通信
 * 算子的communication.json和communication_matrix.json, at Level1 and Level2
 * only; analysis.db's CommAnalyzer* tables with them): one allreduce in a
 * step, recorded at Level_none, Level0, Level1 and Level2, and once more
 * with profiler_info.json's level removed.  Below Level1: neither file, no
 * CommAnalyzer table, the reason once in logs/analyse.log, and what every
 * level keeps (COMMUNICATION_OP's row, analysis.db's StepTraceTime, the
 * trace's op, step_trace_time.csv's Communication).  Level1+, and a
 * profile whose level is unknown: all of it.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "comm.h"
#include "fs.h"

#include <jansson.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOTE "communication.json and communication_matrix.json not written"

static char tmp[PATH_MAX];

static void spin(void)
{
    uint64_t t = aip__ticks();
    while (aip__ticks() - t < 20000)
        ;
}

/* One step holding an allreduce, recorded at `level`; the result dir. */
static void record(aip_profiler_level level, char *dir, size_t cap)
{
    static const uint32_t world[2] = {0, 1};
    uint32_t g = aip__comm_group(0x7100, "world", 0, 2, world);
    ASSERT_TRUE(g != AIP_COMM_NONE);
    aip_config c;
    base_config(&c, tmp);
    c.profiler_level = level;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_annotation_push("ProfilerStep#1");
    spin();
    uint64_t a = aip__ticks();
    spin();
    aip__comm_op_info o = {.name = "MPI_Allreduce", .group = g, .peer = AIP_RAW_NO_RANK,
                           .root = AIP_RAW_NO_RANK, .bytes = 4096, .count = 1024,
                           .dtype = "MPI_FLOAT", .tag = -1, .kind = AIP_COMM_COLLECTIVE,
                           .lib = AIP_COMMLIB_MPI, .start = a, .end = aip__ticks()};
    o.seq = aip__comm_next_seq(g);
    aip__comm_op(&o);
    spin();
    aip_annotation_pop();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    snprintf(dir, cap, "%s", aip_session_result_dir(s));
    aip_session_destroy(s);
}

static void analyse(const char *dir)
{
    aip_analyse_options ao;
    aip_analyse_options_init(&ao);
    ao.quiet = 1;
    ASSERT_EQ(aip_analyse_dir(dir, &ao), AIP_OK);
}

static int exists(const char *dir, const char *sub, const char *name)
{
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    return access(path, F_OK) == 0;
}

/* SELECT COUNT(*) of `sql` in ASCEND_PROFILER_OUTPUT/`db`; -1 on error. */
static long long count(const char *dir, const char *db, const char *sql)
{
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/%s", dir, db);
    sqlite3 *h = NULL;
    sqlite3_stmt *q = NULL;
    long long n = -1;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(h);
    return n;
}

static int log_has(const char *dir, const char *text)
{
    char path[PATH_MAX * 2], *buf = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/logs/analyse.log", dir);
    if (aip__read_file_nofollow(path, 1 << 20, &buf, &n) != AIP_OK)
        return -1;
    int yes = strstr(buf, text) != NULL;
    free(buf);
    return yes;
}

static void check(const char *dir, int summaries)
{
    ASSERT_EQ(exists(dir, "ASCEND_PROFILER_OUTPUT", "communication.json"), summaries);
    ASSERT_EQ(exists(dir, "ASCEND_PROFILER_OUTPUT", "communication_matrix.json"), summaries);
    ASSERT_EQ(count(dir, "analysis.db",
                    "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('CommAnalyzerTime', "
                    "'CommAnalyzerBandwidth', 'CommAnalyzerMatrix')"),
              summaries ? 3 : 0);
    ASSERT_EQ(log_has(dir, NOTE), !summaries);
    /* every level: the op-level table, the step rows, the trace */
    ASSERT_EQ(count(dir, "ascend_pytorch_profiler.db", "SELECT COUNT(*) FROM COMMUNICATION_OP"),
              1);
    ASSERT_EQ(count(dir, "analysis.db",
                    "SELECT COUNT(*) FROM StepTraceTime WHERE communication > 0"),
              1);
    ASSERT_TRUE(exists(dir, "ASCEND_PROFILER_OUTPUT", "step_trace_time.csv"));
    char path[PATH_MAX * 2], *tv = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", dir);
    ASSERT_EQ(aip__read_file_nofollow(path, 64 << 20, &tv, &n), AIP_OK);
    ASSERT_TRUE(strstr(tv, "\"ph\":\"X\",\"name\":\"hcom_allReduce__") != NULL);
    free(tv);
}

static void test_levels(void)
{
    static const struct { aip_profiler_level level; int summaries; } cases[] = {
        {AIP_LEVEL_NONE, 0}, {AIP_LEVEL0, 0}, {AIP_LEVEL1, 1}, {AIP_LEVEL2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char dir[PATH_MAX];
        record(cases[i].level, dir, sizeof dir);
        analyse(dir);
        check(dir, cases[i].summaries);
    }
}

/* A profile whose profiler_info.json names no level (another writer's, or
 * edited): what was recorded is written, not dropped on a guess. */
static void test_unknown_level(void)
{
    char dir[PATH_MAX], path[PATH_MAX * 2];
    record(AIP_LEVEL0, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/profiler_info.json", dir);
    json_t *info = json_load_file(path, 0, NULL);
    ASSERT_TRUE(info != NULL);
    json_t *exp = json_object_get(json_object_get(info, "config"), "experimental_config");
    ASSERT_EQ(json_object_del(exp, "_profiler_level"), 0);
    ASSERT_EQ(json_dump_file(info, path, 0), 0);
    json_decref(info);
    analyse(dir);
    check(dir, 1);
    /* and back at Level0: the files of the earlier analysis go */
    info = json_load_file(path, 0, NULL);
    exp = json_object_get(json_object_get(info, "config"), "experimental_config");
    json_object_set_new(exp, "_profiler_level", json_string("Level0"));
    ASSERT_EQ(json_dump_file(info, path, 0), 0);
    json_decref(info);
    analyse(dir);
    check(dir, 0);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "comm_level");
    static const aip_test_case cases[] = {TEST_CASE(test_levels), TEST_CASE(test_unknown_level)};
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
