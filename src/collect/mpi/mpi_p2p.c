/*
 * mpi_p2p.c — point-to-point operations through PMPI, and the waits and
 * tests that complete non-blocking ones.
 *
 * A send is recorded with its destination's world rank, tag and size; a
 * receive with what its status says arrived (source, tag, size: an
 * MPI_ANY_SOURCE receive names the rank that sent).  MPI_Sendrecv is one
 * record of kind send-receive: its destination, send tag and the bytes it
 * sent (what it receives is its source's send).  Non-blocking ones are
 * left in mpi_requests.c's table and recorded by the wait or test that
 * completes them; the wrappers of those look at the table only while
 * something is in flight.  A status the program ignores
 * (MPI_STATUS[ES]_IGNORE) is replaced by one of ours when a receive may
 * need it.
 */
#include "mpi_int.h"

#include <stdlib.h>
#include <string.h>

#define SEND(name, call, comm, type, count, peer, tag)                               \
    do {                                                                             \
        if (!aip__mpi_on())                                                          \
            return P##call;                                                          \
        aip_comm_op_info op_;                                                        \
        aip__mpi_p2p_begin(&op_, name, AIP_COMM_OP_SEND, comm, type, count, peer, tag); \
        int rc_ = P##call;                                                           \
        aip__mpi_end(&op_, rc_);                                                     \
        return rc_;                                                                  \
    } while (0)

#define ISEND(name, call, comm, type, count, peer, tag, req)                         \
    do {                                                                             \
        if (!aip__mpi_on())                                                          \
            return P##call;                                                          \
        aip_comm_op_info op_;                                                        \
        aip__mpi_p2p_begin(&op_, name, AIP_COMM_OP_SEND, comm, type, count, peer, tag); \
        op_.nonblocking = 1;                                                         \
        int rc_ = P##call;                                                           \
        aip__mpi_started(*(req), &op_, rc_, comm, type);                             \
        return rc_;                                                                  \
    } while (0)

AIP_MPI_WRAP int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm)
{
    SEND("MPI_Send", MPI_Send(buf, count, type, dest, tag, comm), comm, type, count, dest, tag);
}

AIP_MPI_WRAP int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm)
{
    SEND("MPI_Ssend", MPI_Ssend(buf, count, type, dest, tag, comm), comm, type, count, dest, tag);
}

AIP_MPI_WRAP int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm)
{
    SEND("MPI_Bsend", MPI_Bsend(buf, count, type, dest, tag, comm), comm, type, count, dest, tag);
}

AIP_MPI_WRAP int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm)
{
    SEND("MPI_Rsend", MPI_Rsend(buf, count, type, dest, tag, comm), comm, type, count, dest, tag);
}

AIP_MPI_WRAP int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request *req)
{
    ISEND("MPI_Isend", MPI_Isend(buf, count, type, dest, tag, comm, req), comm, type, count, dest,
          tag, req);
}

AIP_MPI_WRAP int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, MPI_Request *req)
{
    ISEND("MPI_Issend", MPI_Issend(buf, count, type, dest, tag, comm, req), comm, type, count,
          dest, tag, req);
}

AIP_MPI_WRAP int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, MPI_Request *req)
{
    ISEND("MPI_Ibsend", MPI_Ibsend(buf, count, type, dest, tag, comm, req), comm, type, count,
          dest, tag, req);
}

AIP_MPI_WRAP int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm, MPI_Request *req)
{
    ISEND("MPI_Irsend", MPI_Irsend(buf, count, type, dest, tag, comm, req), comm, type, count,
          dest, tag, req);
}

AIP_MPI_WRAP int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                          MPI_Comm comm, MPI_Status *status)
{
    if (!aip__mpi_on())
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    aip_comm_op_info op;
    aip__mpi_p2p_begin(&op, "MPI_Recv", AIP_COMM_OP_RECV, comm, type, count, source, tag);
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
    aip__mpi_recv_end(&op, rc, comm, type, st);
    return rc;
}

AIP_MPI_WRAP int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                           MPI_Comm comm, MPI_Request *req)
{
    if (!aip__mpi_on())
        return PMPI_Irecv(buf, count, type, source, tag, comm, req);
    aip_comm_op_info op;
    aip__mpi_p2p_begin(&op, "MPI_Irecv", AIP_COMM_OP_RECV, comm, type, count, source, tag);
    op.nonblocking = 1;
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    aip__mpi_started(*req, &op, rc, comm, type);
    return rc;
}

AIP_MPI_WRAP int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag,
                              void *rb, int rc, MPI_Datatype rt, int source, int rtag,
                              MPI_Comm comm, MPI_Status *status)
{
    if (!aip__mpi_on())
        return PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc, rt, source, rtag, comm, status);
    aip_comm_op_info op;
    aip__mpi_p2p_begin(&op, "MPI_Sendrecv", AIP_COMM_OP_SENDRECV, comm, st, sc, dest, stag);
    int r = PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc, rt, source, rtag, comm, status);
    aip__mpi_end(&op, r);
    return r;
}

AIP_MPI_WRAP int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
                                      int stag, int source, int rtag, MPI_Comm comm,
                                      MPI_Status *status)
{
    if (!aip__mpi_on())
        return PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
    aip_comm_op_info op;
    aip__mpi_p2p_begin(&op, "MPI_Sendrecv_replace", AIP_COMM_OP_SENDRECV, comm, type, count,
                       dest, stag);
    int r = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, status);
    aip__mpi_end(&op, r);
    return r;
}

/* ---- completion ------------------------------------------------------------- */

