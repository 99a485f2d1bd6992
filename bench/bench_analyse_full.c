/*
 * bench_analyse_full.c — the large run of bench_analyse.c for `make bench`
 * (which runs every bench without arguments): 10 M events, export type
 * text (trace_view.json, the CSVs and the databases), measured against
 * the floor (reading the raw file, writing the outputs' bytes) and on one
 * core against every core, in rotating rounds (issue 30: analysis <= 1.3 x
 * the floor, second core >= 1.5 x).  The default bench_analyse run stays
 * short.
 */
#define BENCH_ANALYSE_DEFAULT_EVENTS 10000000
#define BENCH_ANALYSE_FLOOR 1
#include "bench_analyse.c"
