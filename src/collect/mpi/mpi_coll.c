/*
 * mpi_coll.c — the collective operations through PMPI, blocking and
 * non-blocking (the I* forms end at the wait or test that completes them,
 * mpi_requests.c).
 *
 * What one record says of a collective (docs/MPI.md has the table):
 * `bytes` and `count` are this rank's part — the vector reduced (Allreduce,
 * Reduce, Scan, Exscan; Reduce_scatter: the whole input, the sum of the
 * counts), the buffer broadcast, what this rank contributes to a gather
 * (its send buffer; MPI_IN_PLACE: its block of the receive buffer), what
 * it receives of a scatter (MPI_IN_PLACE at the root: its block of the
 * send buffer), everything it sends in an all-to-all (the sum of the
 * counts of the v and w forms); `dtype` the type on that side; `root` the
 * root's world rank; `seq` the communicator's next collective number,
 * taken at the call, so the n-th collective on a communicator has the same
 * number on every rank (MPI requires the same order of collective calls,
 * non-blocking ones included, on every member).
 */
#include "mpi_int.h"

#include <stdlib.h>

/* A collective: recorded from its call to its return. */
#define RUN(name, call, comm, type, count, root)                                 \
    do {                                                                         \
        if (!aip__mpi_on())                                                      \
            return P##call;                                                      \
        aip_comm_op_info op_;                                                    \
        aip__mpi_coll_begin(&op_, name, comm, type, count, root);                \
        int rc_ = P##call;                                                       \
        aip__mpi_end(&op_, rc_);                                                 \
        return rc_;                                                              \
    } while (0)

/* A non-blocking collective: recorded from its call to its completion. */
#define START(name, call, comm, type, count, root, req)                         \
    do {                                                                         \
        if (!aip__mpi_on())                                                      \
            return P##call;                                                      \
        aip_comm_op_info op_;                                                    \
        aip__mpi_coll_begin(&op_, name, comm, type, count, root);                \
        op_.nonblocking = 1;                                                     \
        int rc_ = P##call;                                                       \
        aip__mpi_started(*(req), &op_, rc_, comm, type);                         \
        return rc_;                                                              \
    } while (0)

static uint64_t pos(int n) { return n > 0 ? (uint64_t)n : 0; }

static int comm_size(MPI_Comm comm)
{
    const aip__mpi_comm *c = aip__mpi_comm_get(comm);
    return c ? (c->inter ? c->remote_size : c->size) : 0;
}

static int comm_rank(MPI_Comm comm)
{
    const aip__mpi_comm *c = aip__mpi_comm_get(comm);
    return c ? c->rank : 0;
}

/* The side a gather's record describes: this rank's contribution. */
static MPI_Datatype gather_type(const void *sb, MPI_Datatype st, MPI_Datatype rt)
{
    return sb == MPI_IN_PLACE ? rt : st;
}

static uint64_t gather_count(const void *sb, int sc, int rc) { return pos(sb == MPI_IN_PLACE ? rc : sc); }

static uint64_t gatherv_count(const void *sb, int sc, const int *rcs, MPI_Comm comm)
{
    if (sb != MPI_IN_PLACE)
        return pos(sc);
    int r = comm_rank(comm);
    return rcs ? pos(rcs[r]) : 0;
}

/* A scatter's: what this rank receives. */
static MPI_Datatype scatter_type(const void *rb, MPI_Datatype st, MPI_Datatype rt)
{
    return rb == MPI_IN_PLACE ? st : rt;
}

static uint64_t scatterv_count(const void *rb, const int *scs, int rc, MPI_Comm comm)
{
    if (rb != MPI_IN_PLACE)
        return pos(rc);
    return scs ? pos(scs[comm_rank(comm)]) : 0;
}

/* An all-to-all's: everything this rank sends. */
static uint64_t alltoallw_bytes(const void *sb, const int *scs, const MPI_Datatype *sts,
                                const int *rcs, const MPI_Datatype *rts, MPI_Comm comm,
                                MPI_Datatype *first)
{
    const int *cs = sb == MPI_IN_PLACE ? rcs : scs;
    const MPI_Datatype *ts = sb == MPI_IN_PLACE ? rts : sts;
    int n = comm_size(comm);
    uint64_t bytes = 0;
    *first = n > 0 && ts ? ts[0] : MPI_DATATYPE_NULL;
    for (int i = 0; cs && ts && i < n; i++) {
        const aip__mpi_type *t = aip__mpi_type_get(ts[i]);
        if (t && t->size > 0)
            bytes += pos(cs[i]) * (uint64_t)t->size;
        if (ts[i] != *first)
            *first = MPI_DATATYPE_NULL; /* mixed types: no one name */
    }
    return bytes;
}

