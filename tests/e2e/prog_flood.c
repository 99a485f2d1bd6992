/*
 * prog_flood.c — an instrumented program with no profiling set-up of its
 * own, for `aiprof run` tests of the raw size cap: records N "flood"
 * annotations as fast as it can, then prints "flood done N" so the test
 * knows the program ran to its end.  Usage: prog_flood N
 */
#include "aiprof.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_flood N\n");
        return 2;
    }
    long n = atol(argv[1]);
    for (long i = 0; i < n; i++) {
        AIP_ANNOTATION_PUSH("flood");
        AIP_ANNOTATION_POP();
    }
    printf("flood done %ld\n", n);
    return 0;
}
