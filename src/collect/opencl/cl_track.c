/*
 * cl_track.c — what the OpenCL back end knows of the application's objects
 * (queues, kernel names, devices), and its session hooks (see cl_int.h).
 *
 * Queues and kernels (their names' interned ids) are found by handle on
 * every enqueue, from any thread: open-addressing tables whose slots are
 * claimed under a lock and read without one (a key is published after its
 * value).  Slots are never freed; a handle reused after the application
 * released the object is detected at the new object's creation, which
 * replaces what was known.
 * Devices are few: an array under a lock, each with its clock-sample state.
 */
#include "cl_int.h"
#include "collector.h"

#include "clock.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- handle tables ------------------------------------------------------ */

#define TABLE_BITS 13
#define TABLE_CAP (1u << TABLE_BITS)

typedef struct handle_table {
    _Atomic uintptr_t keys[TABLE_CAP];
    _Atomic uint64_t vals[TABLE_CAP];
    unsigned used;
    pthread_mutex_t lock;
} handle_table;

static handle_table queues = {.lock = PTHREAD_MUTEX_INITIALIZER};
static handle_table kernels = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned slot_of(uintptr_t key)
{
    return (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - TABLE_BITS));
}

/* The value slot of key, or NULL. */
static _Atomic uint64_t *table_find(handle_table *t, uintptr_t key)
{
    if (!key)
        return NULL; /* a NULL handle (0 marks free slots) */
    unsigned i = slot_of(key);
    for (unsigned n = 0; n < TABLE_CAP; n++, i = (i + 1) & (TABLE_CAP - 1)) {
        uintptr_t k = atomic_load_explicit(&t->keys[i], memory_order_acquire);
        if (k == key)
            return &t->vals[i];
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* Set key's value (claiming a slot when new).  @return 0 when full. */
static int table_put(handle_table *t, uintptr_t key, uint64_t val)
{
    if (!key)
        return 0;
    pthread_mutex_lock(&t->lock);
    unsigned i = slot_of(key);
    int ok = 0;
    for (unsigned n = 0; n < TABLE_CAP; n++, i = (i + 1) & (TABLE_CAP - 1)) {
        uintptr_t k = atomic_load_explicit(&t->keys[i], memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&t->vals[i], val, memory_order_release);
            ok = 1;
            break;
        }
        if (k == 0) {
            /* Keep a quarter free so that misses end quickly. */
            if (t->used >= TABLE_CAP / 4 * 3)
                break;
            atomic_store_explicit(&t->vals[i], val, memory_order_relaxed);
            atomic_store_explicit(&t->keys[i], key, memory_order_release);
            t->used++;
            ok = 1;
            break;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return ok;
}

/* ---- kernel names ------------------------------------------------------- */

aip_string_id aip__cl_kernel_name_id(cl_kernel k)
{
    _Atomic uint64_t *v = table_find(&kernels, (uintptr_t)k);
    if (v) {
        uint64_t id = atomic_load_explicit(v, memory_order_acquire);
        if (id)
            return (aip_string_id)id;
    }
    const aip__cl_api *cl = aip__cl_real();
    char buf[256];
    size_t size = 0;
    aip_string_id id = 0;
    if (cl->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &size) == CL_SUCCESS && size) {
        char *text = size <= sizeof buf ? buf : malloc(size);
        if (text &&
            cl->clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, text, NULL) == CL_SUCCESS) {
            text[size - 1] = '\0';
            id = aip_intern(text);
        }
        if (text != buf)
            free(text);
    }
    if (!id)
        id = aip_intern("(unknown kernel)");
    /* When the table is full the name is asked again next time: slower,
     * still right. */
    table_put(&kernels, (uintptr_t)k, id);
    return id;
}

void aip__cl_kernel_created(cl_kernel k)
{
    _Atomic uint64_t *v = table_find(&kernels, (uintptr_t)k);
    if (v)
        atomic_store_explicit(v, 0, memory_order_release);
}

/* ---- devices ------------------------------------------------------------ */

typedef struct cl_dev {
    cl_device_id key;
    uint32_t id;
    aip__cl_clock clock;
} cl_dev;

static cl_dev devices[AIP_DEV_MAX_DEVICES];
static unsigned n_devices;
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static uint8_t kind_of(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU)
        return AIP_DEVKIND_GPU;
    if (t & CL_DEVICE_TYPE_ACCELERATOR)
        return AIP_DEVKIND_ACCELERATOR;
    if (t & CL_DEVICE_TYPE_CPU)
        return AIP_DEVKIND_CPU;
    return AIP_DEVKIND_OTHER;
}

