/*
 * prog_online.c — on-line analysis: a program that records two traces
 * (schedule repeat 2) and analyses each one in its on_trace_ready callback
 * with aip_analyse_dir(), as tensorboard_trace_handler does.  The e2e test
 * re-analyses the same raw data offline with `aiprof analyse` and requires
 * identical outputs.  Usage: prog_online DIR (prints the result dirs).
 */
#include "aiprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int failures;

static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void on_ready(aip_session *s, const char *dir, void *user)
{
    (void)s;
    (void)user;
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    if (aip_analyse_dir(dir, &o) != AIP_OK) {
        fprintf(stderr, "prog_online: on-line analysis of %s: %s\n", dir, aip_last_error());
        failures++;
    }
    printf("%s\n", dir);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_online DIR\n");
        return 2;
    }
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[1];
    cfg.worker_name = "online";
    cfg.activities = AIP_ACTIVITY_CPU;
    cfg.has_schedule = 1;
    cfg.schedule = (aip_schedule){.wait = 1, .warmup = 0, .active = 2, .repeat = 2};
    cfg.record_shapes = 1;
    cfg.profile_memory = 1;
    cfg.mstx = 1;
    cfg.profiler_level = AIP_LEVEL1;
    cfg.export_type = AIP_EXPORT_TEXT;
    cfg.on_trace_ready = on_ready;
    aip_session *s;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "prog_online: %s\n", aip_last_error());
        return 1;
    }
    for (int step = 0; step < 7; step++) {
        aip_op_info outer = {.name = "aten::linear", .sequence_number = step,
                             .input_shapes = "[[4, 4]]", .input_dtypes = "[float]"};
        aip_op_begin(&outer);
        aip_memory_event(0x5000, 4096, 4096, 65536, AIP_DEVICE_CPU, -1);
        aip_op_info inner = {.name = "aten::addmm", .sequence_number = -1};
        aip_op_begin(&inner);
        spin_us(200);
        aip_op_end();
        aip_memory_event(0x5000, -4096, 0, 65536, AIP_DEVICE_CPU, -1);
        aip_op_end();
        aip_range_push("io", "load");
        spin_us(100);
        aip_range_pop();
        aip_session_step(s);
    }
    aip_session_stop(s);
    aip_session_destroy(s);
    return failures ? 1 : 0;
}