/* Alltoallw's record: bytes summed over the types, count unknown when the
 * types differ. */
static void run_alltoallw(aip_comm_op_info *op, const char *name, const void *sb, const int *scs,
                         const MPI_Datatype *sts, const int *rcs, const MPI_Datatype *rts,
                         MPI_Comm comm)
{
    MPI_Datatype first;
    uint64_t bytes = alltoallw_bytes(sb, scs, sts, rcs, rts, comm, &first);
    const int *cs = sb == MPI_IN_PLACE ? rcs : scs;
    aip__mpi_coll_begin(op, name, comm, first,
                        first != MPI_DATATYPE_NULL ? aip__mpi_sum(cs, comm_size(comm)) : 0, -1);
    op->bytes = bytes;
}

/* ---- blocking ------------------------------------------------------------ */

AIP_MPI_WRAP int MPI_Barrier(MPI_Comm comm)
{
    RUN("MPI_Barrier", MPI_Barrier(comm), comm, MPI_DATATYPE_NULL, 0, -1);
}

AIP_MPI_WRAP int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    RUN("MPI_Bcast", MPI_Bcast(buf, count, type, root, comm), comm, type, pos(count), root);
}

AIP_MPI_WRAP int MPI_Allreduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                               MPI_Comm comm)
{
    RUN("MPI_Allreduce", MPI_Allreduce(sb, rb, count, type, o, comm), comm, type, pos(count), -1);
}

AIP_MPI_WRAP int MPI_Reduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                            int root, MPI_Comm comm)
{
    RUN("MPI_Reduce", MPI_Reduce(sb, rb, count, type, o, root, comm), comm, type, pos(count),
        root);
}

AIP_MPI_WRAP int MPI_Scan(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                          MPI_Comm comm)
{
    RUN("MPI_Scan", MPI_Scan(sb, rb, count, type, o, comm), comm, type, pos(count), -1);
}

AIP_MPI_WRAP int MPI_Exscan(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                            MPI_Comm comm)
{
    RUN("MPI_Exscan", MPI_Exscan(sb, rb, count, type, o, comm), comm, type, pos(count), -1);
}

AIP_MPI_WRAP int MPI_Reduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype type,
                                    MPI_Op o, MPI_Comm comm)
{
    RUN("MPI_Reduce_scatter", MPI_Reduce_scatter(sb, rb, rcs, type, o, comm), comm, type,
        aip__mpi_sum(rcs, comm_size(comm)), -1);
}

AIP_MPI_WRAP int MPI_Reduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype type,
                                          MPI_Op o, MPI_Comm comm)
{
    RUN("MPI_Reduce_scatter_block", MPI_Reduce_scatter_block(sb, rb, rc, type, o, comm), comm,
        type, pos(rc) * (uint64_t)comm_size(comm), -1);
}

AIP_MPI_WRAP int MPI_Allgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                               MPI_Datatype rt, MPI_Comm comm)
{
    RUN("MPI_Allgather", MPI_Allgather(sb, sc, st, rb, rc, rt, comm), comm,
        gather_type(sb, st, rt), gather_count(sb, sc, rc), -1);
}

AIP_MPI_WRAP int MPI_Allgatherv(const void *sb, int sc, MPI_Datatype st, void *rb,
                                const int rcs[], const int displs[], MPI_Datatype rt,
                                MPI_Comm comm)
{
    RUN("MPI_Allgatherv", MPI_Allgatherv(sb, sc, st, rb, rcs, displs, rt, comm), comm,
        gather_type(sb, st, rt), gatherv_count(sb, sc, rcs, comm), -1);
}

AIP_MPI_WRAP int MPI_Gather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                            MPI_Datatype rt, int root, MPI_Comm comm)
{
    RUN("MPI_Gather", MPI_Gather(sb, sc, st, rb, rc, rt, root, comm), comm,
        gather_type(sb, st, rt), gather_count(sb, sc, rc), root);
}