uint32_t aip__cl_device_id(cl_device_id dev)
{
    pthread_mutex_lock(&devices_lock);
    for (unsigned i = 0; i < n_devices; i++)
        if (devices[i].key == dev) {
            uint32_t id = devices[i].id;
            pthread_mutex_unlock(&devices_lock);
            return id;
        }
    const aip__cl_api *cl = aip__cl_real();
    char name[256] = "", vendor[256] = "";
    cl_device_type type = 0;
    if (cl->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL) != CL_SUCCESS)
        strcpy(name, "OpenCL device");
    if (cl->clGetDeviceInfo(dev, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL) != CL_SUCCESS)
        vendor[0] = '\0';
    if (cl->clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
        type = 0;
    name[sizeof name - 1] = vendor[sizeof vendor - 1] = '\0';
    uint32_t id =
        aip__dev_device(AIP_BACKEND_OPENCL, (uint64_t)(uintptr_t)dev, name, vendor, kind_of(type));
    if (id != AIP_DEV_NONE && n_devices < AIP_DEV_MAX_DEVICES) {
        cl_dev *d = &devices[n_devices++];
        memset(d, 0, sizeof *d);
        d->key = dev;
        d->id = id;
        /* A device first seen while a trace records needs its sample now. */
        if (aip__dev_recording())
            aip__cl_clock_sample(dev, id, &d->clock);
    }
    pthread_mutex_unlock(&devices_lock);
    return id;
}

void aip__cl_clock_sample_all(void)
{
    pthread_mutex_lock(&devices_lock);
    for (unsigned i = 0; i < n_devices; i++)
        aip__cl_clock_sample(devices[i].key, devices[i].id, &devices[i].clock);
    pthread_mutex_unlock(&devices_lock);
}

/* ---- queues ------------------------------------------------------------- */

/* value: bit 63 valid | flags << 48 | device << 32 | queue */
static uint64_t queue_pack(const aip__cl_queue *q)
{
    return 1ull << 63 | (uint64_t)(q->flags & 0xff) << 48 | (uint64_t)(q->device & 0xffff) << 32 |
           q->queue;
}

static void queue_unpack(uint64_t v, aip__cl_queue *q)
{
    q->queue = (uint32_t)v;
    uint32_t dev = (uint32_t)(v >> 32) & 0xffff;
    q->device = dev == 0xffff ? AIP_DEV_NONE : dev;
    q->flags = (unsigned)(v >> 48) & 0xff;
}

void aip__cl_queue_created(cl_command_queue q, cl_device_id dev, unsigned flags)
{
    if (table_find(&queues, (uintptr_t)q))
        aip__dev_queue_forget((uint64_t)(uintptr_t)q); /* an address reused */
    aip__cl_queue info = {.device = aip__cl_device_id(dev), .flags = flags};
    info.queue = info.device == AIP_DEV_NONE
                     ? AIP_DEV_NONE
                     : aip__dev_queue(info.device, (uint64_t)(uintptr_t)q, "");
    table_put(&queues, (uintptr_t)q, queue_pack(&info));
}

