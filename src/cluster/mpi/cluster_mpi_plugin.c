/*
 * cluster_mpi_plugin.c — libaiprof_cluster_mpi.so: the MPI side of
 * `mpirun -np K aiprof cluster --mpi DIR` (cluster_mpi.h says why it is a
 * library of its own, loaded by libaiprof only for --mpi).  It knows
 * nothing of aiprof's data: it moves bytes — each process's packed share of
 * the rank directories to process 0, and the outcome back to all.
 * MPI_COMM_WORLD with MPI_ERRORS_RETURN, so that a failure is a message,
 * not an abort.  Every wait is a test and a short sleep, not MPI's busy
 * poll: process 0 waits for the others' shares and the others wait for
 * process 0's cross-rank pass, and on a machine with as many processes as
 * CPUs (mpirun --oversubscribe, other work) a spinning waiter takes the
 * CPU from the process it waits for.
 */
#include "cluster_mpi.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PIECE (1 << 30) /* an MPI count is an int: larger messages go in pieces */
#define TAG 0x41495050  /* "AIPP" */

static int initialised_here;

static int fail(int rc, const char *what, char *err, size_t cap)
{
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    snprintf(err, cap, "%s: %s", what, text);
    return -1;
}

static int init(int *me, int *size, char *err, size_t cap)
{
    int flag = 0, rc = MPI_Initialized(&flag);
    if (rc == MPI_SUCCESS && !flag) {
        rc = MPI_Init(NULL, NULL);
        initialised_here = rc == MPI_SUCCESS;
    }
    if (rc != MPI_SUCCESS)
        return fail(rc, "MPI_Init", err, cap);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((rc = MPI_Comm_rank(MPI_COMM_WORLD, me)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS)
        return fail(rc, "MPI_Comm_rank", err, cap);
    return 0;
}

/* Complete `req`, sleeping 0.2 ms between tests. */
static int wait_for(MPI_Request *req, MPI_Status *st)
{
    for (;;) {
        int done = 0, rc = MPI_Test(req, &done, st);
        if (rc != MPI_SUCCESS || done)
            return rc;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

static int send_to(int to, const void *buf, int n, MPI_Datatype type)
{
    MPI_Request req;
    int rc = MPI_Isend(buf, n, type, to, TAG, MPI_COMM_WORLD, &req);
    return rc == MPI_SUCCESS ? wait_for(&req, MPI_STATUS_IGNORE) : rc;
}

static int recv_from(int from, void *buf, int n, MPI_Datatype type)
{
    MPI_Request req;
    int rc = MPI_Irecv(buf, n, type, from, TAG, MPI_COMM_WORLD, &req);
    return rc == MPI_SUCCESS ? wait_for(&req, MPI_STATUS_IGNORE) : rc;
}

static int send_bytes(const void *buf, uint64_t len, char *err, size_t cap)
{
    int rc = send_to(0, &len, 1, MPI_UINT64_T);
    for (uint64_t at = 0; rc == MPI_SUCCESS && at < len; at += PIECE) {
        uint64_t n = len - at < PIECE ? len - at : PIECE;
        rc = send_to(0, (const char *)buf + at, (int)n, MPI_BYTE);
    }
    return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Send to process 0", err, cap);
}

static int recv_bytes(int from, void **buf, uint64_t *len, char *err, size_t cap)
{
    *buf = NULL;
    int rc = recv_from(from, len, 1, MPI_UINT64_T);
    if (rc != MPI_SUCCESS)
        return fail(rc, "MPI_Recv", err, cap);
    char *b = malloc(*len ? *len : 1);
    /* without memory, the pieces are still taken (into a small buffer, cut
     * short: MPI_ERR_TRUNCATE is expected), so that the sender goes on */
    char sink[64];
    for (uint64_t at = 0; (rc == MPI_SUCCESS || !b) && at < *len; at += PIECE) {
        uint64_t n = *len - at < PIECE ? *len - at : PIECE;
        rc = b ? recv_from(from, b + at, (int)n, MPI_BYTE)
               : recv_from(from, sink, (int)sizeof sink, MPI_BYTE);
    }
    if (!b) {
        snprintf(err, cap, "out of memory for process %d's %llu bytes", from,
                 (unsigned long long)*len);
        return -1;
    }
    if (rc != MPI_SUCCESS) {
        free(b);
        return fail(rc, "MPI_Recv", err, cap);
    }
    *buf = b;
    return 0;
}

/* Process 0's `buf` to every other process. */
static int bcast(void *buf, size_t len, char *err, size_t cap)
{
    int me = 0, size = 1, rc = MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int p = 1; rc == MPI_SUCCESS && me == 0 && p < size; p++)
        rc = send_to(p, buf, (int)len, MPI_BYTE);
    if (rc == MPI_SUCCESS && me != 0)
        rc = recv_from(0, buf, (int)len, MPI_BYTE);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "sending the outcome", err, cap);
}

static void finalize(void)
{
    if (initialised_here)
        MPI_Finalize();
    initialised_here = 0;
}

__attribute__((visibility("default"))) const aip__cluster_mpi_ops aip__cluster_mpi_plugin = {
    AIP__CLUSTER_MPI_ABI, init, send_bytes, recv_bytes, bcast, finalize,
};
