/*
 * test_device_api.c — the public device queries and switch (aiprof.h):
 * aip_supported_activities() and aip_device_status() answer from the
 * registered back ends' status() (none registered: CPU only and a sentence
 * saying so), the XPU activity bit is valid and, like NPU and CUDA, makes a
 * trace record device activity (written to profiler_info.json), and a bit
 * beyond them is refused.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "device.h"

#include <string.h>

static char tmp[PATH_MAX];
static const char *broken_status(void) { return "no OpenCL platform found"; }
static const char *ok_status(void) { return NULL; }
static const aip__dev_backend_ops broken = {"Broken", NULL, NULL, broken_status};
static const aip__dev_backend_ops working = {"Fake", NULL, NULL, ok_status};
static const aip__dev_backend_ops cuda = {"CUDA", NULL, NULL, ok_status};

/* The cases run in this order: back ends register for good. */
static void test_no_back_end(void)
{
    char why[256];
    ASSERT_EQ(aip_supported_activities(), AIP_ACTIVITY_CPU);
    ASSERT_EQ(aip_device_status(why, sizeof why), 0);
    ASSERT_TRUE(strstr(why, "no device back end") != NULL);
    ASSERT_EQ(aip_device_status(NULL, 0), 0); /* the count alone */
}

static void test_back_end_without_device(void)
{
    aip__dev_backend_register(&broken);
    aip__dev_backend_register(&broken); /* twice: still one */
    char why[256];
    ASSERT_EQ(aip_device_status(why, sizeof why), 0);
    ASSERT_STREQ(why, "Broken: no OpenCL platform found");
    ASSERT_EQ(aip_supported_activities(), AIP_ACTIVITY_CPU);
}

static void test_back_end_with_device(void)
{
    aip__dev_backend_register(&working);
    char why[256];
    ASSERT_EQ(aip_device_status(why, sizeof why), 1);
    ASSERT_STREQ(why, "Broken: no OpenCL platform found; Fake: device found");
    ASSERT_EQ(aip_supported_activities(), AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU);
    /* a short buffer: cut, still terminated */
    char small[8];
    memset(small, 'x', sizeof small);
    ASSERT_EQ(aip_device_status(small, sizeof small), 1);
    ASSERT_STREQ(small, "Broken:");
    aip__dev_backend_register(&cuda);
    ASSERT_EQ(aip_supported_activities(),
              AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU | AIP_ACTIVITY_CUDA);
    ASSERT_EQ(aip_device_status(NULL, 0), 2);
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
        TEST_CASE(test_back_end_with_device),
        TEST_CASE(test_activity_bits),
        TEST_CASE(test_each_device_bit_records_device_activity),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