static int in_flight(void)
{
    return __atomic_load_n(&aip__mpi_pending, __ATOMIC_RELAXED) != 0;
}

AIP_MPI_WRAP int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    if (__builtin_expect(!in_flight(), 1))
        return PMPI_Wait(req, status);
    MPI_Request r = *req;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Wait(req, st);
    if (rc == MPI_SUCCESS)
        aip__mpi_completed(r, st, aip_comm_ticks());
    return rc;
}

AIP_MPI_WRAP int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    if (__builtin_expect(!in_flight(), 1))
        return PMPI_Test(req, flag, status);
    MPI_Request r = *req;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int rc = PMPI_Test(req, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        aip__mpi_completed(r, st, aip_comm_ticks());
    return rc;
}

/* The handles and statuses of a many-request wait or test: the program's
 * handles become MPI_REQUEST_NULL as they complete, so they are copied
 * first; small calls stay on the stack. */
typedef struct many {
    MPI_Request small_req[32];
    MPI_Status small_st[32];
    MPI_Request *req;
    MPI_Status *st;
    int own_st;
} many;

static int many_begin(many *m, int n, const MPI_Request *reqs, MPI_Status *statuses)
{
    m->req = m->small_req;
    m->st = m->small_st;
    m->own_st = statuses == MPI_STATUSES_IGNORE;
    if (n > 32) {
        m->req = malloc((size_t)n * sizeof *m->req);
        m->st = m->own_st ? malloc((size_t)n * sizeof *m->st) : NULL;
        if (!m->req || (m->own_st && !m->st)) {
            free(m->req);
            free(m->st);
            return -1; /* not recorded: the call goes on untouched */
        }
    }
    if (!m->own_st)
        m->st = statuses;
    if (n > 0)
        memcpy(m->req, reqs, (size_t)n * sizeof *m->req);
    return 0;
}

static void many_end(many *m)
{
    if (m->req != m->small_req)
        free(m->req);
    if (m->own_st && m->st != m->small_st)
        free(m->st);
}

/* Completed request i with its status, unless MPI_ERR_IN_STATUS says it failed or is
 * still pending. */
static void complete_at(many *m, int i, int status_i, int rc, uint64_t end)
{
    if (rc == MPI_ERR_IN_STATUS && m->st[status_i].MPI_ERROR != MPI_SUCCESS)
        return;
    aip__mpi_completed(m->req[i], &m->st[status_i], end);
}

AIP_MPI_WRAP int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    many m;
    if (__builtin_expect(!in_flight(), 1) || many_begin(&m, n, reqs, statuses))
        return PMPI_Waitall(n, reqs, statuses);
    int rc = PMPI_Waitall(n, reqs, m.st);
    uint64_t end = aip_comm_ticks();
    if (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)
        for (int i = 0; i < n; i++)
            complete_at(&m, i, i, rc, end);
    many_end(&m);
    return rc;
}

AIP_MPI_WRAP int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    many m;
    if (__builtin_expect(!in_flight(), 1) || many_begin(&m, n, reqs, statuses))
        return PMPI_Testall(n, reqs, flag, statuses);
    int rc = PMPI_Testall(n, reqs, flag, m.st);
    uint64_t end = aip_comm_ticks();
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *flag)
        for (int i = 0; i < n; i++)
            complete_at(&m, i, i, rc, end);
    many_end(&m);
    return rc;
}

AIP_MPI_WRAP int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    many m;
    if (__builtin_expect(!in_flight(), 1) || many_begin(&m, n, reqs, MPI_STATUSES_IGNORE))
        return PMPI_Waitany(n, reqs, index, status);
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &m.st[0] : status;
    int rc = PMPI_Waitany(n, reqs, index, st);
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < n)
        aip__mpi_completed(m.req[*index], st, aip_comm_ticks());
    many_end(&m);
    return rc;
}

AIP_MPI_WRAP int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag,
                             MPI_Status *status)
{
    many m;
    if (__builtin_expect(!in_flight(), 1) || many_begin(&m, n, reqs, MPI_STATUSES_IGNORE))
        return PMPI_Testany(n, reqs, index, flag, status);
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &m.st[0] : status;
    int rc = PMPI_Testany(n, reqs, index, flag, st);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < n)
        aip__mpi_completed(m.req[*index], st, aip_comm_ticks());
    many_end(&m);
    return rc;
}

/* MPI_Waitsome and MPI_Testsome: the same shape, only the call differs. */
typedef int (*some_fn)(int, MPI_Request[], int *, int[], MPI_Status[]);

static int some(some_fn call, int n, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[])
{
    many m;
    if (__builtin_expect(!in_flight(), 1) || many_begin(&m, n, reqs, statuses))
        return call(n, reqs, outcount, indices, statuses);
    int rc = call(n, reqs, outcount, indices, m.st);
    uint64_t end = aip_comm_ticks();
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount != MPI_UNDEFINED)
        for (int k = 0; k < *outcount; k++)
            if (indices[k] >= 0 && indices[k] < n)
                complete_at(&m, indices[k], k, rc, end);
    many_end(&m);
    return rc;
}

AIP_MPI_WRAP int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                              MPI_Status statuses[])
{
    return some(PMPI_Waitsome, n, reqs, outcount, indices, statuses);
}

AIP_MPI_WRAP int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                              MPI_Status statuses[])
{
    return some(PMPI_Testsome, n, reqs, outcount, indices, statuses);
}

AIP_MPI_WRAP int MPI_Request_free(MPI_Request *req)
{
    if (__builtin_expect(in_flight(), 0) && req)
        aip__mpi_dropped(*req); /* it completes where nobody sees it */
    return PMPI_Request_free(req);
}
