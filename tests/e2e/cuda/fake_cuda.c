/*
 * fake_cuda.c — a stand-in libcuda.so.1 for tests/e2e/test_cuda_cupti_rules.sh
 * (built into its own directory, never on the loader's search path): one
 * device, the calls aiprof's CUDA back end makes into the driver
 * (cuDeviceGet, cuDeviceGetName, cuCtxSynchronize), and the program's
 * kernel launches, forwarded to the CUPTI stand-in when it is loaded
 * (fake_cuda.h).  Loaded into a program, it makes aiprof see "CUDA in this
 * process", as the real driver does; its cuInit calls the injection named
 * by CUDA_INJECTION64_PATH (InitializeInjection), as the real one does.
 * The program loads it with dlopen when it first needs it, as the CUDA
 * runtime does: CUPTI then starts during main, not before it.
 */
#include "fake_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define API __attribute__((visibility("default")))

static const fake_cupti_hooks *hooks;
static int in_callback, launched;

API void fakecuda_attach(const fake_cupti_hooks *h) { hooks = h; }
API void fakecuda_in_buffer_callback(int on) { in_callback = on; }

/* What the rule forbids, said as the CUPTI stand-in says broken rules. */
static void check_thread(const char *fn)
{
    if (in_callback)
        fprintf(stderr, "fake_cupti: RULE: driver call %s inside CUPTI's buffer callback\n", fn);
}

API int cuInit(unsigned flags)
{
    static int done;
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (!done++ && inj && *inj) {
        void *h = dlopen(inj, RTLD_NOW);
        int (*init)(void) = NULL;
        if (h)
            *(void **)&init = dlsym(h, "InitializeInjection");
        if (init)
            init();
    }
    return flags ? 1 : 0;
}

API int cuDeviceGetCount(int *n)
{
    check_thread("cuDeviceGetCount");
    *n = 1;
    return 0;
}

API int cuDeviceGet(int *dev, int ordinal)
{
    check_thread("cuDeviceGet");
    if (ordinal != 0)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *dev = 0;
    return 0;
}

API int cuDeviceGetName(char *buf, int len, int dev)
{
    check_thread("cuDeviceGetName");
    snprintf(buf, (size_t)len, "Fake CUDA device %d", dev);
    return 0;
}

/* The device finishes every kernel launched so far.  Before any launch,
 * the program has made no CUDA work: a profiler that synchronises then
 * (a runtime synchronisation would create a context) breaks a rule. */
API int cuCtxSynchronize(void)
{
    if (!launched)
        fprintf(stderr, "fake_cupti: RULE: cuCtxSynchronize before the program's first launch\n");
    if (hooks)
        hooks->sync();
    return 0;
}

API void fakecuda_launch(const char *name, uint64_t duration_ns)
{
    launched = 1;
    if (hooks)
        hooks->launch(name, duration_ns);
}

API int fakecuda_other_client(int what) { return hooks ? hooks->other_client(what) : -1; }
