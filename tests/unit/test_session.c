/*
 * test_session.c — session lifecycle against the torch contract: trace
 * counts and on_trace_ready steps for every fixture schedule, ProfilerStep#
 * ranges, API misuse errors, bad paths, file modes, metadata, rank naming,
 * mstx domain filtering.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "aiprof_integration.h"
#include "raw_count.h"
#include "session_helpers.h"

#include <jansson.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[PATH_MAX];

typedef struct ready_log {
    int calls;
    int64_t steps[64];
    char dirs[64][PATH_MAX];
} ready_log;

static void on_ready(aip_session *s, const char *dir, void *user)
{
    ready_log *l = user;
    if (l->calls < 64) {
        l->steps[l->calls] = aip_session_step_num(s);
        snprintf(l->dirs[l->calls], PATH_MAX, "%s", dir);
    }
    l->calls++;
}

static void test_defaults_follow_seed(void)
{
    aip_config c;
    aip_config_init(&c);
    ASSERT_EQ(c.activities, AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU);
    ASSERT_EQ(c.export_type, AIP_EXPORT_TEXT);
    ASSERT_EQ(c.profiler_level, AIP_LEVEL0);
    ASSERT_EQ(c.data_simplification, 1);
    ASSERT_EQ(c.mstx, 0);
    ASSERT_TRUE(c.gc_detect_threshold_ms < 0);
    ASSERT_EQ(c.buffer_cap_bytes, 64u * 1024u * 1024u);
    ASSERT_EQ(aip_config_validate(&c), AIP_OK);
}

static void test_invalid_config_names_parameter(void)
{
    aip_config c;
    aip_session *s = (aip_session *)1;
    aip_config_init(&c);
    c.has_schedule = 1;
    c.schedule = (aip_schedule){0, 1, 0, 0, 0};
    ASSERT_EQ(aip_session_create(&c, &s), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(s == NULL);
    ASSERT_TRUE(strstr(aip_last_error(), "active") != NULL);

    aip_config_init(&c);
    c.dir_name = "/tmp/bad dir";
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_PATH);
    ASSERT_TRUE(strstr(aip_last_error(), "dir_name") != NULL);

    aip_config_init(&c);
    c.worker_name = "a/b";
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_PATH);
    ASSERT_TRUE(strstr(aip_last_error(), "worker_name") != NULL);

    aip_config_init(&c);
    c.export_type = 0;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(aip_last_error(), "export_type") != NULL);

    aip_config_init(&c);
    c.record_shapes = 7;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(aip_last_error(), "record_shapes") != NULL);

    aip_config_init(&c);
    c.profiler_level = (aip_profiler_level)9;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(aip_last_error(), "profiler_level") != NULL);

    aip_config_init(&c);
    c.struct_size = 3;
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    ASSERT_EQ(aip_session_create(NULL, &s), AIP_ERR_INVALID_ARG);
}

static void test_misuse_gives_state_errors(void)
{
    aip_config c;
    base_config(&c, tmp);
    aip_session *s, *s2;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_ERR_STATE);
    ASSERT_TRUE(strstr(aip_last_error(), "not started") != NULL);
    ASSERT_EQ(aip_session_step(s), AIP_ERR_STATE);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_ERR_STATE);
    ASSERT_TRUE(strstr(aip_last_error(), "already started") != NULL);
    ASSERT_EQ(aip_session_create(&c, &s2), AIP_OK);
    ASSERT_EQ(aip_session_start(s2), AIP_ERR_STATE);
    ASSERT_TRUE(strstr(aip_last_error(), "another session") != NULL);
    ASSERT_EQ(aip_session_set_step_offset(s, 3), AIP_ERR_STATE);
    /* Unbalanced pops are counted, never fatal. */
    aip_annotation_push("a");
    aip_annotation_pop();
    aip_annotation_pop();
    aip_range_push("d", "r");
    aip_range_pop();
    aip_range_pop();
    aip_op_info op = {.name = "aten::x", .sequence_number = -1};
    aip_op_begin(&op);
    aip_op_end();
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_ERR_STATE);
    ASSERT_EQ(aip_session_start(s2), AIP_OK);
    ASSERT_EQ(aip_session_stop(s2), AIP_OK);
    aip_session_destroy(s2);

    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/profiler_info.json", aip_session_result_dir(s));
    json_t *info = json_load_file(path, 0, NULL);
    ASSERT_TRUE(info != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(info, "aiprof"),
                                                 "unbalanced_pops")), 3);
    json_decref(info);
    aip_session_destroy(s);
    aip_session_destroy(NULL);
}

