/*
 * prog_flight.c — a program for the flight recorder's `aiprof run` test
 * (test_run_flight.sh): `signal` records marks, sends itself SIGUSR2 (the
 * dump trigger), waits for the dump and records more; `flood N` records N
 * marks and asks for a dump through the API; `kill` records marks, waits
 * past a flush and dies of SIGKILL (the run salvages the ring).  Only the
 * public API: under `aiprof run` the marks go to the run's recorder.
 * Usage: prog_flight signal|kill|flood N
 */
#include "aiprof.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "signal")) {
        for (int i = 0; i < 1000; i++)
            aip_mark("flight", "before_signal");
        usleep(300 * 1000); /* host_sys samples every 20 ms meanwhile */
        raise(SIGUSR2);
        usleep(1000 * 1000); /* the writer dumps within a flush (100 ms) */
        aip_mark("flight", "after_signal");
        return 0;
    }
    if (!strcmp(argv[1], "flood") && argc == 3) {
        long n = atol(argv[2]);
        for (long i = 0; i < n; i++)
            aip_mark("flight", "flood");
        char dir[4096];
        if (aip_flight_dump("prog_flight", dir, sizeof dir) != AIP_OK) {
            fprintf(stderr, "prog_flight: %s\n", aip_last_error());
            return 1;
        }
        printf("%s\n", dir);
        return 0;
    }
    if (!strcmp(argv[1], "kill")) {
        for (int i = 0; i < 3000; i++)
            aip_mark("flight", "before_kill");
        usleep(1000 * 1000); /* ten flushes: the ring's files hold them */
        raise(SIGKILL);
    }
    return 2;
}
