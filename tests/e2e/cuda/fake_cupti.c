/*
 * fake_cupti.c — a stand-in libcupti for tests/e2e/test_cuda_cupti_rules.sh,
 * loaded by aiprof through AIPROF_CUPTI_LIB.  It implements the CUPTI calls
 * aiprof makes, with the rules the real one has and aiprof must keep:
 *
 *   - one subscriber at a time (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
 *     buffers, activity kinds and the clock belong to the subscribed
 *     client: a call to them without a subscription prints a "RULE" line;
 *     FAKE_CUPTI_OTHER_CLIENT=1 makes another client hold the process;
 *   - records are stamped by the registered timestamp callback, else by
 *     CUPTI's own clock (CLOCK_REALTIME, as CUPTI's on Linux);
 *     cuptiGetTimestamp reads the same; FAKE_CUPTI_IGNORE_TS_CB=1 accepts a
 *     registration and keeps the own clock (a CUPTI that ignores it);
 *   - a kernel is unfinished until the device synchronises (fake_cuda.c's
 *     cuCtxSynchronize): a default flush holds its buffer back, a forced
 *     flush hands it over with no end time;
 *   - API callbacks are enabled per call (cuptiEnableCallback, by the ids
 *     cuptiGetCallbackName names: a few runtime and driver calls, real ids)
 *     or per domain; FAKE_CUPTI_LIST_CALLBACKS=1 prints each enabling as
 *     "enabled callback DOMAIN NAME" or "enabled domain DOMAIN" on stdout;
 *     FAKE_CUPTI_NO_NAMES=1 makes cuptiGetCallbackName unsupported (an
 *     older CUPTI); a launch calls back cudaLaunchKernel when enabled;
 *   - at exit, a destructor registered when the library was loaded (as
 *     libcupti's C++ statics are) tears it down: every later call prints
 *     "called after teardown" and fails.
 * Kernel records are CUpti_ActivityKernel10 laid back to back, 8-aligned.
 */
#include "fake_cuda.h"

#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))
#define MAX_KERNELS 4096

typedef struct kernel {
    const char *name;
    uint32_t correlation;
    uint64_t start, duration;
    int done;
} kernel;

static struct {
    int gone, subscribed, other_holds, ignore_ts;
    CUpti_CallbackFunc cb;
    void *user;
    int runtime_on, list_callbacks, no_names;
    unsigned char enabled[2][1024]; /* [driver, runtime][cbid] */
    CUpti_BuffersCallbackRequestFunc request;
    CUpti_BuffersCallbackCompleteFunc complete;
    CUpti_TimestampCallbackFunc ts;
    int kernels_on;
    kernel pending[MAX_KERNELS];
    size_t n;
    uint32_t correlation;
} st;

static struct CUpti_Subscriber_st *const the_handle = (struct CUpti_Subscriber_st *)&st;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Another client's clock: "ticks", an hour away from CLOCK_MONOTONIC. */
static uint64_t CUPTIAPI other_clock(void) { return clock_ns(CLOCK_MONOTONIC) + 3600000000000ull; }

static uint64_t now(void)
{
    return st.ts && !st.ignore_ts ? st.ts() : clock_ns(CLOCK_REALTIME);
}

/* 1 when the call may go on; prints why not. */
static int usable(const char *fn, int needs_subscription)
{
    if (st.gone) {
        fprintf(stderr, "fake_cupti: %s called after teardown\n", fn);
        return 0;
    }
    if (needs_subscription && !st.subscribed)
        fprintf(stderr, "fake_cupti: RULE: %s without a subscription (%s)\n", fn,
                st.other_holds ? "another client's buffers and kinds" : "before cuptiSubscribe");
    return 1;
}

static void teardown(void) { st.gone = 1; }

