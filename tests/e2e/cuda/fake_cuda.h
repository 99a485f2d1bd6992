/*
 * fake_cuda.h — the seam between the two stand-ins of
 * tests/e2e/test_cuda_cupti_rules.sh: fake_cuda.c (a libcuda.so.1 the test
 * program loads, as the CUDA runtime loads the driver) and fake_cupti.c
 * (the libcupti aiprof loads through AIPROF_CUPTI_LIB).  The driver knows
 * nothing of CUPTI; the CUPTI stand-in, when loaded, attaches these hooks
 * so that the program's "launches" reach it, as the real driver reports
 * launches to the real CUPTI.
 */
#ifndef AIP_FAKE_CUDA_H
#define AIP_FAKE_CUDA_H

#include <stdint.h>

typedef struct fake_cupti_hooks {
    void (*launch)(const char *name, uint64_t duration_ns); /* a kernel, unfinished */
    void (*sync)(void);                                     /* the device finishes all */
    int (*other_client)(int what);                          /* see fakecuda_other_client */
} fake_cupti_hooks;

void fakecuda_attach(const fake_cupti_hooks *hooks);
/* CUPTI's buffer callback is running (1) or not (0): a driver call made
 * meanwhile breaks the rule "no driver calls on CUPTI's thread", and the
 * driver says so. */
void fakecuda_in_buffer_callback(int on);

/* The program's side: a kernel launch (through the runtime API callback),
 * and another CUPTI client acting on the process:
 *   FAKE_OTHER_SUBSCRIBE: it subscribes and leaves (0) or is refused (1);
 *   FAKE_OTHER_OWN_CLOCK: it registers its own timestamp callback (ticks,
 *       not aiprof's clock), traces, and unsubscribes, as Kineto does. */
enum { FAKE_OTHER_SUBSCRIBE = 1, FAKE_OTHER_OWN_CLOCK = 2 };
void fakecuda_launch(const char *name, uint64_t duration_ns);
int fakecuda_other_client(int what);

#endif
