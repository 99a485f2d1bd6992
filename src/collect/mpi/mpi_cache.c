/*
 * mpi_cache.c — communicators and datatypes, resolved once per handle.
 *
 * A communicator's first recorded use asks MPI for its size, this rank,
 * its name and its members' world ranks (MPI_Comm_group +
 * MPI_Group_translate_ranks against MPI_COMM_WORLD's group) and registers
 * it with the core (aip_comm_group, keyed by the handle); a datatype's
 * first use asks for its size and name.  Both then come from a table
 * indexed by the handle's bits: open addressing, written under a lock,
 * read without one (a slot's key is published after its value, and a
 * value is freed only when MPI frees the handle, which no correct program
 * does while another thread uses it).  MPI_Comm_free and MPI_Type_free
 * forget the handle, which MPI may give to the next communicator or type.
 */
#include "mpi_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SLOTS 4096 /* communicators or datatypes alive at once */

typedef struct slot {
    _Atomic uint64_t key;  /* 0: never used */
    void *_Atomic value;   /* NULL: forgotten (the key may come back) */
} slot;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot comms[TABLE_SLOTS], types[TABLE_SLOTS];
static int comms_full, types_full, no_memory;

void aip__mpi_warn_once(int *flag, const char *what)
{
    if (__atomic_exchange_n(flag, 1, __ATOMIC_RELAXED))
        return;
    if (!getenv("AIPROF_QUIET"))
        fprintf(stderr, "aiprof: MPI: %s\n", what);
}

static size_t home(uint64_t key) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % TABLE_SLOTS; }

static void *find(slot *t, uint64_t key)
{
    size_t s = home(key);
    for (int i = 0; i < TABLE_SLOTS; i++, s = (s + 1) % TABLE_SLOTS) {
        uint64_t k = atomic_load_explicit(&t[s].key, memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&t[s].value, memory_order_acquire);
        if (!k)
            return NULL;
    }
    return NULL;
}

/* Lock held.  The slot of `key`, else the first never-used one; NULL when full. */
static slot *place(slot *t, uint64_t key)
{
    size_t s = home(key);
    for (int i = 0; i < TABLE_SLOTS; i++, s = (s + 1) % TABLE_SLOTS) {
        uint64_t k = atomic_load_explicit(&t[s].key, memory_order_relaxed);
        if (k == key || !k)
            return &t[s];
    }
    return NULL;
}

/* Lock held: publish `value` under `key`; 0 when the table is full. */
static int publish(slot *t, uint64_t key, void *value)
{
    slot *s = place(t, key);
    if (!s)
        return 0;
    atomic_store_explicit(&s->value, value, memory_order_release);
    atomic_store_explicit(&s->key, key, memory_order_release);
    return 1;
}

static void *take(slot *t, uint64_t key)
{
    pthread_mutex_lock(&lock);
    void *v = NULL;
    slot *s = place(t, key);
    if (s && atomic_load_explicit(&s->key, memory_order_relaxed) == key)
        v = atomic_exchange_explicit(&s->value, NULL, memory_order_acq_rel);
    pthread_mutex_unlock(&lock);
    return v;
}

/* ---- communicators ---------------------------------------------------- */

static uint32_t *translate(MPI_Group from, int n, MPI_Group world)
{
    uint32_t *out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    int *in = malloc((size_t)(n > 0 ? n : 1) * sizeof *in);
    int *got = malloc((size_t)(n > 0 ? n : 1) * sizeof *got);
    if (!out || !in || !got) {
        free(out);
        out = NULL;
    } else {
        for (int i = 0; i < n; i++)
            in[i] = i;
        if (n > 0 && PMPI_Group_translate_ranks(from, n, in, world, got) != MPI_SUCCESS)
            for (int i = 0; i < n; i++)
                got[i] = MPI_UNDEFINED;
        for (int i = 0; i < n; i++)
            out[i] = got[i] == MPI_UNDEFINED || got[i] < 0 ? AIP_COMM_NO_RANK : (uint32_t)got[i];
    }
    free(in);
    free(got);
    return out;
}

/* A name for a communicator MPI left unnamed (Open MPI names only the
 * predefined ones) that every member computes alike, since analysis
 * matches a collective across ranks by its group: the members' world
 * ranks ("MPI_Comm[0,2]", a hash past 8 members), and "#k" for the k-th
 * such communicator with those members this process resolved (MPI_Comm_dup
 * of one group; members create communicators in the same order). */