AIP_MPI_WRAP int MPI_Gatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                             const int displs[], MPI_Datatype rt, int root, MPI_Comm comm)
{
    RUN("MPI_Gatherv", MPI_Gatherv(sb, sc, st, rb, rcs, displs, rt, root, comm), comm,
        gather_type(sb, st, rt), gatherv_count(sb, sc, rcs, comm), root);
}

AIP_MPI_WRAP int MPI_Scatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                             MPI_Datatype rt, int root, MPI_Comm comm)
{
    RUN("MPI_Scatter", MPI_Scatter(sb, sc, st, rb, rc, rt, root, comm), comm,
        scatter_type(rb, st, rt), pos(rb == MPI_IN_PLACE ? sc : rc), root);
}

AIP_MPI_WRAP int MPI_Scatterv(const void *sb, const int scs[], const int displs[],
                              MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
                              MPI_Comm comm)
{
    RUN("MPI_Scatterv", MPI_Scatterv(sb, scs, displs, st, rb, rc, rt, root, comm), comm,
        scatter_type(rb, st, rt), scatterv_count(rb, scs, rc, comm), root);
}

AIP_MPI_WRAP int MPI_Alltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                              MPI_Datatype rt, MPI_Comm comm)
{
    RUN("MPI_Alltoall", MPI_Alltoall(sb, sc, st, rb, rc, rt, comm), comm,
        gather_type(sb, st, rt), gather_count(sb, sc, rc) * (uint64_t)comm_size(comm), -1);
}

AIP_MPI_WRAP int MPI_Alltoallv(const void *sb, const int scs[], const int sds[], MPI_Datatype st,
                               void *rb, const int rcs[], const int rds[], MPI_Datatype rt,
                               MPI_Comm comm)
{
    RUN("MPI_Alltoallv", MPI_Alltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm), comm,
        gather_type(sb, st, rt), aip__mpi_sum(sb == MPI_IN_PLACE ? rcs : scs, comm_size(comm)),
        -1);
}

AIP_MPI_WRAP int MPI_Alltoallw(const void *sb, const int scs[], const int sds[],
                               const MPI_Datatype sts[], void *rb, const int rcs[],
                               const int rds[], const MPI_Datatype rts[], MPI_Comm comm)
{
    if (!aip__mpi_on())
        return PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
    aip_comm_op_info op;
    run_alltoallw(&op, "MPI_Alltoallw", sb, scs, sts, rcs, rts, comm);
    int rc = PMPI_Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm);
    aip__mpi_end(&op, rc);
    return rc;
}

/* ---- non-blocking ---------------------------------------------------------- */

AIP_MPI_WRAP int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Ibarrier", MPI_Ibarrier(comm, req), comm, MPI_DATATYPE_NULL, 0, -1, req);
}

AIP_MPI_WRAP int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                            MPI_Request *req)
{
    START("MPI_Ibcast", MPI_Ibcast(buf, count, type, root, comm, req), comm, type, pos(count),
          root, req);
}

AIP_MPI_WRAP int MPI_Iallreduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                                MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iallreduce", MPI_Iallreduce(sb, rb, count, type, o, comm, req), comm, type,
          pos(count), -1, req);
}

AIP_MPI_WRAP int MPI_Ireduce(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                             int root, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Ireduce", MPI_Ireduce(sb, rb, count, type, o, root, comm, req), comm, type,
          pos(count), root, req);
}

AIP_MPI_WRAP int MPI_Iscan(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                           MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iscan", MPI_Iscan(sb, rb, count, type, o, comm, req), comm, type, pos(count), -1,
          req);
}

AIP_MPI_WRAP int MPI_Iexscan(const void *sb, void *rb, int count, MPI_Datatype type, MPI_Op o,
                             MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iexscan", MPI_Iexscan(sb, rb, count, type, o, comm, req), comm, type, pos(count),
          -1, req);
}

AIP_MPI_WRAP int MPI_Ireduce_scatter(const void *sb, void *rb, const int rcs[], MPI_Datatype type,
                                     MPI_Op o, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Ireduce_scatter", MPI_Ireduce_scatter(sb, rb, rcs, type, o, comm, req), comm,
          type, aip__mpi_sum(rcs, comm_size(comm)), -1, req);
}

