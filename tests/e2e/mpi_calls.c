/*
 * mpi_calls.c — one of each MPI call libaiprof_mpi.so wraps, on 3 ranks,
 * for tests/e2e/check_mpi_calls.py, which knows what each call sends:
 * rooted and v/w collectives (counts differing by rank), MPI_IN_PLACE,
 * non-blocking collectives completed by MPI_Waitall and MPI_Test,
 * MPI_Sendrecv, a synchronous send, a receive from MPI_ANY_SOURCE with
 * MPI_ANY_TAG into a larger buffer completed by MPI_Waitsome / MPI_Testany,
 * a send to MPI_PROC_NULL, a derived datatype, and a duplicated
 * communicator freed and duplicated again.  The program profiles itself
 * (one trace from after MPI_Init to before MPI_Finalize).
 *
 *   mpirun -np 3 mpi_calls DIR
 */
#include <aiprof.h>
#include <mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 3 || argc != 2) {
        if (r == 0)
            fprintf(stderr, "usage: mpirun -np 3 mpi_calls DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    aip_config c;
    aip_config_init(&c);
    c.activities = AIP_ACTIVITY_CPU;
    c.dir_name = argv[1];
    c.profiler_level = AIP_LEVEL1; /* the communication summaries: Level1+ (the seed) */
    aip_session *s = NULL;
    if (aip_session_create(&c, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
        fprintf(stderr, "mpi_calls: %s\n", aip_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int next = (r + 1) % n, prev = (r + n - 1) % n;
    int a[64], b[64], cnt[3] = {1, 2, 3}, dsp[3] = {0, 8, 16}, one[3] = {1, 1, 1};
    double d[16] = {0}, e[16]; /* the root of MPI_Scatter sends 3 x 3 */
    for (int i = 0; i < 64; i++)
        a[i] = r * 100 + i;
    int v[3] = {1, 2, 3}, vd[3] = {0, 1, 3};

    MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Gatherv(a, r + 1, MPI_INT, b, v, vd, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgatherv(a, r + 1, MPI_INT, b, v, vd, MPI_INT, MPI_COMM_WORLD);
    MPI_Scatter(d, 3, MPI_DOUBLE, e, 3, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    MPI_Scatterv(a, v, vd, MPI_INT, b, r + 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
    int rd3[3] = {0, 8, 16};
    /* rank j receives from rank i what rank i sends to j: i sends cnt[j] */
    int got[3] = {cnt[r], cnt[r], cnt[r]};
    MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, got, rd3, MPI_INT, MPI_COMM_WORLD);
    /* Rank 1 sends doubles, the others ints: what j receives from i is i's type. */
    MPI_Datatype mine = r == 1 ? MPI_DOUBLE : MPI_INT;
    MPI_Datatype ts[3] = {mine, mine, mine};
    MPI_Datatype rt[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
    int wd[3] = {0, 8, 32};
    MPI_Alltoallw(d, one, wd, ts, e, one, wd, rt, MPI_COMM_WORLD);
    MPI_Reduce_scatter(a, b, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, a, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

    MPI_Request q[3];
    MPI_Ibcast(b, 5, MPI_INT, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Ibarrier(MPI_COMM_WORLD, &q[1]);
    MPI_Ialltoall(a, 1, MPI_INT, b + 8, 1, MPI_INT, MPI_COMM_WORLD, &q[2]);
    MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
    MPI_Request t;
    int flag = 0;
    MPI_Iallreduce(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &t);
    while (!flag)
        MPI_Test(&t, &flag, MPI_STATUS_IGNORE);

    MPI_Sendrecv(a, 10, MPI_INT, next, 5, b, 10, MPI_INT, prev, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Request x[2];
    MPI_Irecv(b, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &x[0]);
    MPI_Isend(a, 7, MPI_INT, next, 9, MPI_COMM_WORLD, &x[1]);
    for (int done = 0; done < 2;) {
        int outcount, idx[2];
        MPI_Waitsome(2, x, &outcount, idx, MPI_STATUSES_IGNORE);
        done += outcount;
    }
    MPI_Request y;
    MPI_Irecv(b, 64, MPI_INT, prev, 3, MPI_COMM_WORLD, &y);
    MPI_Ssend(a, 11, MPI_INT, next, 3, MPI_COMM_WORLD);
    for (int index = MPI_UNDEFINED, f = 0; !f;)
        MPI_Testany(1, &y, &index, &f, MPI_STATUS_IGNORE);
    MPI_Send(a, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);

    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    MPI_Bcast(a, 2, triple, 0, MPI_COMM_WORLD);
    MPI_Type_free(&triple);

    for (int k = 0; k < 2; k++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Allreduce(MPI_IN_PLACE, a, 1, MPI_INT, MPI_SUM, dup);
        MPI_Comm_free(&dup);
    }
    aip_session_stop(s);
    aip_session_destroy(s);
    MPI_Finalize();
    return 0;
}