/* Every fixture schedule: on_trace_ready fires at the same step numbers as
 * torch's profiler, and each trace has its own directory holding exactly
 * its active steps' ProfilerStep# ranges. */
static void test_schedule_traces_match_torch(void)
{
    json_error_t err;
    json_t *fx = json_load_file(AIP_SOURCE_DIR "/tests/fixtures/schedule_cases.json", 0, &err);
    ASSERT_TRUE(fx != NULL);
    json_t *cases = json_object_get(fx, "cases");
    size_t i;
    json_t *cs;
    int checked = 0;
    json_array_foreach(cases, i, cs) {
        aip_config c;
        base_config(&c, tmp);
        c.has_schedule = 1;
        c.schedule.skip_first = json_integer_value(json_object_get(cs, "skip_first"));
        c.schedule.wait = json_integer_value(json_object_get(cs, "wait"));
        c.schedule.warmup = json_integer_value(json_object_get(cs, "warmup"));
        c.schedule.active = json_integer_value(json_object_get(cs, "active"));
        c.schedule.repeat = json_integer_value(json_object_get(cs, "repeat"));
        int steps = (int)json_integer_value(json_object_get(cs, "steps"));
        json_t *expect = json_object_get(cs, "trace_ready_steps");
        json_t *actions = json_object_get(cs, "actions");
        ready_log log;
        memset(&log, 0, sizeof log);
        c.on_trace_ready = on_ready;
        c.on_trace_ready_data = &log;
        aip_session *s;
        ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
        ASSERT_EQ(aip_session_start(s), AIP_OK);
        for (int k = 0; k < steps; k++) {
            AIP_ANNOTATION_PUSH("work");
            AIP_ANNOTATION_POP();
            ASSERT_EQ(aip_session_step(s), AIP_OK);
        }
        ASSERT_EQ(aip_session_stop(s), AIP_OK);
        aip_session_destroy(s);
        if ((size_t)log.calls != json_array_size(expect))
            fprintf(stderr, "case %s: %d traces, torch %zu\n",
                    json_string_value(json_object_get(cs, "name")), log.calls,
                    json_array_size(expect));
        ASSERT_EQ(log.calls, json_array_size(expect));
        for (int k = 0; k < log.calls && k < 64; k++) {
            ASSERT_EQ(log.steps[k], json_integer_value(json_array_get(expect, (size_t)k)));
            /* Recorded steps of trace k: ProfilerStep# ranges counted in its raw file. */
            char raw[PATH_MAX];
            ASSERT_TRUE(raw_find(log.dirs[k], raw, sizeof raw));
            raw_counts rc = raw_count_file(raw, "ProfilerStep#");
            ASSERT_TRUE(rc.clean_end);
            /* The trace holds the steps of one RECORD... RECORD_AND_SAVE run ending at
             * step end-1, or at step `end` itself when the callback came from stop. */
            int from_stop = json_is_true(json_object_get(cs, "stop_fired")) && k == log.calls - 1;
            int64_t end = log.steps[k], last = from_stop ? end : end - 1, begin = last;
            int64_t a_last = json_integer_value(json_array_get(actions, (size_t)last));
            ASSERT_TRUE(a_last == 2 || a_last == 3);
            while (begin > 0 && json_integer_value(json_array_get(actions, (size_t)(begin - 1))) == 2)
                begin--;
            ASSERT_EQ(rc.prefix_hits, (uint64_t)(last - begin + 1));
        }
        checked++;
    }
    ASSERT_TRUE(checked >= 50);
    json_decref(fx);
}

