/*
 * test_device_api.c — the public device queries and switch (aiprof.h):
 * aip_supported_activities() and aip_device_status() answer from the
 * device back ends' status() (collector.h; none: CPU only and a sentence
 * saying so), the XPU activity bit is valid and, like NPU and CUDA, makes a
 * trace record device activity (written to profiler_info.json), and a bit
 * beyond them is refused.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "collector.h"
#include "device.h"

#include <string.h>

static char tmp[PATH_MAX];
static const char *broken_status(void) { return "no OpenCL platform found"; }
static const char *ok_status(void) { return NULL; }
static const aip__collector broken = {
    .name = "Broken",
    .wanted = aip__dev_wanted,
    .backend = AIP_BACKEND_OPENCL,
    .status = broken_status,
};
static const aip__collector working = {
    .name = "Fake",
    .wanted = aip__dev_wanted,
    .backend = AIP_BACKEND_OPENCL,
    .status = ok_status,
};
static const aip__collector cuda = {
    .name = "CUDA",
    .wanted = aip__dev_wanted,
    .backend = AIP_BACKEND_CUDA,
    .activities = AIP_ACTIVITY_CUDA,
    .status = ok_status,
};
/* A runtime the program has not loaded: nothing in this process, a
 * device on the machine (status vs probe). */
static const char *unloaded_status(void) { return "the program has not loaded it"; }
static const aip__collector unloaded = {
    .name = "Lazy",
    .wanted = aip__dev_wanted,
    .backend = AIP_BACKEND_OPENCL,
    .status = unloaded_status,
    .probe = ok_status,
};

/* The answers over a given list of back ends (aip__dev_status_of), so
 * that the back ends built into this library (collector.h's table) do not
 * change them. */
static void test_no_back_end(void)
{
    char why[256];
    ASSERT_EQ(aip__dev_activities_of(NULL, 0), AIP_ACTIVITY_CPU);
    ASSERT_EQ(aip__dev_status_of(NULL, 0, why, sizeof why), 0);
    ASSERT_TRUE(strstr(why, "no device back end") != NULL);
    ASSERT_EQ(aip__dev_status_of(NULL, 0, NULL, 0), 0); /* the count alone */
}

static void test_back_end_without_device(void)
{
    const aip__collector *list[] = {&broken};
    char why[256];
    ASSERT_EQ(aip__dev_status_of(list, 1, why, sizeof why), 0);
    ASSERT_STREQ(why, "Broken: no OpenCL platform found");
    ASSERT_EQ(aip__dev_activities_of(list, 1), AIP_ACTIVITY_CPU);
}

/* The process's answer never loads a runtime; the machine's may. */
static void test_runtime_not_loaded_by_the_program(void)
{
    const aip__collector *list[] = {&broken, &unloaded};
    char why[256];
    ASSERT_EQ(aip__dev_status_of(list, 2, why, sizeof why), 0);
    ASSERT_STREQ(why, "Broken: no OpenCL platform found; Lazy: the program has not loaded it");
    ASSERT_EQ(aip__dev_activities_of(list, 2), AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU);
}

static void test_back_end_with_device(void)
{
    const aip__collector *list[] = {&broken, &unloaded, &working, &cuda};
    char why[256];
    ASSERT_EQ(aip__dev_status_of(list, 3, why, sizeof why), 1);
    ASSERT_STREQ(why, "Broken: no OpenCL platform found; Lazy: the program has not loaded it; "
                      "Fake: device found");
    ASSERT_EQ(aip__dev_activities_of(list, 3), AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU);
    /* a short buffer: cut, still terminated */
    char small[8];
    memset(small, 'x', sizeof small);
    ASSERT_EQ(aip__dev_status_of(list, 3, small, sizeof small), 1);
    ASSERT_STREQ(small, "Broken:");
    /* a back end's own activity bits (CUDA's) come with its device */
    ASSERT_EQ(aip__dev_activities_of(list, 4),
              AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU | AIP_ACTIVITY_CUDA);
    ASSERT_EQ(aip__dev_status_of(list, 4, NULL, 0), 2);
}

/* The public calls answer over every device back end: the table's and
 * those added (aip__collector_register, once each). */
static void test_public_calls_ask_every_back_end(void)
{
    char before[512], after[512], want[600];
    int n = aip_device_status(before, sizeof before);
    ASSERT_EQ(aip__collector_register(&working), AIP_OK);
    ASSERT_EQ(aip__collector_register(&working), AIP_OK); /* twice: still one */
    ASSERT_EQ(aip_device_status(after, sizeof after), n + 1);
    if (strstr(before, "no device back end"))
        snprintf(want, sizeof want, "Fake: device found");
    else
        snprintf(want, sizeof want, "%s; Fake: device found", before);
    ASSERT_STREQ(after, want);
    ASSERT_TRUE(aip_supported_activities() & AIP_ACTIVITY_NPU);
}

static void test_activity_bits(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_XPU;
    ASSERT_EQ(aip_config_validate(&c), AIP_OK);
    c.activities = AIP_ACTIVITY_CPU | (AIP_ACTIVITY_XPU << 1);
    ASSERT_EQ(aip_config_validate(&c), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(aip_last_error(), "activities") != NULL);
    ASSERT_EQ(AIP_ACTIVITY_DEVICES, AIP_ACTIVITY_NPU | AIP_ACTIVITY_CUDA | AIP_ACTIVITY_XPU);
}

/* Each device bit (and use_cuda) turns device recording on; CPU alone not. */
static void test_each_device_bit_records_device_activity(void)
{
    static const struct { unsigned bits; int use_cuda, records; const char *listed; } cases[] = {
        {AIP_ACTIVITY_CPU, 0, 0, NULL},
        {AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU, 0, 1, "ProfilerActivity.NPU"},
        {AIP_ACTIVITY_CPU | AIP_ACTIVITY_CUDA, 0, 1, "ProfilerActivity.CUDA"},
        {AIP_ACTIVITY_CPU | AIP_ACTIVITY_XPU, 0, 1, "ProfilerActivity.XPU"},
        {AIP_ACTIVITY_CPU, 1, 1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        aip_config c;
        base_config(&c, tmp);
        c.activities = cases[i].bits;
        c.use_cuda = cases[i].use_cuda;
        aip_session *s = start_new(&c);
        ASSERT_TRUE(s != NULL);
        ASSERT_EQ(aip__dev_recording(), cases[i].records);
        ASSERT_EQ(aip_session_stop(s), AIP_OK);
        ASSERT_EQ(aip__dev_recording(), 0);
        if (cases[i].listed) {
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%s/profiler_info.json", aip_session_result_dir(s));
            size_t n;
            char *info = aip_test_slurp(path, &n);
            ASSERT_TRUE(info && strstr(info, cases[i].listed));
            free(info);
        }
        aip_session_destroy(s);
    }
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "device_api");
    static const aip_test_case cases[] = {
        TEST_CASE(test_no_back_end),
        TEST_CASE(test_back_end_without_device),
        TEST_CASE(test_runtime_not_loaded_by_the_program),
        TEST_CASE(test_back_end_with_device),
        TEST_CASE(test_public_calls_ask_every_back_end),
        TEST_CASE(test_activity_bits),
        TEST_CASE(test_each_device_bit_records_device_activity),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
