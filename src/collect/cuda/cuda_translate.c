/*
 * cuda_translate.c — CUPTI activity records into the device model
 * (src/core/device.h), with no CUPTI call: what cuda_cupti.c runs on each
 * completed buffer, and what the unit tests drive with buffers they build
 * from the public record structs.
 *
 *   CONCURRENT_KERNEL / KERNEL  -> a kernel task: stream = queue, grid x
 *                                  block = global work size, block = local
 *                                  (OpenCL's meaning: Block Num = the grid)
 *   MEMCPY / MEMCPY2 (peer)     -> a copy task with direction and bytes
 *   MEMSET                      -> a fill task with bytes
 *   MEMORY2 alloc / release     -> device memory (device and managed memory;
 *                                  pinned host memory is not the device's)
 * Every other kind (runtime and driver calls come through the callback API
 * on the calling thread instead, see cuda_cupti.c) is counted as ignored.
 * Those calls are recorded here too (aip__cuda_api_enter/exit), with the
 * correlation id that links them to their kernels.
 * A record that does not fit in the buffer, or whose times are impossible,
 * is counted as dropped; nothing here trusts a length or an enum.
 */
#include "cuda_int.h"
#include "clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void aip__cuda_tctx_init(aip__cuda_tctx *c)
{
    memset(c, 0, sizeof *c);
}

const char *aip__cuda_copy_kind_name(unsigned k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof names / sizeof names[0] ? names[k] : "Unknown";
}

const char *aip__cuda_mem_kind_name(unsigned k)
{
    static const char *const names[] = {"Unknown", "Pageable", "Pinned",       "Device",
                                        "Array",   "Managed",  "Device Static", "Managed Static"};
    return k < sizeof names / sizeof names[0] ? names[k] : "Unknown";
}

static uint8_t copy_direction(unsigned k)
{
    switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return AIP_COPY_H2D;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return AIP_COPY_D2H;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return AIP_COPY_D2D;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return AIP_COPY_H2H;
    default: return AIP_COPY_NONE;
    }
}

size_t aip__cuda_record_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