static void test_default_schedule_records_without_steps(void)
{
    aip_config c;
    base_config(&c, tmp);
    ready_log log;
    memset(&log, 0, sizeof log);
    c.on_trace_ready = on_ready;
    c.on_trace_ready_data = &log;
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    ASSERT_TRUE(aip_is_recording());
    for (int k = 0; k < 5; k++)
        ASSERT_EQ(aip_session_step(s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(!aip_is_recording());
    ASSERT_EQ(log.calls, 1);
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(log.dirs[0], raw, sizeof raw));
    raw_counts rc = raw_count_file(raw, "ProfilerStep#");
    ASSERT_EQ(rc.prefix_hits, 0);
    aip_session_destroy(s);
}

static void test_step_offset_numbers_steps(void)
{
    aip_config c;
    scheduled_config(&c, tmp, (aip_schedule){0, 0, 0, 3, 1});
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_set_step_offset(s, 100), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    for (int k = 0; k < 3; k++)
        aip_session_step(s);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, "ProfilerStep#10", &rc));
    ASSERT_EQ(rc.prefix_hits, 3); /* ProfilerStep#100, #101, #102 */
    aip_session_destroy(s);
}

static void test_modes_and_layout(void)
{
    mode_t old = umask(0);
    aip_config c;
    base_config(&c, tmp);
    c.worker_name = "worker-1";
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    ASSERT_EQ(aip_session_add_metadata(s, "model", "mlp"), AIP_OK);
    ASSERT_EQ(aip_session_add_metadata_json(s, "distributed_args", "{\"tp\": 2, \"pp\": 4}"),
              AIP_OK);
    ASSERT_EQ(aip_session_add_metadata_json(s, "bad", "{not json"), AIP_ERR_INVALID_ARG);
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ASSERT_EQ(aip_session_add_metadata(s, "big", big), AIP_ERR_LIMIT);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    umask(old);
    const char *dir = aip_session_result_dir(s);
    ASSERT_TRUE(strstr(dir, "/worker-1_") != NULL);
    ASSERT_TRUE(strstr(dir, "_ascend_pt") != NULL);
    struct stat st;
    ASSERT_EQ(stat(dir, &st), 0);
    ASSERT_EQ(st.st_mode & 0777, 0750);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/profiler_metadata.json", dir);
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_mode & 0777, 0640);
    json_t *meta = json_load_file(path, 0, NULL);
    ASSERT_TRUE(meta != NULL);
    ASSERT_STREQ(json_string_value(json_object_get(meta, "model")), "mlp");
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(meta, "distributed_args"), "pp")),
              4);
    ASSERT_TRUE(json_is_object(json_object_get(meta, "ENV_VARIABLES")));
    ASSERT_TRUE(json_object_get(meta, "bad") == NULL);
    json_decref(meta);
    const char *subs[] = {"FRAMEWORK", "logs", "profiler_info.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, subs[i]);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_EQ(st.st_mode & 0777, S_ISDIR(st.st_mode) ? 0750 : 0640);
    }
    aip_session_destroy(s);

    /* A stricter umask wins. */
    old = umask(077);
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    umask(old);
    ASSERT_EQ(stat(aip_session_result_dir(s), &st), 0);
    ASSERT_EQ(st.st_mode & 0777, 0700);
    aip_session_destroy(s);
}

static void test_rank_names_info_file(void)
{
    setenv("RANK", "3", 1);
    aip_config c;
    base_config(&c, tmp);
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    unsetenv("RANK");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/profiler_info_3.json", aip_session_result_dir(s));
    json_t *info = json_load_file(path, 0, NULL);
    ASSERT_TRUE(info != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(info, "rank_id")), 3);
    ASSERT_TRUE(json_object_get(info, "end_info") != NULL);
    ASSERT_TRUE(json_integer_value(json_object_get(json_object_get(info, "start_info"),
                                                   "start_realtime")) > 0);
    json_decref(info);
    aip_session_destroy(s);
}

static void test_bad_output_paths_keep_program_running(void)
{
    char link[PATH_MAX], target[PATH_MAX], file[PATH_MAX];
    snprintf(target, sizeof target, "%s/target", tmp);
    snprintf(link, sizeof link, "%s/link", tmp);
    snprintf(file, sizeof file, "%s/plainfile", tmp);
    mkdir(target, 0750);
    ASSERT_EQ(symlink(target, link), 0);
    FILE *f = fopen(file, "w");
    ASSERT_TRUE(f != NULL);
    fclose(f);

    aip_config c;
    base_config(&c, link);
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_ERR_SYMLINK);
    ASSERT_TRUE(strstr(aip_last_error(), "symbolic link") != NULL);
    ASSERT_TRUE(!aip_is_recording());
    AIP_RANGE_PUSH("d", "x"); /* harmless */
    AIP_RANGE_POP();
    ASSERT_EQ(aip_session_step(s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);

    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/sub", file);
    base_config(&c, sub); /* a regular file in the path: not creatable */
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), "plainfile is a file, not a directory") != NULL);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);

    setenv("ASCEND_WORK_PATH", "/tmp/has space", 1);
    base_config(&c, NULL);
    c.dir_name = NULL;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_ERR_PATH);
    ASSERT_TRUE(strstr(aip_last_error(), "ASCEND_WORK_PATH") != NULL);
    aip_session_stop(s);
    aip_session_destroy(s);
    unsetenv("ASCEND_WORK_PATH");
}

