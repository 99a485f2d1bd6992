/*
 * record_device.c — device activity into the raw file (src/core/device.h).
 *
 * Back ends call these from the application's threads (API calls) and
 * from their own (device tasks, read when the device finished them).  Each
 * record goes into the calling thread's buffer like any other event, so
 * drops, crash safety and the size limit hold for device data unchanged.
 *
 * Devices and queues are registered once per process.  A raw file must
 * describe every device and queue its records name, and a process may
 * record many traces, so each registry entry remembers the trace
 * generation it was last described in: the first record of a trace that
 * names it emits its DEVICE / DEVICE_QUEUE record first (a race may emit
 * it twice; the analyser keeps one).  A description that finds the
 * buffers full is not counted as a dropped event (the record that needed
 * it is, once): recorded + dropped is what the back end emitted.
 */
#include "device.h"
#include "clock.h"
#include "intern.h"
#include "recorder.h"
#include "error.h"
#include "fork_handlers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define QUEUE_SLOTS (2 * AIP_DEV_MAX_QUEUES) /* open addressing, load <= 1/2 */

typedef struct dev_entry {
    uint64_t key;
    uint32_t name, vendor;
    uint8_t backend, kind;
    _Atomic uint32_t described; /* generation of the last trace it was described in */
    char text[96];              /* its name, for profiler_info.json */
    /* clock samples of the open trace (profiler_info.json) */
    _Atomic uint32_t sample_gen;
    _Atomic uint64_t samples, max_error_ticks;
    _Atomic uint8_t method;
} dev_entry;

typedef struct queue_entry {
    uint32_t device, label;
    uint64_t native_id1;        /* the back end's number + 1, 0 = none */
    _Atomic uint32_t described;
} queue_entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_entry devs[AIP_DEV_MAX_DEVICES];
static _Atomic uint32_t n_devs;
static queue_entry queues[AIP_DEV_MAX_QUEUES];
static uint32_t n_queues;
/* key -> queue id + 1 (0 empty); a forgotten key keeps its slot with id 0
 * and key ~0 as a tombstone. */
static struct { uint64_t key; uint32_t id1; } qslots[QUEUE_SLOTS];
static _Atomic uint64_t next_corr = 1;
static int full_logged;

/* fork() holds the registry lock (fork_handlers.h): a child inherits the
 * registry as it stood, so the ids its back end already has stay valid. */
static void fork_lock(void) { pthread_mutex_lock(&reg_lock); }
static void fork_unlock(void) { pthread_mutex_unlock(&reg_lock); }

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_DEVICE, fork_lock, fork_unlock, fork_unlock);
}

int aip__dev_recording(void)
{
    return __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED) &&
           (aip__rec_mask & AIP_MASK_DEVICE);
}

static inline aip_string_id intern_or_empty(const char *s)
{
    return s && *s ? aip_intern(s) : 0;
}

uint32_t aip__dev_device(uint8_t backend, uint64_t key, const char *name, const char *vendor,
                         uint8_t kind)
{
    pthread_mutex_lock(&reg_lock);
    uint32_t n = atomic_load_explicit(&n_devs, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++)
        if (devs[i].key == key && devs[i].backend == backend) {
            pthread_mutex_unlock(&reg_lock);
            return i;
        }
    if (n == AIP_DEV_MAX_DEVICES) {
        int log = !full_logged;
        full_logged = 1;
        pthread_mutex_unlock(&reg_lock);
        if (log)
            aip__warn("more than %d devices: the activity of the others is not recorded",
                      AIP_DEV_MAX_DEVICES);
        return AIP_DEV_NONE;
    }
    devs[n].key = key;
    devs[n].backend = backend;
    devs[n].kind = kind;
    devs[n].name = intern_or_empty(name);
    devs[n].vendor = intern_or_empty(vendor);
    snprintf(devs[n].text, sizeof devs[n].text, "%s", name ? name : "");
    atomic_store_explicit(&devs[n].described, 0, memory_order_relaxed);
    atomic_store_explicit(&n_devs, n + 1, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
    return n;
}

static size_t qslot(uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 40) % QUEUE_SLOTS;
}

