/*
 * mpi_init.c — the life cycle around the recorded calls: MPI_Init and
 * MPI_Init_thread tell libaiprof the world rank (profiler_info_{rank}.json,
 * the rank of the results, even without a launcher's RANK variables);
 * freeing a communicator or a datatype forgets its cached handle, which
 * MPI hands out again; MPI_Finalize drops the requests still in flight and
 * says how many non-blocking operations could not be recorded.
 */
#include "mpi_int.h"

static void tell_rank(int rc)
{
    int rank = -1;
    if (rc == MPI_SUCCESS && PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS)
        aip_set_rank(rank);
}

AIP_MPI_WRAP int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    tell_rank(rc);
    return rc;
}

AIP_MPI_WRAP int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    tell_rank(rc);
    return rc;
}

AIP_MPI_WRAP int MPI_Finalize(void)
{
    aip__mpi_requests_reset();
    return PMPI_Finalize();
}

AIP_MPI_WRAP int MPI_Comm_free(MPI_Comm *comm)
{
    if (comm && *comm != MPI_COMM_NULL)
        aip__mpi_comm_forget(*comm);
    return PMPI_Comm_free(comm);
}

AIP_MPI_WRAP int MPI_Comm_disconnect(MPI_Comm *comm)
{
    if (comm && *comm != MPI_COMM_NULL)
        aip__mpi_comm_forget(*comm);
    return PMPI_Comm_disconnect(comm);
}

AIP_MPI_WRAP int MPI_Type_free(MPI_Datatype *type)
{
    if (type && *type != MPI_DATATYPE_NULL)
        aip__mpi_type_forget(*type);
    return PMPI_Type_free(type);
}
