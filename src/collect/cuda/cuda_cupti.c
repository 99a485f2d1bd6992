/*
 * cuda_cupti.c — the CUDA back end at run time (docs/CUDA.md): finds
 * libcupti with dlopen when a trace that records device activity starts in
 * a process that has loaded CUDA, and feeds what CUPTI reports into the
 * device model.
 *
 *   - Device work (kernels, copies, fills, device memory) comes from the
 *     Activity API in buffers CUPTI fills and hands back on its own thread;
 *     cuda_translate.c turns them into tasks.  Stop flushes them.
 *   - Runtime calls come from the Callback API, on the thread that made
 *     them (the analyser links a kernel to the op open on the launching
 *     thread when its call began), with CUPTI's correlation id, which the
 *     kernel's record carries too.  Driver calls are recorded only when the
 *     program called the driver itself (not inside a runtime call).
 *   - Times: CUPTI stamps with our clock (CLOCK_MONOTONIC ns) through
 *     cuptiActivityRegisterTimestampCallback, registered at every start
 *     and checked against cuptiGetTimestamp(); otherwise its own clock,
 *     sampled between two host reads at start, on each new device and at
 *     stop.
 *   - CUPTI's rules: subscribe before anything else (refused: another
 *     client holds the process, and we profile the host only), unsubscribe
 *     at stop; synchronise the device before the forced flush; flush at
 *     exit from a handler registered after libcupti loaded, so that it runs
 *     before libcupti's own teardown.
 * libaiprof never links CUDA: a machine without a driver, a GPU or CUPTI
 * gets one message in the trace's log (status()), and the program runs on.
 */
#include "cuda_int.h"
#include "collector.h"
#include "clock.h"
#include "error.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (4u << 20)

/* The CUPTI functions used; a missing optional one is NULL. */
#define CUPTI_FUNCS(X)                                                                        \
    X(cuptiActivityRegisterCallbacks, 1)                                                      \
    X(cuptiActivityEnable, 1)                                                                 \
    X(cuptiActivityDisable, 1)                                                                \
    X(cuptiActivityFlushAll, 1)                                                               \
    X(cuptiActivityGetNextRecord, 1)                                                          \
    X(cuptiActivityGetNumDroppedRecords, 0)                                                   \
    X(cuptiActivityRegisterTimestampCallback, 0)                                              \
    X(cuptiGetTimestamp, 1)                                                                   \
    X(cuptiSubscribe, 1)                                                                      \
    X(cuptiUnsubscribe, 0)                                                                    \
    X(cuptiEnableDomain, 0)                                                                   \
    X(cuptiEnableCallback, 0)                                                                 \
    X(cuptiGetCallbackName, 0)                                                                \
    X(cuptiGetResultString, 0)

static struct {
#define DECL(f, req) __typeof__(&f) f;
    CUPTI_FUNCS(DECL)
#undef DECL
} cupti;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;   /* start, stop, injection */
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;  /* translation */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
static char start_error[512];
static int same_clock, active;
/* exit_armed: our exit handler is registered (once CUPTI has started, so
 * that it runs before libcupti's own exit-time teardown); cupti_gone: that
 * handler ran, and CUPTI is never called again. */
static int exit_armed, cupti_gone;
static pid_t started_pid; /* a forked child's exit must not stop its parent's CUPTI */
static CUpti_SubscriberHandle subscriber;
static aip__cuda_tctx tctx;
static uint64_t cupti_dropped;
static _Atomic int cuda_seen, injected;
static _Atomic int injection_waiting; /* cuInit's injection found the lock taken */

/* ---- finding libcupti -------------------------------------------------- */

/* dl_iterate_phdr: the path of a loaded object whose file name starts
 * with data[0] (copied into data[1], PATH_MAX). */
static int find_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char **want = data;
    const char *path = info->dlpi_name, *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    if (!base || strncmp(base, want[0], strlen(want[0])))
        return 0;
    snprintf((char *)want[1], 4096, "%s", path);
    return 1;
}

