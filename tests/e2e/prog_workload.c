/*
 * prog_workload.c — a deterministic program for the end-to-end test: known
 * ops, nesting, sleeps, threads, mstx ranges, memory and a forward→backward
 * pair per step, so the checker can compare trace_view.json and the CSVs
 * with what really happened.  Usage: prog_workload DIR
 */
#include "aiprof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STEPS 5

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void op(const char *name, long seq, uint64_t fwd_tid, long us)
{
    aip_op_info info = {.name = name, .sequence_number = seq, .fwd_thread_id = fwd_tid,
                        .is_backward = fwd_tid != 0};
    aip_op_begin(&info);
    sleep_us(us);
    aip_op_end();
}

typedef struct bwd_args {
    long seq;
    uint64_t fwd_tid;
} bwd_args;

static void *backward_thread(void *arg)
{
    bwd_args *a = arg;
    aip_thread_name("autograd");
    op("WorkerBackward0", a->seq, a->fwd_tid, 1000);
    return NULL;
}

static void check(aip_status s, const char *what)
{
    if (s != AIP_OK) {
        fprintf(stderr, "prog_workload: %s: %s\n", what, aip_last_error());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_workload DIR\n");
        return 2;
    }
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[1];
    cfg.worker_name = "workload";
    cfg.activities = AIP_ACTIVITY_CPU;
    cfg.has_schedule = 1;
    cfg.schedule = (aip_schedule){.skip_first = 0, .wait = 1, .warmup = 1, .active = 2, .repeat = 1};
    cfg.record_shapes = 1;
    cfg.with_stack = 1;
    cfg.profile_memory = 1;
    cfg.mstx = 1;
    aip_session *s;
    check(aip_session_create(&cfg, &s), "create");
    check(aip_session_start(s), "start");
    aip_thread_name("main");
    uint64_t main_tid = (uint64_t)syscall(SYS_gettid);
    for (long step = 0; step < STEPS; step++) {
        aip_range_push("dom", "rng");
        aip_op_info outer = {.name = "outer", .sequence_number = step * 10,
                             .input_shapes = "[[2, 3], [3]]", .input_dtypes = "[float, float]",
                             .call_stack = "workload.py(10): train_step;workload.py(20): <module>"};
        aip_op_begin(&outer);
        aip_memory_event(0x1000 + (uint64_t)step, 1024, 1024, 4096, AIP_DEVICE_CPU, 0);
        op("inner_a", -1, 0, 1000);
        op("inner_b", -1, 0, 2000);
        aip_memory_event(0x1000 + (uint64_t)step, -1024, 0, 4096, AIP_DEVICE_CPU, 0);
        aip_op_end();
        aip_range_pop();
        aip_mark("dom", "after outer");
        bwd_args args = {step * 10, main_tid};
        pthread_t th;
        pthread_create(&th, NULL, backward_thread, &args);
        pthread_join(th, NULL);
        aip_annotation_push("post");
        sleep_us(500);
        aip_annotation_pop();
        check(aip_session_step(s), "step");
    }
    check(aip_session_stop(s), "stop");
    printf("%s\n", aip_session_result_dir(s));
    aip_session_destroy(s);
    return 0;
}