__attribute__((constructor)) static void loaded(void)
{
    const char *o = getenv("FAKE_CUPTI_OTHER_CLIENT"), *i = getenv("FAKE_CUPTI_IGNORE_TS_CB");
    st.other_holds = o && !strcmp(o, "1");
    st.ignore_ts = i && !strcmp(i, "1");
    const char *l = getenv("FAKE_CUPTI_LIST_CALLBACKS"), *nn = getenv("FAKE_CUPTI_NO_NAMES");
    st.list_callbacks = l && !strcmp(l, "1");
    st.no_names = nn && !strcmp(nn, "1");
    atexit(teardown);
}

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *user)
{
    if (!usable("cuptiSubscribe", 0))
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (st.subscribed || st.other_holds)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    st.subscribed = 1;
    st.cb = cb;
    st.user = user;
    *sub = the_handle;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
    if (!usable("cuptiUnsubscribe", 1) || sub != the_handle)
        return CUPTI_ERROR_INVALID_PARAMETER;
    st.subscribed = 0;
    st.cb = NULL;
    st.runtime_on = 0;
    memset(st.enabled, 0, sizeof st.enabled);
    return CUPTI_SUCCESS;
}

/* The calls this CUPTI can name: some that the back end records, some
 * that it must leave alone (torch makes thousands of them a step). */
static const struct {
    CUpti_CallbackDomain domain;
    uint32_t cbid;
    const char *name;
} calls[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
     "cudaGetDevice_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
     "cudaGetLastError_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
     "cudaMemcpyAsync_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
     "cudaStreamSynchronize_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
     "cudaDeviceSynchronize_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
     "cudaLaunchKernel_v7000"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
     "cudaStreamIsCapturing_v10000"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020,
     "cudaMallocAsync_v11020"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, "cuCtxGetCurrent"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize"},
};

static const char *domain_text(CUpti_CallbackDomain d)
{
    return d == CUPTI_CB_DOMAIN_RUNTIME_API ? "RUNTIME" : d == CUPTI_CB_DOMAIN_DRIVER_API ? "DRIVER"
                                                                                         : "OTHER";
}

static const char *call_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
    for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
        if (calls[i].domain == domain && calls[i].cbid == cbid)
            return calls[i].name;
    return NULL;
}

API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                     const char **name)
{
    if (!usable("cuptiGetCallbackName", 0))
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (st.no_names)
        return CUPTI_ERROR_NOT_SUPPORTED;
    *name = call_name(domain, cbid);
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
                                    CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (!usable("cuptiEnableCallback", 1) || sub != the_handle || cbid >= 1024 ||
        (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API))
        return CUPTI_ERROR_INVALID_PARAMETER;
    st.enabled[domain == CUPTI_CB_DOMAIN_RUNTIME_API][cbid] = enable != 0;
    if (enable && st.list_callbacks) {
        const char *name = call_name(domain, cbid);
        printf("enabled callback %s %s\n", domain_text(domain), name ? name : "(unnamed)");
    }
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle sub,
                                  CUpti_CallbackDomain domain)
{
    if (!usable("cuptiEnableDomain", 1) || sub != the_handle)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        st.runtime_on = (int)enable;
    if (enable && st.list_callbacks)
        printf("enabled domain %s\n", domain_text(domain));
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                               CUpti_BuffersCallbackCompleteFunc complete)
{
    if (!usable("cuptiActivityRegisterCallbacks", 1))
        return CUPTI_ERROR_NOT_INITIALIZED;
    st.request = request;
    st.complete = complete;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    if (!usable("cuptiActivityRegisterTimestampCallback", 1))
        return CUPTI_ERROR_NOT_INITIALIZED;
    st.ts = fn;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
    if (!usable("cuptiGetTimestamp", 0))
        return CUPTI_ERROR_NOT_INITIALIZED;
    *ts = now();
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (!usable("cuptiActivityEnable", 1))
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        st.kernels_on = 1;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if (!usable("cuptiActivityDisable", 1))
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        st.kernels_on = 0;
    return CUPTI_SUCCESS;
}

#define STRIDE ((sizeof(CUpti_ActivityKernel10) + 7) & ~(size_t)7)

