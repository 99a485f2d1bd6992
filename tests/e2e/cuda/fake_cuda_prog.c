/*
 * fake_cuda_prog.c — a "CUDA program" on the stand-in driver and CUPTI
 * (fake_cuda.h) for tests/e2e/test_cuda_cupti_rules.sh.  Each step launches
 * KERNELS kernels and synchronises the device, except the last step: its
 * kernels are still unfinished when the trace stops, as a training loop's
 * last step is unless the program synchronises.
 *
 *   fake_cuda_prog run KERNELS STEPS   no aiprof calls (for `aiprof run`:
 *                                      the trace ends at exit)
 *   fake_cuda_prog api DIR KERNELS STEPS
 *       two traces through the public API into DIR; between them another
 *       CUPTI client subscribes, then traces with its own clock (Kineto).
 * Prints "launched K kernels" per trace.  The driver is loaded with dlopen
 * at the first "CUDA call" and initialised with cuInit, as the CUDA runtime
 * does (its injection, under `aiprof run`, then starts CUPTI).
 */
#include "aiprof.h"
#include "fake_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int (*cuInit)(unsigned);
static int (*cuCtxSynchronize)(void);
static void (*fakecuda_launch_)(const char *, uint64_t);
static int (*fakecuda_other_client_)(int);
#define fakecuda_launch fakecuda_launch_
#define fakecuda_other_client fakecuda_other_client_

/* The stand-in driver by its path, BUILD/fake_cuda/libcuda.so.1 beside
 * BUILD/bin (never a real driver; and a sanitizer's dlopen interceptor
 * would not search this program's run path). */
static int load_driver(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    if (n <= 0) {
        fprintf(stderr, "fake_cuda_prog: cannot read /proc/self/exe\n");
        return -1;
    }
    path[n] = 0;
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash : path, 64, "/../fake_cuda/libcuda.so.1");
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "fake_cuda_prog: %s\n", dlerror());
        return -1;
    }
    *(void **)&cuInit = dlsym(h, "cuInit");
    *(void **)&cuCtxSynchronize = dlsym(h, "cuCtxSynchronize");
    *(void **)&fakecuda_launch_ = dlsym(h, "fakecuda_launch");
    *(void **)&fakecuda_other_client_ = dlsym(h, "fakecuda_other_client");
    if (!cuInit || !cuCtxSynchronize || !fakecuda_launch_ || !fakecuda_other_client_) {
        fprintf(stderr, "fake_cuda_prog: libcuda.so.1 is not the stand-in\n");
        return -1;
    }
    return cuInit(0);
}

static int run_steps(int kernels, int n)
{
    static const char *const names[] = {"fake_kernel_a", "fake_kernel_b"};
    for (int s = 0; s < n; s++) {
        for (int k = 0; k < kernels; k++)
            fakecuda_launch(names[k % 2], 20000);
        if (s + 1 < n)
            cuCtxSynchronize();
    }
    printf("launched %d kernels\n", kernels * n);
    return kernels * n;
}

static int one_trace(const char *dir, int kernels, int n)
{
    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = dir;
    cfg.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_CUDA;
    aip_session *s = NULL;
    if (aip_session_create(&cfg, &s) != AIP_OK || aip_session_start(s) != AIP_OK) {
        fprintf(stderr, "fake_cuda_prog: %s\n", aip_last_error());
        return 1;
    }
    AIP_RANGE_PUSH("fake", "steps");
    run_steps(kernels, n);
    AIP_RANGE_POP();
    int rc = aip_session_stop(s) != AIP_OK;
    aip_session_destroy(s);
    return rc;
}

int main(int argc, char **argv)
{
    if (load_driver())
        return 1;
    if (argc == 4 && !strcmp(argv[1], "run")) {
        run_steps(atoi(argv[2]), atoi(argv[3]));
        return 0;
    }
    if (argc != 5 || strcmp(argv[1], "api")) {
        fprintf(stderr, "usage: fake_cuda_prog run KERNELS STEPS | api DIR KERNELS STEPS\n");
        return 2;
    }
    int k = atoi(argv[3]), n = atoi(argv[4]);
    if (one_trace(argv[2], k, n))
        return 1;
    fakecuda_other_client(FAKE_OTHER_SUBSCRIBE);
    fakecuda_other_client(FAKE_OTHER_OWN_CLOCK);
    return one_trace(argv[2], k, n);
}
