/*
 * hash_table.h — the one hash table of libaiprof: FNV-1a and integer
 * hashing, and an open-addressing index over an entry array the caller
 * owns (thread ids while loading, op names and their statistics, string
 * tables of the database, forward/backward pairs, op arguments).
 *
 * The table holds no keys and no values: a slot is 1 + the number of an
 * entry (0 = empty), entries being numbered 0, 1, 2... in the order they
 * are added, and the caller compares keys itself, inline, so a string key,
 * an integer key and a composite key cost what a hand-written table costs
 * (one 4-byte slot, then the caller's entry, per probe step):
 *
 *     aip__ht_probe pr;
 *     for (uint32_t i = aip__ht_first(&t, h, &pr); i != AIP__HT_NONE;
 *          i = aip__ht_next(&t, &pr))
 *         if (same_key(&entries[i], key))
 *             return i;
 *     aip__ht_add(&t, &pr, hash_of, ctx);   (the new entry is number t.n)
 *     ... append the new entry at entries[t.n - 1]
 *
 * The capacity is a power of two, probing is linear, and the table doubles
 * before it would be more than half full; growing asks the caller for the
 * hash of each entry (hash_of), which a caller whose keys are costly to
 * hash keeps beside its entries.  Entries are never removed one by one
 * (aip__ht_clear empties the table).  Not thread-safe: one owner.
 */
#ifndef AIP_HASH_TABLE_H
#define AIP_HASH_TABLE_H

#include "aiprof.h"

#include <stddef.h>
#include <stdint.h>

/* ---- hashing ----------------------------------------------------------- */

#define AIP__FNV_OFFSET 0xcbf29ce484222325ULL
#define AIP__FNV_PRIME 0x100000001b3ULL

/* aip__fnv1a_more() : FNV-1a (64-bit) of `n` bytes, continuing from `h`
 * (AIP__FNV_OFFSET to start; another seed separates key spaces). */
static inline uint64_t aip__fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= AIP__FNV_PRIME;
    }
    return h;
}

/* aip__fnv1a() : FNV-1a (64-bit) of `n` bytes.  Names are short, so a
 * byte loop beats anything that needs set-up. */
static inline uint64_t aip__fnv1a(const void *p, size_t n)
{
    return aip__fnv1a_more(AIP__FNV_OFFSET, p, n);
}

/* aip__fnv1a_str() : FNV-1a (64-bit) of a NUL-terminated string. */
static inline uint64_t aip__fnv1a_str(const char *s)
{
    uint64_t h = AIP__FNV_OFFSET;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= AIP__FNV_PRIME;
    }
    return h;
}

/* aip__hash_u64() : an integer key's hash (MurmurHash3's finaliser, a
 * bijection in which every input bit moves every output bit: thread ids,
 * addresses and counters differ in few bits). */
static inline uint64_t aip__hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* aip__hash_u64_pair() : the hash of a key of two integers, for a table
 * looked up per event: two multiplications, then the high half of the
 * product (its best-mixed bits) folded into the low half that places it,
 * so that keys whose low bits are alike (aligned addresses) still spread.
 * For one value of `a`, distinct values of `b` never collide: each step
 * is a bijection. */
static inline uint64_t aip__hash_u64_pair(uint64_t a, uint64_t b)
{
    uint64_t x = ((a * 0x9E3779B97F4A7C15ULL) ^ b) * 0xff51afd7ed558ccdULL;
    return x ^ (x >> 32);
}

/* ---- the table --------------------------------------------------------- */

/* The most entries one table indexes (a slot holds 1 + an entry number
 * in 32 bits, and the table is at most half full). */
#define AIP__HT_MAX_ENTRIES ((size_t)1 << 31)
/* aip__ht_first / aip__ht_next: no (further) candidate. */
#define AIP__HT_NONE UINT32_MAX

/* Zero-initialised ({0}) is an empty table. */
typedef struct aip__ht {
    uint32_t *slot;           /* mask + 1 slots; NULL until the first add */
    size_t mask;              /* 0 while slot is NULL */
    size_t n;                 /* entries, numbered 0..n-1 */
} aip__ht;

/* Where a lookup stands; after AIP__HT_NONE, where the key would go. */
typedef struct aip__ht_probe {
    size_t pos;
    uint64_t hash;
} aip__ht_probe;

/* The hash of entry `i` (< the table's n), for growing. */
typedef uint64_t (*aip__ht_hash_fn)(const void *ctx, uint32_t i);

/* aip__ht_home() : the slot where hash `h` starts: its low bits, which
 * FNV-1a and the integer hashes above fill from every bit of the key. */
static inline size_t aip__ht_home(uint64_t h, size_t mask)
{
    return (size_t)h & mask;
}

/* aip__ht_next() : the next entry of the probe run (its key may or may
 * not be the one looked up), or AIP__HT_NONE at its end.  Only after
 * aip__ht_first() returned an entry. */
static inline uint32_t aip__ht_next(const aip__ht *t, aip__ht_probe *pr)
{
    uint32_t r = t->slot[pr->pos];
    if (!r)
        return AIP__HT_NONE;
    pr->pos = (pr->pos + 1) & t->mask;
    return r - 1;
}

/* aip__ht_first() : start a lookup of hash `h`: the first entry to
 * compare, or AIP__HT_NONE when there is none. */
static inline uint32_t aip__ht_first(const aip__ht *t, uint64_t h, aip__ht_probe *pr)
{
    pr->hash = h;
    pr->pos = aip__ht_home(h, t->mask);
    return t->slot ? aip__ht_next(t, pr) : AIP__HT_NONE;
}

/* aip__ht_grow() : room for one more entry, `pr` moved to where it goes
 * (aip__ht_add's slow path). */
aip_status aip__ht_grow(aip__ht *t, aip__ht_probe *pr, aip__ht_hash_fn hash_of, const void *ctx);

/* aip__ht_add() : index entry number t->n (then t->n grows by one) under
 * the key of a lookup that ended in AIP__HT_NONE, with no add since.
 * hash_of(ctx, i) is asked for entries 0..n-1 when the table grows.  The
 * caller reports a failure in its own words: AIP_ERR_NOMEM when growing
 * failed, AIP_ERR_LIMIT past AIP__HT_MAX_ENTRIES; the table is unchanged
 * then. */
static inline aip_status aip__ht_add(aip__ht *t, aip__ht_probe *pr, aip__ht_hash_fn hash_of,
                                     const void *ctx)
{
    if ((t->n + 1) * 2 > t->mask + 1) { /* also when empty: mask is 0 */
        aip_status s = aip__ht_grow(t, pr, hash_of, ctx);
        if (s)
            return s;
    }
    t->slot[pr->pos] = (uint32_t)++t->n;
    return AIP_OK;
}

/* aip__ht_clear() : no entries (numbering starts again at 0); the memory
 * is kept for reuse. */
void aip__ht_clear(aip__ht *t);

/* aip__ht_free() : release the slots; the table is empty ({0}) again. */
void aip__ht_free(aip__ht *t);

#endif
