/*
 * intern.c — lock-free-read string interning (see intern.h).
 *
 * It hashes with the common FNV-1a (hash_table.h) but keeps its own table:
 * readers on every recording thread look up without the lock while a
 * writer inserts, which fixed chained buckets with release-published links
 * allow and a growing open-addressing table (hash_table.h) would not
 * without a lock or a reclamation scheme on the recording hot path.
 */
#include "intern.h"
#include "aiprof.h"
#include "error.h"
#include "fork_handlers.h"
#include "hash_table.h"
#include "utf8.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define BUCKET_BITS 16
#define NBUCKETS (1u << BUCKET_BITS)
#define PAGE_BITS 12
#define PAGE_SIZE_ENTRIES (1u << PAGE_BITS)
#define MAX_PAGES 1024u /* 4 M strings */

typedef struct entry {
    struct entry *_Atomic next;
    uint64_t hash;
    uint32_t id;
    uint32_t len;
    char text[];
} entry;

static entry *_Atomic buckets[NBUCKETS];
static entry *_Atomic *_Atomic pages[MAX_PAGES];
static _Atomic uint32_t count;
static _Atomic uint64_t cut_count;
static _Atomic uint64_t invalid_count; /* distinct texts, counted when first interned */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int full_warned;

static entry *find(entry *e, uint64_t h, const char *text, size_t len)
{
    for (; e; e = atomic_load_explicit(&e->next, memory_order_acquire))
        if (e->hash == h && e->len == len && memcmp(e->text, text, len) == 0)
            return e;
    return NULL;
}

uint32_t aip__intern_n(const char *text, size_t len)
{
    if (!text || !len)
        return 0;
    if (len > AIP_STRING_MAX_LEN) {
        /* At a character's first byte: the cut itself makes no invalid
         * UTF-8 (a text already invalid there may lose up to 3 bytes more). */
        len = AIP_STRING_MAX_LEN;
        for (int k = 0; k < 3 && ((unsigned char)text[len] & 0xC0) == 0x80; k++)
            len--;
        atomic_fetch_add_explicit(&cut_count, 1, memory_order_relaxed);
    }
    uint64_t h = aip__fnv1a(text, len); /* short names dominate: a byte loop wins */
    entry *_Atomic *slot = &buckets[h & (NBUCKETS - 1)];
    entry *e = find(atomic_load_explicit(slot, memory_order_acquire), h, text, len);
    if (e)
        return e->id;

    pthread_mutex_lock(&lock);
    e = find(atomic_load_explicit(slot, memory_order_acquire), h, text, len);
    if (e) {
        pthread_mutex_unlock(&lock);
        return e->id;
    }
    uint32_t id = atomic_load_explicit(&count, memory_order_relaxed) + 1;
    uint32_t page = id >> PAGE_BITS;
    if (page >= MAX_PAGES) {
        int warn = !full_warned;
        full_warned = 1;
        pthread_mutex_unlock(&lock);
        /* After the unlock: the trace log's lock comes before this one in
         * the library's lock order (fork_handlers.h). */
        if (warn)
            aip__warn("string table full (%u strings); further names are recorded as empty",
                      MAX_PAGES * PAGE_SIZE_ENTRIES);
        return 0;
    }
    entry *_Atomic *pg = atomic_load_explicit(&pages[page], memory_order_relaxed);
    if (!pg) {
        pg = calloc(PAGE_SIZE_ENTRIES, sizeof *pg);
        if (!pg) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
        atomic_store_explicit(&pages[page], pg, memory_order_release);
    }
    e = malloc(sizeof *e + len + 1);
    if (!e) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    /* Once per distinct text: the exporters will write its bad bytes as
     * U+FFFD, which the trace then reports (aip__strings_invalid_utf8). */
    if (!aip__utf8_valid(text, len))
        atomic_fetch_add_explicit(&invalid_count, 1, memory_order_relaxed);
    e->hash = h;
    e->id = id;
    e->len = (uint32_t)len;
    memcpy(e->text, text, len);
    e->text[len] = '\0';
    atomic_store_explicit(&e->next, atomic_load_explicit(slot, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&pg[id & (PAGE_SIZE_ENTRIES - 1)], e, memory_order_release);
    atomic_store_explicit(slot, e, memory_order_release);
    atomic_store_explicit(&count, id, memory_order_release);
    pthread_mutex_unlock(&lock);
    return id;
}

aip_string_id aip_intern(const char *text)
{
    return text ? aip__intern_n(text, strlen(text)) : 0;
}

uint64_t aip__strings_cut(void)
{
    return atomic_load_explicit(&cut_count, memory_order_relaxed);
}

uint64_t aip__strings_invalid_utf8(void)
{
    return atomic_load_explicit(&invalid_count, memory_order_relaxed);
}

uint32_t aip__string_count(void) { return atomic_load_explicit(&count, memory_order_acquire); }

const char *aip__string_text(uint32_t id, uint32_t *len)
{
    if (id == 0 || id > aip__string_count())
        return NULL;
    entry *_Atomic *pg = atomic_load_explicit(&pages[id >> PAGE_BITS], memory_order_acquire);
    if (!pg)
        return NULL;
    entry *e = atomic_load_explicit(&pg[id & (PAGE_SIZE_ENTRIES - 1)], memory_order_acquire);
    if (!e)
        return NULL;
    if (len)
        *len = e->len;
    return e->text;
}

/* fork() holds the table lock (fork_handlers.h): a child can intern. */
static void fork_lock(void) { pthread_mutex_lock(&lock); }
static void fork_unlock(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_STRINGS, fork_lock, fork_unlock, fork_unlock);
}
