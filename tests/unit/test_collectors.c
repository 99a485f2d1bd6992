/*
 * test_collectors.c — the collector interface (src/core/collector.h): the
 * table the build generated is well formed (names, device back ends first,
 * record kinds, injection variables as aip_injection_var() lists them);
 * the core starts the collectors a trace wants in table order, stops only
 * those, in reverse, and calls session_started once per session; the
 * analyser's per-back-end properties come from the raw number
 * (raw_backend.c), unknown numbers getting the defaults.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "aiprof_integration.h"
#include "collector.h"
#include "device.h"
#include "raw.h"

#include <string.h>

static char tmp[PATH_MAX];
static char calls[256];

static void note(const char *what)
{
    size_t n = strlen(calls);
    snprintf(calls + n, sizeof calls - n, "%s%s", n ? " " : "", what);
}

static int wants_shapes(const aip_config *c) { return c->record_shapes; }
static int always(const aip_config *c) { return 1; }
static int never(const aip_config *c) { return 0; }
static void start_a(const aip_config *c) { note("start:a"); }
static void stop_a(void) { note("stop:a"); }
static void start_b(const aip_config *c) { note("start:b"); }
static void stop_b(void) { note("stop:b"); }
static void start_c(const aip_config *c) { note("start:c"); }
static void stop_c(void) { note("stop:c"); }
static void session_d(const aip_config *c) { note("session:d"); }

static const aip__collector a = {.name = "test_a", .wanted = wants_shapes, .start = start_a,
                                 .stop = stop_a};
static const aip__collector b = {.name = "test_b", .wanted = always, .start = start_b,
                                 .stop = stop_b};
static const aip__collector c_never = {.name = "test_c", .wanted = never, .start = start_c,
                                       .stop = stop_c};
static const aip__collector d = {.name = "test_d", .wanted = always,
                                 .session_started = session_d};

#define DEVICE_KINDS                                                                        \
    ((1ull << AIP_REC_DEVICE) | (1ull << AIP_REC_DEVICE_QUEUE) |                            \
     (1ull << AIP_REC_DEVICE_TASK) | (1ull << AIP_REC_DEVICE_API) |                         \
     (1ull << AIP_REC_DEVICE_MEMORY) | (1ull << AIP_REC_DEVICE_CLOCK))

static void test_table_is_well_formed(void)
{
    int non_device_seen = 0;
    size_t n = 0, n_inject = 0;
    for (; aip__collectors[n]; n++) {
        const aip__collector *k = aip__collectors[n];
        ASSERT_TRUE(k->name && *k->name);
        for (size_t j = 0; j < n; j++)
            ASSERT_TRUE(strcmp(aip__collectors[j]->name, k->name) != 0);
        /* kinds the raw format has, none below 1 */
        ASSERT_EQ(k->record_kinds & ~(((1ull << (AIP_REC_OSRT + 1)) - 1) & ~1ull), 0);
        if (k->backend) {
            ASSERT_EQ(non_device_seen, 0); /* device back ends first: they stop last */
            ASSERT_TRUE(k->wanted == aip__dev_wanted && k->status && k->start && k->stop);
            ASSERT_TRUE(k->record_kinds & (1ull << AIP_REC_DEVICE_TASK));
            ASSERT_TRUE((k->record_kinds & ~DEVICE_KINDS) == 0);
            ASSERT_STREQ(aip__collector_backend_name(k->backend), k->name);
        } else {
            non_device_seen = 1;
            ASSERT_TRUE((k->record_kinds & DEVICE_KINDS) == 0);
            ASSERT_TRUE(k->status == NULL && k->probe == NULL && k->activities == 0);
        }
        if (k->inject_var) {
            const char *off = "unset";
            ASSERT_STREQ(aip_injection_var(n_inject++, &off), k->inject_var);
            ASSERT_TRUE(off == k->inject_off);
        }
    }
    ASSERT_TRUE(n >= 4); /* osrt, host, nvtx, comm are always built */
    ASSERT_STREQ(aip__collectors[n - 1]->name, "communication"); /* stops first */
    ASSERT_TRUE(aip_injection_var(n_inject, NULL) == NULL);
    ASSERT_STREQ(aip__collector_backend_name(AIP_BACKEND_NONE), "none");
    ASSERT_TRUE(aip__collector_backend_name(AIP_BACKEND_PRIVATE + 1) == NULL);
}

static void run_session(int shapes)
{
    aip_config c;
    base_config(&c, tmp);
    c.record_shapes = shapes;
    calls[0] = 0;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
}

static void test_start_in_order_stop_in_reverse(void)
{
    ASSERT_EQ(aip__collector_register(&a), AIP_OK);
    ASSERT_EQ(aip__collector_register(&b), AIP_OK);
    ASSERT_EQ(aip__collector_register(&c_never), AIP_OK);
    ASSERT_EQ(aip__collector_register(&d), AIP_OK);
    ASSERT_EQ(aip__collector_register(&a), AIP_OK); /* twice: once */
    ASSERT_EQ(aip__collector_register(NULL), AIP_ERR_INVALID_ARG);
    size_t i = 0, added = 0;
    for (const aip__collector *k; (k = aip__collector_each(&i));)
        added += k == &a;
    ASSERT_EQ(added, 1);
    run_session(1);
    ASSERT_STREQ(calls, "session:d start:a start:b stop:b stop:a");
    /* a collector the trace does not want is neither started nor stopped */
    run_session(0);
    ASSERT_STREQ(calls, "session:d start:b stop:b");
}

static void test_raw_backend_properties(void)
{
    ASSERT_STREQ(aip__raw_backend(AIP_BACKEND_OPENCL)->kineto, "opencl");
    ASSERT_EQ(aip__raw_backend(AIP_BACKEND_OPENCL)->memory_type, AIP_DEVICE_NPU);
    ASSERT_STREQ(aip__raw_backend(AIP_BACKEND_CUDA)->kineto, "cuda");
    ASSERT_EQ(aip__raw_backend(AIP_BACKEND_CUDA)->memory_type, AIP_DEVICE_CUDA);
    ASSERT_STREQ(aip__raw_backend(AIP_BACKEND_NONE)->kineto, "other");
    ASSERT_STREQ(aip__raw_backend(AIP_BACKEND_PRIVATE + 5)->kineto, "other");
    ASSERT_EQ(aip__raw_backend(255)->memory_type, AIP_DEVICE_NPU);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "collectors");
    static const aip_test_case cases[] = {
        TEST_CASE(test_table_is_well_formed),
        TEST_CASE(test_start_in_order_stop_in_reverse),
        TEST_CASE(test_raw_backend_properties),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