static int loaded_path(const char *prefix, char *path)
{
    const char *arg[2] = {prefix, path};
    return dl_iterate_phdr(find_loaded, arg);
}

static void *try_open(const char *path, char *why, size_t cap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, cap, "%s", e ? e : path);
    }
    return h;
}

/* A CUPTI the process has loaded already (Kineto's in a pip torch) comes
 * first: two CUPTIs in one process would fight over the driver's hooks.
 * Then AIPROF_CUPTI_LIB alone when set, then the loader's search
 * (LD_LIBRARY_PATH, the ld.so cache), then the toolkit's usual places. */
static void *open_cupti(void)
{
    char path[4096], why[512] = "";
    if (loaded_path("libcupti.so", path)) {
        void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (h)
            return h;
    }
    const char *forced = getenv("AIPROF_CUPTI_LIB");
    if (forced && *forced) {
        void *h = try_open(forced, why, sizeof why);
        if (!h)
            snprintf(load_error, sizeof load_error,
                     "libcupti cannot be loaded from AIPROF_CUPTI_LIB (%.400s)", why);
        return h;
    }
    static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
                                        "libcupti.so.11.8"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    static const char *const subdirs[] = {"extras/CUPTI/lib64", "lib64", "targets/x86_64-linux/lib"};
    for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++)
        for (size_t j = 0; homes[i] && *homes[i] && j < sizeof subdirs / sizeof subdirs[0]; j++) {
            snprintf(path, sizeof path, "%s/%s/libcupti.so", homes[i], subdirs[j]);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
        }
    snprintf(load_error, sizeof load_error,
             "libcupti cannot be found (searched LD_LIBRARY_PATH, the ld.so cache, $CUDA_HOME and "
             "/usr/local/cuda/{extras/CUPTI/lib64,lib64}; set AIPROF_CUPTI_LIB to its path)");
    return NULL;
}

