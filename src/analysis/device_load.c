/*
 * device_load.c — device records of an EVENTS chunk into the process
 * (raw format 1.4, DEVICE_QUEUE's native id 1.6; docs/RAW_FORMAT.md
 * "Device records").
 *
 * Called by model_load.c for record kinds 12-17 once the chunk's sizes
 * were checked.  Devices and queues are tables indexed by their raw ids
 * (small: bounded by AIP_RAW_MAX_*); a record naming an id beyond them is
 * counted in dev_bad_records and left out, so a forged file cannot make
 * the tables large.  Times stay in their source clocks here: host ticks
 * for API calls, memory and clock samples, device ns for tasks
 * (device_align.c converts both).
 */
#include "analysis_int.h"

#include <string.h>

size_t aip__device_min_size(uint8_t kind)
{
    switch (kind) {
    case AIP_REC_DEVICE: return sizeof(aip__rec_device);
    case AIP_REC_DEVICE_QUEUE: return AIP_REC_DEVICE_QUEUE_SIZE_1_4; /* 1.6 adds native_id1 */
    case AIP_REC_DEVICE_TASK: return sizeof(aip__rec_device_task);
    case AIP_REC_DEVICE_API: return sizeof(aip__rec_device_api);
    case AIP_REC_DEVICE_MEMORY: return sizeof(aip__rec_device_memory);
    case AIP_REC_DEVICE_CLOCK: return sizeof(aip__rec_device_clock);
    default: return 0;
    }
}

static uint32_t name_id(uint32_t id) { return id <= AIP_NAME_ID_MAX ? id : 0; }

/* Grow a table indexed by id so that `id` is an index (new rows absent). */
static aip_status table_reach(void **v, size_t *n, size_t *cap, size_t elem, uint32_t id)
{
    if (id < *n)
        return AIP_OK;
    aip_status s = aip__array_grow(v, cap, (size_t)id + 1, elem);
    if (s)
        return s;
    memset((char *)*v + *n * elem, 0, ((size_t)id + 1 - *n) * elem);
    *n = (size_t)id + 1;
    return AIP_OK;
}

static aip_status decode_device(aip__process *p, const uint8_t *r, const aip__rec_header *h)
{
    aip__rec_device d;
    memcpy(&d, r, sizeof d);
    if (d.device_id >= AIP_RAW_MAX_DEVICES) {
        p->dev_bad_records++;
        return AIP_OK;
    }
    aip_status s = table_reach((void **)&p->devices.v, &p->devices.n, &p->devices.cap,
                               sizeof *p->devices.v, d.device_id);
    if (s)
        return s;
    aip__device *dv = &p->devices.v[d.device_id];
    dv->present = 1;
    dv->name = name_id(h->name);
    dv->vendor = name_id(d.vendor);
    dv->kind = d.kind;
    dv->backend = d.backend;
    dv->error_ns = -1;
    return AIP_OK;
}

static aip_status decode_queue(aip__process *p, const uint8_t *r, const aip__rec_header *h)
{
    /* A 1.4/1.5 record ends before native_id1: it reads as "no native id". */
    aip__rec_device_queue q = {0};
    memcpy(&q, r, h->size < sizeof q ? AIP_REC_DEVICE_QUEUE_SIZE_1_4 : sizeof q);
    if (q.queue_id >= AIP_RAW_MAX_QUEUES || q.device_id >= AIP_RAW_MAX_DEVICES) {
        p->dev_bad_records++;
        return AIP_OK;
    }
    aip_status s = table_reach((void **)&p->queues.v, &p->queues.n, &p->queues.cap,
                               sizeof *p->queues.v, q.queue_id);
    if (s)
        return s;
    aip__queue *qu = &p->queues.v[q.queue_id];
    qu->present = 1;
    qu->device = q.device_id;
    qu->label = name_id(h->name);
    qu->has_native = q.native_id1 != 0;
    qu->native = q.native_id1 ? q.native_id1 - 1 : 0;
    return AIP_OK;
}