uint32_t aip__dev_queue(uint32_t device, uint64_t key, const char *label)
{
    return aip__dev_queue_native(device, key, label, AIP_DEV_NO_NATIVE);
}

uint32_t aip__dev_queue_native(uint32_t device, uint64_t key, const char *label,
                               uint64_t native_id)
{
    if (device >= atomic_load_explicit(&n_devs, memory_order_acquire))
        return AIP_DEV_NONE;
    pthread_mutex_lock(&reg_lock);
    size_t s = qslot(key), free_slot = SIZE_MAX;
    for (size_t i = 0; i < QUEUE_SLOTS; i++, s = (s + 1) % QUEUE_SLOTS) {
        if (qslots[s].id1 && qslots[s].key == key) {
            uint32_t id = qslots[s].id1 - 1;
            pthread_mutex_unlock(&reg_lock);
            return id;
        }
        if (!qslots[s].id1 && free_slot == SIZE_MAX)
            free_slot = s;
        if (!qslots[s].id1 && qslots[s].key != ~0ull)
            break; /* never used: the key is not further on */
    }
    if (n_queues == AIP_DEV_MAX_QUEUES || free_slot == SIZE_MAX) {
        int log = !full_logged;
        full_logged = 1;
        pthread_mutex_unlock(&reg_lock);
        if (log)
            aip__warn("more than %d device queues: the activity of the others is not recorded",
                      AIP_DEV_MAX_QUEUES);
        return AIP_DEV_NONE;
    }
    uint32_t id = n_queues++;
    char buf[32];
    if (!label || !*label) {
        snprintf(buf, sizeof buf, "queue %u", id);
        label = buf;
    }
    queues[id].device = device;
    queues[id].label = aip_intern(label);
    queues[id].native_id1 = native_id == AIP_DEV_NO_NATIVE ? 0 : native_id + 1;
    atomic_store_explicit(&queues[id].described, 0, memory_order_relaxed);
    qslots[free_slot].key = key;
    qslots[free_slot].id1 = id + 1;
    pthread_mutex_unlock(&reg_lock);
    return id;
}

void aip__dev_queue_forget(uint64_t key)
{
    pthread_mutex_lock(&reg_lock);
    size_t s = qslot(key);
    for (size_t i = 0; i < QUEUE_SLOTS; i++, s = (s + 1) % QUEUE_SLOTS) {
        if (qslots[s].id1 && qslots[s].key == key) {
            qslots[s].id1 = 0;
            qslots[s].key = ~0ull; /* tombstone: later keys may lie beyond it */
            break;
        }
        if (!qslots[s].id1 && qslots[s].key != ~0ull)
            break;
    }
    pthread_mutex_unlock(&reg_lock);
}

uint64_t aip__dev_correlation(void)
{
    return atomic_fetch_add_explicit(&next_corr, 1, memory_order_relaxed);
}

/* The thread state to record into, or NULL when device activity is not
 * recorded now. */
static inline aip__tstate *dev_state(void)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_DEVICE))
        return NULL;
    return t;
}

/* Claim the description of an entry for generation `gen`: 1 if this
 * caller must emit it. */
static int claim(_Atomic uint32_t *described, uint32_t gen)
{
    uint32_t seen = atomic_load_explicit(described, memory_order_relaxed);
    return seen != gen &&
           atomic_compare_exchange_strong_explicit(described, &seen, gen, memory_order_relaxed,
                                                   memory_order_relaxed);
}

static void describe_device(aip__tstate *t, uint32_t device)
{
    if (device >= atomic_load_explicit(&n_devs, memory_order_acquire) ||
        !claim(&devs[device].described, t->gen))
        return;
    aip__rec_device *r = aip__reserve_meta(t, sizeof *r); /* not an event: uncounted */
    if (UNLIKELY(!r)) {
        atomic_store_explicit(&devs[device].described, 0, memory_order_relaxed);
        return;
    }
    memset(r, 0, sizeof *r);
    aip__rec_set_header(&r->h, AIP_REC_DEVICE, 0, sizeof *r, devs[device].name);
    r->device_id = device;
    r->vendor = devs[device].vendor;
    r->kind = devs[device].kind;
    r->backend = devs[device].backend;
    aip__commit(t, sizeof *r);
}