/* A session whose start failed holds nothing: another session starts and
 * records, and the failed one's later calls still do no harm. */
static void test_failed_start_leaves_the_slot_free(void)
{
    char file[PATH_MAX], sub[PATH_MAX], good[PATH_MAX];
    snprintf(file, sizeof file, "%s/slot_plainfile", tmp);
    snprintf(sub, sizeof sub, "%s/sub", file);
    snprintf(good, sizeof good, "%s/slot_good", tmp);
    FILE *f = fopen(file, "w");
    ASSERT_TRUE(f != NULL);
    fclose(f);

    aip_config c;
    aip_session *bad, *other;
    base_config(&c, sub); /* a regular file in the path: not creatable */
    ASSERT_EQ(aip_session_create(&c, &bad), AIP_OK);
    ASSERT_EQ(aip_session_start(bad), AIP_ERR_IO);
    ASSERT_TRUE(!aip_is_recording());

    base_config(&c, good);
    ASSERT_EQ(aip_session_create(&c, &other), AIP_OK);
    ASSERT_EQ(aip_session_start(other), AIP_OK);
    ASSERT_TRUE(aip_is_recording());
    AIP_RANGE_PUSH("d", "while the other records");
    AIP_RANGE_POP();
    ASSERT_EQ(aip_session_step(bad), AIP_OK); /* the failed session steps: no effect */
    ASSERT_TRUE(aip_is_recording());
    ASSERT_EQ(aip_session_stop(other), AIP_OK);
    ASSERT_TRUE(aip_session_result_dir(other) != NULL);
    ASSERT_EQ(aip_session_stop(bad), AIP_OK);
    aip_session_destroy(other);
    aip_session_destroy(bad);

    /* and once the other stopped, a third session starts too */
    aip_session *third = start_new(&c);
    ASSERT_TRUE(third != NULL);
    aip_session_destroy(third);
}

static void test_mstx_domain_filter(void)
{
    const char *include[] = {"keep", NULL};
    const char *exclude[] = {"keep", NULL};
    aip_config c;
    base_config(&c, tmp);
    c.mstx_domain_include = include;
    c.mstx_domain_exclude = exclude; /* include wins */
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    for (int i = 0; i < 10; i++) {
        aip_range_push("keep", "kept");
        aip_range_pop();
        aip_range_push("drop", "dropped");
        aip_range_pop();
        aip_range_push(NULL, "default domain");
        aip_range_pop();
        aip_mark("keep", "m");
        aip_mark("drop", "m");
        aip_range_end(aip_range_start("keep", "x"));
        ASSERT_EQ(aip_range_start("drop", "y"), 0);
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_RANGE], 10);
    ASSERT_EQ(rc.by_kind[AIP_REC_MARK], 10);
    ASSERT_EQ(rc.by_kind[AIP_REC_RANGE_START], 10);
    ASSERT_EQ(rc.by_kind[AIP_REC_RANGE_END], 10);
    aip_session_destroy(s);

    /* mstx off: ranges are not recorded, annotations are. */
    base_config(&c, tmp);
    c.mstx = 0;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    aip_range_push("a", "b");
    aip_range_pop();
    aip_annotation_push("ann");
    aip_annotation_pop();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_RANGE], 0);
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], 1);
    aip_session_destroy(s);
}

