/*
 * prog_misnest.c — a program whose recorded spans do not nest, for the
 * nesting rule (docs/ANALYSIS.md "Nesting"): the C API keeps separate
 * stacks for annotations, ops and mstx ranges, so a program may close them
 * out of order, and a step may end inside a range the program opened.
 * Three steps of: annotation "ann" opened, op "op" begun, "ann" closed,
 * "op" ended; range "rng" pushed, annotation "inner" opened, "rng"
 * popped, "inner" closed; annotation "epoch" left open across the step
 * boundary.  The analysed trace must nest all the same.
 * Usage: prog_misnest DIR
 */
#include "aiprof.h"

#include <stdio.h>
#include <time.h>

static void pause_us(long us)
{
    struct timespec t = {0, us * 1000};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_misnest DIR\n");
        return 2;
    }
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = argv[1];
    aip_session *s = NULL;
    if (aip_session_create(&cfg, &s) || aip_session_start(s)) {
        fprintf(stderr, "prog_misnest: %s\n", aip_last_error());
        return 1;
    }
    aip_op_info op = {.name = "op", .sequence_number = -1};
    for (int step = 0; step < 3; step++) {
        aip_annotation_push("ann");
        pause_us(50);
        aip_op_begin(&op);
        pause_us(50);
        aip_annotation_pop();
        pause_us(50);
        aip_op_end();
        aip_range_push("dom", "rng");
        pause_us(50);
        aip_annotation_push("inner");
        pause_us(50);
        aip_range_pop();
        pause_us(50);
        aip_annotation_pop();
        aip_annotation_push("epoch");
        pause_us(50);
        aip_session_step(s); /* the step range ends inside "epoch" */
        pause_us(50);
        aip_annotation_pop();
    }
    aip_session_stop(s);
    aip_session_destroy(s);
    return 0;
}
