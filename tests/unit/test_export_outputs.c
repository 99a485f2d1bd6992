/*
 * test_export_outputs.c — which files an analysis leaves, for which
 * switches (the seed's 输出结果文件说明), with every CSV header exactly as
 * the seed / reference §2.2 spell it; data_simplification,
 * record_op_args, pruning of stale outputs, and the memory CSV rows.
 */
#include "aip_test.h"
#include "rich_profile.h"

#include "aiprof.h"

#include <dirent.h>

static char root[64];

/* Headers typed from the seed and reference §2.2, not from the code. */
static const struct { const char *file, *header; } seed_headers[] = {
    /* all nine of the seed's columns; the Device cells are empty here */
    {"operator_details.csv", "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total "
     "Duration(us),Device Self Duration(us),Device Total Duration(us),Device Self Duration "
     "With AICore(us),Device Total Duration With AICore(us)"},
    {"step_trace_time.csv", "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,"
     "Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing"},
    {"op_statistic.csv", "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),"
     "Avg Time(us),Max Time(us),Ratio(%)"},
    {"api_statistic.csv", "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),"
     "Variance"},
    {"memory_record.csv", "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),"
     "Total Active(MB),Stream Ptr,Device Type"},
    {"operator_memory.csv", "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release "
     "Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total "
     "Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total "
     "Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type"},
};

/* Sorted, comma-joined names in a directory. */
static void listing(const char *dir, char *out, size_t cap)
{
    char names[64][128];
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.')
            snprintf(names[n++], 128, "%s", e->d_name);
    if (d)
        closedir(d);
    qsort(names, n, 128, (int (*)(const void *, const void *))strcmp);
    out[0] = 0;
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "," : "", names[i]);
}

static int analyse(const char *dir)
{
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    return aip_analyse_dir(dir, &o);
}

static int exists(const char *dir, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return access(p, F_OK) == 0;
}

static void touch(const char *dir, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    rb_write_file(p, "x", 1);
}

static void test_every_switch_on(void)
{
    char d[256], p[512], list[2048];
    snprintf(d, sizeof d, "%s/rich_ascend_pt", root);
    rich_dir(d, rich_info_json, rich_metadata_json);
    /* leftovers: stray files, an earlier analysis's file, a killed one's temp */
    touch(d, "stray.txt");
    snprintf(p, sizeof p, "%s/junkdir", d);
    mkdir(p, 0750);
    touch(d, "junkdir/inner");
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", d);
    mkdir(p, 0750);
    touch(d, "ASCEND_PROFILER_OUTPUT/kernel_details.csv");
    touch(d, "ASCEND_PROFILER_OUTPUT/trace_view.json.tmp123");
    ASSERT_EQ(analyse(d), AIP_OK);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", d);
    listing(p, list, sizeof list);
    ASSERT_STREQ(list, "analysis.db,api_statistic.csv,ascend_pytorch_profiler.db,memory_record.csv,"
                       "op_statistic.csv,operator_details.csv,operator_memory.csv,"
                       "step_trace_time.csv,trace_view.json");
    /* data_simplification: the seed's list only */
    listing(d, list, sizeof list);
    ASSERT_STREQ(list, "ASCEND_PROFILER_OUTPUT,FRAMEWORK,logs,profiler_info.json,"
                       "profiler_metadata.json");
    char *log = aip_test_slurp(strcat(strcpy(p, d), "/logs/analyse.log"), NULL);
    ASSERT_TRUE(log && strstr(log, "removed stray.txt") && strstr(log, "removed junkdir"));
    ASSERT_TRUE(strstr(log, "removed ASCEND_PROFILER_OUTPUT/kernel_details.csv") != NULL);
    free(log);
    for (size_t i = 0; i < sizeof seed_headers / sizeof seed_headers[0]; i++) {
        snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/%s", d, seed_headers[i].file);
        char *csv = aip_test_slurp(p, NULL);
        ASSERT_TRUE(csv != NULL);
        size_t n = strlen(seed_headers[i].header);
        if (strncmp(csv, seed_headers[i].header, n) || strncmp(csv + n, "\r\n", 2)) {
            fprintf(stderr, "%s header: %.*s\n", seed_headers[i].file, (int)n + 2, csv);
            ASSERT_TRUE(0);
        }
        free(csv);
    }
    /* record_op_args: beside the result directory */
    snprintf(p, sizeof p, "%s_op_args/op_args.csv", d);
    char *args = aip_test_slurp(p, NULL);
    ASSERT_TRUE(args != NULL);
    ASSERT_TRUE(strncmp(args, "Name,Input Shapes,Input Data Types,Count\r\n", 41) == 0);
    ASSERT_TRUE(strstr(args, "\r\naten::linear,\"[[2, 3], [3, 4]]\",\"[float, float]\",1\r\n"));
    ASSERT_TRUE(strstr(args, "\r\naten::mm,,,2\r\n"));
    free(args);
}

