/*
 * prog_ticker.c — an instrumented program with no profiling set-up of its
 * own, for `aiprof run` tests: records a "tick" annotation every millisecond
 * for MS milliseconds.  With STEPS and STEP_MS it also creates a session and
 * calls aip_session_step() every STEP_MS, as a training loop would.
 * Prints "ticks N", the number of ticks it made, so that tests compare what
 * was recorded with what happened rather than with what the clock allowed
 * (a loaded machine sleeps longer than a millisecond).
 * With --exec it then execs PROG ARGS (a program that does its work, then
 * hands its process over: `aiprof run` through exec, test_run_exec.sh).
 * Usage: prog_ticker MS [STEPS STEP_MS [--exec PROG ARGS...]]
 */
#include "aiprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int then_exec = argc > 5 && !strcmp(argv[4], "--exec");
    if (argc != 2 && argc != 4 && !then_exec) {
        fprintf(stderr, "usage: prog_ticker MS [STEPS STEP_MS [--exec PROG ARGS...]]\n");
        return 2;
    }
    double total = atof(argv[1]) / 1000.0;
    int steps = argc >= 4 ? atoi(argv[2]) : 0;
    double step_s = argc >= 4 ? atof(argv[3]) / 1000.0 : 0;
    aip_session *s = NULL;
    if (steps) {
        aip_config cfg;
        aip_config_init(&cfg);
        cfg.dir_name = "/tmp";
        if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
            fprintf(stderr, "prog_ticker: %s\n", aip_last_error());
            return 1;
        }
        total = steps * step_s;
    }
    double start = now_s(), next_step = start + step_s;
    int done = 0;
    long ticks = 0;
    while (now_s() - start < total) {
        ticks++;
        AIP_ANNOTATION_PUSH("tick");
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        AIP_ANNOTATION_POP();
        if (s && now_s() >= next_step && done < steps) {
            aip_session_step(s);
            done++;
            next_step += step_s;
        }
    }
    if (s) {
        aip_session_stop(s);
        aip_session_destroy(s);
    }
    printf("ticks %ld\n", ticks);
    if (then_exec) {
        fflush(stdout);
        execv(argv[5], argv + 5);
        perror(argv[5]);
        return 1;
    }
    return 0;
}
