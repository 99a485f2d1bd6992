/*
 * hash_table.c — growth and clearing of the open-addressing table (see
 * hash_table.h); lookups are inline in the header.
 */
#include "hash_table.h"

#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 256 /* 1 KiB: up to 128 entries never grow */

/* Index entries 0..n-1 again in `cap` fresh slots. */
static aip_status resize(aip__ht *t, size_t cap, aip__ht_hash_fn hash_of, const void *ctx)
{
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return AIP_ERR_NOMEM;
    size_t mask = cap - 1;
    for (uint32_t i = 0; i < t->n; i++) {
        size_t j = aip__ht_home(hash_of(ctx, i), mask);
        while (s[j])
            j = (j + 1) & mask;
        s[j] = i + 1;
    }
    free(t->slot);
    t->slot = s;
    t->mask = mask;
    return AIP_OK;
}

aip_status aip__ht_grow(aip__ht *t, aip__ht_probe *pr, aip__ht_hash_fn hash_of, const void *ctx)
{
    if (t->n >= AIP__HT_MAX_ENTRIES)
        return AIP_ERR_LIMIT;
    aip_status s = resize(t, t->slot ? (t->mask + 1) * 2 : MIN_SLOTS, hash_of, ctx);
    if (s)
        return s;
    pr->pos = aip__ht_home(pr->hash, t->mask);
    while (t->slot[pr->pos])
        pr->pos = (pr->pos + 1) & t->mask;
    return AIP_OK;
}

void aip__ht_clear(aip__ht *t)
{
    if (t->slot)
        memset(t->slot, 0, (t->mask + 1) * sizeof *t->slot);
    t->n = 0;
}

void aip__ht_free(aip__ht *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}
