/*
 * comm_collector.c — communication as a collector (src/core/collector.h):
 * the part of it that lives in libaiprof.  The collectors that see the
 * calls live outside it, because libaiprof must not need MPI or torch:
 * libaiprof_mpi.so (src/collect/mpi, PMPI wrappers, preloaded by `aiprof
 * run` under mpirun) and the Python package's torch.distributed hooks.
 * They record through the integration API (aip_comm_*) and hand the core
 * their drain with aip_comm_set_drain(); this descriptor is how the core
 * reaches that drain, at the same point as every other collector's stop:
 * last in the table, so first to stop, while the device back ends may
 * still be owed the kernels the collectives launched.
 */
#include "collector.h"
#include "comm.h"
#include "raw_format.h"

/* Every trace: the drain of a trace that recorded no communication has
 * nothing owed and returns at once. */
static int wanted(const aip_config *cfg)
{
    (void)cfg;
    return 1;
}

const aip__collector aip__collector_comm = {
    .name = "communication",
    .wanted = wanted,
    .stop = aip__comm_trace_stopping,
    .record_kinds = (1ull << AIP_REC_COMM_GROUP) | (1ull << AIP_REC_COMM_OP),
};
