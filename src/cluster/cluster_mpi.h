/*
 * cluster_mpi.h — what libaiprof_cluster_mpi.so (src/cluster/mpi/) gives
 * `aiprof cluster --mpi`: the few MPI operations the split cross-rank pass
 * needs, behind function pointers, so that libaiprof and the aiprof command
 * never link MPI (they run where Open MPI is not installed) and load it
 * only for --mpi (cluster_mpi.c).  The plugin exports one object,
 * AIP__CLUSTER_MPI_SYMBOL, of this type; `abi` must equal
 * AIP__CLUSTER_MPI_ABI (the plugin and libaiprof come from one build).
 * Each call returns 0, or -1 with a message in `err`.
 */
#ifndef AIP_CLUSTER_MPI_H
#define AIP_CLUSTER_MPI_H

#include <stddef.h>
#include <stdint.h>

#define AIP__CLUSTER_MPI_ABI 1
#define AIP__CLUSTER_MPI_SYMBOL "aip__cluster_mpi_plugin"

typedef struct aip__cluster_mpi_ops {
    int abi;
    /* MPI_Init (unless initialised already); this process and how many */
    int (*init)(int *me, int *size, char *err, size_t cap);
    /* `len` bytes to process 0 (any size: sent in pieces) */
    int (*send)(const void *buf, uint64_t len, char *err, size_t cap);
    /* process 0: the next message of process `from`, malloc'd */
    int (*recv)(int from, void **buf, uint64_t *len, char *err, size_t cap);
    /* `len` bytes from process 0 to every process */
    int (*bcast)(void *buf, size_t len, char *err, size_t cap);
    /* MPI_Finalize (if init initialised MPI) */
    void (*finalize)(void);
} aip__cluster_mpi_ops;

#endif