static void test_memory_rows(void)
{
    char d[256], p[512];
    snprintf(d, sizeof d, "%s/rich_ascend_pt", root);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/memory_record.csv", d);
    char *csv = aip_test_slurp(p, NULL);
    ASSERT_TRUE(csv != NULL);
    /* 8192 preexisting + 1024 at R0 + 4 µs; reserved 64 KiB; CPU: active = allocated */
    ASSERT_TRUE(strstr(csv, "\r\nPTA,1700000000000004.000\t,0.008789,0.062500,0.008789,,CPU\r\n"
                            "PTA+GE,1700000000000004.000\t,0.008789,0.062500,0.008789,,CPU\r\n"));
    free(csv);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/operator_memory.csv", d);
    csv = aip_test_slurp(p, NULL);
    ASSERT_TRUE(csv != NULL);
    ASSERT_TRUE(strstr(csv, "\r\naten::addmm,1.000,1700000000000004.000\t,1700000000000014.000\t,,"
                            "10.000\t,,0.008789,0.062500,0.008789,0.009766,0.062500,0.009766,,CPU\r\n"));
    /* never released: release columns empty */
    ASSERT_TRUE(strstr(csv, "\r\naten::mm,0.250,1700000000000035.000\t,,,,,"));
    int rows = 0;
    for (char *q = csv; (q = strstr(q, "\r\n")); q += 2)
        rows++;
    ASSERT_EQ(rows, 1 + 5);
    free(csv);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/api_statistic.csv", d);
    csv = aip_test_slurp(p, NULL);
    ASSERT_TRUE(csv && strstr(csv, "\r\nhost,op,aten::mm,13.000,2,6.500,5.000,8.000,2.250\r\n"));
    ASSERT_TRUE(strstr(csv, "\r\nhost,mstx,dataloader,1.000,1,") != NULL);
    ASSERT_TRUE(strstr(csv, "ProfilerStep") == NULL);
    free(csv);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/op_statistic.csv", d);
    csv = aip_test_slurp(p, NULL);
    ASSERT_TRUE(csv && strstr(csv, "\r\nhost,autograd::engine::evaluate_function: AddmmBackward0,"
                                   "CPU,1,20.000,20.000,20.000,20.000,"));
    ASSERT_TRUE(strstr(csv, "\"'quote\"\"comma,=cmd\n</script><b>&amp;\"") == NULL); /* no guard: starts with q */
    ASSERT_TRUE(strstr(csv, "\"quote\"\"comma,=cmd\n</script><b>&amp;\"") != NULL);
    free(csv);
}

static void test_switches_off(void)
{
    char d[256], p[512], list[2048];
    snprintf(d, sizeof d, "%s/off_ascend_pt", root);
    const char *info = "{\"config\": {\"common_config\": {\"profile_memory\": false}, "
                       "\"experimental_config\": {\"_profiler_level\": \"Level0\", "
                       "\"_data_simplification\": false, \"_export_type\": [\"text\"]}}}";
    rich_dir(d, info, NULL);
    touch(d, "stray.txt");
    ASSERT_EQ(analyse(d), AIP_OK);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", d);
    listing(p, list, sizeof list);
    ASSERT_STREQ(list, "analysis.db,ascend_pytorch_profiler.db,op_statistic.csv,"
                       "operator_details.csv,step_trace_time.csv,trace_view.json");
    ASSERT_TRUE(exists(d, "stray.txt"));
    snprintf(p, sizeof p, "%s_op_args", d);
    ASSERT_TRUE(access(p, F_OK) != 0);
    /* Level2 has api_statistic too */
    info = "{\"config\": {\"experimental_config\": {\"_profiler_level\": \"ProfilerLevel.Level2\","
           " \"_export_type\": [\"text\"]}}}";
    snprintf(p, sizeof p, "%s/profiler_info.json", d);
    rb_write_file(p, info, strlen(info));
    ASSERT_EQ(analyse(d), AIP_OK);
    ASSERT_TRUE(exists(d, "ASCEND_PROFILER_OUTPUT/api_statistic.csv"));
    ASSERT_TRUE(!exists(d, "stray.txt")); /* simplification is on by default */
}

/* Names lost with a damaged STRINGS chunk: every output still works. */
static void test_names_lost(void)
{
    char d[256];
    snprintf(d, sizeof d, "%s/nostrings_ascend_pt", root);
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 9, "prog", 1e9);
    rb_clock(&b, 0, 0, RICH_R0);
    ev_annotation(&e, 5, 50, 1000);
    ev_op_full(&e, 7, 100, 200, AIP_OPF_SHAPES | AIP_OPF_STACK, 0, 0, 8, 9, 10, 11);
    ev_range(&e, 12, 13, 300, 400);
    ev_memory(&e, 150, 0x10, 64, 64, 64, 0, -1);
    ev_memory(&e, 180, 0x10, -64, 0, 64, 0, -1);
    rb_events(&b, 9, &e);
    rb_end(&b);
    rb_result_dir(d, 9, &b, "{\"config\": {\"common_config\": {\"profile_memory\": true, "
                            "\"with_stack\": true}, \"experimental_config\": {\"_profiler_level\": "
                            "\"Level2\", \"record_op_args\": true}}}");
    rb_free(&b);
    rb_free(&e);
    ASSERT_EQ(analyse(d), AIP_OK);
    ASSERT_TRUE(exists(d, "ASCEND_PROFILER_OUTPUT/api_statistic.csv"));
    ASSERT_TRUE(exists(d, "ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    ASSERT_TRUE(exists(d, "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db"));
}

static void setup(void) { rb_tempdir(root, sizeof root, "outs"); }
static void teardown(void) { if (!getenv("KEEP")) rb_rmtree(root); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_every_switch_on), TEST_CASE(test_memory_rows),
          TEST_CASE(test_switches_off), TEST_CASE(test_names_lost), TEST_CASE(teardown))
