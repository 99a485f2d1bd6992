/*
 * osrt_load.c — OS runtime calls into the process (raw format 1.5,
 * docs/RAW_FORMAT.md "OS runtime records"; model_osrt.h).
 *
 * Called by model_load.c for OSRT records once the chunk's sizes were
 * checked.  A record whose end precedes its start cannot come from the
 * recorder (one clock, read twice in order): it is counted in
 * osrt_bad_records and left out, the rest of the file loads.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

size_t aip__osrt_min_size(uint8_t kind)
{
    return kind == AIP_REC_OSRT ? sizeof(aip__rec_osrt) : 0;
}

aip_status aip__osrt_decode(aip__process *p, uint32_t ti, const uint8_t *r,
                            const aip__rec_header *h)
{
    aip__rec_osrt o;
    memcpy(&o, r, sizeof o);
    if (o.end < o.start) {
        p->osrt_bad_records++;
        return AIP_OK;
    }
    AIP_VEC_PUSH(p->osrt, ((aip__osrt_call){
                              .start = (int64_t)o.start,
                              .end = (int64_t)o.end,
                              .result = o.result,
                              .error = o.error,
                              .name = h->name <= AIP_NAME_ID_MAX ? h->name : 0,
                              .thread = ti,
                              .failed = (h->flags & AIP_OSRTF_FAILED) != 0,
                          }));
    return AIP_OK;
}

static int cmp_call(const void *a, const void *b)
{
    const aip__osrt_call *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end); /* the enclosing call first */
}

void aip__osrt_sort(aip__process *p)
{
    if (p->osrt.n > 1)
        qsort(p->osrt.v, p->osrt.n, sizeof *p->osrt.v, cmp_call);
}
