/*
 * trace_strings.h — the strings one raw file must define (trace_strings.c).
 */
#ifndef AIP_TRACE_STRINGS_H
#define AIP_TRACE_STRINGS_H

#include "flight_time.h"
#include "raw_format.h"

#include <stddef.h>
#include <stdint.h>

typedef struct aip__trace_strings {
    uint64_t *bits;    /* ids this file defines (or is about to) */
    uint32_t cap_bits; /* a multiple of 64 */
    uint32_t *need;    /* noted ids not written yet */
    size_t n_need, cap_need;
} aip__trace_strings;

typedef void (*aip__chunk_write_fn)(void *ctx, uint16_t type, const void *payload,
                                    uint32_t size);

/* aip__trace_strings_scan() : note the string ids the records of an EVENTS
 * payload use that the file does not define yet; @return the number of
 * whole records scanned (the writer counts them with the same pass). */
uint64_t aip__trace_strings_scan(aip__trace_strings *u, const uint8_t *p, uint32_t size);

/* aip__trace_strings_scan_timed() : the same, and in the same pass what
 * the flight recorder's ring needs of the records (flight_time.h; `t->now`
 * in, the rest out). */
uint64_t aip__trace_strings_scan_timed(aip__trace_strings *u, const uint8_t *p, uint32_t size,
                                       aip__flight_times *t);

/* aip__trace_strings_flush() : write the noted strings as STRINGS chunks
 * (runs of consecutive ids, at most `chunk_cap` bytes each) through
 * `write`. */
void aip__trace_strings_flush(aip__trace_strings *u, size_t chunk_cap, aip__chunk_write_fn write,
                              void *ctx);

/* aip__trace_strings_free() : forget everything (a new file). */
void aip__trace_strings_free(aip__trace_strings *u);

#endif
