/*
 * domain_filter.h — mstx_domain_include / mstx_domain_exclude.
 *
 * The decision per domain id is computed once (text comparison) and cached
 * in a small direct-mapped table, so filtering costs one load per mark.
 * Include wins over exclude, as the seed says.
 */
#ifndef AIP_DOMAIN_FILTER_H
#define AIP_DOMAIN_FILTER_H

#include "aiprof.h"
#include <stdatomic.h>
#include <stdint.h>

#define AIP_DOMAIN_CACHE 256
extern _Atomic uint64_t aip__domain_cache[AIP_DOMAIN_CACHE];

/* Replace the filter (lists are copied).  @return nonzero if any filter is set. */
int aip__domain_filter_set(const char *const *include, const char *const *exclude);
int aip__domain_allowed_slow(uint32_t domain);

static inline int aip__domain_allowed(uint32_t domain)
{
    /* entry: bit 63 valid, bit 32 allowed, low 32 bits the id */
    uint64_t e = atomic_load_explicit(&aip__domain_cache[domain & (AIP_DOMAIN_CACHE - 1)],
                                      memory_order_relaxed);
    if ((e >> 63) && (uint32_t)e == domain)
        return (int)((e >> 32) & 1);
    return aip__domain_allowed_slow(domain);
}

#endif
