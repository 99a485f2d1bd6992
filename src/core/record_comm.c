/*
 * record_comm.c — communication into the raw file (src/core/comm.h).
 *
 * Groups are registered once per process and described (COMM_GROUP, with
 * their members' global ranks) in every trace that names them, before the
 * first operation that does: the same scheme as devices (record_device.c).
 * The registry is a table of group entries indexed by id plus an
 * open-addressing map from the collector's key to the id; both change only
 * under the registry lock, and an entry never moves or changes once
 * published, so the recording path reads it without the lock.
 */
#include "comm.h"
#include "clock.h"
#include "error.h"
#include "fork_handlers.h"
#include "intern.h"
#include "recorder.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define UNLIKELY(x) __builtin_expect(!!(x), 0)

typedef struct group {
    uint32_t name, my_rank, n_ranks, listed;
    uint32_t *ranks;                /* `listed` global ranks */
    _Atomic uint32_t described;     /* generation it was last described in */
    _Atomic uint64_t seq;           /* next collective sequence number */
} group;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* id -> entry.  A fixed table: untouched pages cost no memory, and
 * readers need no lock to index it. */
static group *_Atomic groups[AIP_RAW_MAX_GROUPS];
static _Atomic uint32_t n_groups;
static struct slot { uint64_t key; uint32_t id1; } *slots; /* id1 0: empty */
static uint32_t cap_slots, used_slots;                      /* used: live + tombstones */
static int full_logged;

static void fork_lock(void) { pthread_mutex_lock(&lock); }
static void fork_unlock(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_COMM, fork_lock, fork_unlock, fork_unlock);
}

int aip__comm_recording(void)
{
    return __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED) &&
           (aip__rec_mask & AIP_MASK_COMM);
}

static size_t slot_of(uint64_t key, uint32_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

#define TOMBSTONE (~0ull)

/* Lock held.  The slot holding `key`, or the slot to insert it into
 * (id1 == 0); SIZE_MAX only when the map is full of tombstones. */
static size_t find_slot(uint64_t key)
{
    size_t s = slot_of(key, cap_slots), insert = SIZE_MAX;
    for (uint32_t i = 0; i < cap_slots; i++, s = (s + 1) & (cap_slots - 1)) {
        if (slots[s].id1 && slots[s].key == key)
            return s;
        if (!slots[s].id1) {
            if (insert == SIZE_MAX)
                insert = s;
            if (slots[s].key != TOMBSTONE)
                return insert; /* never used: the key is not further on */
        }
    }
    return insert;
}

/* Lock held: keep the map at most half used (live + tombstones). */
static int map_reserve(void)
{
    if (cap_slots && (used_slots + 1) * 2 <= cap_slots)
        return 0;
    uint32_t cap = cap_slots ? cap_slots * 2 : 64;
    struct slot *old = slots;
    uint32_t old_cap = cap_slots;
    slots = calloc(cap, sizeof *slots);
    if (!slots) {
        slots = old;
        return -1;
    }
    cap_slots = cap;
    used_slots = 0;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i].id1) {
            size_t s = find_slot(old[i].key);
            slots[s] = old[i];
            used_slots++;
        }
    free(old);
    return 0;
}

static uint32_t refuse(const char *why)
{
    int log = !full_logged;
    full_logged = 1;
    pthread_mutex_unlock(&lock);
    if (log)
        aip__warn("communication group not recorded: %s; operations in it are recorded "
                  "without their group", why);
    return AIP_COMM_NONE;
}