static void load(void)
{
    void *h = open_cupti();
    if (!h)
        return;
#define RESOLVE(f, req)                                                                       \
    *(void **)&cupti.f = dlsym(h, #f);                                                        \
    if (req && !cupti.f && !load_error[0])                                                    \
        snprintf(load_error, sizeof load_error, "libcupti has no %s (too old a CUPTI)", #f);
    CUPTI_FUNCS(RESOLVE)
#undef RESOLVE
}

static const char *load_cupti(void)
{
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : NULL;
}

static const char *result_text(CUptiResult r)
{
    const char *s = NULL;
    if (cupti.cuptiGetResultString && cupti.cuptiGetResultString(r, &s) != CUPTI_SUCCESS)
        s = NULL;
    return s ? s : "unknown CUPTI error";
}

/* ---- what the program has loaded --------------------------------------- */

/* CUDA in this process: the driver or a shared runtime is loaded, or the
 * driver called InitializeInjection (a statically linked cudart, as nvcc
 * builds by default, shows nothing before its first call). */
static int cuda_in_process(void)
{
    if (atomic_load_explicit(&cuda_seen, memory_order_relaxed))
        return 1;
    char path[4096];
    if (!loaded_path("libcuda.so", path) && !loaded_path("libcudart.so", path) &&
        !atomic_load(&injected))
        return 0;
    atomic_store_explicit(&cuda_seen, 1, memory_order_relaxed); /* never unloaded */
    return 1;
}

/* ---- names ------------------------------------------------------------- */

/* Device names and the demangler are looked up on the program's thread at
 * each start: the driver and the loader are not to be called from CUPTI's
 * buffer thread (it may hold their locks: deadlock risk), where the
 * translation asks for them. */
static char dev_names[AIP_CUDA_MAX_ORDINALS][128];
static char *(*cxa_demangle)(const char *, char *, size_t *, int *);

static void look_up_names(void)
{
    if (!cxa_demangle) /* the program's libstdc++ (every CUDA program has one) */
        *(void **)&cxa_demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return;
    int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int (*get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
    int (*name)(char *, int, int) = (int (*)(char *, int, int))dlsym(h, "cuDeviceGetName");
    int n = 0, dev = 0;
    if (count && get && name && count(&n) == 0)
        for (int i = 0; i < n && i < AIP_CUDA_MAX_ORDINALS; i++)
            if (!dev_names[i][0] && get(&dev, i) == 0 &&
                name(dev_names[i], (int)sizeof dev_names[i], dev) != 0)
                dev_names[i][0] = 0;
    dlclose(h);
}

static const char *device_name(uint32_t ordinal, char *buf, size_t cap)
{
    if (ordinal >= AIP_CUDA_MAX_ORDINALS || !dev_names[ordinal][0])
        return NULL;
    snprintf(buf, cap, "%s", dev_names[ordinal]);
    return buf;
}

static char *demangle(const char *mangled)
{
    if (!cxa_demangle || strncmp(mangled, "_Z", 2))
        return NULL;
    int st = 0;
    char *s = cxa_demangle(mangled, NULL, NULL, &st);
    if (st) {
        free(s);
        return NULL;
    }
    return s;
}

/* ---- clock ------------------------------------------------------------- */

static uint64_t CUPTIAPI our_clock(void) { return aip__mono_ns(); }

static void sample(uint32_t dev)
{
    uint64_t t0 = aip__ticks(), ns = 0;
    if (same_clock)
        ns = aip__mono_ns();
    else if (cupti.cuptiGetTimestamp(&ns) != CUPTI_SUCCESS)
        return;
    uint64_t t1 = aip__ticks();
    aip__dev_clock(dev, t0, t1, ns, same_clock ? AIP_SYNC_SAME_CLOCK
                                               : AIP_SYNC_DEVICE_AND_HOST_TIMER);
    if (!same_clock) /* for memory events, which the model times on the host */
        tctx.offset_ns = (int64_t)(aip__mono_ns() - ns);
}

static void sample_all(void)
{
    for (uint32_t i = 0; i < AIP_CUDA_MAX_ORDINALS; i++)
        if (tctx.dev_ids[i])
            sample(tctx.dev_ids[i] - 1);
}

/* ---- buffers ------------------------------------------------------------ */

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, BUF_SIZE);
    *size = *buf ? BUF_SIZE : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                      size_t valid)
{
    (void)size;
    pthread_mutex_lock(&tlock);
    uint32_t known[AIP_CUDA_MAX_ORDINALS];
    memcpy(known, tctx.dev_ids, sizeof known);
    aip__cuda_translate_buffer(&tctx, buf, valid, cupti.cuptiActivityGetNextRecord);
    for (uint32_t i = 0; i < AIP_CUDA_MAX_ORDINALS; i++)
        if (tctx.dev_ids[i] && !known[i])
            sample(tctx.dev_ids[i] - 1); /* a device seen for the first time */
    size_t dropped = 0;
    if (cupti.cuptiActivityGetNumDroppedRecords &&
        cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        cupti_dropped += dropped;
    pthread_mutex_unlock(&tlock);
    free(buf);
}

/* ---- API calls (Callback API, on the calling thread) --------------------- */

static void CUPTIAPI on_api(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const void *data)
{
    (void)user, (void)cbid;
    const CUpti_CallbackData *d = data;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API)
        aip__cuda_on_api(domain == CUPTI_CB_DOMAIN_RUNTIME_API,
                         d->callbackSite == CUPTI_API_ENTER, d->correlationId, d->functionName);
}

/* ---- the session hooks ---------------------------------------------------- */

static const CUpti_ActivityKind optional_kinds[] = {
    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2};

/* The subscription comes first (CUPTI's rule: a client owns buffers,
 * kinds and callbacks only once subscribed).  Refused: another CUPTI
 * client (torch.profiler's Kineto, Nsight, a CUPTI tool) holds the
 * process; we must then touch nothing of CUPTI's, and profile the host.
 * Returns 0 or writes why not into start_error. */
static int subscribe(void)
{
    CUptiResult r = cupti.cuptiSubscribe(&subscriber, on_api, NULL);
    if (r == CUPTI_SUCCESS)
        return 0;
    subscriber = NULL;
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        snprintf(start_error, sizeof start_error,
                 "another CUPTI client (torch.profiler's Kineto, Nsight or a CUPTI tool) holds "
                 "this process (cuptiSubscribe: %s): no device activity is recorded, the host is "
                 "profiled", result_text(r));
        /* Said once per process as a warning: the device layer's summary
         * is given only at a trace's start and only when no back end
         * works, and the refusal may come later (at cuInit's injection). */
        static int said;
        if (!said++)
            aip__warn("CUDA: %s", start_error);
    } else
        snprintf(start_error, sizeof start_error, "CUPTI cannot start: cuptiSubscribe: %s "
                 "(error %d; no GPU or no driver?)", result_text(r), (int)r);
    return -1;
}

