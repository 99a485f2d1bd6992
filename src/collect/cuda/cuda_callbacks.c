/*
 * cuda_callbacks.c — which API callbacks the CUDA back end enables
 * (docs/CUDA.md "API calls"): the runtime and driver calls that launch
 * work, copy or set memory, allocate or free it, or wait for the device or
 * a stream — the calls that kernels and copies correlate with and that the
 * advisor reads — not every call of both domains: torch makes thousands of
 * cudaGetDevice, cudaStreamIsCapturing, cuCtxGetCurrent... calls a step,
 * and each enabled one costs a callback on the program's thread.  The ids
 * are found by their names (cuptiGetCallbackName) rather than compiled in,
 * so that a CUPTI older or newer than the headers is served alike, and
 * switched on and off here at each start and stop (cuda_cupti.c).
 */
#include "cuda_int.h"

#include <string.h>

/* Names start with the function's ("cudaMemcpyAsync_v3020",
 * "cuLaunchKernel_ptsz"): a prefix takes every version and per-thread
 * stream variant. */
static const char *const runtime_calls[] = {
    "cudaLaunch", "__cudaLaunch", "cudaGraphLaunch", /* launches (CUDA 13 <<<>>>: __cuda) */
    "cudaMemcpy", "cudaMemset", "cudaMemPrefetch",    /* copies */
    "cudaMalloc", "cudaFree", "cudaHostAlloc",        /* memory */
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
    "cudaStreamWaitEvent", "cudaEventRecord",         /* waits, and what they wait on */
};
static const char *const driver_calls[] = {
    "cuLaunch", "cuGraphLaunch",
    "cuMemcpy", "cuMemsetD", "cuMemPrefetch",
    "cuMemAlloc", "cuMemFree", "cuMemHostAlloc",
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
    "cuStreamWaitEvent", "cuEventRecord",
};

int aip__cuda_callback_wanted(CUpti_CallbackDomain domain, const char *name)
{
    const char *const *p = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_calls : driver_calls;
    size_t n = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? sizeof runtime_calls / sizeof *p
             : domain == CUPTI_CB_DOMAIN_DRIVER_API  ? sizeof driver_calls / sizeof *p
                                                     : 0;
    for (size_t i = 0; name && i < n; i++)
        if (!strncmp(name, p[i], strlen(p[i])))
            return 1;
    return 0;
}

size_t aip__cuda_callback_ids(aip__cuda_name_fn name_of, CUpti_CallbackDomain domain,
                              uint32_t *ids, size_t cap)
{
    /* Ids are numbered from 1 without gaps; a newer CUPTI has more of
     * them than these headers know (the bound stops a CUPTI that names
     * anything). */
    uint32_t known = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_RUNTIME_TRACE_CBID_SIZE
                                                           : CUPTI_DRIVER_TRACE_CBID_SIZE;
    size_t n = 0;
    for (uint32_t id = 1; id < 65536; id++) {
        const char *name = NULL;
        if (name_of(domain, id, &name) != CUPTI_SUCCESS || !name) {
            if (id >= known)
                break;
            continue;
        }
        if (aip__cuda_callback_wanted(domain, name) && n < cap)
            ids[n++] = id;
    }
    return n;
}

/* The ids, looked up once per process (under the back end's lock, as every
 * start and stop). */
#define MAX_IDS 512
static const CUpti_CallbackDomain api_domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                    CUPTI_CB_DOMAIN_DRIVER_API};
static uint32_t ids_of[2][MAX_IDS];
static size_t n_ids[2];
static int looked_up;

void aip__cuda_api_callbacks(const aip__cuda_callback_fns *f, CUpti_SubscriberHandle sub,
                             uint32_t on)
{
    if (!looked_up && f->name && f->enable_callback)
        for (int d = 0; d < 2; d++)
            n_ids[d] = aip__cuda_callback_ids(f->name, api_domains[d], ids_of[d], MAX_IDS);
    looked_up = 1;
    /* A CUPTI that names none of the runtime's launches (or cannot name
     * its callbacks) gets both whole domains, as before there was a choice. */
    int by_id = n_ids[0] > 0;
    for (int d = 0; d < 2; d++) {
        if (!by_id && f->enable_domain)
            f->enable_domain(on, sub, api_domains[d]);
        for (size_t i = 0; by_id && i < n_ids[d]; i++)
            f->enable_callback(on, sub, api_domains[d], ids_of[d][i]);
    }
}
