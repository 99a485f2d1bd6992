/*
 * bench_analyse_device.c — bench_analyse.c's device comparison for `make
 * bench`: the host-only profile and a profile where 2 of every 5 events are
 * device activity (runtime calls and kernels), same event count, analysed
 * one after the other; prints the ratio of their throughputs (issue 14's
 * target: analysis with device tasks at least as fast as host-only).
 */
#define BENCH_ANALYSE_COMPARE_DEVICE 1
#include "bench_analyse.c"
