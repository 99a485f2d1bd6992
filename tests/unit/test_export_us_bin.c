/*
 * test_export_us_bin.c — times as binary fractions of a microsecond
 * (outbuf.h aip__us_bin / aip__fmt_us_bin), the numbers that keep float64
 * readers' ts + dur arithmetic exact: rounding, order, exact decimal text,
 * and the property itself (parsed as doubles, touching ends stay equal).
 */
#include "aip_test.h"
#include "outbuf.h"

static const char *fmt(int64_t units, char *b)
{
    *aip__fmt_us_bin(b, units) = 0;
    return b;
}

static void test_values(void)
{
    char b[48];
    ASSERT_EQ(aip__us_bin(0), 0);
    ASSERT_EQ(aip__us_bin(1000), 1024);          /* 1 µs */
    ASSERT_EQ(aip__us_bin(1), 1);                /* 1.024 → 1 */
    ASSERT_EQ(aip__us_bin(-1000), -1024);
    ASSERT_STREQ(fmt(0, b), "0.000");
    ASSERT_STREQ(fmt(1024, b), "1.000");
    ASSERT_STREQ(fmt(512, b), "0.500");
    ASSERT_STREQ(fmt(1, b), "0.0009765625");
    ASSERT_STREQ(fmt(aip__us_bin(854055665), b), "854055.6650390625");
    ASSERT_STREQ(fmt(-1536, b), "-1.500");
    /* the largest times the model holds (2^62 ns) still format */
    int64_t big = aip__us_bin((int64_t)1 << 62);
    ASSERT_TRUE(big > 0);
    ASSERT_TRUE(strlen(fmt(big, b)) < 34);
}

static void test_strictly_increasing(void)
{
    int64_t prev = aip__us_bin(-5000);
    for (int64_t ns = -4999; ns < 200000; ns++) {
        int64_t q = aip__us_bin(ns);
        ASSERT_TRUE(q > prev);
        prev = q;
    }
}

/* The text parses to the exact value, and a + (b - a) == b in doubles, as
 * a reader computing an X event's end does. */
static void test_float_arithmetic_is_exact(void)
{
    char b[48];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t s = (int64_t)(x % 3600000000000ull);   /* within an hour, ns */
        int64_t e = s + (int64_t)((x >> 20) % 50000000);
        int64_t qs = aip__us_bin(s), qe = aip__us_bin(e);
        double ts = strtod(fmt(qs, b), NULL);
        double dur = strtod(fmt(qe - qs, b), NULL);
        double end = strtod(fmt(qe, b), NULL);
        ASSERT_TRUE(ts * 1024.0 == (double)qs);
        ASSERT_TRUE(ts + dur == end);
        ASSERT_TRUE((ts - 1.5) + dur == end - 1.5);   /* after a rebase */
    }
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_values),
        TEST_CASE(test_strictly_increasing),
        TEST_CASE(test_float_arithmetic_is_exact),
    };
    return aip_test_run(cases, sizeof cases / sizeof cases[0]);
}
