/*
 * test_schedule.c — aip_schedule_action() / aip_schedule_validate() against
 * torch.profiler.schedule itself.
 *
 * The expected actions come from tests/fixtures/schedule_cases.json, which
 * tests/fixtures/gen_schedule_cases.py produced by calling torch 1.13's
 * schedule and running its profiler, so these tests check aiprof against
 * torch's behaviour rather than against our own reading of it.
 */
#include "aiprof.h"
#include "aip_test.h"

#include <jansson.h>
#include <stdint.h>

#define FIXTURE AIP_SOURCE_DIR "/tests/fixtures/schedule_cases.json"

/* Loaded once: every test below walks the same cases. */
static json_t *fixture;

static json_t *load_fixture(void)
{
    if (!fixture) {
        json_error_t err;
        fixture = json_load_file(FIXTURE, 0, &err);
        if (!fixture)
            fprintf(stderr, "%s:%d: %s\n", FIXTURE, err.line, err.text);
    }
    return fixture;
}

static int64_t get_int(const json_t *obj, const char *key)
{
    /* A missing key reads as -1, which every test rejects loudly: the
     * fixture only holds non-negative integers. */
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static aip_schedule case_schedule(const json_t *c)
{
    aip_schedule s = {
        .skip_first = get_int(c, "skip_first"),
        .wait = get_int(c, "wait"),
        .warmup = get_int(c, "warmup"),
        .active = get_int(c, "active"),
        .repeat = get_int(c, "repeat"),
    };
    return s;
}

static const char *case_name(const json_t *c)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    return name ? name : "(unnamed)";
}

static void test_fixture_is_complete(void)
{
    json_t *root = load_fixture();
    ASSERT_TRUE(root != NULL);
    json_t *cases = json_object_get(root, "cases");
    ASSERT_TRUE(json_is_array(cases));
    ASSERT_TRUE(json_array_size(cases) >= 60);

    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        aip_schedule s = case_schedule(c);
        int64_t steps = get_int(c, "steps");
        json_t *actions = json_object_get(c, "actions");
        /* The generator promises at least three full cycles after
         * skip_first and one action per visited step 0..steps. */
        if (steps < s.skip_first + 3 * (s.wait + s.warmup + s.active) ||
            !json_is_array(actions) || (int64_t)json_array_size(actions) != steps + 1 ||
            !json_is_array(json_object_get(c, "trace_ready_steps")) ||
            !json_is_boolean(json_object_get(c, "stop_fired")))
            fprintf(stderr, "case %zu (%s) is malformed\n", i, case_name(c));
        ASSERT_TRUE(steps >= s.skip_first + 3 * (s.wait + s.warmup + s.active));
        ASSERT_TRUE(json_is_array(actions));
        ASSERT_EQ(json_array_size(actions), steps + 1);
        ASSERT_TRUE(json_is_array(json_object_get(c, "trace_ready_steps")));
        ASSERT_TRUE(json_is_boolean(json_object_get(c, "stop_fired")));
    }
}

static void test_actions_match_torch(void)
{
    json_t *root = load_fixture();
    ASSERT_TRUE(root != NULL);
    json_t *cases = json_object_get(root, "cases");
    size_t i, checked = 0;
    json_t *c;
    json_array_foreach(cases, i, c) {
        aip_schedule s = case_schedule(c);
        if (aip_schedule_validate(&s) != AIP_OK)
            fprintf(stderr, "case %s: %s\n", case_name(c), aip_last_error());
        ASSERT_EQ(aip_schedule_validate(&s), AIP_OK);

        json_t *actions = json_object_get(c, "actions");
        size_t step;
        json_t *want;
        json_array_foreach(actions, step, want) {
            aip_action got = aip_schedule_action(&s, (int64_t)step);
            if ((long long)got != (long long)json_integer_value(want))
                fprintf(stderr, "case %s (skip_first=%lld wait=%lld warmup=%lld active=%lld "
                        "repeat=%lld) step %zu: torch %lld, aiprof %d\n",
                        case_name(c), (long long)s.skip_first, (long long)s.wait,
                        (long long)s.warmup, (long long)s.active, (long long)s.repeat, step,
                        (long long)json_integer_value(want), (int)got);
            ASSERT_EQ(got, json_integer_value(want));
            checked++;
        }
    }
    ASSERT_TRUE(checked > 2000);
}

