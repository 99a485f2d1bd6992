/*
 * mpi_bench_pair.c — an MPI program that never heard of aiprof, for the
 * PMPI wrapper's cost on two ranks (bench/mpi_overhead.py runs it under
 * mpirun twice: as it is, and with libaiprof_mpi.so preloaded by `aiprof
 * run`, which records every call).  Rank 0 prints ns per MPI call of
 *   allreduce: MPI_Allreduce of one double (8 bytes) on MPI_COMM_WORLD;
 *   sendrecv:  a ping-pong, rank 0 MPI_Send then MPI_Recv, rank 1 the
 *              reverse, 8 bytes each way (two calls per rank per round).
 * Timed inside the program, after warm-up, so that MPI_Init, the trace's
 * start and its saving are not counted; the fastest of 10 blocks of calls.
 *
 *   mpirun -np 2 mpi_bench_pair [CALLS]      (default 20000)
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void allreduce(long n)
{
    double in = 1, out = 0;
    for (long i = 0; i < n; i++)
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void pingpong(long n, int me)
{
    double a = 1, b = 0;
    for (long i = 0; i < n; i++) {
        if (me == 0) {
            MPI_Send(&a, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&b, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&b, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&a, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 20000;
    int me = 0, size = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || calls <= 0) {
        if (me == 0)
            fprintf(stderr, "usage: mpirun -np 2 mpi_bench_pair [CALLS > 0]\n");
        MPI_Finalize();
        return 2;
    }
    allreduce(calls / 10);
    pingpong(calls / 10, me);
    /* BLOCKS blocks of calls / BLOCKS each; the fastest block counts, so that
     * another program taking the CPU for a moment does not (rank 0's clock;
     * the barrier lines the ranks up before each block) */
    enum { BLOCKS = 10 };
    long per = calls / BLOCKS > 0 ? calls / BLOCKS : 1;
    double best_ar = 1e30, best_pp = 1e30;
    for (int b = 0; b < BLOCKS; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        allreduce(per);
        double t1 = now_s();
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = now_s();
        pingpong(per, me);
        double t3 = now_s();
        best_ar = t1 - t0 < best_ar ? t1 - t0 : best_ar;
        best_pp = t3 - t2 < best_pp ? t3 - t2 : best_pp;
    }
    if (me == 0)
        printf("allreduce %.1f\nsendrecv %.1f\n", best_ar / (double)per * 1e9,
               best_pp / (double)(2 * per) * 1e9);
    MPI_Finalize();
    return 0;
}