static void unnamed(char *out, size_t cap, const aip__mpi_comm *c)
{
    static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
    static struct { uint64_t hash; uint32_t n; } seen[256];
    static size_t n_seen;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the ranks */
    for (int i = 0; i < c->size; i++)
        for (int b = 0; b < 4; b++)
            h = (h ^ ((c->world[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
    uint32_t k = 0;
    pthread_mutex_lock(&seen_lock);
    size_t i = 0;
    while (i < n_seen && seen[i].hash != h)
        i++;
    if (i < n_seen)
        k = seen[i].n++;
    else if (n_seen < sizeof seen / sizeof seen[0])
        seen[n_seen++] = (typeof(seen[0])){h, 1};
    pthread_mutex_unlock(&seen_lock);
    size_t n = 0;
    if (c->size <= 8) {
        n += (size_t)snprintf(out, cap, "MPI_Comm[");
        for (int r = 0; r < c->size && n < cap; r++)
            n += (size_t)snprintf(out + n, cap - n, "%s%lld", r ? "," : "",
                                  c->world[r] == AIP_COMM_NO_RANK ? -1LL
                                                                  : (long long)c->world[r]);
        if (n < cap)
            n += (size_t)snprintf(out + n, cap - n, "]");
    } else {
        n += (size_t)snprintf(out, cap, "MPI_Comm[%d ranks %016llx]", c->size,
                              (unsigned long long)h);
    }
    if (k && n < cap)
        snprintf(out + n, cap - n, "#%u", k);
}

static aip__mpi_comm *resolve(MPI_Comm comm, uint64_t key)
{
    aip__mpi_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->key = key;
    MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL, rg = MPI_GROUP_NULL;
    if (PMPI_Comm_size(comm, &c->size) != MPI_SUCCESS || PMPI_Comm_rank(comm, &c->rank) ||
        PMPI_Comm_test_inter(comm, &c->inter) || PMPI_Comm_group(comm, &g) ||
        PMPI_Comm_group(MPI_COMM_WORLD, &wg)) {
        if (g != MPI_GROUP_NULL)
            PMPI_Group_free(&g);
        free(c);
        return NULL;
    }
    c->world = translate(g, c->size, wg);
    if (c->inter && PMPI_Comm_remote_size(comm, &c->remote_size) == MPI_SUCCESS &&
        PMPI_Comm_remote_group(comm, &rg) == MPI_SUCCESS) {
        c->remote = translate(rg, c->remote_size, wg);
        PMPI_Group_free(&rg);
    }
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    if (!c->world) {
        free(c->remote);
        free(c);
        return NULL;
    }
    char name[MPI_MAX_OBJECT_NAME + 1] = "";
    int len = 0;
    if (PMPI_Comm_get_name(comm, name, &len) != MPI_SUCCESS || len <= 0 ||
        len > MPI_MAX_OBJECT_NAME)
        unnamed(name, sizeof name, c);
    name[MPI_MAX_OBJECT_NAME] = '\0';
    c->group = aip_comm_group(key, name, (uint32_t)c->rank, (uint32_t)c->size, c->world);
    return c;
}

static void free_comm(aip__mpi_comm *c)
{
    if (c) {
        free(c->world);
        free(c->remote);
        free(c);
    }
}

const aip__mpi_comm *aip__mpi_comm_lookup(uint64_t key) { return find(comms, key); }

const aip__mpi_comm *aip__mpi_comm_get(MPI_Comm comm)
{
    uint64_t key = AIP_MPI_KEY(comm);
    aip__mpi_comm *c = find(comms, key);
    if (__builtin_expect(c != NULL, 1) || comm == MPI_COMM_NULL)
        return c;
    aip__mpi_comm *fresh = resolve(comm, key); /* MPI calls: outside the lock */
    if (!fresh) {
        aip__mpi_warn_once(&no_memory, "a communicator could not be resolved; its operations "
                                       "are recorded without their group");
        return NULL;
    }
    pthread_mutex_lock(&lock);
    c = find(comms, key);
    int kept = !c && publish(comms, key, fresh);
    pthread_mutex_unlock(&lock);
    if (kept)
        return fresh;
    free_comm(fresh);
    if (!c)
        aip__mpi_warn_once(&comms_full, "more than 4096 communicators alive at once; the "
                                        "others' operations are recorded without their group");
    return c;
}

void aip__mpi_comm_forget(MPI_Comm comm)
{
    uint64_t key = AIP_MPI_KEY(comm);
    free_comm(take(comms, key));
    aip_comm_group_forget(key);
}

uint32_t aip__mpi_world_rank(const aip__mpi_comm *c, int r, int remote)
{
    if (!c || r < 0)
        return AIP_COMM_NO_RANK;
    if (remote && c->inter)
        return c->remote && r < c->remote_size ? c->remote[r] : AIP_COMM_NO_RANK;
    return r < c->size ? c->world[r] : AIP_COMM_NO_RANK;
}

/* ---- datatypes -------------------------------------------------------- */

const aip__mpi_type *aip__mpi_type_get(MPI_Datatype type)
{
    uint64_t key = AIP_MPI_KEY(type);
    aip__mpi_type *t = find(types, key);
    if (__builtin_expect(t != NULL, 1) || type == MPI_DATATYPE_NULL)
        return t;
    char name[MPI_MAX_OBJECT_NAME + 1] = "";
    int len = 0, size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return NULL;
    if (PMPI_Type_get_name(type, name, &len) != MPI_SUCCESS)
        len = 0;
    name[len > 0 && len <= MPI_MAX_OBJECT_NAME ? len : 0] = '\0';
    t = calloc(1, sizeof *t);
    char *copy = name[0] ? strdup(name) : NULL;
    if (!t || (name[0] && !copy)) {
        free(t);
        free(copy);
        return NULL;
    }
    t->key = key;
    t->size = size;
    t->name = copy;
    pthread_mutex_lock(&lock);
    aip__mpi_type *old = find(types, key);
    int kept = !old && publish(types, key, t);
    pthread_mutex_unlock(&lock);
    if (kept)
        return t;
    free(copy);
    free(t);
    if (old)
        return old;
    aip__mpi_warn_once(&types_full, "more than 4096 datatypes alive at once; the others are "
                                    "resolved at every call");
    static __thread aip__mpi_type spare; /* valid until the thread's next call */
    static __thread char spare_name[MPI_MAX_OBJECT_NAME + 1];
    memcpy(spare_name, name, sizeof spare_name);
    spare = (aip__mpi_type){.key = key, .size = size, .name = name[0] ? spare_name : NULL};
    return &spare;
}

void aip__mpi_type_forget(MPI_Datatype type)
{
    aip__mpi_type *t = take(types, AIP_MPI_KEY(type));
    if (t) {
        free((char *)t->name);
        free(t);
    }
}
