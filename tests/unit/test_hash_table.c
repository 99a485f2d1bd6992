/*
 * test_hash_table.c — the common hash table (src/common/hash_table.h):
 * FNV-1a against the published test vectors, the integer hashes, and the
 * open-addressing index over a caller's array: empty, absent keys, keys
 * that all collide, growth to many keys, clear.
 */
#include "aip_test.h"
#include "hash_table.h"

#define NKEYS 100000u

/* A caller's entry array of string keys with their hashes, as
 * db_strings.c keeps one. */
typedef struct keys {
    char (*text)[16];
    uint64_t *hash;
    size_t n;
    aip__ht index;
} keys;

static uint64_t key_hash(const void *ctx, uint32_t i) { return ((const keys *)ctx)->hash[i]; }

/* Index of `s` under hash `h`; AIP__HT_NONE if absent (pr: where it goes). */
static uint32_t find(const keys *k, const char *s, uint64_t h, aip__ht_probe *pr)
{
    for (uint32_t i = aip__ht_first(&k->index, h, pr); i != AIP__HT_NONE;
         i = aip__ht_next(&k->index, pr))
        if (k->hash[i] == h && !strcmp(k->text[i], s))
            return i;
    return AIP__HT_NONE;
}

/* Index of `s`, added if new. */
static uint32_t intern(keys *k, const char *s, uint64_t h)
{
    aip__ht_probe pr;
    uint32_t i = find(k, s, h, &pr);
    if (i != AIP__HT_NONE)
        return i;
    if (aip__ht_add(&k->index, &pr, key_hash, k))
        return AIP__HT_NONE;
    snprintf(k->text[k->n], sizeof k->text[0], "%s", s);
    k->hash[k->n] = h;
    return (uint32_t)k->n++;
}

static int keys_init(keys *k, size_t n)
{
    memset(k, 0, sizeof *k);
    k->text = malloc(n * sizeof *k->text);
    k->hash = malloc(n * sizeof *k->hash);
    return k->text && k->hash;
}

static void keys_free(keys *k)
{
    aip__ht_free(&k->index);
    free(k->text);
    free(k->hash);
}

static size_t slots(const aip__ht *t) { return t->slot ? t->mask + 1 : 0; }