CUptiResult aip__cuda_packed_next(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    /* *record: the previous record (NULL: start at the buffer). */
    size_t off = 0;
    if (*record) {
        size_t prev = aip__cuda_record_size((*record)->kind);
        off = (size_t)((uint8_t *)*record - buffer) + ((prev + 7) & ~(size_t)7);
    }
    if (off >= valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (valid - off < sizeof(CUpti_Activity))
        return CUPTI_ERROR_INVALID_PARAMETER;
    CUpti_Activity *r = (CUpti_Activity *)(buffer + off);
    size_t size = aip__cuda_record_size(r->kind);
    if (!size)
        return CUPTI_ERROR_INVALID_KIND;
    if (size > valid - off)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *record = r;
    return CUPTI_SUCCESS;
}

/* The device id of CUDA ordinal `ord`, registered on first sight. */
static uint32_t device_of(aip__cuda_tctx *c, uint32_t ord)
{
    if (ord >= AIP_CUDA_MAX_ORDINALS)
        return AIP_DEV_NONE;
    if (c->dev_ids[ord])
        return c->dev_ids[ord] - 1;
    char buf[128], fallback[40];
    const char *name = c->device_name ? c->device_name(ord, buf, sizeof buf) : NULL;
    snprintf(fallback, sizeof fallback, "CUDA device %u", ord);
    uint32_t id = aip__dev_device(AIP_BACKEND_CUDA, (uint64_t)ord + 1, name ? name : fallback,
                                  "NVIDIA", AIP_DEVKIND_GPU);
    if (id != AIP_DEV_NONE)
        c->dev_ids[ord] = id + 1;
    return id;
}

/* A stream's queue key: above every user-space pointer (OpenCL's keys are
 * cl_command_queue pointers), one per device ordinal and stream id.  The
 * stream id is the queue's native id: the outputs' Stream ID. */
static uint32_t queue_of(uint32_t dev, uint32_t ord, uint32_t stream)
{
    char label[32];
    snprintf(label, sizeof label, "stream %u", stream);
    uint64_t key = 0xC0DA000000000000ull | ((uint64_t)(ord & 0xffff) << 32) | stream;
    return aip__dev_queue_native(dev, key, label, stream);
}

/* The kernel's name as the outputs show it, cached per CUPTI name pointer
 * (CUPTI shares one per function); the mangled text is kept to notice a
 * pointer reused by a later module. */
#define NAME_SLOTS 4096
typedef struct name_slot {
    const char *key;
    char *mangled, *shown;
} name_slot;

static const char *kernel_name(aip__cuda_tctx *c, const char *mangled)
{
    static name_slot slots[NAME_SLOTS]; /* translation is serialised by the caller */
    if (!mangled)
        return "unknown kernel";
    if (!c->demangle)
        return mangled;
    size_t h = (size_t)(((uintptr_t)mangled * 0x9E3779B97F4A7C15ull) >> 52) % NAME_SLOTS;
    for (size_t i = 0; i < 8; i++) {
        name_slot *s = &slots[(h + i) % NAME_SLOTS];
        if (s->key == mangled && !strcmp(s->mangled, mangled))
            return s->shown;
        if (!s->key || s->key == mangled) {
            char *shown = c->demangle(mangled);
            char *copy = strdup(mangled);
            if (!copy) {
                free(shown);
                return mangled;
            }
            free(s->mangled);
            if (s->shown != s->mangled)
                free(s->shown);
            s->key = mangled;
            s->mangled = copy;
            s->shown = shown ? shown : copy;
            return s->shown;
        }
    }
    /* a crowded neighbourhood: demangle without keeping it (rare) */
    return mangled;
}

static int times_ok(aip__cuda_tctx *c, uint64_t start, uint64_t end)
{
    if (start && end >= start)
        return 1;
    c->n.dropped++;
    return 0;
}

static void kernel(aip__cuda_tctx *c, const CUpti_ActivityKernel10 *k)
{
    if (!times_ok(c, k->start, k->end))
        return;
    uint32_t dev = device_of(c, k->deviceId);
    uint32_t q = dev == AIP_DEV_NONE ? AIP_DEV_NONE : queue_of(dev, k->deviceId, k->streamId);
    if (dev == AIP_DEV_NONE || q == AIP_DEV_NONE) {
        c->n.no_device++;
        return;
    }
    aip__dev_task_info ti = {.name = kernel_name(c, k->name), .device = dev, .queue = q,
                             .kind = AIP_TASK_KERNEL,
                             .correlation = k->correlationId
                                                ? AIP_CUDA_CORR_TAG | k->correlationId
                                                : 0,
                             .start = k->start, .end = k->end};
    /* Latency timestamps exist only when asked for; 0 (unknown) otherwise. */
    if (k->queued && k->queued <= k->start)
        ti.queued = k->queued;
    if (k->submitted && k->submitted <= k->start && k->submitted >= ti.queued)
        ti.submit = k->submitted;
    const int32_t grid[3] = {k->gridX, k->gridY, k->gridZ};
    const int32_t block[3] = {k->blockX, k->blockY, k->blockZ};
    for (int i = 0; i < 3; i++) {
        if (grid[i] <= 0 || block[i] <= 0)
            continue;
        ti.local[i] = (uint32_t)block[i];
        uint64_t g = (uint64_t)grid[i] * (uint64_t)block[i];
        ti.global[i] = g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
    }
    aip__dev_task(&ti);
    c->n.kernels++;
}

static void copy_task(aip__cuda_tctx *c, unsigned copy_kind, unsigned src, unsigned dst,
                      uint64_t bytes, uint64_t start, uint64_t end, uint32_t ord,
                      uint32_t stream, uint32_t corr)
{
    if (!times_ok(c, start, end))
        return;
    uint32_t dev = device_of(c, ord);
    uint32_t q = dev == AIP_DEV_NONE ? AIP_DEV_NONE : queue_of(dev, ord, stream);
    if (dev == AIP_DEV_NONE || q == AIP_DEV_NONE) {
        c->n.no_device++;
        return;
    }
    char name[96];
    snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", aip__cuda_copy_kind_name(copy_kind),
             aip__cuda_mem_kind_name(src), aip__cuda_mem_kind_name(dst));
    aip__dev_task_info ti = {.name = name, .device = dev, .queue = q, .kind = AIP_TASK_MEMCPY,
                             .direction = copy_direction(copy_kind),
                             .correlation = corr ? AIP_CUDA_CORR_TAG | corr : 0,
                             .start = start, .end = end, .bytes = bytes};
    aip__dev_task(&ti);
    c->n.copies++;
}

