/*
 * test_trace_file.c — what a trace's raw file holds beyond the events:
 * only the strings its own events use (ids are process-wide), the
 * recording host's id, and no strings made for steps nobody records.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "aiprof_integration.h"
#include "host_uid.h"
#include "intern.h"
#include "raw_count.h"
#include "session_helpers.h"

#include <jansson.h>

static char tmp[PATH_MAX];

/* Each trace's raw file defines the strings its events use, and only
 * those: ids are process-wide, and a long run must not carry its history
 * into every later file. */
static void test_trace_files_carry_only_their_strings(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.record_shapes = c.with_stack = c.with_modules = 1; /* every string field */
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    char name[64];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "first_only_%d", i);
        aip_annotation_push(name);
        aip_annotation_pop();
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, "first_only", &rc));
    ASSERT_EQ(rc.prefix_hits, 300);
    aip_session_destroy(s);

    /* The second trace uses every kind of string a record can name. */
    ASSERT_TRUE((s = start_new(&c)) != NULL);
    aip_annotation_push("second_annotation");
    aip_op_info op = {.name = "aten::second", .sequence_number = -1, .input_shapes = "[[2]]",
                      .input_dtypes = "[float]", .call_stack = "second.py(3): g",
                      .module_hierarchy = "nn.Module: Second_0"};
    aip_op_begin(&op);
    aip_op_end();
    aip_range_push("dom_push", "second_range");
    aip_range_pop();
    aip_range_end(aip_range_start("dom_start", "second_cross"));
    aip_mark("dom_mark", "second_mark");
    aip_pyfunc_push(aip_intern("second.py(9): h"), aip_intern("nn.Module: SecondMod_0"));
    aip_pyfunc_pop();
    aip_annotation_pop();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(raw_count_session(s, "first_only", &rc));
    ASSERT_EQ(rc.prefix_hits, 0);
    ASSERT_TRUE(rc.strings < 40); /* not the 300 of the first trace */
    char *text = analysed_trace(s);
    ASSERT_TRUE(text != NULL);
    static const char *const want[] = {
        "\"second_annotation\"", "\"aten::second\"", "\"[[2]]\"", "\"[float]\"",
        "second.py(3): g", "\"nn.Module: Second_0\"", "\"dom_push\"", "\"second_range\"",
        "\"dom_start\"", "\"second_cross\"", "\"dom_mark\"", "\"second_mark\"",
        "\"second.py(9): h\""}; /* a Python call's module shows as its id */
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(text, want[i])) {
            fprintf(stderr, "missing %s\n", want[i]);
            ASSERT_TRUE(0);
        }
    ASSERT_TRUE(strstr(text, "first_only") == NULL);
    free(text);
    aip_session_destroy(s);
}

/* The raw file's INFO names the recording host by torch_npu's host id, so
 * an analysis on another machine still fills HOST_INFO.hostUid. */
static void test_info_records_host_uid(void)
{
    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_annotation_push("a");
    aip_annotation_pop();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(aip_session_result_dir(s), raw, sizeof raw));
    aip__raw_reader *r;
    ASSERT_EQ(aip__raw_open(raw, &r), AIP_OK);
    aip__raw_chunk ch;
    json_t *info = NULL;
    while (!info && aip__raw_next(r, &ch) == 1)
        if (ch.type == AIP_CHUNK_INFO)
            info = json_loadb((const char *)ch.payload, ch.size, 0, NULL);
    aip__raw_close(r);
    ASSERT_TRUE(info != NULL);
    char want[24];
    snprintf(want, sizeof want, "%llu", (unsigned long long)aip__host_uid());
    const char *got = json_string_value(json_object_get(info, "host_uid"));
    int ok = aip__host_uid() ? got && !strcmp(got, want) : got == NULL; /* no MAC: none */
    json_decref(info);
    ASSERT_TRUE(ok);
    aip_session_destroy(s);
}

/* Steps outside traces intern nothing: string ids live as long as the
 * process, and a long run steps millions of times between its traces. */
static void test_steps_outside_traces_intern_nothing(void)
{
    aip_config c;
    scheduled_config(&c, tmp,
                     (aip_schedule){.wait = 100000, .warmup = 0, .active = 1, .repeat = 1});
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(aip_session_step(s), AIP_OK);
    uint32_t before = aip__string_count();
    for (int i = 0; i < 5000; i++)
        ASSERT_EQ(aip_session_step(s), AIP_OK);
    ASSERT_EQ(aip__string_count(), before);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
}

static void setup(void) { make_tmpdir(tmp, sizeof tmp, "trace_file"); }
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_trace_files_carry_only_their_strings),
          TEST_CASE(test_info_records_host_uid), TEST_CASE(test_steps_outside_traces_intern_nothing),
          TEST_CASE(teardown))
