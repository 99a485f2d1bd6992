/*
 * mpi_train.c — a data-parallel training loop over MPI, profiled by aiprof.
 *
 * Every rank holds a copy of a model of P float parameters.  Rank 0's
 * parameters are broadcast first; then each step computes gradients (a
 * busy loop standing for forward and backward), averages them across the
 * ranks in two buckets — the first with MPI_Iallreduce, overlapping the
 * computation of the second, the second with MPI_Allreduce — passes an
 * activation-sized message round a ring (MPI_Irecv from MPI_ANY_SOURCE,
 * MPI_Send to the next rank), and averages the loss.  After the last step
 * the even and the odd ranks gather their ranks in a communicator of their
 * own, the slowest step time is reduced to rank 0 and all meet at a
 * barrier.  `--slow-rank R` makes rank R's computation slower, so the
 * others wait for it in every allreduce: what `aiprof cluster` should find.
 *
 * The program profiles itself with aiprof's C API: one session whose
 * schedule records the steps (by default all of them, with what comes
 * before and after), aip_session_step() after each, and the MPI calls
 * recorded by libaiprof_mpi.so, linked before MPI.  Built with
 * -DMPI_TRAIN_NO_AIPROF it is a plain MPI program that `aiprof run`
 * profiles from outside (mpirun -np 4 aiprof run -- ./mpi_train_plain).
 *
 *   mpirun -np 4 mpi_train [--steps N] [--params P] [--ring R] [--compute-ms MS]
 *                          [--slow-rank R] [--slow-ms MS] [--dir DIR]
 *                          [--wait N] [--warmup N] [--active N]
 *
 * tests/e2e/test_mpi.sh computes from the same options what each rank
 * sends and checks it against the record; README.md lists the calls.
 */
#include <mpi.h>
#ifndef MPI_TRAIN_NO_AIPROF
#include <aiprof.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options {
    int steps, params, ring, slow_rank;
    double compute_ms, slow_ms;
    const char *dir;
    long long wait, warmup, active;
};

static long long parse_int(const char *flag, const char *text, long long min)
{
    char *end;
    errno = 0;
    long long v = strtoll(text ? text : "", &end, 10);
    if (!text || errno || end == text || *end || v < min) {
        fprintf(stderr, "mpi_train: %s needs an integer >= %lld (got \"%s\")\n", flag, min,
                text ? text : "");
        exit(2);
    }
    return v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.steps = 6, .params = 1 << 16, .ring = 1024, .slow_rank = -1,
                          .compute_ms = 5, .slow_ms = 30, .dir = "./aiprof_result",
                          .wait = 0, .warmup = 0, .active = -1};
    for (int i = 1; i < argc; i += 2) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            printf("usage: mpirun -np N %s [--steps N] [--params P] [--ring R] "
                   "[--compute-ms MS]\n       [--slow-rank R] [--slow-ms MS] [--dir DIR] "
                   "[--wait N] [--warmup N] [--active N]\n", argv[0]);
            exit(0);
        }
        if (!strcmp(f, "--steps"))
            o->steps = (int)parse_int(f, v, 1);
        else if (!strcmp(f, "--params"))
            o->params = (int)parse_int(f, v, 2);
        else if (!strcmp(f, "--ring"))
            o->ring = (int)parse_int(f, v, 1);
        else if (!strcmp(f, "--compute-ms"))
            o->compute_ms = (double)parse_int(f, v, 0);
        else if (!strcmp(f, "--slow-rank"))
            o->slow_rank = (int)parse_int(f, v, -1);
        else if (!strcmp(f, "--slow-ms"))
            o->slow_ms = (double)parse_int(f, v, 0);
        else if (!strcmp(f, "--wait"))
            o->wait = parse_int(f, v, 0);
        else if (!strcmp(f, "--warmup"))
            o->warmup = parse_int(f, v, 0);
        else if (!strcmp(f, "--active"))
            o->active = parse_int(f, v, 1);
        else if (!strcmp(f, "--dir") && v)
            o->dir = v;
        else {
            fprintf(stderr, "mpi_train: unknown option or missing value: %s (try --help)\n", f);
            exit(2);
        }
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Gradients of a toy model: work that takes `ms` milliseconds and depends
 * on the parameters, so it cannot be optimised away. */
static void compute(float *grad, const float *param, int from, int to, double ms, int step)
{
    double until = now_ms() + ms;
    do {
        for (int i = from; i < to; i++)
            grad[i] = 0.5f * param[i] + 0.001f * (float)((i + step) % 17);
    } while (now_ms() < until);
}

#ifdef MPI_TRAIN_NO_AIPROF
#define ANNOTATE(lit) do { } while (0)
#define END_ANNOTATION() do { } while (0)
#else
#define ANNOTATE(lit) AIP_ANNOTATION_PUSH(lit)
#define END_ANNOTATION() AIP_ANNOTATION_POP()