static void memset_task(aip__cuda_tctx *c, const CUpti_ActivityMemset4 *m)
{
    if (!times_ok(c, m->start, m->end))
        return;
    uint32_t dev = device_of(c, m->deviceId);
    uint32_t q = dev == AIP_DEV_NONE ? AIP_DEV_NONE : queue_of(dev, m->deviceId, m->streamId);
    if (dev == AIP_DEV_NONE || q == AIP_DEV_NONE) {
        c->n.no_device++;
        return;
    }
    char name[48];
    snprintf(name, sizeof name, "Memset (%s)", aip__cuda_mem_kind_name(m->memoryKind));
    aip__dev_task_info ti = {.name = name, .device = dev, .queue = q, .kind = AIP_TASK_MEMSET,
                             .correlation = m->correlationId
                                                ? AIP_CUDA_CORR_TAG | m->correlationId
                                                : 0,
                             .start = m->start, .end = m->end, .bytes = m->bytes};
    aip__dev_task(&ti);
    c->n.sets++;
}

static void memory(aip__cuda_tctx *c, const CUpti_ActivityMemory4 *m)
{
    uint8_t kind;
    switch ((unsigned)m->memoryKind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: kind = AIP_DEVMEM_BUFFER; break;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: kind = AIP_DEVMEM_SVM; break;
    default: c->n.ignored++; return; /* pinned / pageable host memory */
    }
    int alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    if ((!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) ||
        !m->bytes || m->bytes > (uint64_t)INT64_MAX || !m->timestamp) {
        c->n.dropped++;
        return;
    }
    uint32_t dev = device_of(c, m->deviceId);
    if (dev == AIP_DEV_NONE) {
        c->n.no_device++;
        return;
    }
    uint64_t ticks = aip__clock_ns_to_ticks((uint64_t)((int64_t)m->timestamp + c->offset_ns));
    aip__dev_memory_at(dev, m->address, alloc ? (int64_t)m->bytes : -(int64_t)m->bytes, kind,
                       ticks);
    c->n.memory++;
}

/* How much of a record this file reads: the leading fields, which older
 * CUPTIs (smaller structs) lay out alike. */
#define UPTO(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
static size_t read_size(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return UPTO(CUpti_ActivityKernel10, submitted);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return UPTO(CUpti_ActivityMemcpy6, correlationId);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return UPTO(CUpti_ActivityMemcpyPtoP4, correlationId);
    case CUPTI_ACTIVITY_KIND_MEMSET: return UPTO(CUpti_ActivityMemset4, memoryKind);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return UPTO(CUpti_ActivityMemory4, deviceId);
    default: return sizeof(CUpti_Activity);
    }
}