static void test_switches_gate_records(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.record_shapes = 0;
    c.profile_memory = 0;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_op_info op = {.name = "aten::mm", .sequence_number = 5, .input_shapes = "[[1]]",
                      .input_dtypes = "[float]", .call_stack = "a.py(1): f"};
    aip_op_begin(&op);
    aip_op_end();
    aip_memory_event(0x1000, 64, 64, 128, AIP_DEVICE_CPU, 0);
    aip_gc_event(aip_now_ns(), aip_now_ns() + 5000000);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    raw_counts rc;
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_OP], 1);
    ASSERT_EQ(rc.by_kind[AIP_REC_MEMORY], 0);
    ASSERT_EQ(rc.by_kind[AIP_REC_GC], 0);
    /* 24-byte op + 8-byte sequence number, no shapes or stack. */
    aip_session_destroy(s);

    base_config(&c, tmp);
    c.profile_memory = 1;
    c.gc_detect_threshold_ms = 1.0;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    aip_memory_event(0x1000, 64, 64, 128, AIP_DEVICE_CPU, 0);
    aip_memory_label(0x1000, 64, AIP_DEVICE_CPU, 0, AIP_MEM_PARAMETER);
    aip_memory_label(0x1000, 64, AIP_DEVICE_CPU, 0, (aip_memory_category)99); /* ignored */
    uint64_t t0 = aip_now_ns();
    aip_gc_event(t0, t0 + 5000000); /* 5 ms: kept */
    aip_gc_event(t0, t0 + 100000);  /* 0.1 ms: under the threshold */
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_MEMORY], 1);
    ASSERT_EQ(rc.by_kind[AIP_REC_MEMORY_CATEGORY], 1);
    ASSERT_EQ(rc.by_kind[AIP_REC_GC], 1);
    /* Trace-only analysis writes trace_view.json and nothing else. */
    aip_analyse_options to;
    aip_analyse_options_init(&to);
    to.quiet = 1;
    to.outputs = AIP_OUTPUTS_TRACE_VIEW;
    ASSERT_EQ(aip_analyse_dir(aip_session_result_dir(s), &to), AIP_OK);
    char outp[PATH_MAX + 64];
    snprintf(outp, sizeof outp, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", aip_session_result_dir(s));
    ASSERT_EQ(access(outp, F_OK), 0);
    snprintf(outp, sizeof outp, "%s/ASCEND_PROFILER_OUTPUT/operator_details.csv", aip_session_result_dir(s));
    ASSERT_TRUE(access(outp, F_OK) != 0);
    to.outputs = 7;
    ASSERT_EQ(aip_analyse_dir(aip_session_result_dir(s), &to), AIP_ERR_INVALID_ARG);
    aip_session_destroy(s);

    /* Python calls: recorded with with_stack, numbered, parent-linked. */
    base_config(&c, tmp);
    c.with_stack = 1;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    aip_pyfunc_push(aip_intern("train.py(10): train_step"), 0);
    aip_pyfunc_push(aip_intern("nn.Module: Linear_0"), aip_intern("nn.Module: Linear_0"));
    aip_pyfunc_pop();
    aip_pyfunc_pop();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(raw_count_session(s, "train.py", &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_PYFUNC], 2);
    ASSERT_EQ(rc.prefix_hits, 1);
    aip_session_destroy(s);

    /* Pre-interned ids work like the texts. */
    base_config(&c, tmp);
    c.record_shapes = 1;
    c.with_stack = 1;
    c.with_modules = 1;
    c.with_flops = 1;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    aip_op_info by_id = {.name = "aten::mm", .sequence_number = -1,
                         .input_shapes_id = aip_intern("[[7, 7]]"),
                         .input_dtypes_id = aip_intern("[float]"),
                         .call_stack_id = aip_intern("id_stack.py(1): f")};
    aip_op_begin(&by_id);
    aip_op_end();
    /* Every optional field at once (the largest OP record), flops last. */
    aip_op_info all = {.name = "aten::addmm", .sequence_number = 9, .fwd_thread_id = 5,
                       .input_shapes = "[[3], [2, 4], [4, 3], [], []]",
                       .input_dtypes = "[float]", .call_stack = "f.py(2): g",
                       .module_hierarchy = "nn.Module: Linear_0", .flops = 48};
    aip_op_begin(&all);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_TRUE(raw_count_session(s, NULL, &rc));
    ASSERT_EQ(rc.by_kind[AIP_REC_OP], 2);
    char *text = analysed_trace(s);
    ASSERT_TRUE(text != NULL);
    int found = strstr(text, "\"Input Dims\":\"[[7, 7]]\"") && strstr(text, "id_stack.py(1): f");
    int flops = strstr(text, "\"Module Hierarchy\":\"nn.Module: Linear_0\",\"flops\":48}") != NULL;
    int one_flops = strstr(strstr(text, "\"flops\"") + 1, "\"flops\"") == NULL;
    free(text);
    ASSERT_TRUE(found);
    ASSERT_TRUE(flops);
    ASSERT_TRUE(one_flops); /* an op without flops has no "flops" */
    aip_session_destroy(s);
}

