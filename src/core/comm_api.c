/*
 * comm_api.c — the communication calls of aiprof_integration.h: what
 * collectors outside libaiprof (libaiprof_mpi.so's PMPI wrappers, the
 * Python package's torch.distributed capture) record through.  Each is the
 * src/core/comm.h call it names; the public constants are the raw format's
 * (checked below), so an op passes through field by field.
 */
#include "aiprof_integration.h"
#include "clock.h"
#include "comm.h"

#include <stdatomic.h>

#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(AIP_COMM_OP_COLLECTIVE, AIP_COMM_COLLECTIVE) &&
                   SAME(AIP_COMM_OP_SEND, AIP_COMM_SEND) && SAME(AIP_COMM_OP_RECV, AIP_COMM_RECV) &&
                   SAME(AIP_COMM_OP_SENDRECV, AIP_COMM_SENDRECV),
               "public comm kinds are the raw format's");
_Static_assert(SAME(AIP_COMM_LIB_OTHER, AIP_COMMLIB_OTHER) && SAME(AIP_COMM_LIB_MPI, AIP_COMMLIB_MPI) &&
                   SAME(AIP_COMM_LIB_GLOO, AIP_COMMLIB_GLOO) &&
                   SAME(AIP_COMM_LIB_NCCL, AIP_COMMLIB_NCCL) &&
                   SAME(AIP_COMM_LIB_HCCL, AIP_COMMLIB_HCCL),
               "public comm libraries are the raw format's");
_Static_assert(AIP_COMM_NO_GROUP == AIP_COMM_NONE && AIP_COMM_NO_RANK == AIP_RAW_NO_RANK,
               "public 'none' values are the raw format's");

int aip_comm_recording(void) { return aip__comm_recording(); }

static _Atomic(void (*)(void)) comm_drain;

void aip_comm_set_drain(void (*drain)(void)) { atomic_store(&comm_drain, drain); }

void aip__comm_trace_stopping(void)
{
    void (*drain)(void) = atomic_load(&comm_drain);
    if (drain)
        drain();
}

uint64_t aip_comm_ticks(void) { return aip__ticks(); }

uint64_t aip_comm_ticks_from_ns(uint64_t monotonic_ns)
{
    return aip__clock_ns_to_ticks(monotonic_ns);
}

uint32_t aip_comm_group(uint64_t key, const char *name, uint32_t my_rank, uint32_t n_ranks,
                        const uint32_t *ranks)
{
    return aip__comm_group(key, name, my_rank, n_ranks, ranks);
}

void aip_comm_group_forget(uint64_t key) { aip__comm_group_forget(key); }

uint64_t aip_comm_next_seq(uint32_t group) { return aip__comm_next_seq(group); }

void aip_comm_op(const aip_comm_op_info *op)
{
    if (!op)
        return;
    aip__comm_op_info o = {.name = op->name, .start = op->start, .end = op->end,
                           .group = op->group, .peer = op->peer, .root = op->root,
                           .bytes = op->bytes, .count = op->count, .seq = op->seq,
                           .dtype = op->dtype, .tag = op->tag, .kind = op->kind,
                           .lib = op->lib, .nonblocking = op->nonblocking};
    aip__comm_op(&o);
}