static void unsubscribe(void)
{
    if (subscriber && cupti.cuptiUnsubscribe)
        cupti.cuptiUnsubscribe(subscriber);
    subscriber = NULL;
}

/* Does cuptiGetTimestamp() — the clock of the records, by its header —
 * read our clock?  It must land between two reads of CLOCK_MONOTONIC
 * (1 ms of slack for the call): another client's callback (Kineto's TSC
 * ticks) or CUPTI's own CLOCK_REALTIME misses by far more. */
static int clock_is_ours(void)
{
    const uint64_t slack = 1000000;
    uint64_t t0 = aip__mono_ns(), c = 0;
    if (cupti.cuptiGetTimestamp(&c) != CUPTI_SUCCESS)
        return 0;
    uint64_t t1 = aip__mono_ns();
    return c + slack >= t0 && c <= t1 + slack;
}

/* At every start, after the subscription: our buffers and our clock,
 * which another client may have replaced since our last trace (Kineto
 * registers its own at each of its starts).  The clock only before any
 * kind is enabled (CUPTI's rule), and then checked rather than trusted:
 * when it does not read ours, records are mapped through clock samples. */
static int register_buffers_and_clock(void)
{
    CUptiResult r = cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        snprintf(start_error, sizeof start_error, "CUPTI cannot start: "
                 "cuptiActivityRegisterCallbacks: %s (error %d)", result_text(r), (int)r);
        return -1;
    }
    if (cupti.cuptiActivityRegisterTimestampCallback)
        cupti.cuptiActivityRegisterTimestampCallback(our_clock);
    same_clock = clock_is_ours();
    return 0;
}

/* The API callbacks of the calls recorded (cuda_callbacks.c). */
static void api_callbacks(uint32_t on)
{
    if (!subscriber)
        return;
    const aip__cuda_callback_fns f = {cupti.cuptiGetCallbackName, cupti.cuptiEnableCallback,
                                      cupti.cuptiEnableDomain};
    aip__cuda_api_callbacks(&f, subscriber, on);
}

static void at_exit_flush(void);

static void start_locked(void)
{
    start_error[0] = 0;
    if (active || !cuda_in_process())
        return;
    if (cupti_gone) {
        snprintf(start_error, sizeof start_error, "the process is exiting: CUPTI is shut down");
        return;
    }
    const char *why = load_cupti();
    if (why) {
        snprintf(start_error, sizeof start_error, "%s", why);
        return;
    }
    if (subscribe())
        return;
    if (register_buffers_and_clock()) {
        unsubscribe();
        return;
    }
    CUptiResult r = cupti.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        snprintf(start_error, sizeof start_error,
                 "CUPTI cannot trace kernels: cuptiActivityEnable(CONCURRENT_KERNEL): %s "
                 "(error %d; no GPU or no driver?)", result_text(r), (int)r);
        unsubscribe();
        return;
    }
    for (size_t i = 0; i < sizeof optional_kinds / sizeof optional_kinds[0]; i++)
        if (cupti.cuptiActivityEnable(optional_kinds[i]) != CUPTI_SUCCESS)
            aip__warn("CUDA: CUPTI activity kind %d cannot be enabled; not recorded",
                      (int)optional_kinds[i]);
    aip__cuda_api_new_trace();
    look_up_names();
    api_callbacks(1);
    /* Exit handlers run last-registered first: ours, registered now that
     * libcupti is loaded and initialised, runs before its teardown. */
    if (!exit_armed && atexit(at_exit_flush) == 0)
        exit_armed = 1;
    pthread_mutex_lock(&tlock);
    memset(&tctx.n, 0, sizeof tctx.n);
    cupti_dropped = 0;
    tctx.device_name = device_name;
    tctx.demangle = demangle;
    sample_all();
    pthread_mutex_unlock(&tlock);
    started_pid = getpid();
    active = 1;
}