static void test_fnv1a_vectors(void)
{
    /* FNV-1a 64 test vectors (Fowler/Noll/Vo, draft-eastlake-fnv). */
    ASSERT_TRUE(aip__fnv1a("", 0) == 0xcbf29ce484222325ULL);
    ASSERT_TRUE(aip__fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
    ASSERT_TRUE(aip__fnv1a("foobar", 6) == 0x85944171f73967e8ULL);
    ASSERT_TRUE(aip__fnv1a_str("foobar") == 0x85944171f73967e8ULL);
    ASSERT_TRUE(aip__fnv1a_str("") == AIP__FNV_OFFSET);
    ASSERT_TRUE(aip__fnv1a_more(aip__fnv1a("foo", 3), "bar", 3) == aip__fnv1a("foobar", 6));
    const char bin[] = {'a', '\0', 'b'};
    ASSERT_TRUE(aip__fnv1a(bin, 3) != aip__fnv1a(bin, 1)); /* bytes, not a C string */
}

static void test_integer_hashes(void)
{
    /* distinct keys that differ in few bits: distinct hashes, spread over
     * the low bits a table indexes with */
    uint8_t seen[1024] = {0};
    unsigned used = 0;
    for (uint64_t x = 0; x < 512; x++) {
        ASSERT_TRUE(aip__hash_u64(x) != aip__hash_u64(x + 1));
        unsigned b = (unsigned)(aip__hash_u64(x) & 1023);
        used += !seen[b];
        seen[b] = 1;
    }
    ASSERT_TRUE(used > 300); /* a random function fills ~402 of 1024 */
    /* aligned addresses (low 9 bits zero) still spread over the low bits */
    memset(seen, 0, sizeof seen);
    used = 0;
    for (uint64_t i = 0; i < 512; i++) {
        unsigned b = (unsigned)(aip__hash_u64_pair(0x7f3a00000000ULL + i * 512, 0x0101) & 1023);
        used += !seen[b];
        seen[b] = 1;
    }
    ASSERT_TRUE(used > 300);
    for (uint64_t b = 0; b < 1000; b++)
        ASSERT_TRUE(aip__hash_u64_pair(12345, b) != aip__hash_u64_pair(12345, b + 1));
    ASSERT_TRUE(aip__hash_u64_pair(1, 2) != aip__hash_u64_pair(2, 1));
}

static void test_empty_table(void)
{
    aip__ht t = {0};
    aip__ht_probe pr;
    ASSERT_EQ(aip__ht_first(&t, 0, &pr), AIP__HT_NONE);
    ASSERT_EQ(aip__ht_first(&t, aip__fnv1a_str("x"), &pr), AIP__HT_NONE);
    ASSERT_EQ(t.n, 0);
    aip__ht_clear(&t);
    ASSERT_EQ(aip__ht_first(&t, 7, &pr), AIP__HT_NONE);
    aip__ht_free(&t);
    aip__ht_free(&t); /* twice: the freed table is the empty one */
    ASSERT_TRUE(t.slot == NULL);
    ASSERT_EQ(t.n, 0);
}

static uint64_t no_hash(const void *ctx, uint32_t i)
{
    (void)ctx;
    (void)i;
    return 99;
}

static void test_first_add_after_empty_lookup(void)
{
    aip__ht t = {0};
    aip__ht_probe pr;
    ASSERT_EQ(aip__ht_first(&t, 99, &pr), AIP__HT_NONE);
    ASSERT_EQ(aip__ht_add(&t, &pr, no_hash, NULL), AIP_OK);
    ASSERT_EQ(t.n, 1);
    ASSERT_EQ(slots(&t), 256);
    ASSERT_EQ(aip__ht_first(&t, 99, &pr), 0); /* entries are numbered from 0 */
    ASSERT_EQ(aip__ht_next(&t, &pr), AIP__HT_NONE);
    /* another hash homed elsewhere meets no entry */
    ASSERT_EQ(aip__ht_first(&t, 98, &pr), AIP__HT_NONE);
    aip__ht_free(&t);
}

static void test_many_keys_and_growth(void)
{
    keys k;
    ASSERT_TRUE(keys_init(&k, NKEYS));
    char s[16];
    size_t last_cap = 0, grew = 0;
    for (unsigned i = 0; i < NKEYS; i++) {
        snprintf(s, sizeof s, "key%u", i);
        ASSERT_EQ(intern(&k, s, aip__fnv1a_str(s)), i);
        size_t cap = slots(&k.index);
        ASSERT_TRUE((cap & (cap - 1)) == 0); /* a power of two */
        ASSERT_TRUE(k.index.n * 2 <= cap);   /* never more than half full */
        grew += cap != last_cap;
        last_cap = cap;
    }
    ASSERT_EQ(k.index.n, NKEYS);
    ASSERT_TRUE(grew >= 10); /* 256 slots first, doubling to 262144 */
    ASSERT_EQ(last_cap, 262144);
    /* every key is found at its index after all the growth; a second
     * intern adds nothing */
    for (unsigned i = 0; i < NKEYS; i++) {
        snprintf(s, sizeof s, "key%u", i);
        aip__ht_probe pr;
        ASSERT_EQ(find(&k, s, aip__fnv1a_str(s), &pr), i);
        ASSERT_EQ(intern(&k, s, aip__fnv1a_str(s)), i);
    }
    ASSERT_EQ(k.n, NKEYS);
    /* keys never inserted */
    for (unsigned i = NKEYS; i < NKEYS + 1000; i++) {
        snprintf(s, sizeof s, "key%u", i);
        aip__ht_probe pr;
        ASSERT_EQ(find(&k, s, aip__fnv1a_str(s), &pr), AIP__HT_NONE);
    }
    aip__ht_probe pr;
    ASSERT_EQ(find(&k, "", aip__fnv1a_str(""), &pr), AIP__HT_NONE);
    keys_free(&k);
}

static void test_all_keys_collide(void)
{
    /* one hash for every key: the caller's comparison tells them apart */
    keys k;
    ASSERT_TRUE(keys_init(&k, 300));
    char s[16];
    for (unsigned i = 0; i < 300; i++) {
        snprintf(s, sizeof s, "c%u", i);
        ASSERT_EQ(intern(&k, s, 42), i);
    }
    ASSERT_EQ(slots(&k.index), 1024);
    for (unsigned i = 0; i < 300; i++) {
        snprintf(s, sizeof s, "c%u", i);
        aip__ht_probe pr;
        ASSERT_EQ(find(&k, s, 42, &pr), i);
    }
    aip__ht_probe pr;
    ASSERT_EQ(find(&k, "c300", 42, &pr), AIP__HT_NONE);
    /* every entry of the run, once each */
    unsigned n = 0;
    for (uint32_t i = aip__ht_first(&k.index, 42, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&k.index, &pr))
        n++;
    ASSERT_EQ(n, 300);
    /* a hash is placed by its low bits */
    ASSERT_EQ(aip__ht_home(42 + ((uint64_t)1 << 20), 1023), 42);
    keys_free(&k);
}

static void test_clear_and_renumber(void)
{
    keys k;
    ASSERT_TRUE(keys_init(&k, 2000));
    char s[16];
    for (unsigned i = 0; i < 1000; i++) {
        snprintf(s, sizeof s, "a%u", i);
        ASSERT_EQ(intern(&k, s, aip__hash_u64(i)), i);
    }
    ASSERT_EQ(slots(&k.index), 2048);
    aip__ht_clear(&k.index);
    ASSERT_EQ(k.index.n, 0);
    ASSERT_EQ(slots(&k.index), 2048); /* kept for the next use */
    aip__ht_probe pr;
    for (unsigned i = 0; i < 1000; i++)
        ASSERT_EQ(aip__ht_first(&k.index, aip__hash_u64(i), &pr), AIP__HT_NONE);
    /* numbering starts again at 0: the caller's entries start again too */
    k.n = 0;
    ASSERT_EQ(intern(&k, "b", aip__fnv1a_str("b")), 0);
    ASSERT_EQ(intern(&k, "a3", aip__hash_u64(3)), 1);
    ASSERT_EQ(find(&k, "b", aip__fnv1a_str("b"), &pr), 0);
    ASSERT_EQ(find(&k, "a4", aip__hash_u64(4), &pr), AIP__HT_NONE);
    keys_free(&k);
}

TEST_MAIN(TEST_CASE(test_fnv1a_vectors), TEST_CASE(test_integer_hashes),
          TEST_CASE(test_empty_table), TEST_CASE(test_first_add_after_empty_lookup),
          TEST_CASE(test_many_keys_and_growth), TEST_CASE(test_all_keys_collide),
          TEST_CASE(test_clear_and_renumber))
