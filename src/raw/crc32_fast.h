/*
 * crc32_fast.h — the CRC-32 of zlib's crc32() (the gzip polynomial,
 * reflected), folded with carry-less multiplies where the CPU has them
 * (crc32_fast.c).  Every chunk of a raw file is checked on load and
 * summed on write; zlib's table-driven crc32 runs at ~4 GB/s here, the
 * folded one at ~20 GB/s, and the raw file of a big profile is read
 * before anything else of an analysis can start.
 */
#ifndef AIP_CRC32_FAST_H
#define AIP_CRC32_FAST_H

#include <stddef.h>
#include <stdint.h>

/* aip__crc32() : zlib's crc32(crc, p, n), the same value for any input. */
uint32_t aip__crc32(uint32_t crc, const void *p, size_t n);

#endif