/* A pair spanning the start of a trace is not misuse. */
static void test_pairs_straddling_trace_start_are_not_unbalanced(void)
{
    aip_config c;
    scheduled_config(&c, tmp, (aip_schedule){0, 1, 0, 1, 1});
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK); /* step 0: NONE */
    aip_range_push("d", "loader");
    AIP_ANNOTATION_PUSH("outer");
    ASSERT_EQ(aip_session_step(s), AIP_OK); /* step 1: RECORD_AND_SAVE */
    AIP_ANNOTATION_POP();
    aip_range_pop();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/profiler_info.json", aip_session_result_dir(s));
    json_t *info = json_load_file(path, 0, NULL);
    ASSERT_TRUE(info != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(info, "aiprof"),
                                                 "unbalanced_pops")), 0);
    json_decref(info);
    aip_session_destroy(s);
}

static void test_dropped_count_is_live(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.buffer_cap_bytes = 1u << 20;
    aip_session *s;
    ASSERT_EQ(aip_session_create(&c, &s), AIP_OK);
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    aip_string_id id = aip_intern("many");
    uint64_t live = 0;
    /* Whether the writer falls behind depends on the machine: poll the live
     * count every 64 Ki events and stop at the first drop. */
    for (int i = 0; i < 20000000 && live == 0; i++) {
        aip_annotation_push_id(id);
        aip_annotation_pop();
        if ((i & 0xffff) == 0)
            live = aip_session_dropped_events(s);
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    uint64_t final = aip_session_dropped_events(s);
    printf("  live dropped %llu, final %llu\n", (unsigned long long)live, (unsigned long long)final);
    ASSERT_TRUE(final >= live);
    ASSERT_TRUE(live > 0 || final == 0); /* drops are visible while recording */
    aip_session_destroy(s);
}

static int forwarded;
static void count_step(void *user) { (*(int *)user)++; }

/* Under external control (aiprof run) a program's session marks steps only. */
static void test_external_control_adopts_program_sessions(void)
{
    aip_config c;
    base_config(&c, tmp);
    aip_session *controller, *program;
    ASSERT_EQ(aip_session_create(&c, &controller), AIP_OK);
    forwarded = 0;
    aip_external_control(count_step, &forwarded, controller);
    ASSERT_EQ(aip_session_start(controller), AIP_OK);
    c.has_schedule = 1;
    c.schedule = (aip_schedule){0, 0, 0, 1, 0};
    ASSERT_EQ(aip_session_create(&c, &program), AIP_OK);
    ASSERT_EQ(aip_session_start(program), AIP_OK); /* no "another session" error */
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(aip_session_step(program), AIP_OK);
    /* It records nothing itself; its data goes to the controller's trace. */
    ASSERT_STREQ(aip_session_result_dir(program), aip_session_result_dir(controller));
    ASSERT_EQ(aip_session_stop(program), AIP_OK);
    ASSERT_EQ(forwarded, 4);
    ASSERT_EQ(aip_session_stop(controller), AIP_OK);
    ASSERT_TRUE(aip_session_result_dir(controller) != NULL);
    aip_external_control(NULL, NULL, NULL);
    ASSERT_EQ(aip_session_start(program), AIP_OK); /* back to normal */
    ASSERT_TRUE(aip_is_recording());
    ASSERT_EQ(aip_session_stop(program), AIP_OK);
    aip_session_destroy(program);
    aip_session_destroy(controller);
}

static void test_strerror_and_version(void)
{
    ASSERT_STREQ(aip_strerror(AIP_OK), "success");
    for (int i = 0; i <= AIP_ERR_CRASHED; i++)
        ASSERT_TRUE(strlen(aip_strerror((aip_status)i)) > 0);
    ASSERT_STREQ(aip_strerror((aip_status)999), "unknown status");
    /* The numbers are ABI: pinned here so that editing AIP_STATUS_LIST
     * cannot renumber a code unnoticed. */
    ASSERT_EQ(AIP_ERR_INVALID_ARG, 1);
    ASSERT_EQ(AIP_ERR_IO, 4);
    ASSERT_EQ(AIP_ERR_CORRUPT, 9);
    ASSERT_EQ(AIP_ERR_NOT_FOUND, 13);
    ASSERT_EQ(AIP_ERR_LIMIT, 14);
    ASSERT_EQ(AIP_ERR_CANCELLED, 15);
    ASSERT_EQ(AIP_ERR_CRASHED, 16);
    ASSERT_STREQ(aip_strerror(AIP_ERR_LIMIT), "size limit exceeded");
    ASSERT_STREQ(aip_version(), AIP_VERSION_STRING);
    ASSERT_EQ(aip_version_number(), AIP_VERSION_NUMBER);
    ASSERT_STREQ(aip_profiler_level_name(AIP_LEVEL_NONE), "Level_none");
}

/* The "ts" of the first X event named `name` in trace_view.json text, or -1. */
static double slice_ts(const char *text, const char *name)
{
    json_t *root = json_loads(text, 0, NULL), *ev;
    json_t *events = json_is_object(root) ? json_object_get(root, "traceEvents") : root;
    double ts = -1;
    size_t i;
    json_array_foreach(events, i, ev)
    {
        const char *n = json_string_value(json_object_get(ev, "name"));
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        if (n && ph && !strcmp(n, name) && !strcmp(ph, "X")) {
            json_t *t = json_object_get(ev, "ts");
            ts = json_is_string(t) ? atof(json_string_value(t)) : json_number_value(t);
            break;
        }
    }
    json_decref(root);
    return ts;
}

/* aip_session_step_started(): what the host does between the session's
 * step and that call (switching its collectors on) is outside the step. */
static void test_step_started_moves_the_step_start(void)
{
    aip_config c;
    scheduled_config(&c, tmp, (aip_schedule){.wait = 1, .warmup = 0, .active = 1, .repeat = 1});
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(aip_session_step_started(s), AIP_OK); /* no trace yet: nothing to move */
    ASSERT_EQ(aip_session_step(s), AIP_OK);
    aip_annotation_push("collector_setup");
    usleep(2000);
    aip_annotation_pop();
    ASSERT_EQ(aip_session_step_started(s), AIP_OK);
    aip_annotation_push("user_work");
    aip_annotation_pop();
    ASSERT_EQ(aip_session_step(s), AIP_OK);
    char *text = analysed_trace(s);
    ASSERT_TRUE(text != NULL);
    double setup = slice_ts(text, "collector_setup"), step = slice_ts(text, "ProfilerStep#1"),
           work = slice_ts(text, "user_work");
    free(text);
    ASSERT_TRUE(setup >= 0 && step >= 0 && work >= 0);
    ASSERT_TRUE(setup < step);  /* the set-up is before the step */
    ASSERT_TRUE(step <= work);  /* and the user's work inside it */
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
    ASSERT_EQ(aip_session_step_started(NULL), AIP_ERR_INVALID_ARG);
}

static void setup(void) { make_tmpdir(tmp, sizeof tmp, "session"); }
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_defaults_follow_seed),
          TEST_CASE(test_invalid_config_names_parameter), TEST_CASE(test_misuse_gives_state_errors),
          TEST_CASE(test_schedule_traces_match_torch), TEST_CASE(test_step_started_moves_the_step_start),
          TEST_CASE(test_default_schedule_records_without_steps),
          TEST_CASE(test_step_offset_numbers_steps), TEST_CASE(test_modes_and_layout),
          TEST_CASE(test_rank_names_info_file), TEST_CASE(test_bad_output_paths_keep_program_running),
          TEST_CASE(test_failed_start_leaves_the_slot_free),
          TEST_CASE(test_mstx_domain_filter), TEST_CASE(test_switches_gate_records),
          TEST_CASE(test_pairs_straddling_trace_start_are_not_unbalanced),
          TEST_CASE(test_dropped_count_is_live),
          TEST_CASE(test_external_control_adopts_program_sessions),
          TEST_CASE(test_strerror_and_version),
          TEST_CASE(teardown))
