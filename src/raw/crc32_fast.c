/*
 * crc32_fast.c — aip__crc32() (crc32_fast.h): on x86-64 with PCLMULQDQ,
 * 64-byte blocks are folded four lanes at a time and reduced to 32 bits
 * with a Barrett step (Gopal et al., "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ Instruction", Intel 2009, the bit-reflected
 * constants of its appendix, as zlib-ng and Chromium's zlib use them);
 * the tail of fewer than 16 bytes, short inputs and other CPUs go to
 * zlib.  tests/unit/test_crc32.c compares it with zlib on random inputs.
 */
#include "crc32_fast.h"

#include <zlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define FOLD(x, k, y) \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x11), (y)), \
                  _mm_clmulepi64_si128((x), (k), 0x00))

/* The reflected CRC register of buf[0..len) (len >= 64, a multiple of 16)
 * from the register `crc` (the complement of a zlib crc value). */
__attribute__((target("pclmul,sse4.1")))
static uint32_t fold(const unsigned char *buf, size_t len, uint32_t crc)
{
    static const uint64_t __attribute__((aligned(16))) k1k2[] = {0x0154442bd4, 0x01c6e41596};
    static const uint64_t __attribute__((aligned(16))) k3k4[] = {0x01751997d0, 0x00ccaa009e};
    static const uint64_t __attribute__((aligned(16))) k5k0[] = {0x0163cd6124, 0x0000000000};
    static const uint64_t __attribute__((aligned(16))) poly[] = {0x01db710641, 0x01f7011641};
    __m128i x1 = _mm_loadu_si128((const __m128i *)(buf + 0x00));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(buf + 0x10));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(buf + 0x20));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(buf + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    __m128i k = _mm_load_si128((const __m128i *)k1k2);
    buf += 64;
    len -= 64;
    for (; len >= 64; buf += 64, len -= 64) { /* four lanes, 64 bytes apart */
        x1 = FOLD(x1, k, _mm_loadu_si128((const __m128i *)(buf + 0x00)));
        x2 = FOLD(x2, k, _mm_loadu_si128((const __m128i *)(buf + 0x10)));
        x3 = FOLD(x3, k, _mm_loadu_si128((const __m128i *)(buf + 0x20)));
        x4 = FOLD(x4, k, _mm_loadu_si128((const __m128i *)(buf + 0x30)));
    }
    k = _mm_load_si128((const __m128i *)k3k4); /* the lanes into one */
    x1 = FOLD(x1, k, x2);
    x1 = FOLD(x1, k, x3);
    x1 = FOLD(x1, k, x4);
    for (; len >= 16; buf += 16, len -= 16)
        x1 = FOLD(x1, k, _mm_loadu_si128((const __m128i *)buf));
    /* 128 bits to 64, then Barrett reduction to 32 */
    __m128i x0 = _mm_clmulepi64_si128(x1, k, 0x10);
    __m128i mask = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x0);
    k = _mm_loadl_epi64((const __m128i *)k5k0);
    x0 = _mm_srli_si128(x1, 4);
    x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask), k, 0x00), x0);
    k = _mm_load_si128((const __m128i *)poly);
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask), k, 0x10);
    x0 = _mm_clmulepi64_si128(_mm_and_si128(x0, mask), k, 0x00);
    x1 = _mm_xor_si128(x1, x0);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

static int have_clmul(void)
{
    static int have = -1; /* threads that race store the same value */
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        h = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    return h;
}
#endif

uint32_t aip__crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
#if defined(__x86_64__) && defined(__GNUC__)
    if (n >= 64 && have_clmul()) {
        size_t whole = n & ~(size_t)15;
        crc = ~fold(b, whole, ~crc);
        b += whole;
        n -= whole;
    }
#endif
    while (n) { /* zlib takes uInt lengths */
        uInt part = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32((uLong)crc, b, part);
        b += part;
        n -= part;
    }
    return crc;
}