static void describe_queue(aip__tstate *t, uint32_t queue)
{
    /* Already described in this trace (every task after the queue's first):
     * what the claim below would answer, without the lock, which the
     * runtime's callback threads took at every task. */
    if (queue < AIP_DEV_MAX_QUEUES &&
        atomic_load_explicit(&queues[queue].described, memory_order_relaxed) == t->gen)
        return;
    pthread_mutex_lock(&reg_lock); /* n_queues and the entry are written under it */
    int known = queue < n_queues;
    queue_entry q = {0};
    if (known) {
        q.device = queues[queue].device;
        q.label = queues[queue].label;
        q.native_id1 = queues[queue].native_id1;
    }
    pthread_mutex_unlock(&reg_lock);
    if (!known || !claim(&queues[queue].described, t->gen))
        return;
    describe_device(t, q.device);
    aip__rec_device_queue *r = aip__reserve_meta(t, sizeof *r); /* not an event: uncounted */
    if (UNLIKELY(!r)) {
        atomic_store_explicit(&queues[queue].described, 0, memory_order_relaxed);
        return;
    }
    aip__rec_set_header(&r->h, AIP_REC_DEVICE_QUEUE, 0, sizeof *r, q.label);
    r->device_id = q.device;
    r->queue_id = queue;
    r->native_id1 = q.native_id1;
    aip__commit(t, sizeof *r);
}

uint64_t aip__dev_api_begin(void)
{
    return aip__dev_recording() ? aip__ticks() : 0;
}

static void api_record(aip_string_id id, uint64_t start, uint64_t end, uint64_t correlation,
                       uint32_t device)
{
    aip__tstate *t = dev_state();
    if (!t)
        return;
    if (device != AIP_DEV_NONE)
        describe_device(t, device);
    aip__rec_device_api *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_DEVICE_API, 0, sizeof *r, id);
    r->start = start;
    r->end = end;
    r->correlation = correlation;
    r->device_id = device;
    r->reserved = 0;
    aip__commit(t, sizeof *r);
}

void aip__dev_api_end(const char *name, uint64_t start, uint64_t correlation, uint32_t device)
{
    if (!start)
        return;
    uint64_t end = aip__ticks(); /* the call ended before its name is looked up */
    api_record(aip_intern(name), start, end, correlation, device);
}

void aip__dev_api_end_id(aip_string_id id, uint64_t start, uint64_t correlation, uint32_t device)
{
    if (start)
        api_record(id, start, aip__ticks(), correlation, device);
}

void aip__dev_task(const aip__dev_task_info *ti)
{
    aip__tstate *t = dev_state();
    if (!t || ti->device == AIP_DEV_NONE)
        return;
    aip_string_id name = ti->name_id ? ti->name_id : intern_or_empty(ti->name);
    describe_device(t, ti->device);
    if (ti->queue != AIP_DEV_NONE)
        describe_queue(t, ti->queue);
    aip__rec_device_task *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    uint8_t flags = (ti->queued ? AIP_TASKF_QUEUED : 0) | (ti->submit ? AIP_TASKF_SUBMIT : 0) |
                    (ti->app_event ? AIP_TASKF_APP_EVENT : 0);
    aip__rec_set_header(&r->h, AIP_REC_DEVICE_TASK, flags, sizeof *r, name);
    r->device_id = ti->device;
    r->queue_id = ti->queue;
    r->task_kind = ti->kind;
    r->direction = ti->direction;
    r->reserved = 0;
    r->reserved2 = 0;
    r->correlation = ti->correlation;
    r->queued = ti->queued;
    r->submit = ti->submit;
    r->start = ti->start;
    r->end = ti->end;
    r->bytes = ti->bytes;
    memcpy(r->global, ti->global, sizeof r->global);
    memcpy(r->local, ti->local, sizeof r->local);
    aip__commit(t, sizeof *r);
}

