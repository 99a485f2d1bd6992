/*
 * mpi_record.c — one MPI call into one aip_comm_op_info: the communicator's
 * group and world ranks, the datatype's size and name, the collective's
 * sequence number, the times.  The wrappers (mpi_coll.c, mpi_p2p.c) call
 * these only while a trace records communication.
 */
#include "mpi_int.h"

#include <string.h>

uint64_t aip__mpi_sum(const int *counts, int n)
{
    uint64_t s = 0;
    for (int i = 0; counts && i < n; i++)
        s += counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return s;
}

static void set_type(aip_comm_op_info *op, MPI_Datatype type, uint64_t count)
{
    const aip__mpi_type *t = type != MPI_DATATYPE_NULL ? aip__mpi_type_get(type) : NULL;
    op->count = count;
    op->bytes = t && t->size > 0 ? count * (uint64_t)t->size : 0;
    op->dtype = t ? t->name : NULL;
}

void aip__mpi_coll_begin(aip_comm_op_info *op, const char *name, MPI_Comm comm,
                         MPI_Datatype type, uint64_t count, int root)
{
    memset(op, 0, sizeof *op);
    op->name = name;
    op->kind = AIP_COMM_OP_COLLECTIVE;
    op->lib = AIP_COMM_LIB_MPI;
    op->tag = -1;
    op->peer = AIP_COMM_NO_RANK;
    const aip__mpi_comm *c = aip__mpi_comm_get(comm);
    op->group = c ? c->group : AIP_COMM_NO_GROUP;
    /* An intercommunicator's root is in the remote group (MPI_ROOT and
     * MPI_PROC_NULL name none). */
    op->root = root >= 0 ? aip__mpi_world_rank(c, root, 1) : AIP_COMM_NO_RANK;
    set_type(op, type, count);
    op->seq = op->group != AIP_COMM_NO_GROUP ? aip_comm_next_seq(op->group) : 0;
    op->start = aip_comm_ticks();
}

void aip__mpi_p2p_begin(aip_comm_op_info *op, const char *name, uint8_t kind, MPI_Comm comm,
                        MPI_Datatype type, int count, int peer, int tag)
{
    memset(op, 0, sizeof *op);
    op->name = name;
    op->kind = kind;
    op->lib = AIP_COMM_LIB_MPI;
    op->root = AIP_COMM_NO_RANK;
    const aip__mpi_comm *c = aip__mpi_comm_get(comm);
    op->group = c ? c->group : AIP_COMM_NO_GROUP;
    op->peer = aip__mpi_world_rank(c, peer, 1);
    op->tag = tag >= 0 ? tag : -1;
    /* MPI_PROC_NULL: the call completes at once and moves nothing. */
    set_type(op, type, peer == MPI_PROC_NULL ? 0 : (uint64_t)(count > 0 ? count : 0));
    op->start = aip_comm_ticks();
}

void aip__mpi_end(aip_comm_op_info *op, int rc)
{
    op->end = aip_comm_ticks();
    if (rc == MPI_SUCCESS)
        aip_comm_op(op);
}

void aip__mpi_recv_end(aip_comm_op_info *op, int rc, MPI_Comm comm, MPI_Datatype type,
                       const MPI_Status *st)
{
    op->end = aip_comm_ticks();
    if (rc != MPI_SUCCESS)
        return;
    if (st && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != MPI_PROC_NULL) {
        int n = 0;
        const aip__mpi_comm *c = aip__mpi_comm_lookup(AIP_MPI_KEY(comm));
        if (!c)
            c = aip__mpi_comm_get(comm);
        op->peer = aip__mpi_world_rank(c, st->MPI_SOURCE, 1);
        op->tag = st->MPI_TAG >= 0 ? st->MPI_TAG : -1;
        if (PMPI_Get_count(st, type, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
            set_type(op, type, (uint64_t)n);
    }
    aip_comm_op(op);
}