/*
 * torch's profile() saves a trace (calls on_trace_ready) on these
 * transitions of its action map, and only these:
 *   step(): RECORD_AND_SAVE -> anything          (fires with step_num = k + 1)
 *   stop(): RECORD or RECORD_AND_SAVE -> stopped (fires with step_num = last)
 * Replaying that table over aip_schedule_action() must give exactly the
 * calls torch made, so a session that follows the same table saves the same
 * traces.  This also pins down the one way "traces == number of
 * RECORD_AND_SAVE steps" fails: a loop that ends mid-active saves one more.
 */
static void test_trace_ready_replay(void)
{
    json_t *root = load_fixture();
    ASSERT_TRUE(root != NULL);
    json_t *cases = json_object_get(root, "cases");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        aip_schedule s = case_schedule(c);
        int64_t steps = get_int(c, "steps");
        json_t *fired = json_object_get(c, "trace_ready_steps");
        size_t nfired = json_array_size(fired), next = 0, saves = 0;

        for (int64_t k = 0; k <= steps; k++) {
            aip_action a = aip_schedule_action(&s, k);
            saves += a == AIP_ACTION_RECORD_AND_SAVE;
            int fires_in_step = k < steps && a == AIP_ACTION_RECORD_AND_SAVE;
            int fires_in_stop = k == steps &&
                                (a == AIP_ACTION_RECORD || a == AIP_ACTION_RECORD_AND_SAVE);
            if (!fires_in_step && !fires_in_stop)
                continue;
            int64_t expect_step_num = fires_in_step ? k + 1 : steps;
            if (next >= nfired ||
                json_integer_value(json_array_get(fired, next)) != expect_step_num)
                fprintf(stderr, "case %s: on_trace_ready #%zu: aiprof at step_num %lld, "
                        "torch %s\n", case_name(c), next, (long long)expect_step_num,
                        next < nfired ? "elsewhere" : "not at all");
            ASSERT_TRUE(next < nfired);
            ASSERT_EQ(json_integer_value(json_array_get(fired, next)), expect_step_num);
            next++;
            if (fires_in_stop)
                ASSERT_TRUE(json_is_true(json_object_get(c, "stop_fired")));
        }
        if (next != nfired)
            fprintf(stderr, "case %s: torch saved %zu traces, replay %zu\n", case_name(c),
                    nfired, next);
        ASSERT_EQ(next, nfired);

        /* The simple count: one trace per RECORD_AND_SAVE step, plus the
         * partial trace stop saves when the loop ends inside an active phase. */
        int ends_mid_record = aip_schedule_action(&s, steps) == AIP_ACTION_RECORD;
        ASSERT_EQ(saves + (size_t)ends_mid_record, nfired);
        ASSERT_EQ(json_is_true(json_object_get(c, "stop_fired")),
                  aip_schedule_action(&s, steps) >= AIP_ACTION_RECORD);
    }
}

/* Past `repeat` cycles nothing is recorded, however far the loop runs. */
static void test_finite_repeat_ends(void)
{
    json_t *root = load_fixture();
    ASSERT_TRUE(root != NULL);
    json_t *cases = json_object_get(root, "cases");
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        aip_schedule s = case_schedule(c);
        if (s.repeat == 0)
            continue;
        int64_t end = s.skip_first + s.repeat * (s.wait + s.warmup + s.active);
        int64_t probes[] = {end, end + 1, end + 1000003, INT64_MAX / 2, INT64_MAX};
        for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++)
            ASSERT_EQ(aip_schedule_action(&s, probes[p]), AIP_ACTION_NONE);
        ASSERT_EQ(aip_schedule_action(&s, end - 1), AIP_ACTION_RECORD_AND_SAVE);
    }
}