void aip__cuda_translate(aip__cuda_tctx *c, const CUpti_Activity *rec, size_t room)
{
    size_t need = read_size(rec->kind);
    if (need > room) {
        c->n.dropped++;
        return;
    }
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        kernel(c, (const CUpti_ActivityKernel10 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
        copy_task(c, m->copyKind, m->srcKind, m->dstKind, m->bytes, m->start, m->end,
                  m->deviceId, m->streamId, m->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
        copy_task(c, m->copyKind, m->srcKind, m->dstKind, m->bytes, m->start, m->end,
                  m->deviceId, m->streamId, m->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
        memset_task(c, (const CUpti_ActivityMemset4 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
        memory(c, (const CUpti_ActivityMemory4 *)rec);
        break;
    default:
        c->n.ignored++;
        break;
    }
}

void aip__cuda_translate_buffer(aip__cuda_tctx *c, uint8_t *buf, size_t valid,
                                aip__cuda_next_fn next)
{
    if (!buf || !next)
        return;
    CUpti_Activity *rec = NULL;
    for (;;) {
        CUptiResult r = next(buf, valid, &rec);
        if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
            return;
        if (r != CUPTI_SUCCESS || !rec || (uint8_t *)rec < buf ||
            (uint8_t *)rec >= buf + valid) {
            c->n.dropped++; /* the rest of the buffer cannot be walked */
            return;
        }
        aip__cuda_translate(c, rec, (size_t)(buf + valid - (uint8_t *)rec));
    }
}

/* ---- runtime / driver calls ------------------------------------------- */

uint64_t aip__cuda_api_enter(void) { return aip__dev_api_begin(); }

void aip__cuda_api_exit(const char *name, uint64_t start, uint32_t correlation)
{
    aip__dev_api_end(name, start, correlation ? AIP_CUDA_CORR_TAG | correlation : 0,
                     AIP_DEV_NONE);
}

/* The calls open on this thread, innermost last: an exit is recorded only
 * when it matches the enter seen (callbacks enabled or disabled while a
 * call was running deliver one without the other). */
#define CALL_DEPTH 16
static __thread struct {
    uint32_t correlation;
    uint8_t runtime;
    uint64_t start;
} calls[CALL_DEPTH];
static __thread int depth, runtime_depth;
/* A call open when a trace stopped never delivers its exit (the callbacks
 * are off): each thread's calls belong to one trace, and a thread finding
 * a newer trace starts over, so that a stale runtime call does not hide
 * the program's driver calls, or fill the depth, for ever after. */
static _Atomic uint32_t generation;
static __thread uint32_t thread_generation;
static _Atomic int calls_seen; /* since the trace started */

void aip__cuda_api_new_trace(void)
{
    atomic_store_explicit(&calls_seen, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
}

int aip__cuda_api_calls_seen(void) { return atomic_load_explicit(&calls_seen, memory_order_relaxed); }

void aip__cuda_on_api(int runtime, int enter, uint32_t correlation, const char *name)
{
    uint32_t g = atomic_load_explicit(&generation, memory_order_relaxed);
    if (thread_generation != g) {
        thread_generation = g;
        depth = runtime_depth = 0;
    }
    if (!runtime && runtime_depth > 0)
        return; /* the runtime call around it is the one the program made */
    if (enter) {
        if (!atomic_load_explicit(&calls_seen, memory_order_relaxed))
            atomic_store_explicit(&calls_seen, 1, memory_order_relaxed);
        if (depth < CALL_DEPTH) {
            calls[depth].correlation = correlation;
            calls[depth].runtime = (uint8_t)!!runtime;
            calls[depth].start = aip__cuda_api_enter();
        }
        depth++;
        runtime_depth += !!runtime;
        return;
    }
    if (depth == 0)
        return;
    if (depth > CALL_DEPTH) { /* too deep to follow: not recorded */
        depth--;
        runtime_depth -= runtime && runtime_depth > 0;
        return;
    }
    if (calls[depth - 1].correlation != correlation)
        return; /* an exit whose enter was not seen */
    depth--;
    runtime_depth -= calls[depth].runtime;
    aip__cuda_api_exit(aip__cuda_api_name(name), calls[depth].start, correlation);
}

/* CUPTI's names carry the version of the entry point ("cudaMalloc_v3020");
 * the outputs show the function the program called.  The stripped copies
 * are cached per CUPTI name pointer (its names are static): lock-free
 * reads, since every runtime call asks. */
#define API_SLOTS 2048
static struct {
    _Atomic(const char *) key;
    _Atomic(const char *) shown;
} api_names[API_SLOTS];
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t suffix_at(const char *name)
{
    size_t n = strlen(name), i = n;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    return i < n && i >= 3 && name[i - 1] == 'v' && name[i - 2] == '_' ? i - 2 : n;
}

const char *aip__cuda_api_name(const char *name)
{
    if (!name)
        return "cudaUnknown";
    size_t cut = suffix_at(name);
    if (!name[cut])
        return name;
    size_t h = (size_t)(((uintptr_t)name * 0x9E3779B97F4A7C15ull) >> 53) % API_SLOTS;
    for (size_t i = 0; i < API_SLOTS; i++) {
        size_t s = (h + i) % API_SLOTS;
        const char *k = atomic_load_explicit(&api_names[s].key, memory_order_acquire);
        if (k == name)
            return atomic_load_explicit(&api_names[s].shown, memory_order_acquire);
        if (!k) {
            pthread_mutex_lock(&api_lock);
            k = atomic_load_explicit(&api_names[s].key, memory_order_relaxed);
            if (!k) {
                char *copy = strndup(name, cut);
                if (!copy) {
                    pthread_mutex_unlock(&api_lock);
                    return name;
                }
                atomic_store_explicit(&api_names[s].shown, copy, memory_order_release);
                atomic_store_explicit(&api_names[s].key, name, memory_order_release);
                pthread_mutex_unlock(&api_lock);
                return copy;
            }
            pthread_mutex_unlock(&api_lock);
            if (k == name)
                return atomic_load_explicit(&api_names[s].shown, memory_order_acquire);
        }
    }
    return name; /* the table is full: the versioned name */
}
