/*
 * test_cluster_fmt.c — aiprof cluster writes cluster_step_trace_time.csv's
 * numbers as msprof-analyze does (Python's repr() of the parsed float):
 * aip__cluster_fmt_double() against repr() texts made by Python.
 */
#include "aip_test.h"
#include "cluster.h"

#include <math.h>
#include <stdio.h>

static void test_python_repr(void)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {500.0, "500.0"},
        {1460.71, "1460.71"},
        {0.1, "0.1"},
        {0.0001, "0.0001"},
        {1e-05, "1e-05"},
        {1.5e-05, "1.5e-05"},
        {1e+16, "1e+16"},
        {1000000000000000.0, "1000000000000000.0"},
        {123456789012345.6, "123456789012345.6"},
        {1234567890123456.8, "1234567890123456.8"},
        {1.2345678901234567e+19, "1.2345678901234567e+19"},
        {-3.25, "-3.25"},
        {0.3333333333333333, "0.3333333333333333"},
        {6.666666666666665e-08, "6.666666666666665e-08"},
        {6163.032, "6163.032"},
        {1e+22, "1e+22"},
        {5e-324, "5e-324"},
        {1.7976931348623157e+308, "1.7976931348623157e+308"},
        {18000.25, "18000.25"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        aip__cluster_fmt_double(buf, sizeof buf, cases[i].v);
        ASSERT_STREQ(buf, cases[i].want);
    }
    aip__cluster_fmt_double(buf, sizeof buf, NAN);
    ASSERT_STREQ(buf, "nan");
    aip__cluster_fmt_double(buf, sizeof buf, -INFINITY);
    ASSERT_STREQ(buf, "-inf");
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_python_repr),
    };
    return aip_test_run(cases, sizeof cases / sizeof cases[0]);
}
