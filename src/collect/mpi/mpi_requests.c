/*
 * mpi_requests.c — non-blocking operations in flight.
 *
 * An I* call that a trace records leaves its op here under the request
 * handle; the wait or test that sees the request complete ends the op
 * there and records it (AIP_COMMF_NONBLOCKING: from the I* call to the
 * completion the program observed).  A receive takes its peer, tag and
 * size from the completion's status.  The table is open addressing with
 * backward-shift deletion under one lock; `aip__mpi_pending` lets every
 * wait and test skip it while nothing is in flight.  Requests the table
 * cannot hold are not recorded (counted, said once).
 */
#include "mpi_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ_SLOTS 65536 /* power of two; requests in flight at once */

typedef struct entry {
    uint64_t key;                 /* 0: empty */
    aip_comm_op_info op;
    uint64_t comm;                /* receives: the communicator's key */
    int type_size;                /* receives: bytes per element */
    char dtype[MPI_MAX_OBJECT_NAME + 1]; /* the type may be freed before completion */
} entry;

_Atomic uint32_t aip__mpi_pending;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table; /* allocated at the first request */
static int full_said, memory_said;
static uint64_t not_recorded;

static size_t home(uint64_t key) { return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (REQ_SLOTS - 1); }

void aip__mpi_started(MPI_Request req, const aip_comm_op_info *op, int rc, MPI_Comm comm,
                      MPI_Datatype type)
{
    uint64_t key = AIP_MPI_KEY(req);
    if (rc != MPI_SUCCESS || req == MPI_REQUEST_NULL || !key)
        return;
    int recv = op->kind == AIP_COMM_OP_RECV;
    const aip__mpi_type *t = recv ? aip__mpi_type_get(type) : NULL;
    pthread_mutex_lock(&lock);
    if (!table && !(table = calloc(REQ_SLOTS, sizeof *table))) {
        not_recorded++;
        pthread_mutex_unlock(&lock);
        aip__mpi_warn_once(&memory_said, "no memory for the table of requests in flight; "
                                         "non-blocking operations are not recorded");
        return;
    }
    if (atomic_load_explicit(&aip__mpi_pending, memory_order_relaxed) >= REQ_SLOTS / 2) {
        not_recorded++;
        pthread_mutex_unlock(&lock);
        aip__mpi_warn_once(&full_said, "more than 32768 non-blocking operations in flight; "
                                       "the others are not recorded");
        return;
    }
    size_t s = home(key);
    while (table[s].key && table[s].key != key)
        s = (s + 1) & (REQ_SLOTS - 1);
    if (!table[s].key)
        atomic_fetch_add_explicit(&aip__mpi_pending, 1, memory_order_relaxed);
    entry *e = &table[s];
    e->key = key;
    e->op = *op;
    e->comm = AIP_MPI_KEY(comm);
    e->type_size = t ? t->size : 0;
    e->dtype[0] = '\0';
    if (op->dtype)
        strncat(e->dtype, op->dtype, MPI_MAX_OBJECT_NAME);
    e->op.dtype = NULL;
    pthread_mutex_unlock(&lock);
}

/* Lock held: remove slot `s`, shifting back the entries of its cluster. */
static void remove_at(size_t s)
{
    size_t hole = s, i = s;
    for (;;) {
        i = (i + 1) & (REQ_SLOTS - 1);
        if (!table[i].key)
            break;
        size_t h = home(table[i].key);
        /* Entry i may fill the hole unless its home lies cyclically in (hole, i]. */
        int stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
        if (!stays) {
            table[hole] = table[i];
            hole = i;
        }
    }
    table[hole].key = 0;
    atomic_fetch_sub_explicit(&aip__mpi_pending, 1, memory_order_relaxed);
}

/* Lock held: take the entry of `key` into `out`; 0 when there is none. */
static int take(uint64_t key, entry *out)
{
    if (!table || !key)
        return 0;
    size_t s = home(key);
    while (table[s].key) {
        if (table[s].key == key) {
            *out = table[s];
            remove_at(s);
            return 1;
        }
        s = (s + 1) & (REQ_SLOTS - 1);
    }
    return 0;
}

void aip__mpi_completed(MPI_Request req, const MPI_Status *st, uint64_t end)
{
    entry e;
    pthread_mutex_lock(&lock);
    int found = take(AIP_MPI_KEY(req), &e);
    pthread_mutex_unlock(&lock);
    if (!found)
        return;
    int cancelled = 0;
    if (st && st != MPI_STATUS_IGNORE && PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS &&
        cancelled)
        return;
    e.op.end = end;
    e.op.dtype = e.dtype[0] ? e.dtype : NULL;
    if (e.op.kind == AIP_COMM_OP_RECV && st && st != MPI_STATUS_IGNORE &&
        st->MPI_SOURCE != MPI_PROC_NULL) {
        /* The message's own size: MPI_BYTE counts bytes whatever the type. */
        int n = 0;
        e.op.peer = aip__mpi_world_rank(aip__mpi_comm_lookup(e.comm), st->MPI_SOURCE, 1);
        e.op.tag = st->MPI_TAG >= 0 ? st->MPI_TAG : -1;
        if (PMPI_Get_count(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0) {
            e.op.bytes = (uint64_t)n;
            if (e.type_size > 0)
                e.op.count = (uint64_t)n / (uint64_t)e.type_size;
        }
    }
    if (aip_comm_recording())
        aip_comm_op(&e.op);
}

void aip__mpi_dropped(MPI_Request req)
{
    entry e;
    pthread_mutex_lock(&lock);
    take(AIP_MPI_KEY(req), &e);
    pthread_mutex_unlock(&lock);
}

void aip__mpi_requests_reset(void)
{
    pthread_mutex_lock(&lock);
    free(table);
    table = NULL;
    atomic_store_explicit(&aip__mpi_pending, 0, memory_order_relaxed);
    uint64_t lost = not_recorded;
    not_recorded = 0;
    pthread_mutex_unlock(&lock);
    if (lost && !getenv("AIPROF_QUIET"))
        fprintf(stderr, "aiprof: MPI: %llu non-blocking operations were not recorded\n",
                (unsigned long long)lost);
}
