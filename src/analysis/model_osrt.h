/*
 * model_osrt.h — the OS runtime calls of a process in the model (raw
 * format 1.5's OSRT records, host_sys OSRT; docs/OSRT.md), loaded by
 * osrt_load.c and read by the OS runtime exporters (trace_json_osrt.c,
 * db_osrt.c, summary_osrt.c).  Included by model.h.
 */
#ifndef AIP_MODEL_OSRT_H
#define AIP_MODEL_OSRT_H

#include "aiprof.h"
#include "raw_format.h"

#include <stddef.h>
#include <stdint.h>

/* One blocking libc / libpthread call ("read", "pthread_mutex_lock"). */
typedef struct aip__osrt_call {
    int64_t start, end;        /* ticks when loaded, then wall ns */
    int64_t result;            /* the return value */
    int32_t error;             /* errno (pthread: the code) of a failed call, 0 */
    uint32_t name;             /* string id of the function */
    uint32_t thread;           /* index in threads */
    uint8_t failed;
} aip__osrt_call;

struct aip__process;

/* aip__osrt_min_size() : the fixed size of an OSRT record, 0 for other
 * kinds.  aip__osrt_decode() : one OSRT record of thread index `ti` (its
 * size checked); a call that ends before it starts is counted in
 * osrt_bad_records and left out. */
size_t aip__osrt_min_size(uint8_t kind);
aip_status aip__osrt_decode(struct aip__process *p, uint32_t ti, const uint8_t *r,
                            const aip__rec_header *h);
/* aip__osrt_sort() : osrt by start, then thread (derive). */
void aip__osrt_sort(struct aip__process *p);

#endif