/* Unbounded schedules keep cycling; far steps follow the same pattern. */
static void test_unbounded_far_steps(void)
{
    aip_schedule s = {.skip_first = 3, .wait = 2, .warmup = 1, .active = 2, .repeat = 0};
    /* Cycle of 5 after 3 skipped steps: offsets 0,1 wait; 2 warmup; 3 record; 4 save. */
    static const aip_action by_offset[5] = {AIP_ACTION_NONE, AIP_ACTION_NONE,
                                            AIP_ACTION_WARMUP, AIP_ACTION_RECORD,
                                            AIP_ACTION_RECORD_AND_SAVE};
    int64_t bases[] = {1000000000LL, (int64_t)1 << 40, INT64_MAX - 100};
    for (size_t b = 0; b < 3; b++)
        for (int64_t step = bases[b]; step < bases[b] + 10 && step >= bases[b]; step++)
            ASSERT_EQ(aip_schedule_action(&s, step), by_offset[(step - 3) % 5]);
}

static void expect_invalid(aip_schedule s, const char *field)
{
    aip_status st = aip_schedule_validate(&s);
    if (st != AIP_ERR_INVALID_ARG)
        fprintf(stderr, "field %s: status %d (%s)\n", field, (int)st, aip_strerror(st));
    ASSERT_EQ(st, AIP_ERR_INVALID_ARG);
    const char *msg = aip_last_error();
    if (!strstr(msg, field))
        fprintf(stderr, "message for a bad %s does not name it: \"%s\"\n", field, msg);
    ASSERT_TRUE(strstr(msg, field) != NULL);
    /* An invalid schedule records nothing, at any step. */
    for (int64_t step = 0; step < 50; step++)
        ASSERT_EQ(aip_schedule_action(&s, step), AIP_ACTION_NONE);
}

static void test_validate_rejects_each_field(void)
{
    const aip_schedule good = {.skip_first = 1, .wait = 1, .warmup = 1, .active = 2, .repeat = 2};
    ASSERT_EQ(aip_schedule_validate(&good), AIP_OK);

    static const int64_t negatives[] = {-1, -2, -1000, INT64_MIN};
    for (size_t i = 0; i < sizeof negatives / sizeof negatives[0]; i++) {
        int64_t v = negatives[i];
        aip_schedule s;
        s = good, s.skip_first = v;
        expect_invalid(s, "skip_first");
        s = good, s.wait = v;
        expect_invalid(s, "wait");
        s = good, s.warmup = v;
        expect_invalid(s, "warmup");
        s = good, s.repeat = v;
        expect_invalid(s, "repeat");
        s = good, s.active = v;
        expect_invalid(s, "active");
    }
    aip_schedule s = good;
    s.active = 0;
    expect_invalid(s, "active");

    /* torch accepts every zero except active. */
    aip_schedule zeros = {.skip_first = 0, .wait = 0, .warmup = 0, .active = 1, .repeat = 0};
    ASSERT_EQ(aip_schedule_validate(&zeros), AIP_OK);
}

static void test_validate_null(void)
{
    ASSERT_EQ(aip_schedule_validate(NULL), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(aip_last_error()[0] != '\0');
}

static void test_null_and_negative_step(void)
{
    const aip_schedule every = {.skip_first = 0, .wait = 0, .warmup = 0, .active = 1, .repeat = 0};
    ASSERT_EQ(aip_schedule_action(&every, 0), AIP_ACTION_RECORD_AND_SAVE);
    ASSERT_EQ(aip_schedule_action(NULL, 0), AIP_ACTION_NONE);
    ASSERT_EQ(aip_schedule_action(NULL, 5), AIP_ACTION_NONE);
    ASSERT_EQ(aip_schedule_action(&every, -1), AIP_ACTION_NONE);
    ASSERT_EQ(aip_schedule_action(&every, -12345), AIP_ACTION_NONE);
    ASSERT_EQ(aip_schedule_action(&every, INT64_MIN), AIP_ACTION_NONE);
}

static void test_free_fixture(void)
{
    json_decref(fixture);
    fixture = NULL;
}

TEST_MAIN(TEST_CASE(test_fixture_is_complete), TEST_CASE(test_actions_match_torch),
          TEST_CASE(test_trace_ready_replay), TEST_CASE(test_finite_repeat_ends),
          TEST_CASE(test_unbounded_far_steps), TEST_CASE(test_validate_rejects_each_field),
          TEST_CASE(test_validate_null), TEST_CASE(test_null_and_negative_step),
          TEST_CASE(test_free_fixture))
