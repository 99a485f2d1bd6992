/*
 * test_schedule_fn.c — a schedule the host computes (aip_config.schedule_fn,
 * torch.profiler's "any callable step -> ProfilerAction"): the session asks
 * it at start and at every step and follows it exactly as it follows the
 * built-in schedule; an out-of-range answer is NONE.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "session_helpers.h"
#include "tmp_dir.h"

#include <jansson.h>

static char tmp[PATH_MAX];

typedef struct asked {
    aip_schedule sched;  /* what the function answers */
    int64_t steps[64];   /* the steps it was asked about */
    int n;
    int bad_at;          /* answer 9 (no action) at this step; -1 never */
} asked;

static aip_action host_schedule(void *user, int64_t step)
{
    asked *a = user;
    if (a->n < 64)
        a->steps[a->n] = step;
    a->n++;
    if (step == a->bad_at)
        return (aip_action)9;
    return aip_schedule_action(&a->sched, step);
}

typedef struct saved {
    int n;
    int64_t step_num[16];
} saved;

static void on_ready(aip_session *s, const char *dir, void *user)
{
    (void)dir;
    saved *v = user;
    if (v->n < 16)
        v->step_num[v->n] = aip_session_step_num(s);
    v->n++;
}

/* Runs `steps` steps; the traces' step numbers land in *out. */
static void run(aip_config *c, int steps, saved *out)
{
    memset(out, 0, sizeof *out);
    c->on_trace_ready = on_ready;
    c->on_trace_ready_data = out;
    aip_session *s = start_new(c);
    ASSERT_TRUE(s != NULL);
    for (int i = 0; i < steps; i++)
        ASSERT_EQ(aip_session_step(s), AIP_OK);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
}

/* The same answers as a built-in schedule: the same traces at the same steps. */
static void test_follows_the_function_like_a_schedule(void)
{
    const aip_schedule sch = {.skip_first = 1, .wait = 1, .warmup = 1, .active = 2, .repeat = 2};
    aip_config c;
    base_config(&c, tmp);
    c.has_schedule = 1;
    c.schedule = sch;
    saved builtin, host;
    run(&c, 12, &builtin);

    asked a = {.sched = sch, .bad_at = -1};
    base_config(&c, tmp);
    c.schedule_fn = host_schedule;
    c.schedule_fn_data = &a;
    run(&c, 12, &host);
    ASSERT_EQ(builtin.n, 2);
    ASSERT_EQ(host.n, builtin.n);
    for (int i = 0; i < host.n; i++)
        ASSERT_EQ(host.step_num[i], builtin.step_num[i]);
    ASSERT_EQ(a.n, 13); /* step 0 at start, then one per step */
    for (int i = 0; i < a.n; i++)
        ASSERT_EQ(a.steps[i], i);
}

/* An answer that is no action counts as NONE: a trace being recorded at
 * that step ends unsaved (as RECORD followed by NONE does), and the
 * session goes on. */
static void test_out_of_range_answer_is_none(void)
{
    const aip_schedule every = {.wait = 0, .warmup = 0, .active = 1, .repeat = 0};
    asked a = {.sched = every, .bad_at = 2};
    aip_config c;
    base_config(&c, tmp);
    c.schedule_fn = host_schedule;
    c.schedule_fn_data = &a;
    saved v;
    run(&c, 4, &v);
    /* steps 0,1,3 save at their end (step_num 1, 2, 4); step 2 records nothing;
     * step 4 is recording when the session stops */
    ASSERT_EQ(v.n, 4);
    ASSERT_EQ(v.step_num[0], 1);
    ASSERT_EQ(v.step_num[1], 2);
    ASSERT_EQ(v.step_num[2], 4);
    ASSERT_EQ(v.step_num[3], 4);
}

/* profiler_info.json says the schedule was the host's own. */
static void test_info_names_a_custom_schedule(void)
{
    asked a = {.sched = {.wait = 0, .warmup = 0, .active = 1, .repeat = 1}, .bad_at = -1};
    aip_config c;
    base_config(&c, tmp);
    c.schedule_fn = host_schedule;
    c.schedule_fn_data = &a;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(aip_session_step(s), AIP_OK);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/profiler_info.json", aip_session_result_dir(s));
    json_t *info = json_load_file(path, 0, NULL);
    ASSERT_TRUE(info != NULL);
    json_t *sch = json_object_get(json_object_get(json_object_get(info, "config"),
                                                  "common_config"), "schedule");
    if (!sch)
        sch = json_object_get(info, "schedule");
    int custom = json_is_true(json_object_get(sch, "custom"));
    json_decref(info);
    ASSERT_TRUE(custom);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
}

static void setup(void) { make_tmpdir(tmp, sizeof tmp, "schedule_fn"); }
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_follows_the_function_like_a_schedule),
          TEST_CASE(test_out_of_range_answer_is_none), TEST_CASE(test_info_names_a_custom_schedule),
          TEST_CASE(teardown))
