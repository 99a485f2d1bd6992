/*
 * comm.h — what a communication collector (src/collect/mpi through PMPI,
 * the Python package for torch.distributed) calls to record
 * communication: the groups (communicators, process groups) with their
 * ranks, and each collective or point-to-point operation.
 *
 * A group is registered once per process under the collector's key for it
 * (an MPI_Comm handle, a process group's id); its description record
 * (COMM_GROUP, with the global ranks) is emitted into each trace before
 * the first operation naming it.  Operations carry the group's per-group
 * sequence number, which is what matches one collective across ranks in
 * cluster analysis.
 *
 * Same rules as device.h: cheap and safe when nothing records, thread-safe,
 * never blocking, never aborting; records are dropped and counted like any
 * other event.
 */
#ifndef AIP_COMM_H
#define AIP_COMM_H

#include "aiprof.h"
#include "raw_format.h"

#include <stdint.h>

#define AIP_COMM_NONE UINT32_MAX
#define AIP_COMM_MAX_LISTED 16376 /* ranks one COMM_GROUP record can list */

/* aip__comm_recording() : a trace is open and records communication (CPU
 * activity).  One relaxed load. */
int aip__comm_recording(void);

/* aip__comm_trace_stopping() : a trace stops (still recording): the
 * collector's drain (aip_comm_set_drain) waits for completed operations
 * whose records are still owed. */
void aip__comm_trace_stopping(void);

/* aip__comm_group() : register a group once per process: its name, this
 * process's rank in it, and its members' global ranks (`ranks[i]` = global
 * rank of group rank i; NULL if unknown).  Same key: same id (the rest is
 * ignored).  @return its id, or AIP_COMM_NONE (no memory, table full:
 * logged once). */
uint32_t aip__comm_group(uint64_t key, const char *name, uint32_t my_rank, uint32_t n_ranks,
                         const uint32_t *ranks);
/* aip__comm_group_forget() : the key's group was freed; the key may name
 * another group later. */
void aip__comm_group_forget(uint64_t key);
/* aip__comm_next_seq() : the group's next collective sequence number
 * (from 0); 0 for an unknown group. */
uint64_t aip__comm_next_seq(uint32_t group);

typedef struct aip__comm_op_info {
    const char *name;           /* "allreduce", "MPI_Allreduce", "send" */
    uint64_t start, end;        /* ticks (aip__ticks) */
    uint32_t group;             /* id from aip__comm_group, AIP_COMM_NONE = none */
    uint32_t peer, root;        /* global ranks, AIP_RAW_NO_RANK = none */
    uint64_t bytes, count, seq;
    const char *dtype;          /* element type ("float32", "MPI_DOUBLE"), NULL = unknown */
    int32_t tag;                /* -1 = none */
    uint8_t kind;               /* enum aip__comm_kind */
    uint8_t lib;                /* enum aip__comm_lib */
    uint8_t nonblocking;
} aip__comm_op_info;
/* aip__comm_op() : one operation, on the calling thread. */
void aip__comm_op(const aip__comm_op_info *op);

#endif
