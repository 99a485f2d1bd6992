/*
 * test_export_analyse_dir.c — aip_analyse_dir() end to end on hand-built
 * result directories: outputs and modes, determinism, salvage of damaged
 * raw data, export types, and the error cases.
 */
#include "aip_test.h"
#include "raw_builder.h"

#include "aiprof.h"

#include <jansson.h>
#include <sys/stat.h>

static char root[64];

static void build_raw(rb_buf *b, int64_t pid)
{
    rb_header(b, 1, 0);
    rb_info(b, pid, "train", 1e9);
    const char *names[] = {"ProfilerStep#0", "aten::mm", "aten::add", "ProfilerStep#1"};
    rb_strings(b, 1, names, NULL, 4);
    rb_clock(b, 1000, 1000, 1700000000123456789ull);
    rb_buf e = {0};
    for (int s = 0; s < 2; s++) {
        uint64_t base = 10000 + (uint64_t)s * 100000;
        for (int i = 0; i < 50; i++) {
            ev_op(&e, 3, base + 1000 * i + 100, base + 1000 * i + 200);
            ev_op(&e, 2, base + 1000 * i + 50, base + 1000 * i + 700);
        }
        ev_annotation(&e, s ? 4 : 1, base, base + 90000);
    }
    rb_events(b, (uint64_t)pid, &e);
    rb_free(&e);
    rb_stats1(b, (uint64_t)pid, 202, 5);
    rb_clock(b, 300000, 300000, 1700000000123456789ull + 299000);
    rb_end(b);
}

static void make_dir(const char *name, char *out, const rb_buf *raw, const char *info_json)
{
    snprintf(out, 256, "%s/%s", root, name);
    rb_result_dir(out, 4321, raw, info_json);
}

static char *slurp(const char *dir, const char *rel, size_t *len)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return aip_test_slurp(p, len);
}

