/*
 * bench_analyse_full.c — the large run of bench_analyse.c for `make bench`
 * (which runs every bench without arguments): 10 M events, export type
 * text (trace_view.json, the CSVs and the databases).  The default
 * bench_analyse run stays short.
 */
#define BENCH_ANALYSE_DEFAULT_EVENTS 10000000
#include "bench_analyse.c"