/* Set while this thread starts CUPTI: CUPTI may call cuInit, whose
 * InitializeInjection must not take the lock again. */
static __thread int starting;

static void backend_start(const aip_config *cfg)
{
    if (starting)
        return;
    starting = 1;
    pthread_mutex_lock(&lock);
    start_locked();
    pthread_mutex_unlock(&lock);
    if (atomic_exchange(&injection_waiting, 0)) { /* cuInit came meanwhile */
        pthread_mutex_lock(&lock);
        start_locked();
        pthread_mutex_unlock(&lock);
    }
    starting = 0;
}

/* The device's unfinished work, before the forced flush: CUPTI hands an
 * unfinished kernel over without an end time (lost).  The runtime's
 * cudaDeviceSynchronize when the program loaded libcudart, else the
 * driver's cuCtxSynchronize (a static cudart; the context current on this
 * thread); neither loads anything.  Returns the CUDA error (0: none). */
static int sync_device(void)
{
    char path[4096];
    int (*fn)(void) = NULL;
    void *h = NULL;
    if (loaded_path("libcudart.so", path) && (h = dlopen(path, RTLD_NOW | RTLD_NOLOAD)))
        *(void **)&fn = dlsym(h, "cudaDeviceSynchronize");
    if (!fn) {
        if (h)
            dlclose(h);
        if ((h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)))
            *(void **)&fn = dlsym(h, "cuCtxSynchronize");
    }
    int r = fn ? fn() : -1;
    if (h)
        dlclose(h);
    return r;
}

typedef struct stop_counts {
    aip__cuda_counts n;
    uint64_t lost;
    int sync;
} stop_counts;

/* The trace's end for CUDA, with `lock` held and the trace still
 * recording: wait for the device, hand every buffer over (forced: on this
 * thread, now), disable what we enabled, and give the subscription back so
 * that another client (a later torch.profiler) can have it. */
static stop_counts stop_locked(void)
{
    stop_counts out;
    api_callbacks(0);
    out.sync = aip__cuda_api_calls_seen() ? sync_device() : 0;
    cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    cupti.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (size_t i = 0; i < sizeof optional_kinds / sizeof optional_kinds[0]; i++)
        cupti.cuptiActivityDisable(optional_kinds[i]);
    unsubscribe();
    pthread_mutex_lock(&tlock);
    sample_all();
    out.n = tctx.n;
    out.lost = cupti_dropped;
    pthread_mutex_unlock(&tlock);
    active = 0;
    return out;
}

static void say_stop(const stop_counts *c)
{
    if (c->n.dropped)
        aip__warn("CUDA: %llu activity records dropped (cut, unreadable, or unfinished at the "
                  "stop: no end time%s)", (unsigned long long)c->n.dropped,
                  c->sync ? "; the device could not be synchronised" : "");
    if (c->n.no_device)
        aip__warn("CUDA: %llu activity records name a device or stream beyond aiprof's tables "
                  "(%d devices, %d streams); not recorded",
                  (unsigned long long)c->n.no_device, AIP_DEV_MAX_DEVICES, AIP_DEV_MAX_QUEUES);
    if (c->lost)
        aip__warn("CUDA: CUPTI dropped %llu records (its buffers were full)",
                  (unsigned long long)c->lost);
}

static void backend_stop(void)
{
    pthread_mutex_lock(&lock);
    if (!active) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stop_counts c = stop_locked();
    pthread_mutex_unlock(&lock);
    say_stop(&c);
}

