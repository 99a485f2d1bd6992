/*
 * test_crc32.c — aip__crc32 (src/common/crc32.c) gives zlib's crc32() for
 * every length and alignment around the folding's 64-byte minimum and
 * 16-byte steps, from any starting value, in one call or in pieces, and on
 * a large buffer; plus the standard check value, and the raw format's
 * chunk checksum built on it.  On a CPU without PCLMULQDQ both sides are
 * zlib and the test says so.
 */
#include "aip_test.h"
#include "crc32.h"
#include "raw_format.h"

#include <string.h>
#include <zlib.h>

static unsigned char *random_bytes(size_t n, uint32_t seed)
{
    unsigned char *b = malloc(n);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; b && i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = (unsigned char)(x >> 24);
    }
    return b;
}

static void test_check_value(void)
{
    printf("  PCLMULQDQ folding: %s\n", aip__crc32_folding() ? "yes" : "no (zlib only)");
    ASSERT_EQ(aip__crc32(0, "123456789", 9), 0xCBF43926u);
    ASSERT_EQ(aip__crc32(0, "", 0), 0u);
    ASSERT_EQ(aip__crc32(0x12345678u, "", 0), 0x12345678u);
    /* 64 bytes and more: through the folding where there is one */
    unsigned char z[4096] = {0};
    ASSERT_EQ(aip__crc32(0, z, sizeof z), (uint32_t)crc32(0, z, sizeof z));
    memset(z, 0xff, sizeof z); /* all ones: no lane cancels another */
    ASSERT_EQ(aip__crc32(0, z, sizeof z), (uint32_t)crc32(0, z, sizeof z));
}

static void test_every_length_and_alignment(void)
{
    unsigned char *buf = random_bytes(1024 + 16, 7);
    ASSERT_TRUE(buf != NULL);
    const uint32_t seeds[] = {0, 0xFFFFFFFFu, 0x1u, 0xDEADBEEFu};
    for (size_t align = 0; align < 16; align++)
        for (size_t n = 0; n <= 600; n++)
            for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
                uint32_t want = (uint32_t)crc32(seeds[s], buf + align, (uInt)n);
                uint32_t got = aip__crc32(seeds[s], buf + align, n);
                if (want != got) {
                    printf("  align %zu length %zu seed %08x: %08x, zlib %08x\n", align, n,
                           seeds[s], got, want);
                    ASSERT_EQ(got, want);
                }
            }
    free(buf);
}

static void test_pieces_and_large(void)
{
    size_t n = (4u << 20) + 37;
    unsigned char *buf = random_bytes(n, 11);
    ASSERT_TRUE(buf != NULL);
    uint32_t want = (uint32_t)crc32(0, buf, (uInt)n);
    ASSERT_EQ(aip__crc32(0, buf, n), want);
    /* As the chunk checksum is made: header pieces, then the payload, in
     * uneven pieces. */
    uint32_t c = 0;
    size_t off = 0, step = 1;
    while (off < n) {
        size_t k = step < n - off ? step : n - off;
        c = aip__crc32(c, buf + off, k);
        off += k;
        step = step * 3 + 5;
    }
    ASSERT_EQ(c, want);
    free(buf);
}

/* A chunk's checksum is zlib's over header bytes 0..11, 16..23 and the
 * payload, as readers of the format compute it (docs/RAW_FORMAT.md). */
static void test_chunk_crc(void)
{
    unsigned char *payload = random_bytes(1000, 3);
    ASSERT_TRUE(payload != NULL);
    aip__chunk_header h;
    aip__chunk_fill(&h, AIP_CHUNK_EVENTS, 1234, payload, 1000);
    const unsigned char *hb = (const unsigned char *)&h;
    uLong want = crc32(0L, Z_NULL, 0);
    want = crc32(want, hb, 12);
    want = crc32(want, hb + 16, 8);
    want = crc32(want, payload, 1000);
    ASSERT_EQ(h.crc32, (uint32_t)want);
    free(payload);
}

TEST_MAIN(TEST_CASE(test_check_value), TEST_CASE(test_every_length_and_alignment),
          TEST_CASE(test_pieces_and_large), TEST_CASE(test_chunk_crc))