/* One buffer per call, as many records as fit. */
static size_t deliver(size_t from)
{
    uint8_t *buf = NULL;
    size_t size = 0, max = 0, valid = 0;
    st.request(&buf, &size, &max);
    if (!buf || size < STRIDE)
        return st.n; /* no buffer: the records are lost */
    for (; from < st.n && valid + STRIDE <= size; from++, valid += STRIDE) {
        const kernel *k = &st.pending[from];
        CUpti_ActivityKernel10 r;
        memset(&r, 0, sizeof r);
        r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        r.name = k->name;
        r.start = k->start;
        r.end = k->done ? k->start + k->duration : 0; /* unfinished: no end */
        r.correlationId = k->correlation;
        r.deviceId = 0;
        r.contextId = 1;
        r.streamId = 7;
        r.gridX = r.gridY = r.gridZ = 1;
        r.blockX = 128, r.blockY = r.blockZ = 1;
        memcpy(buf + valid, &r, sizeof r);
    }
    fakecuda_in_buffer_callback(1);
    st.complete(NULL, 0, buf, size, valid);
    fakecuda_in_buffer_callback(0);
    return from;
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    if (!usable("cuptiActivityFlushAll", 1))
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (!st.request || !st.complete)
        return CUPTI_ERROR_INVALID_OPERATION;
    int unfinished = 0;
    for (size_t i = 0; i < st.n; i++)
        unfinished |= !st.pending[i].done;
    if (unfinished && !(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED))
        return CUPTI_SUCCESS; /* a buffer with an unfinished record waits */
    for (size_t i = 0; i < st.n;)
        i = deliver(i);
    st.n = 0;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    if (!usable("cuptiActivityGetNextRecord", 0))
        return CUPTI_ERROR_NOT_INITIALIZED;
    size_t off = *rec ? (size_t)((uint8_t *)*rec - buf) + STRIDE : 0;
    if (off + STRIDE > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)(buf + off);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
    (void)ctx, (void)stream;
    *n = 0;
    return usable("cuptiActivityGetNumDroppedRecords", 0) ? CUPTI_SUCCESS
                                                           : CUPTI_ERROR_NOT_INITIALIZED;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
             : r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (fake)";
    return CUPTI_SUCCESS;
}

/* ---- the driver's side (fake_cuda.h) ------------------------------------ */

static void api_callback(int site, uint32_t correlation)
{
    if (!st.cb ||
        !(st.runtime_on || st.enabled[1][CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000]))
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site ? CUPTI_API_EXIT : CUPTI_API_ENTER;
    d.functionName = "cudaLaunchKernel_v7000";
    d.correlationId = correlation;
    st.cb(st.user, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
}

static void launch(const char *name, uint64_t duration_ns)
{
    if (st.gone)
        return;
    uint32_t corr = ++st.correlation;
    api_callback(0, corr);
    if (st.kernels_on && st.n < MAX_KERNELS)
        st.pending[st.n++] = (kernel){name, corr, now(), duration_ns, 0};
    api_callback(1, corr);
}

static void sync_all(void)
{
    for (size_t i = 0; i < st.n; i++)
        st.pending[i].done = 1;
}

static int other_client(int what)
{
    if (what == FAKE_OTHER_OWN_CLOCK) {
        /* Kineto's activity tracing needs no subscription: at its start it
         * registers its own clock, which its stop leaves in place. */
        st.ts = other_clock;
        printf("other client: traced with its own clock\n");
        return 0;
    }
    if (st.subscribed || st.other_holds) {
        printf("other client: refused (%s holds the subscription)\n",
               st.subscribed ? "aiprof" : "another client");
        return 1;
    }
    printf("other client: subscribed\n"); /* and leaves at once */
    return 0;
}

static const fake_cupti_hooks hooks = {launch, sync_all, other_client};

__attribute__((constructor)) static void attach(void) { fakecuda_attach(&hooks); }
