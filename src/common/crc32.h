/*
 * crc32.h — the CRC-32 of zlib (the raw format's chunk checksum), computed
 * with carry-less multiplication where the CPU has it.
 *
 * The raw writer checksums every byte it writes on its own thread, which
 * the profiled process pays for: zlib's table-driven crc32() runs at about
 * 4 GB/s, a few microseconds per training step of a with_stack CNN trace.
 * Folding 64 bytes at a time with PCLMULQDQ (Intel, "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ Instruction", 2009) gives the same
 * value several times faster.  Elsewhere, and for short inputs and tails,
 * zlib's crc32() computes it.
 */
#ifndef AIP_CRC32_H
#define AIP_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* aip__crc32() : zlib's crc32(crc, p, n), for any n (0 returns crc). */
uint32_t aip__crc32(uint32_t crc, const void *p, size_t n);

/* aip__crc32_folding() : whether aip__crc32() uses PCLMULQDQ on this CPU
 * (for tests, which then compare both ways). */
int aip__crc32_folding(void);

#endif
