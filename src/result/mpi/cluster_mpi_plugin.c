/*
 * cluster_mpi_plugin.c — libaiprof_cluster_mpi.so: the MPI side of
 * `mpirun -np K aiprof cluster --mpi DIR` (cluster_mpi.h says why it is a
 * library of its own, loaded by libaiprof only for --mpi).  It knows
 * nothing of aiprof's data: it moves bytes — each process's packed share of
 * the rank directories to process 0, and the outcome back to all.
 * MPI_COMM_WORLD with MPI_ERRORS_RETURN, so that a failure is a message,
 * not an abort.
 */
#include "cluster_mpi.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

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

static int send_bytes(const void *buf, uint64_t len, char *err, size_t cap)
{
    int rc = MPI_Send(&len, 1, MPI_UINT64_T, 0, TAG, MPI_COMM_WORLD);
    for (uint64_t at = 0; rc == MPI_SUCCESS && at < len; at += PIECE) {
        uint64_t n = len - at < PIECE ? len - at : PIECE;
        rc = MPI_Send((const char *)buf + at, (int)n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
    }
    return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Send to process 0", err, cap);
}

static int recv_bytes(int from, void **buf, uint64_t *len, char *err, size_t cap)
{
    *buf = NULL;
    int rc = MPI_Recv(len, 1, MPI_UINT64_T, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return fail(rc, "MPI_Recv", err, cap);
    char *b = malloc(*len ? *len : 1);
    if (!b) {
        snprintf(err, cap, "out of memory for process %d's %llu bytes", from,
                 (unsigned long long)*len);
        /* still take the pieces, so that the sender is not left blocked */
        char sink[4096];
        for (uint64_t at = 0; at < *len; at += PIECE) {
            MPI_Status st;
            MPI_Probe(from, TAG, MPI_COMM_WORLD, &st);
            int n = 0;
            MPI_Get_count(&st, MPI_BYTE, &n);
            char *tmp = n <= (int)sizeof sink ? sink : malloc((size_t)n);
            MPI_Recv(tmp ? tmp : sink, tmp ? n : 0, MPI_BYTE, from, TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (tmp != sink)
                free(tmp);
        }
        return -1;
    }
    for (uint64_t at = 0; rc == MPI_SUCCESS && at < *len; at += PIECE) {
        uint64_t n = *len - at < PIECE ? *len - at : PIECE;
        rc = MPI_Recv(b + at, (int)n, MPI_BYTE, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
        free(b);
        return fail(rc, "MPI_Recv", err, cap);
    }
    *buf = b;
    return 0;
}

static int bcast(void *buf, size_t len, char *err, size_t cap)
{
    int rc = MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : fail(rc, "MPI_Bcast", err, cap);
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