static aip_status decode_task(aip__process *p, const uint8_t *r, const aip__rec_header *h)
{
    aip__rec_device_task k;
    memcpy(&k, r, sizeof k);
    /* Device times must be ordered; a zero start or end means the back end
     * could not read them, and such a record should not exist. */
    if (k.device_id >= AIP_RAW_MAX_DEVICES || !k.start || k.end < k.start ||
        k.start > (uint64_t)INT64_MAX || k.end > (uint64_t)INT64_MAX) {
        p->dev_bad_records++;
        return AIP_OK;
    }
    aip__device_task t = {
        .start = (int64_t)k.start,
        .end = (int64_t)k.end,
        .queued = (h->flags & AIP_TASKF_QUEUED) && k.queued <= k.start ? (int64_t)k.queued : 0,
        .submit = (h->flags & AIP_TASKF_SUBMIT) && k.submit <= k.start ? (int64_t)k.submit : 0,
        .correlation = k.correlation,
        .bytes = k.bytes,
        .name = name_id(h->name),
        .device = k.device_id,
        .queue = k.queue_id < AIP_RAW_MAX_QUEUES ? k.queue_id : UINT32_MAX,
        .kind = k.task_kind,
        .direction = k.direction,
        .flags = h->flags,
        .api = -1,
        .step = -1,
    };
    memcpy(t.global, k.global, sizeof t.global);
    memcpy(t.local, k.local, sizeof t.local);
    AIP_VEC_PUSH(p->dev_tasks, t);
    return AIP_OK;
}

aip_status aip__device_decode(aip__process *p, uint32_t ti, const uint8_t *r,
                              const aip__rec_header *h)
{
    switch (h->kind) {
    case AIP_REC_DEVICE:
        return decode_device(p, r, h);
    case AIP_REC_DEVICE_QUEUE:
        return decode_queue(p, r, h);
    case AIP_REC_DEVICE_TASK:
        return decode_task(p, r, h);
    case AIP_REC_DEVICE_API: {
        aip__rec_device_api a;
        memcpy(&a, r, sizeof a);
        if (a.end < a.start) {
            p->dev_bad_records++;
            return AIP_OK;
        }
        AIP_VEC_PUSH(p->dev_api, ((aip__device_call){(int64_t)a.start, (int64_t)a.end, a.correlation,
                                         name_id(h->name), ti,
                                         a.device_id < AIP_RAW_MAX_DEVICES ? a.device_id
                                                                           : UINT32_MAX,
                                         UINT32_MAX, -1}));
        return AIP_OK;
    }
    case AIP_REC_DEVICE_MEMORY: {
        aip__rec_device_memory mm;
        memcpy(&mm, r, sizeof mm);
        if (mm.device_id >= AIP_RAW_MAX_DEVICES) {
            p->dev_bad_records++;
            return AIP_OK;
        }
        AIP_VEC_PUSH(p->dev_memory, ((aip__device_mem){(int64_t)mm.ts, mm.address, mm.bytes, mm.device_id,
                                            ti, mm.mem_kind}));
        return AIP_OK;
    }
    case AIP_REC_DEVICE_CLOCK: {
        aip__rec_device_clock c;
        memcpy(&c, r, sizeof c);
        if (c.device_id >= AIP_RAW_MAX_DEVICES || c.device_ns > (uint64_t)INT64_MAX ||
            c.error_ticks > (uint64_t)INT64_MAX) {
            p->dev_bad_records++;
            return AIP_OK;
        }
        AIP_VEC_PUSH(p->dev_clocks, ((aip__device_clock){(int64_t)c.ticks, c.device_ns,
                                              (int64_t)c.error_ticks, c.device_id, c.method}));
        return AIP_OK;
    }
    default:
        return AIP_OK;
    }
}