static int mode_of(const char *dir, const char *rel)
{
    char p[400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

static aip_analyse_options quiet_opts(unsigned export_type)
{
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.export_type = export_type;
    return o;
}

static const char *outputs[] = {"ASCEND_PROFILER_OUTPUT/trace_view.json",
                                "ASCEND_PROFILER_OUTPUT/operator_details.csv",
                                "ASCEND_PROFILER_OUTPUT/step_trace_time.csv"};

static void test_outputs_and_determinism(void)
{
    rb_buf b = {0};
    build_raw(&b, 4321);
    char d[256];
    make_dir("good_ascend_pt", d, &b, "{\"config\": {\"common_config\": {\"record_shapes\": true},"
             " \"experimental_config\": {\"_export_type\": [\"text\"]}}, \"rank_id\": 2}");
    rb_free(&b);
    aip_analyse_options o = quiet_opts(0);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    char *first[3];
    size_t first_len[3];
    for (int i = 0; i < 3; i++) {
        first[i] = slurp(d, outputs[i], &first_len[i]);
        ASSERT_TRUE(first[i] != NULL);
        ASSERT_EQ(mode_of(d, outputs[i]) & 0137, 0); /* at most 0640 */
    }
    ASSERT_EQ(mode_of(d, "ASCEND_PROFILER_OUTPUT") & 0027, 0); /* at most 0750 */
    json_error_t err;
    char p[400];
    snprintf(p, sizeof p, "%s/%s", d, outputs[0]);
    json_t *j = json_load_file(p, 0, &err);
    ASSERT_TRUE(json_is_array(j)); /* torch_npu's form by default */
    ASSERT_EQ(json_array_size(j), 202 + 5);
    /* the run facts ride in the first process_name's args */
    json_t *facts = json_object_get(json_array_get(j, 0), "args");
    ASSERT_STREQ(json_string_value(json_object_get(json_array_get(j, 0), "name")), "process_name");
    ASSERT_EQ(json_integer_value(json_object_get(facts, "rank")), 2);
    ASSERT_EQ(json_integer_value(json_object_get(facts, "record_shapes")), 1);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(facts, "aiprof"), "droppedEvents")),
              5);
    json_decref(j);
    ASSERT_TRUE(strstr(first[2], "\r\nhost,0,") != NULL);
    ASSERT_TRUE(strstr(first[2], "\r\nhost,1,") != NULL);
    char *log = slurp(d, "logs/analyse.log", NULL);
    ASSERT_TRUE(log != NULL);
    ASSERT_TRUE(strstr(log, "read profiler_info.json") != NULL);
    ASSERT_TRUE(strstr(log, "5 events were dropped") != NULL);
    ASSERT_TRUE(strstr(log, "wrote ASCEND_PROFILER_OUTPUT/trace_view.json") != NULL);
    free(log);
    /* again: byte-identical */
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    for (int i = 0; i < 3; i++) {
        size_t n;
        char *again = slurp(d, outputs[i], &n);
        ASSERT_EQ(n, first_len[i]);
        ASSERT_TRUE(memcmp(again, first[i], n) == 0);
        free(again);
        free(first[i]);
    }
    /* Kineto's form on request: the object with the facts at the top */
    o.trace_format = AIP_TRACE_KINETO;
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    j = json_load_file(p, 0, &err);
    ASSERT_TRUE(json_is_object(j));
    ASSERT_EQ(json_integer_value(json_object_get(j, "rank")), 2);
    ASSERT_EQ(json_array_size(json_object_get(j, "traceEvents")), 202 + 5);
    ASSERT_TRUE(json_integer_value(json_object_get(j, "baseTimeNanoseconds")) > 0);
    json_decref(j);
    /* a caller built before trace_format existed passes a shorter struct:
     * the default form, whatever lies beyond its end */
    o.struct_size = offsetof(aip_analyse_options, trace_format);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    j = json_load_file(p, 0, &err);
    ASSERT_TRUE(json_is_array(j));
    json_decref(j);
    o.struct_size = sizeof o;
    o.trace_format = 7;
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(aip_last_error(), "trace_format 7") != NULL);
    /* export_chrome_trace's path: the other form to a file, the result unchanged */
    char k[400];
    snprintf(k, sizeof k, "%s/../kineto_copy/trace.json", d);
    ASSERT_EQ(aip_export_trace(d, k, AIP_TRACE_KINETO), AIP_OK);
    j = json_load_file(k, 0, &err);
    ASSERT_TRUE(json_is_object(j) && json_array_size(json_object_get(j, "traceEvents")) == 207);
    json_decref(j);
    j = json_load_file(p, 0, &err);
    ASSERT_TRUE(json_is_array(j));
    json_decref(j);
    ASSERT_EQ(aip_export_trace(d, k, 3), AIP_ERR_INVALID_ARG);
    /* perfetto: the protobuf trace (a Trace's first field, packet, is 0x0a) */
    ASSERT_EQ(aip_export_trace(d, k, AIP_TRACE_PERFETTO), AIP_OK);
    size_t n;
    char *pb = aip_test_slurp(k, &n);
    ASSERT_TRUE(pb && n > 100 && pb[0] == 0x0a);
    free(pb);
}

static void test_truncated_raw_is_salvaged(void)
{
    rb_buf b = {0};
    build_raw(&b, 4321);
    b.len -= 30; /* cut inside the last CLOCK chunk: no END, no final sync */
    char d[256];
    make_dir("cut_ascend_pt", d, &b, NULL); /* and no profiler_info.json */
    rb_free(&b);
    aip_analyse_options o = quiet_opts(0);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    char *csv = slurp(d, outputs[1], NULL);
    ASSERT_TRUE(csv != NULL);
    ASSERT_TRUE(strstr(csv, "aten::add") != NULL);
    free(csv);
    char *log = slurp(d, "logs/analyse.log", NULL);
    ASSERT_TRUE(strstr(log, "do not form a complete chunk") != NULL);
    ASSERT_TRUE(strstr(log, "no profiler_info.json") != NULL);
    free(log);
}