/* At exit, before libcupti's teardown (see start_locked): a trace still
 * recording gets its device records now, while CUPTI can still give them
 * (the trace itself ends in a later exit handler: the preload's, the
 * program's own); after this, CUPTI is not called again. */
static void at_exit_flush(void)
{
    pthread_mutex_lock(&lock);
    int was = active && getpid() == started_pid;
    stop_counts c = {0};
    if (was)
        c = stop_locked();
    cupti_gone = 1;
    pthread_mutex_unlock(&lock);
    if (was)
        say_stop(&c);
}

static const char *backend_status(void)
{
    if (!cuda_in_process()) {
        const char *inj = getenv("CUDA_INJECTION64_PATH");
        if (inj && strstr(inj, "libaiprof"))
            return "the program has not initialised CUDA yet (CUPTI starts at its cuInit, "
                   "through CUDA_INJECTION64_PATH)";
        return "the program has not loaded CUDA (libcuda.so.1 or libcudart.so)";
    }
    if (start_error[0])
        return start_error;
    return load_cupti();
}

/* The machine: a driver, a device, and a CUPTI.  Loads and initialises the
 * driver (aip_supported_activities may). */
static char probe_text[512];
static void probe_once(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(probe_text, sizeof probe_text, "no CUDA driver: libcuda.so.1 cannot be loaded (%s)",
                 e ? e : "not found");
        return;
    }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int n = 0, r = init ? init(0) : -1;
    if (r != 0) {
        snprintf(probe_text, sizeof probe_text, "cuInit failed (CUDA error %d): no usable GPU", r);
        return;
    }
    if (!count || count(&n) != 0 || n <= 0) {
        snprintf(probe_text, sizeof probe_text, "no CUDA device (cuDeviceGetCount: %d)", n);
        return;
    }
    const char *why = load_cupti();
    if (why)
        snprintf(probe_text, sizeof probe_text, "%s", why);
}

static const char *backend_probe(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, probe_once);
    return probe_text[0] ? probe_text : NULL;
}

/* `aiprof run` names libaiprof in CUDA_INJECTION64_PATH: the driver loads
 * it and calls InitializeInjection (below) at the program's cuInit. */
const aip__collector aip__collector_cuda = {
    .name = "CUDA",
    .wanted = aip__dev_wanted,
    .start = backend_start,
    .stop = backend_stop,
    .backend = AIP_BACKEND_CUDA,
    .activities = AIP_ACTIVITY_CUDA,
    .status = backend_status,
    .probe = backend_probe,
    .inject_var = "CUDA_INJECTION64_PATH",
    .record_kinds = (1ull << AIP_REC_DEVICE) | (1ull << AIP_REC_DEVICE_QUEUE) |
                    (1ull << AIP_REC_DEVICE_TASK) | (1ull << AIP_REC_DEVICE_API) |
                    (1ull << AIP_REC_DEVICE_MEMORY) | (1ull << AIP_REC_DEVICE_CLOCK),
};

/* CUDA_INJECTION64_PATH=.../libaiprof.so.0: the driver calls this from
 * cuInit, in any CUDA program (statically linked cudart included), before
 * the program's first kernel.  A trace already recording device activity
 * starts CUPTI now; a later one finds CUDA loaded.  `aiprof run` sets the
 * variable when it is not set. */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
    atomic_store(&injected, 1);
    if (!aip__dev_recording() || starting)
        return 1;
    /* Called inside cuInit, under the driver's own locks: waiting here for
     * a start or stop on another thread, which may be waiting inside CUPTI
     * for those driver locks, would deadlock.  When the lock is taken, the
     * start holding it starts CUPTI once it let go (injection_waiting) or
     * the stop holding it ends the trace. */
    if (pthread_mutex_trylock(&lock) != 0) {
        atomic_store(&injection_waiting, 1);
        return 1;
    }
    starting = 1;
    start_locked();
    starting = 0;
    pthread_mutex_unlock(&lock);
    return 1;
}
