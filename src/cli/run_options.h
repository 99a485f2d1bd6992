/*
 * run_options.h — the options of `aiprof run`, as one table: run_options.c
 * parses a command line with it and prints --help from it; run_cmd.c acts
 * on the result.  Parsing executes, prints and allocates nothing, so the
 * fuzz target (tests/fuzz/fuzz_cli_run_options.c) calls it directly.
 */
#ifndef AIP_RUN_OPTIONS_H
#define AIP_RUN_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef struct run_options {
    const char *dir, *delay, *duration, *config; /* point into argv; NULL when not given */
    const char *max_size;
    const char *flight, *flight_ring, *flight_slow, *flight_hang; /* --flight-* */
    unsigned long long flight_ring_bytes; /* --flight-ring in bytes, 0 = the default */
    const char *host_sys;  /* --host-sys: "cpu,mem,disk,network,osrt" (checked), NULL: none */
    const char *trace_format; /* --trace-format: "torch_npu", "kineto" or "perfetto" (checked),
                                 NULL: default */
    const char *profiler_level; /* --profiler-level: "Level0" ... (checked), NULL: default */
    int level;    /* --profiler-level as an aip_profiler_level (when given) */
    unsigned long long max_bytes; /* --max-size in bytes (RUN_DEFAULT_MAX_BYTES if not given), 0 = none */
    int record_shapes, with_stack, profile_memory, with_modules, with_flops;
    int no_mstx, children;
    int mpi;      /* --mpi 1, --no-mpi -1, else 0: record MPI calls when under an MPI launcher */
    int analyse;  /* 1 unless --no-analyse */
    int trace_form;  /* --trace-format as an aip_trace_format (0 when not given) */
    int help;     /* -h/--help was given: print run_options_help(), nothing else */
    int command;  /* argv index of COMMAND (when !help) */
    const char *error, *error_arg; /* a usage error: a format with at most one %s, its value */
} run_options;

/* The raw data of a run is capped at 4 GiB unless --max-size says
 * otherwise: some 100-170 million events, which `aiprof analyse` handles in
 * minutes and a few GiB of memory, where an unbounded run (30 GB in 10
 * minutes at 1 M events/s) fills the disk and cannot be analysed on the
 * machine that recorded it. */
#define RUN_DEFAULT_MAX_BYTES (4ull << 30)

/* run_options_parse() : `argv[1..argc-1]` of `aiprof run` (argv[0] is "run")
 * into `o`.  @return AIP_EXIT_OK, or AIP_EXIT_USAGE with the reason in
 * o->error / o->error_arg (for cli_usage_error(), which prints the whole
 * argument however long it is). */
int run_options_parse(int argc, char **argv, run_options *o);

/* run_options_help() : the --help text of `aiprof run`. */
void run_options_help(FILE *f);

#endif
