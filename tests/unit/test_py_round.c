/*
 * test_py_round.c — aip__py_round() gives what Python's round(x, n) gives:
 * exact ties to even (0.78125 -> 0.7812, where C's round(x * 1e4) / 1e4
 * says 0.7813), values near a tie, big values, negative ones.  Each
 * expected value is what CPython 3.11 printed for round(x, n), as repr.
 */
#include "aip_test.h"
#include "py_round.h"

#include <string.h>

static void test_matches_python(void)
{
    static const struct {
        double x;
        int n;
        double want;
    } cases[] = {
        {0.78125, 4, 0.7812},
        {0.09375, 4, 0.0938},
        {0.15625, 4, 0.1562},
        {0.21875, 4, 0.2188},
        {0.03125, 4, 0.0312},
        {0.12345, 4, 0.1235},
        {0.00015, 4, 0.0001},
        {1.00005, 4, 1.0001},
        {0.333333, 4, 0.3333},
        {123456.78125, 4, 123456.7812},
        {0.99995, 4, 1.0},
        {0.078125, 4, 0.0781},
        {5e-05, 4, 0.0001},
        {-0.78125, 4, -0.7812},
        {0.0, 4, 0.0},
        {1e-300, 4, 0.0},
        {450000000000.1235, 4, 450000000000.1235},
        {3000000000000000.5, 4, 3000000000000000.5},
        {2551.375, 4, 2551.375},
        {1519.171875, 4, 1519.1719},
        {30166.0, 4, 30166.0},
        {4694.615384615385, 4, 4694.6154},
        {28354.0, 4, 28354.0},
        {2936.8571428571427, 4, 2936.8571},
        {47.5888671875, 4, 47.5889},
        {252.484375, 4, 252.4844},
        {10181.57142857143, 4, 10181.5714},
        {5786.692307692308, 4, 5786.6923},
        {132.15384615384616, 4, 132.1538},
        {1671.78125, 4, 1671.7812},
        {2.675, 2, 2.67},
        {0.125, 2, 0.12},
        {0.375, 2, 0.38},
        {1.5, 0, 2.0},
        {2.5, 0, 2.0},
        {-2.5, 0, -2.0},
        {0.5, 0, 0.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = aip__py_round(cases[i].x, cases[i].n);
        if (memcmp(&got, &cases[i].want, sizeof got)) {
            printf("  round(%.17g, %d): %.17g, Python %.17g\n", cases[i].x, cases[i].n, got,
                   cases[i].want);
            ASSERT_TRUE(0);
        }
    }
}

TEST_MAIN(TEST_CASE(test_matches_python))