void aip__dev_memory(uint32_t device, uint64_t address, int64_t bytes, uint8_t mem_kind)
{
    aip__dev_memory_at(device, address, bytes, mem_kind, aip__ticks());
}

void aip__dev_memory_at(uint32_t device, uint64_t address, int64_t bytes, uint8_t mem_kind,
                        uint64_t ticks)
{
    aip__tstate *t = dev_state();
    if (!t || device == AIP_DEV_NONE)
        return;
    describe_device(t, device);
    aip__rec_device_memory *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    memset(r, 0, sizeof *r);
    aip__rec_set_header(&r->h, AIP_REC_DEVICE_MEMORY, 0, sizeof *r, 0);
    r->ts = ticks;
    r->address = address;
    r->bytes = bytes;
    r->device_id = device;
    r->mem_kind = mem_kind;
    aip__commit(t, sizeof *r);
}

void aip__dev_clock(uint32_t device, uint64_t t0, uint64_t t1, uint64_t device_ns,
                    uint8_t method)
{
    aip__tstate *t = dev_state();
    if (!t || device >= AIP_DEV_MAX_DEVICES || t1 < t0)
        return;
    describe_device(t, device);
    uint64_t err = (t1 - t0 + 1) / 2;
    aip__rec_device_clock *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    memset(r, 0, sizeof *r);
    aip__rec_set_header(&r->h, AIP_REC_DEVICE_CLOCK, 0, sizeof *r, 0);
    r->ticks = t0 + (t1 - t0) / 2;
    r->device_ns = device_ns;
    r->error_ticks = err;
    r->device_id = device;
    r->method = method;
    aip__commit(t, sizeof *r);
    /* What profiler_info.json says of this trace's alignment. */
    dev_entry *e = &devs[device];
    uint32_t seen = atomic_load_explicit(&e->sample_gen, memory_order_relaxed);
    if (seen != t->gen &&
        atomic_compare_exchange_strong_explicit(&e->sample_gen, &seen, t->gen,
                                                memory_order_relaxed, memory_order_relaxed)) {
        atomic_store_explicit(&e->samples, 0, memory_order_relaxed);
        atomic_store_explicit(&e->max_error_ticks, 0, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&e->samples, 1, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&e->max_error_ticks, memory_order_relaxed);
    while (err > max && !atomic_compare_exchange_weak_explicit(&e->max_error_ticks, &max, err,
                                                               memory_order_relaxed,
                                                               memory_order_relaxed)) {
    }
    atomic_store_explicit(&e->method, method, memory_order_relaxed);
}

size_t aip__dev_trace_devices(aip__dev_trace_device *out, size_t cap)
{
    uint32_t gen = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    uint32_t n = atomic_load_explicit(&n_devs, memory_order_acquire);
    double tps = aip__clock_ticks_per_second();
    size_t k = 0;
    for (uint32_t i = 0; i < n && k < cap; i++) {
        dev_entry *e = &devs[i];
        if (!gen || atomic_load_explicit(&e->described, memory_order_relaxed) != gen)
            continue; /* not used by the open trace */
        aip__dev_trace_device *o = &out[k++];
        o->id = i;
        o->name = e->text;
        o->backend = e->backend;
        int sampled = atomic_load_explicit(&e->sample_gen, memory_order_relaxed) == gen;
        o->samples = sampled ? atomic_load_explicit(&e->samples, memory_order_relaxed) : 0;
        o->method = sampled ? atomic_load_explicit(&e->method, memory_order_relaxed) : 0;
        uint64_t err = sampled ? atomic_load_explicit(&e->max_error_ticks, memory_order_relaxed)
                               : 0;
        o->error_ns = o->samples && tps > 0 ? (int64_t)((double)err * 1e9 / tps + 0.999) : -1;
    }
    return k;
}

const char *aip__dev_sync_method_name(uint8_t method)
{
    switch (method) {
    case AIP_SYNC_DEVICE_AND_HOST_TIMER: return "device_and_host_timer";
    case AIP_SYNC_MEASURED: return "measured_offset";
    case AIP_SYNC_SAME_CLOCK: return "same_clock";
    default: return "none";
    }
}