static void test_export_types(void)
{
    rb_buf b = {0};
    build_raw(&b, 4321);
    char d[256];
    make_dir("db_ascend_pt", d, &b,
             "{\"config\": {\"experimental_config\": {\"_export_type\": [\"db\"]}}}");
    aip_analyse_options o = quiet_opts(0); /* db, as recorded: the databases only */
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    ASSERT_EQ(mode_of(d, outputs[0]), -1);
    ASSERT_EQ(mode_of(d, "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db") & 0137, 0);
    ASSERT_TRUE(mode_of(d, "ASCEND_PROFILER_OUTPUT/analysis.db") > 0);
    o = quiet_opts(AIP_EXPORT_TEXT); /* the option overrides profiler_info; text has the dbs */
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    ASSERT_TRUE(mode_of(d, outputs[0]) > 0);
    ASSERT_TRUE(mode_of(d, "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db") > 0);
    o = quiet_opts(AIP_EXPORT_TEXT | AIP_EXPORT_DB);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    o = quiet_opts(AIP_EXPORT_DB); /* the text outputs of the last run go */
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    ASSERT_EQ(mode_of(d, outputs[0]), -1);
    ASSERT_EQ(mode_of(d, outputs[1]), -1);
    ASSERT_TRUE(mode_of(d, "ASCEND_PROFILER_OUTPUT/analysis.db") > 0);
    o = quiet_opts(0x80);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_ERR_INVALID_ARG);
    rb_free(&b);
}

static void test_errors(void)
{
    aip_analyse_options o = quiet_opts(0);
    char d[256];
    make_dir("empty_ascend_pt", d, NULL, NULL);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_ERR_NOT_FOUND); /* FRAMEWORK without raw */
    char nofw[256];
    snprintf(nofw, sizeof nofw, "%s/nofw", root);
    mkdir(nofw, 0750);
    ASSERT_EQ(aip_analyse_dir(nofw, &o), AIP_ERR_NOT_FOUND);
    snprintf(nofw, sizeof nofw, "%s/missing", root);
    ASSERT_EQ(aip_analyse_dir(nofw, &o), AIP_ERR_NOT_FOUND);
    ASSERT_EQ(aip_analyse_dir("/tmp/bad dir", &o), AIP_ERR_PATH);
    ASSERT_EQ(aip_analyse_dir(NULL, &o), AIP_ERR_INVALID_ARG);
    /* not raw data */
    rb_buf junk = {0};
    rb_put(&junk, "hello, this is not raw", 22);
    make_dir("junk_ascend_pt", d, &junk, NULL);
    rb_free(&junk);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_ERR_FORMAT);
    char *log = slurp(d, "logs/analyse.log", NULL);
    ASSERT_TRUE(log && strstr(log, "not aiprof raw data") != NULL);
    free(log);
    /* a newer major version */
    rb_buf v2 = {0};
    rb_header(&v2, 3, 0);
    make_dir("v3_ascend_pt", d, &v2, NULL);
    rb_free(&v2);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_ERR_VERSION);
    ASSERT_TRUE(strstr(aip_last_error(), "upgrade aiprof") != NULL);
    /* a symlinked result directory */
    char link[300];
    snprintf(link, sizeof link, "%s/link_ascend_pt", root);
    ASSERT_EQ(symlink(d, link), 0);
    ASSERT_EQ(aip_analyse_dir(link, &o), AIP_ERR_SYMLINK);
    /* default options (NULL) work */
    rb_buf b = {0};
    build_raw(&b, 4321);
    make_dir("nullopt_ascend_pt", d, &b, NULL);
    rb_free(&b);
    setenv("AIPROF_QUIET", "1", 1);
    ASSERT_EQ(aip_analyse_dir(d, NULL), AIP_OK);
}

static void test_two_processes(void)
{
    rb_buf a = {0}, b = {0};
    build_raw(&a, 4321);
    build_raw(&b, 999);
    char d[256];
    make_dir("two_ascend_pt", d, &a, NULL);
    rb_result_dir(d, 999, &b, NULL);
    rb_free(&a);
    rb_free(&b);
    aip_analyse_options o = quiet_opts(0);
    ASSERT_EQ(aip_analyse_dir(d, &o), AIP_OK);
    char *csv = slurp(d, outputs[1], NULL);
    int rows = 0;
    for (char *q = csv; (q = strstr(q, "\r\n")); q += 2)
        rows++;
    ASSERT_EQ(rows, 1 + 2 * 200);
    free(csv);
}

static void setup(void) { rb_tempdir(root, sizeof root, "adir"); }
static void teardown(void) { if (!getenv("KEEP")) rb_rmtree(root); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_outputs_and_determinism),
          TEST_CASE(test_truncated_raw_is_salvaged), TEST_CASE(test_export_types),
          TEST_CASE(test_two_processes), TEST_CASE(test_errors), TEST_CASE(teardown))
