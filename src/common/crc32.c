/*
 * crc32.c — zlib's CRC-32 (crc32.h), folded with PCLMULQDQ on x86-64.
 *
 * The folding works on the bit-reflected CRC: four 128-bit lanes are each
 * multiplied (carry-less) by x^(512+64) and x^512 mod P and xored with the
 * next 64 bytes, then folded into one lane, 16 bytes at a time into it,
 * down to 64 and 32 bits, and reduced by Barrett's method.  The constants
 * are those of the paper's bit-reflected case for P = 0x104C11DB7, as
 * zlib-ng, Chromium's zlib and Linux use them.  The input must be a
 * multiple of 16 bytes and at least 64; zlib computes the rest, so every
 * length gives exactly zlib's value (tests/unit/test_crc32.c compares
 * both on every length and alignment up to a few hundred bytes).
 */
#include "crc32.h"

#include <limits.h>
#include <zlib.h>

/* zlib's own, in pieces that fit its uInt length. */
static uint32_t crc32_zlib(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n) {
        uInt k = n > UINT_MAX ? UINT_MAX : (uInt)n;
        crc = (uint32_t)crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define FOLD_MIN 64

/* The inverted CRC (as zlib keeps it inside crc32()) of `n` bytes, n a
 * multiple of 16 and at least FOLD_MIN, continuing from inverted `crc`. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t fold(uint32_t crc,
                                                              const unsigned char *p, size_t n)
{
    const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
    const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
    const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
    const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
    const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);

    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 0x00));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 0x10));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 0x20));
    __m128i x4 = _mm_loadu_si128((const __m128i *)(p + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    p += 64;
    n -= 64;

    /* Four lanes, 64 bytes a round. */
    while (n >= 64) {
        __m128i x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
        __m128i x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
        __m128i x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
        __m128i x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
        x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
        x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
        x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), _mm_loadu_si128((const __m128i *)(p + 0x00)));
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), _mm_loadu_si128((const __m128i *)(p + 0x10)));
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), _mm_loadu_si128((const __m128i *)(p + 0x20)));
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), _mm_loadu_si128((const __m128i *)(p + 0x30)));
        p += 64;
        n -= 64;
    }

    /* The four lanes into one. */
    __m128i x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
    x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);

    /* 16 bytes at a time into the lane. */
    while (n >= 16) {
        x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
        x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, _mm_loadu_si128((const __m128i *)p)), x5);
        p += 16;
        n -= 16;
    }

    /* 128 bits to 64. */
    x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
    x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, mask32);
    x1 = _mm_clmulepi64_si128(x1, k5k0, 0x00);
    x1 = _mm_xor_si128(x1, x2);

    /* Barrett reduction to 32 bits. */
    x2 = _mm_and_si128(x1, mask32);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
    x2 = _mm_and_si128(x2, mask32);
    x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

/* -1 not asked yet, else whether the CPU has PCLMULQDQ and SSE4.1.  A
 * race asks twice and finds the same. */
static int have_fold = -1;

int aip__crc32_folding(void)
{
    int h = __atomic_load_n(&have_fold, __ATOMIC_RELAXED);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        __atomic_store_n(&have_fold, h, __ATOMIC_RELAXED);
    }
    return h;
}

uint32_t aip__crc32(uint32_t crc, const void *p, size_t n)
{
    const unsigned char *b = p;
    if (n >= FOLD_MIN && aip__crc32_folding()) {
        size_t head = n & ~(size_t)15;
        crc = ~fold(~crc, b, head);
        b += head;
        n -= head;
    }
    return n ? crc32_zlib(crc, b, n) : crc;
}

#else

int aip__crc32_folding(void) { return 0; }

uint32_t aip__crc32(uint32_t crc, const void *p, size_t n)
{
    return crc32_zlib(crc, p, n);
}

#endif