AIP_MPI_WRAP int MPI_Ireduce_scatter_block(const void *sb, void *rb, int rc, MPI_Datatype type,
                                           MPI_Op o, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Ireduce_scatter_block", MPI_Ireduce_scatter_block(sb, rb, rc, type, o, comm, req),
          comm, type, pos(rc) * (uint64_t)comm_size(comm), -1, req);
}

AIP_MPI_WRAP int MPI_Iallgather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                                MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iallgather", MPI_Iallgather(sb, sc, st, rb, rc, rt, comm, req), comm,
          gather_type(sb, st, rt), gather_count(sb, sc, rc), -1, req);
}

AIP_MPI_WRAP int MPI_Iallgatherv(const void *sb, int sc, MPI_Datatype st, void *rb,
                                 const int rcs[], const int displs[], MPI_Datatype rt,
                                 MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iallgatherv", MPI_Iallgatherv(sb, sc, st, rb, rcs, displs, rt, comm, req), comm,
          gather_type(sb, st, rt), gatherv_count(sb, sc, rcs, comm), -1, req);
}

AIP_MPI_WRAP int MPI_Igather(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                             MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Igather", MPI_Igather(sb, sc, st, rb, rc, rt, root, comm, req), comm,
          gather_type(sb, st, rt), gather_count(sb, sc, rc), root, req);
}

AIP_MPI_WRAP int MPI_Igatherv(const void *sb, int sc, MPI_Datatype st, void *rb, const int rcs[],
                              const int displs[], MPI_Datatype rt, int root, MPI_Comm comm,
                              MPI_Request *req)
{
    START("MPI_Igatherv", MPI_Igatherv(sb, sc, st, rb, rcs, displs, rt, root, comm, req), comm,
          gather_type(sb, st, rt), gatherv_count(sb, sc, rcs, comm), root, req);
}

AIP_MPI_WRAP int MPI_Iscatter(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                              MPI_Datatype rt, int root, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iscatter", MPI_Iscatter(sb, sc, st, rb, rc, rt, root, comm, req), comm,
          scatter_type(rb, st, rt), pos(rb == MPI_IN_PLACE ? sc : rc), root, req);
}

AIP_MPI_WRAP int MPI_Iscatterv(const void *sb, const int scs[], const int displs[],
                               MPI_Datatype st, void *rb, int rc, MPI_Datatype rt, int root,
                               MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Iscatterv", MPI_Iscatterv(sb, scs, displs, st, rb, rc, rt, root, comm, req), comm,
          scatter_type(rb, st, rt), scatterv_count(rb, scs, rc, comm), root, req);
}

AIP_MPI_WRAP int MPI_Ialltoall(const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                               MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Ialltoall", MPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, req), comm,
          gather_type(sb, st, rt), gather_count(sb, sc, rc) * (uint64_t)comm_size(comm), -1,
          req);
}

AIP_MPI_WRAP int MPI_Ialltoallv(const void *sb, const int scs[], const int sds[],
                                MPI_Datatype st, void *rb, const int rcs[], const int rds[],
                                MPI_Datatype rt, MPI_Comm comm, MPI_Request *req)
{
    START("MPI_Ialltoallv", MPI_Ialltoallv(sb, scs, sds, st, rb, rcs, rds, rt, comm, req), comm,
          gather_type(sb, st, rt), aip__mpi_sum(sb == MPI_IN_PLACE ? rcs : scs, comm_size(comm)),
          -1, req);
}

AIP_MPI_WRAP int MPI_Ialltoallw(const void *sb, const int scs[], const int sds[],
                                const MPI_Datatype sts[], void *rb, const int rcs[],
                                const int rds[], const MPI_Datatype rts[], MPI_Comm comm,
                                MPI_Request *req)
{
    if (!aip__mpi_on())
        return PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req);
    aip_comm_op_info op;
    run_alltoallw(&op, "MPI_Ialltoallw", sb, scs, sts, rcs, rts, comm);
    op.nonblocking = 1;
    int rc = PMPI_Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts, comm, req);
    aip__mpi_started(*req, &op, rc, comm, MPI_DATATYPE_NULL);
    return rc;
}