int aip__cl_queue_info(cl_command_queue q, aip__cl_queue *out)
{
    _Atomic uint64_t *v = table_find(&queues, (uintptr_t)q);
    if (v) {
        queue_unpack(atomic_load_explicit(v, memory_order_acquire), out);
        return 1;
    }
    /* Created before aiprof was there to see it (or the table is full). */
    const aip__cl_api *cl = aip__cl_real();
    cl_device_id dev;
    cl_command_queue_properties props = 0;
    if (!q || cl->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS ||
        cl->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL) != CL_SUCCESS)
        return 0;
    aip__cl_queue_created(q, dev, props & CL_QUEUE_PROFILING_ENABLE ? AIP_CLQ_PROFILING : 0);
    v = table_find(&queues, (uintptr_t)q);
    if (v) {
        queue_unpack(atomic_load_explicit(v, memory_order_acquire), out);
        return 1;
    }
    out->device = aip__cl_device_id(dev);
    out->queue = AIP_DEV_NONE;
    out->flags = props & CL_QUEUE_PROFILING_ENABLE ? AIP_CLQ_PROFILING : 0;
    return 1;
}

unsigned aip__cl_queue_forced(cl_command_queue q)
{
    _Atomic uint64_t *v = table_find(&queues, (uintptr_t)q);
    if (!v)
        return 0;
    aip__cl_queue info;
    queue_unpack(atomic_load_explicit(v, memory_order_acquire), &info);
    return info.flags & AIP_CLQ_FORCED ? info.flags : 0;
}

/* ---- the session hooks -------------------------------------------------- */

static void zero_counters(void)
{
    atomic_store(&aip__cl_count.untimed, 0);
    atomic_store(&aip__cl_count.failed, 0);
    atomic_store(&aip__cl_count.no_callback, 0);
    atomic_store(&aip__cl_count.bad_times, 0);
}

static void backend_start(const aip_config *cfg)
{
    zero_counters();
    aip__cl_clock_sample_all();
}

/* How long a stopping trace waits for device times still owed. */
#define STOP_WAIT_NS (2ull * 1000 * 1000 * 1000)

static void backend_stop(void)
{
    aip__cl_hand_over_all();
    uint64_t t0 = aip__mono_ns();
    while (aip__cl_outstanding() > 0 &&
           aip__mono_ns() - t0 < STOP_WAIT_NS) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    aip__cl_clock_sample_all();
    long long owed = aip__cl_outstanding();
    if (owed > 0)
        aip__warn("OpenCL: %lld device commands had not completed %.1f s after the trace "
                  "began to stop; their device times are not recorded",
                  owed, STOP_WAIT_NS / 1e9);
    unsigned long long untimed = atomic_load(&aip__cl_count.untimed),
                       failed = atomic_load(&aip__cl_count.failed),
                       no_cb = atomic_load(&aip__cl_count.no_callback),
                       bad = atomic_load(&aip__cl_count.bad_times);
    if (untimed)
        aip__warn("OpenCL: %llu commands have no device times (their queue has no profiling, "
                  "or the device gave none)",
                  untimed);
    if (failed)
        aip__warn("OpenCL: %llu commands ended in an error; no device task recorded for them",
                  failed);
    if (no_cb)
        aip__warn("OpenCL: %llu commands could not be followed (event callback refused)", no_cb);
    if (bad)
        aip__warn("OpenCL: %llu commands had an end time before their start; dropped", bad);
}

/* No fork_child: OpenCL's per-thread state exists from the program's
 * first OpenCL call, before any trace, so cl_events.c keeps a
 * pthread_atfork() of its own (the core's fork handlers run once the
 * recorder is set up). */
const aip__collector aip__collector_opencl = {
    .name = "OpenCL",
    .wanted = aip__dev_wanted,
    .start = backend_start,
    .stop = backend_stop,
    .backend = AIP_BACKEND_OPENCL,
    .status = aip__cl_status,
    .probe = aip__cl_probe,
    .record_kinds = (1ull << AIP_REC_DEVICE) | (1ull << AIP_REC_DEVICE_QUEUE) |
                    (1ull << AIP_REC_DEVICE_TASK) | (1ull << AIP_REC_DEVICE_API) |
                    (1ull << AIP_REC_DEVICE_MEMORY) | (1ull << AIP_REC_DEVICE_CLOCK),
};