static aip_session *start_profiling(const struct options *o, int steps)
{
    aip_config c;
    aip_config_init(&c);
    c.activities = AIP_ACTIVITY_CPU;
    c.dir_name = o->dir;
    /* Level1: communication.json and communication_matrix.json, which the
     * seed writes at Level1 and Level2 only (docs/COMMUNICATION.md). */
    c.profiler_level = AIP_LEVEL1;
    c.has_schedule = 1;
    /* By default one cycle covers the whole run: the broadcast before the
     * first step and the collectives after the last are recorded too. */
    c.schedule = (aip_schedule){.wait = o->wait, .warmup = o->warmup,
                                .active = o->active > 0 ? o->active : steps + 1, .repeat = 1};
    aip_session *s = NULL;
    if (aip_session_create(&c, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
        fprintf(stderr, "mpi_train: profiling is off: %s\n", aip_last_error());
        aip_session_destroy(s);
        return NULL;
    }
    return s;
}
#endif

int main(int argc, char **argv)
{
    struct options o;
    MPI_Init(&argc, &argv);
    parse_options(argc, argv, &o);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifndef MPI_TRAIN_NO_AIPROF
    aip_session *session = start_profiling(&o, o.steps);
#endif
    float *param = calloc((size_t)o.params, sizeof *param);
    float *grad = calloc((size_t)o.params, sizeof *grad);
    double *ring_out = calloc((size_t)o.ring, sizeof *ring_out);
    double *ring_in = calloc((size_t)o.ring, sizeof *ring_in);
    if (!param || !grad || !ring_out || !ring_in) {
        fprintf(stderr, "mpi_train: no memory for %d parameters\n", o.params);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0)
        for (int i = 0; i < o.params; i++)
            param[i] = 0.01f * (float)(i % 100);
    MPI_Bcast(param, o.params, MPI_FLOAT, 0, MPI_COMM_WORLD);

    int half = o.params / 2, next = (rank + 1) % size;
    double slowest = 0, loss = 0;
    for (int step = 0; step < o.steps; step++) {
        double t0 = now_ms();
        double extra = rank == o.slow_rank ? o.slow_ms : 0;
        ANNOTATE("backward");
        compute(grad, param, 0, half, o.compute_ms / 2 + extra, step);
        MPI_Request bucket;
        MPI_Iallreduce(MPI_IN_PLACE, grad, half, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &bucket);
        compute(grad, param, half, o.params, o.compute_ms / 2, step);
        END_ANNOTATION();
        MPI_Allreduce(MPI_IN_PLACE, grad + half, o.params - half, MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
        MPI_Wait(&bucket, MPI_STATUS_IGNORE);
        ANNOTATE("optimizer");
        for (int i = 0; i < o.params; i++)
            param[i] -= 0.01f * grad[i] / (float)size;
        END_ANNOTATION();

        /* Pipeline-style activations round the ring. */
        for (int i = 0; i < o.ring; i++)
            ring_out[i] = rank + step + i * 1e-3;
        MPI_Request in;
        MPI_Irecv(ring_in, o.ring, MPI_DOUBLE, MPI_ANY_SOURCE, step, MPI_COMM_WORLD, &in);
        MPI_Send(ring_out, o.ring, MPI_DOUBLE, next, step, MPI_COMM_WORLD);
        MPI_Wait(&in, MPI_STATUS_IGNORE);

        double local = 0;
        for (int i = 0; i < o.params; i += 64)
            local += grad[i] * grad[i] + ring_in[i % o.ring] * 1e-9;
        MPI_Allreduce(&local, &loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double took = now_ms() - t0;
        if (took > slowest)
            slowest = took;
#ifndef MPI_TRAIN_NO_AIPROF
        if (session)
            aip_session_step(session);
#endif
    }

    /* Even and odd ranks: a communicator of their own. */
    MPI_Comm parity;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    int members;
    MPI_Comm_size(parity, &members);
    int *ranks = calloc((size_t)members, sizeof *ranks);
    MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, parity);
    MPI_Comm_free(&parity);

    double worst = 0;
    MPI_Reduce(&slowest, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_train: %d ranks, %d steps, loss %.6g, slowest step %.1f ms\n", size,
               o.steps, loss, worst);
#ifndef MPI_TRAIN_NO_AIPROF
    if (session) {
        if (aip_session_stop(session) != AIP_OK)
            fprintf(stderr, "mpi_train: stopping the profile failed: %s\n", aip_last_error());
        aip_session_destroy(session);
    }
#endif
    free(ranks);
    free(param);
    free(grad);
    free(ring_out);
    free(ring_in);
    MPI_Finalize();
    return 0;
}
