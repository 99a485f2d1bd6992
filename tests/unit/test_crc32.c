/*
 * test_crc32.c — aip__crc32() (src/raw/crc32_fast.c) gives zlib's crc32()
 * for every length (short ones, tails of 1..15 bytes past the folded
 * blocks, long ones), unaligned starts and any initial value, and so do
 * the chunk checksums built on it.
 */
#include "aip_test.h"
#include "crc32_fast.h"
#include "raw_format.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)state;
}

static void test_same_as_zlib(void)
{
    size_t cap = (1u << 20) + 64;
    unsigned char *b = malloc(cap);
    ASSERT_TRUE(b != NULL);
    for (size_t i = 0; i < cap; i++)
        b[i] = (unsigned char)next();
    int bad = 0;
    for (int t = 0; t < 4000; t++) {
        size_t off = next() % 64;
        size_t n = t < 2000 ? next() % 300 : next() % (cap - 64);
        uint32_t init = t % 3 ? next() : 0;
        if (aip__crc32(init, b + off, n) != (uint32_t)crc32(init, b + off, (uInt)n))
            bad++;
    }
    ASSERT_EQ(bad, 0);
    /* all zeros and all ones: no lane cancels another */
    memset(b, 0, 4096);
    ASSERT_EQ(aip__crc32(0, b, 4096), (uint32_t)crc32(0, b, 4096));
    memset(b, 0xff, 4096);
    ASSERT_EQ(aip__crc32(0, b, 4096), (uint32_t)crc32(0, b, 4096));
    ASSERT_EQ(aip__crc32(7, b, 0), 7u);
    free(b);
}

static void test_chunk_crc(void)
{
    unsigned char payload[1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (unsigned char)next();
    aip__chunk_header h;
    aip__chunk_fill(&h, AIP_CHUNK_EVENTS, 1234, payload, sizeof payload);
    const unsigned char *hb = (const unsigned char *)&h;
    uLong want = crc32(0L, Z_NULL, 0);
    want = crc32(want, hb, 12);
    want = crc32(want, hb + 16, 8);
    want = crc32(want, payload, sizeof payload);
    ASSERT_EQ(h.crc32, (uint32_t)want);
}

TEST_MAIN(TEST_CASE(test_same_as_zlib), TEST_CASE(test_chunk_crc))
