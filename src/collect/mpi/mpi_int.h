/*
 * mpi_int.h — what the files of libaiprof_mpi.so (the PMPI wrappers of
 * src/collect/mpi) share: the communicator and datatype caches, the table
 * of non-blocking requests in flight, and the helpers that turn one MPI
 * call into an aip_comm_op_info (aiprof_integration.h).
 *
 * The library is a client of libaiprof's public and integration API only,
 * so that libaiprof itself never depends on MPI.  While nothing records,
 * a wrapper costs one relaxed load (AIP_RECORDING()) before the PMPI call.
 */
#ifndef AIP_MPI_INT_H
#define AIP_MPI_INT_H

#include <mpi.h>

#include "aiprof.h"
#include "aiprof_integration.h"

#include <stdint.h>

/* The MPI entry points this library defines are exported whatever the
 * build's default visibility. */
#define AIP_MPI_WRAP __attribute__((visibility("default")))

/* A communicator, resolved once: its group registered with the core and
 * its members' world ranks (peers and roots are translated through them). */
typedef struct aip__mpi_comm {
    uint64_t key;          /* the handle's bits */
    uint32_t group;        /* aip_comm_group() id, AIP_COMM_NO_GROUP */
    int size, rank;
    int inter;             /* an intercommunicator: peers are in the remote group */
    int remote_size;
    uint32_t *world;       /* world rank of group rank i (size entries) */
    uint32_t *remote;      /* intercommunicators: of remote rank i */
} aip__mpi_comm;

/* A datatype: its size and name (NULL for unnamed derived types). */
typedef struct aip__mpi_type {
    uint64_t key;
    int size;
    const char *name;
} aip__mpi_type;

/* aip__mpi_on() : a trace records communication now. */
static inline int aip__mpi_on(void)
{
    return __builtin_expect(AIP_RECORDING(), 0) && aip_comm_recording();
}

static inline uint64_t aip__mpi_key(const void *handle, size_t size)
{
    uint64_t k = 0;
    const unsigned char *b = handle;
    for (size_t i = 0; i < size && i < 8; i++)
        k |= (uint64_t)b[i] << (8 * i);
    return k;
}
#define AIP_MPI_KEY(h) aip__mpi_key(&(h), sizeof(h))

/* --- mpi_cache.c ------------------------------------------------------ */
/* aip__mpi_comm_get() : the resolved communicator (resolved now on first
 * use); NULL when it cannot be (logged once). */
const aip__mpi_comm *aip__mpi_comm_get(MPI_Comm comm);
/* aip__mpi_comm_lookup() : the cached communicator, or NULL (no resolving). */
const aip__mpi_comm *aip__mpi_comm_lookup(uint64_t key);
void aip__mpi_comm_forget(MPI_Comm comm);
/* aip__mpi_world_rank() : group rank `r` of `c` (remote group of an
 * intercommunicator when `remote`) as a world rank; AIP_COMM_NO_RANK for
 * MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT, out of range. */
uint32_t aip__mpi_world_rank(const aip__mpi_comm *c, int r, int remote);
const aip__mpi_type *aip__mpi_type_get(MPI_Datatype type);
void aip__mpi_type_forget(MPI_Datatype type);
/* Says once, on stderr and through nothing else, what the collector could
 * not do (a table full, no memory). */
void aip__mpi_warn_once(int *flag, const char *what);

/* --- mpi_record.c ------------------------------------------------------ */
/* aip__mpi_coll_begin() : an op for collective `name` on `comm` with
 * `count` elements of `type` (bytes = count × size), rooted at group rank
 * `root` (-1: none); its start is now and it takes the communicator's next
 * sequence number. */
void aip__mpi_coll_begin(aip_comm_op_info *op, const char *name, MPI_Comm comm,
                         MPI_Datatype type, uint64_t count, int root);
/* aip__mpi_p2p_begin() : a point-to-point op to or from group rank `peer`. */
void aip__mpi_p2p_begin(aip_comm_op_info *op, const char *name, uint8_t kind, MPI_Comm comm,
                        MPI_Datatype type, int count, int peer, int tag);
/* aip__mpi_end() : the op ends now (rc: the PMPI call's result; a failed
 * call is not recorded). */
void aip__mpi_end(aip_comm_op_info *op, int rc);
/* aip__mpi_recv_end() : a receive ends now: bytes, peer and tag from its
 * status (MPI_ANY_SOURCE, MPI_ANY_TAG, a shorter message). */
void aip__mpi_recv_end(aip_comm_op_info *op, int rc, MPI_Comm comm, MPI_Datatype type,
                       const MPI_Status *st);
/* Counts: sum of counts[0..n-1] (negative ones count 0). */
uint64_t aip__mpi_sum(const int *counts, int n);

/* --- mpi_requests.c ---------------------------------------------------- */
/* aip__mpi_pending : how many requests are in flight; waits look nothing
 * up while it is 0. */
extern _Atomic uint32_t aip__mpi_pending;
/* aip__mpi_started() : a non-blocking op began: `op` is recorded when
 * `req` completes (a receive from its status: `comm`, `type`). */
void aip__mpi_started(MPI_Request req, const aip_comm_op_info *op, int rc, MPI_Comm comm,
                      MPI_Datatype type);
/* aip__mpi_completed() : request `req` (its handle before the wait)
 * completed with status `st` (NULL: none), at `end` ticks. */
void aip__mpi_completed(MPI_Request req, const MPI_Status *st, uint64_t end);
/* aip__mpi_dropped() : `req` will never complete visibly (Request_free). */
void aip__mpi_dropped(MPI_Request req);
void aip__mpi_requests_reset(void);

#endif
