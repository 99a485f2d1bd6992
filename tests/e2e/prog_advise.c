/*
 * prog_advise.c — small training loops, each with one planted bottleneck,
 * for `aiprof advise` and `aiprof compare` (tests/e2e/test_advise.sh,
 * test_compare.sh).  Ops spin on the clock instead of sleeping, so that
 * only the planted blocking call is an OS call and step lengths hold
 * under load.
 *
 * Usage: prog_advise MODE DIR   (prints the result directory)
 *   clean       forward / backward ops only
 *   item        an aten::item (aten::_local_scalar_dense) wait per step
 *   dataloader  a DataLoader __next__ range per step (its name holds an
 *               escape sequence: the terminal output must neutralise it)
 *   osrt        a blocking read() of a pipe on the training thread
 *   memgrow     an activation allocated per step and kept (never freed)
 *   base        clean with memory: conv 1 ms, a 4 MiB temporary
 *   regress     base with conv 16 ms, an added 10 ms op, an 8 MiB temporary
 *               (changes far above the noise of a loaded machine)
 */
#include "aiprof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 8

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_us(long us)
{
    int64_t end = now_ns() + us * 1000;
    while (now_ns() < end)
        ;
}

static void op(const char *name, const char *shapes, long us)
{
    aip_op_info info = {.name = name, .sequence_number = -1, .input_shapes = shapes};
    aip_op_begin(&info);
    spin_us(us);
    aip_op_end();
}

/* osrt: the training thread asks (req) and blocks in read() of the
 * answer, which a helper thread writes 12 ms later: a slow reader. */
static int req_fd[2], pipe_fd[2];

static void *writer(void *arg)
{
    (void)arg;
    char c;
    while (read(req_fd[0], &c, 1) == 1) {
        struct timespec ts = {0, 12000000}; /* past OSRT's 10 ms default threshold */
        nanosleep(&ts, NULL);
        if (write(pipe_fd[1], "x", 1) != 1)
            return NULL;
    }
    return NULL;
}

static uint64_t mem_total;

static void mem(uint64_t addr, int64_t bytes)
{
    mem_total += (uint64_t)bytes;
    aip_memory_event(addr, bytes, (int64_t)mem_total, (int64_t)mem_total + (64 << 20),
                     AIP_DEVICE_CPU, 0);
}

static void step_body(const char *mode, long step)
{
    int base = !strcmp(mode, "base"), regress = !strcmp(mode, "regress");
    op("aten::linear", "[[32, 64], [64, 64]]", 1500);
    if (base || regress) {
        aip_op_info conv = {.name = "aten::conv2d", .sequence_number = -1,
                            .input_shapes = "[[8, 3, 32, 32]]"};
        aip_op_begin(&conv);
        mem(0x100000, regress ? 8 << 20 : 4 << 20);
        spin_us(regress ? 16000 : 1000);
        mem(0x100000, -(int64_t)(regress ? 8 << 20 : 4 << 20));
        aip_op_end();
        if (regress)
            op("aten::added_op", "[[32]]", 10000);
    }
    if (!strcmp(mode, "item")) {
        aip_op_info item = {.name = "aten::item", .sequence_number = -1};
        aip_op_begin(&item);
        op("aten::_local_scalar_dense", NULL, 3000);
        aip_op_end();
    } else if (!strcmp(mode, "dataloader")) {
        aip_annotation_push("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
                            "\033[31m");
        spin_us(3000);
        aip_annotation_pop();
    } else if (!strcmp(mode, "osrt")) {
        char c = 'r';
        if (write(req_fd[1], &c, 1) != 1 || read(pipe_fd[0], &c, 1) != 1)
            fprintf(stderr, "prog_advise: read failed\n");
    } else if (!strcmp(mode, "memgrow")) {
        aip_op_info relu = {.name = "aten::relu", .sequence_number = -1};
        aip_op_begin(&relu);
        mem(0x200000 + (uint64_t)step * 0x1000000, 2 << 20); /* kept: never freed */
        spin_us(200);
        aip_op_end();
    }
    op("aten::linear_backward", "[[32, 64]]", 1500);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: prog_advise MODE DIR\n");
        return 2;
    }
    const char *mode = argv[1];
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[2];
    cfg.worker_name = mode;
    cfg.activities = AIP_ACTIVITY_CPU;
    cfg.has_schedule = 1;
    cfg.schedule = (aip_schedule){.skip_first = 0, .wait = 0, .warmup = 1, .active = STEPS,
                                  .repeat = 1};
    cfg.record_shapes = 1;
    cfg.profile_memory = !strcmp(mode, "memgrow") || !strcmp(mode, "base") ||
                         !strcmp(mode, "regress");
    if (!strcmp(mode, "osrt")) {
        cfg.host_sys = AIP_HOST_SYS_OSRT;
        if (pipe(pipe_fd) || pipe(req_fd))
            return 1;
    }
    pthread_t th;
    if (!strcmp(mode, "osrt") && pthread_create(&th, NULL, writer, NULL))
        return 1;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "prog_advise: %s\n", aip_last_error());
        return 1;
    }
    for (long step = 0; step < STEPS + 1; step++) {
        step_body(mode, step);
        if (aip_session_step(s)) {
            fprintf(stderr, "prog_advise: step: %s\n", aip_last_error());
            return 1;
        }
    }
    if (aip_session_stop(s)) {
        fprintf(stderr, "prog_advise: stop: %s\n", aip_last_error());
        return 1;
    }
    printf("%s\n", aip_session_result_dir(s));
    aip_session_destroy(s);
    if (!strcmp(mode, "osrt")) {
        close(req_fd[1]);
        pthread_join(th, NULL);
    }
    return 0;
}