uint32_t aip__comm_group(uint64_t key, const char *name, uint32_t my_rank, uint32_t n_ranks,
                         const uint32_t *ranks)
{
    if (key == TOMBSTONE)
        key = TOMBSTONE - 1; /* the map's marker; a collision only merges two keys' ids */
    pthread_mutex_lock(&lock);
    if (map_reserve())
        return refuse("no memory");
    size_t s = find_slot(key);
    if (s != SIZE_MAX && slots[s].id1) {
        uint32_t id = slots[s].id1 - 1;
        pthread_mutex_unlock(&lock);
        return id;
    }
    uint32_t n = atomic_load_explicit(&n_groups, memory_order_relaxed);
    if (s == SIZE_MAX || n >= AIP_RAW_MAX_GROUPS)
        return refuse("more than 65536 groups");
    group *g = calloc(1, sizeof *g);
    uint32_t listed = n_ranks < AIP_COMM_MAX_LISTED ? n_ranks : AIP_COMM_MAX_LISTED;
    if (g && ranks && listed) {
        g->ranks = malloc(listed * sizeof *g->ranks);
        if (g->ranks)
            memcpy(g->ranks, ranks, listed * sizeof *g->ranks);
    }
    if (!g || (ranks && listed && !g->ranks)) {
        if (g)
            free(g->ranks);
        free(g);
        return refuse("no memory");
    }
    g->name = name && *name ? aip_intern(name) : 0;
    g->my_rank = my_rank;
    g->n_ranks = n_ranks;
    g->listed = g->ranks ? listed : 0;
    atomic_store_explicit(&groups[n], g, memory_order_release);
    atomic_store_explicit(&n_groups, n + 1, memory_order_release);
    if (slots[s].key != TOMBSTONE)
        used_slots++;
    slots[s].key = key;
    slots[s].id1 = n + 1;
    pthread_mutex_unlock(&lock);
    return n;
}

void aip__comm_group_forget(uint64_t key)
{
    if (key == TOMBSTONE)
        key = TOMBSTONE - 1;
    pthread_mutex_lock(&lock);
    if (cap_slots) {
        size_t s = find_slot(key);
        if (s != SIZE_MAX && slots[s].id1) {
            slots[s].id1 = 0;
            slots[s].key = TOMBSTONE;
        }
    }
    pthread_mutex_unlock(&lock);
}

static group *group_at(uint32_t id)
{
    if (id >= atomic_load_explicit(&n_groups, memory_order_acquire))
        return NULL;
    return atomic_load_explicit(&groups[id], memory_order_acquire);
}

uint64_t aip__comm_next_seq(uint32_t id)
{
    group *g = group_at(id);
    return g ? atomic_fetch_add_explicit(&g->seq, 1, memory_order_relaxed) : 0;
}

static void describe(aip__tstate *t, uint32_t id)
{
    group *g = group_at(id);
    if (!g)
        return;
    uint32_t seen = atomic_load_explicit(&g->described, memory_order_relaxed);
    if (seen == t->gen ||
        !atomic_compare_exchange_strong_explicit(&g->described, &seen, t->gen,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    size_t size = (sizeof(aip__rec_comm_group) + (size_t)g->listed * 4 + 7) & ~(size_t)7;
    aip__rec_comm_group *r = aip__reserve_meta(t, size); /* not an event: uncounted */
    if (UNLIKELY(!r)) {
        atomic_store_explicit(&g->described, 0, memory_order_relaxed);
        return;
    }
    memset(r, 0, size);
    aip__rec_set_header(&r->h, AIP_REC_COMM_GROUP, g->listed < g->n_ranks ? AIP_COMMF_RANKS_CUT : 0,
               size, g->name);
    r->group_id = id;
    r->n_ranks = g->n_ranks;
    r->my_rank = g->my_rank;
    r->listed = g->listed;
    if (g->listed)
        memcpy(r + 1, g->ranks, (size_t)g->listed * 4);
    aip__commit(t, size);
}

void aip__comm_op(const aip__comm_op_info *op)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_COMM))
        return;
    aip_string_id name = op->name && *op->name ? aip_intern(op->name) : 0;
    aip_string_id dtype = op->dtype && *op->dtype ? aip_intern(op->dtype) : 0;
    if (op->group != AIP_COMM_NONE)
        describe(t, op->group);
    aip__rec_comm_op *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_COMM_OP, op->nonblocking ? AIP_COMMF_NONBLOCKING : 0, sizeof *r,
               name);
    r->start = op->start;
    r->end = op->end >= op->start ? op->end : op->start;
    r->bytes = op->bytes;
    r->seq = op->seq;
    r->count = op->count;
    r->group_id = op->group;
    r->peer = op->peer;
    r->root = op->root;
    r->dtype = dtype;
    r->tag = op->tag;
    r->kind = op->kind;
    r->lib = op->lib;
    r->reserved = 0;
    aip__commit(t, sizeof *r);
}
