/*
 * flight_time.h — the time by which the flight recorder places a record
 * in its window (docs/FLIGHT_RECORDER.md): inline, because the writer
 * takes it in the same pass over a buffer as the strings' scan
 * (trace_strings.c), and a second walk over every record was the largest
 * part of what an armed recorder added to the writer's work.
 */
#ifndef AIP_FLIGHT_TIME_H
#define AIP_FLIGHT_TIME_H

#include "raw_format.h"

#include <stdint.h>
#include <string.h>

/* aip__flight_event_time() : the time of the record at `r` in ticks (its
 * end for a span: a span that reaches into the window is in it), 0 for a
 * description (meta, not an event), UINT64_MAX for a record whose time is
 * not in ticks (a device task: device ns; or a kind this build does not
 * know). */
static inline uint64_t aip__flight_event_time(const uint8_t *r)
{
    /* Where each kind keeps its time: a table, not a switch, because the
     * writer takes it for every record it writes.  8 / 16: the offset; 1:
     * a description; 0 (a device task, a kind this build does not know):
     * not in ticks. */
    static const uint8_t at[32] = {
        [AIP_REC_THREAD_NAME] = 1, [AIP_REC_DEVICE] = 1, [AIP_REC_DEVICE_QUEUE] = 1,
        [AIP_REC_DEVICE_CLOCK] = 1, [AIP_REC_COMM_GROUP] = 1,
        [AIP_REC_ANNOTATION] = 16, [AIP_REC_RANGE] = 16, [AIP_REC_OP] = 16, [AIP_REC_GC] = 16,
        [AIP_REC_PYFUNC] = 16, [AIP_REC_DEVICE_API] = 16, [AIP_REC_COMM_OP] = 16,
        [AIP_REC_OSRT] = 16,
        [AIP_REC_RANGE_START] = 8, [AIP_REC_RANGE_END] = 8, [AIP_REC_MARK] = 8,
        [AIP_REC_MEMORY] = 8, [AIP_REC_MEMORY_CATEGORY] = 8, [AIP_REC_DEVICE_MEMORY] = 8,
        [AIP_REC_HOST_SAMPLE] = 8};
    uint8_t o = r[0] < 32 ? at[r[0]] : 0;
    if (o < 8)
        return o ? 0 : UINT64_MAX;
    uint64_t t;
    memcpy(&t, r + o, 8);
    return t;
}

/* What one pass over a buffer's records tells the ring about them
 * (aip__trace_strings_scan_timed): the events' earliest and latest times
 * (a record whose time is not in ticks takes `now`), their number, and
 * whether any description is among them (which the ring keeps: then it
 * walks the records itself, aip__flight_ring_note). */
typedef struct aip__flight_times {
    uint64_t now;      /* in: the time of records whose own is not in ticks */
    uint64_t lo, hi;   /* out: UINT64_MAX / 0 when no event */
    uint64_t events;   /* out */
    int has_meta;      /* out */
} aip__flight_times;

#endif
