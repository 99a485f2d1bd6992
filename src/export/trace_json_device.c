/*
 * trace_json_device.c — the device layers of trace_view.json, as
 * torch_npu's merged timeline has them from msprof (reference §2.1), for
 * every device back end:
 *
 * - "CANN" (label CPU, sort index 7, pid (pid<<10)|(7<<5)|31): the runtime
 *   API calls on their threads ("Thread <tid>"), named "Runtime@<api>" as
 *   msprof names runtime-level APIs;
 * - "Ascend Hardware" (label "NPU <device>", sort index 14, pid
 *   (pid<<10)|(14<<5)|device), one per device with tasks: one thread per
 *   queue named after it (tid = the queue's id, as msprof's tid is the
 *   stream id), an X event per task with msprof's args ("Physic Stream Id"
 *   = aip__queue_stream_id: the CUDA stream id, else the queue id) and ours
 *   (work sizes, bytes); the device's own name, vendor and kind ride in process_name's
 *   args.  Tasks of one out-of-order queue that run at once go to sibling
 *   threads of the queue (device_tracks.h: slices must nest, a task is
 *   never inside another);
 * - "Overlap Analysis" (label "NPU <device>", sort index 31): the four
 *   tracks Computing / Communication / Communication(Not Overlapped) / Free
 *   (tids 0..3, all four named as msprof always does), sections from
 *   aip__device_overlap(); no back end reports communication yet, so
 *   tracks 1 and 2 stay empty;
 * - flows, both ends written beside the task: op → task `torch_to_npu`
 *   (cat async_npu, "bp":"e" on both ends as torch_npu; in Kineto's form on
 *   the end only, as torch's ac2g flows), its start at the launching op's
 *   start on its thread, as torch_npu: msprof-analyze's compare finds an
 *   op's kernels by that ts (kernel_dict keyed by the flow start's ts);
 *   call → task `HostToDevice<id>` (cat HostToDevice, start on the CANN
 *   call, end "bp":"e" on the task).  In torch_npu's form the
 *   ids are torch_npu's and msprof's: the kernel's ts text, and the string
 *   of connection id << 32; in Kineto's form numbers counted on after the
 *   fwdbwd flows' (its readers take ids as numbers, and those would pass
 *   2^53).
 *
 * Device ids from 31 on do not fit msprof's 5-bit field (31 means host):
 * their pids put the device in a 6-bit field above a 16-bit shift instead.
 */
#include "trace_json_int.h"
#include "device_tracks.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_CANN 7
#define SORT_HARDWARE 14
#define SORT_OVERLAP 31

/* Raw string `id` as a JSON string with `prefix` (plain ASCII) before it. */
static void put_id_prefixed(aip__tj *w, const char *prefix, uint32_t id)
{
    size_t n;
    const char *s = aip__esc_get(&w->esc, id, &n);
    aip__out_put(w->o, "\"", 1);
    aip__out_str(w->o, prefix);
    if (!s || n < 2) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for trace strings");
        aip__out_put(w->o, "\"", 1);
        return;
    }
    aip__out_put(w->o, s + 1, n - 1); /* after its opening quote */
}

/* ---- runtime API calls ("CANN") --------------------------------------- */

static void api_layer(aip__tj *w, const aip__process *p, int64_t conn_base)
{
    if (!p->dev_api.n)
        return;
    int64_t cpid = aip__tj_layer_pid(p->pid, SORT_CANN, AIP__TJ_HOST_DEVICE);
    aip__tj_layer_meta(w, cpid, "CANN", "CPU", SORT_CANN);
    /* dev_api is sorted by thread, then start: one group per thread */
    for (size_t i = 0; i < p->dev_api.n; i++) {
        const aip__device_call *c = &p->dev_api.v[i];
        uint64_t tid = p->threads[c->thread].tid;
        if (!i || c->thread != p->dev_api.v[i - 1].thread) {
            aip__tj_thread_meta(w, cpid, tid);
            aip__tj_prefix(w, cpid, tid);
        }
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"name\":");
        put_id_prefixed(w, "Runtime@", c->name);
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, c->start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, c->start, c->end);
        AIP_OUT_LIT(w->o, ",\"args\":{\"Thread Id\":");
        aip__out_u64(w->o, tid);
        AIP_OUT_LIT(w->o, ",\"level\":\"runtime\",\"connection_id\":");
        aip__out_i64(w->o, conn_base + (int64_t)i);
        if (c->correlation) {
            AIP_OUT_LIT(w->o, ",\"correlation_id\":");
            aip__out_u64(w->o, c->correlation);
        }
        AIP_OUT_LIT(w->o, "}}");
    }
}

/* ---- device tasks ("Ascend Hardware") --------------------------------- */

static void put_dims(aip__tj *w, const char *key, const uint32_t v[3])
{
    char buf[48], *d = buf;
    for (int i = 0; i < 3; i++) {
        if (i)
            *d++ = ',';
        d = aip__fmt_u64(d, v[i]);
    }
    AIP_OUT_LIT(w->o, ",\"");
    aip__out_str(w->o, key);
    AIP_OUT_LIT(w->o, "\":\"");
    aip__out_put(w->o, buf, (size_t)(d - buf));
    AIP_OUT_LIT(w->o, "\"");
}

static void task_args(aip__tj *w, const aip__process *p, const aip__device_task *k,
                      uint32_t task_id, int64_t conn)
{
    AIP_OUT_LIT(w->o, ",\"args\":{\"Task Type\":");
    aip__trace_put_cstr(w->o, aip__task_type_name(p, k));
    AIP_OUT_LIT(w->o, ",\"Physic Stream Id\":");
    if (k->queue < p->queues.n)
        aip__out_u64(w->o, aip__queue_stream_id(p, k->queue));
    else
        AIP_OUT_LIT(w->o, "\"N/A\"");
    AIP_OUT_LIT(w->o, ",\"Task Id\":");
    aip__out_u64(w->o, task_id);
    AIP_OUT_LIT(w->o, ",\"Device Id\":");
    aip__out_u64(w->o, k->device);
    if (k->correlation) {
        AIP_OUT_LIT(w->o, ",\"correlation_id\":");
        aip__out_u64(w->o, k->correlation);
    }
    if (conn >= 0) {
        AIP_OUT_LIT(w->o, ",\"connection_id\":");
        aip__out_i64(w->o, conn);
    }
    if (k->global[0])
        put_dims(w, "Global Work Size", k->global);
    if (k->local[0])
        put_dims(w, "Local Work Size", k->local);
    if (k->bytes || k->kind == AIP_TASK_MEMCPY) {
        AIP_OUT_LIT(w->o, ",\"size(B)\":");
        aip__out_u64(w->o, k->bytes);
        if (k->end > k->start) {
            /* bytes per ns are GB/s (msprof counts in 1000s); 3 decimals */
            unsigned __int128 milli = (unsigned __int128)k->bytes * 1000u / (uint64_t)(k->end - k->start);
            AIP_OUT_LIT(w->o, ",\"bandwidth(GB/s)\":");
            char *d = aip__out_reserve(w->o, 32);
            aip__out_commit(w->o, aip__fmt_us3(d, milli > INT64_MAX ? INT64_MAX : (int64_t)milli));
        }
    }
    if (k->kind == AIP_TASK_MEMCPY) {
        AIP_OUT_LIT(w->o, ",\"operation\":");
        aip__trace_put_cstr(w->o, aip__memcpy_operation_name(aip__memcpy_operation(k->direction)));
    }
    AIP_OUT_LIT(w->o, "}");
}

/* One flow end: {"ph":ph[,"bp":"e"],"cat":cat,"name":name,"id":id,pid,tid,ts}. */
static void flow_point(aip__tj *w, const char *ph, int bp, const char *cat, const char *name,
                       const char *id, int64_t pid, uint64_t tid, int64_t ts)
{
    aip__tj_prefix(w, pid, tid);
    aip__tj_begin(w);
    AIP_OUT_LIT(w->o, "{\"ph\":\"");
    aip__out_str(w->o, ph);
    if (bp)
        AIP_OUT_LIT(w->o, "\",\"bp\":\"e");
    AIP_OUT_LIT(w->o, "\",\"cat\":\"");
    aip__out_str(w->o, cat);
    AIP_OUT_LIT(w->o, "\",\"name\":\"");
    aip__out_str(w->o, name);
    AIP_OUT_LIT(w->o, "\",\"id\":");
    aip__out_str(w->o, id);
    aip__out_put(w->o, w->pfx, w->pfx_len);
    aip__tj_ts(w, ts);
    AIP_OUT_LIT(w->o, "}");
}

/* The flows into task k (drawn on dpid/dtid): from its launching op and
 * from its launching call. */
static void task_flows(aip__tj *w, const aip__process *p, const aip__device_task *k, int64_t conn,
                       int64_t dpid, uint64_t dtid)
{
    const aip__device_call *c = &p->dev_api.v[k->api];
    char id[48], name[64];
    if (c->parent_span >= 0 && c->parent_thread < p->n_threads &&
        (size_t)c->parent_span < p->threads[c->parent_thread].n_spans) {
        if (w->kineto) {
            *aip__fmt_u64(id, ++w->flow_id) = 0;
        } else { /* torch_npu's id: the kernel's ts text */
            id[0] = '"';
            char *e = aip__fmt_us3(id + 1, k->start);
            e[0] = '"';
            e[1] = 0;
        }
        const aip__thread *th = &p->threads[c->parent_thread];
        flow_point(w, "s", !w->kineto, "async_npu", "torch_to_npu", id, p->pid, th->tid,
                   th->spans[c->parent_span].start);
        flow_point(w, "f", 1, "async_npu", "torch_to_npu", id, dpid, dtid, k->start);
    }
    /* name "HostToDevice<n>", id n (Kineto's) or "n" (msprof's: the
     * connection id << 32, as a string) */
    uint64_t n = w->kineto ? ++w->flow_id : (uint64_t)conn << 32;
    memcpy(name, "HostToDevice", 12);
    *aip__fmt_u64(name + 12, n) = 0;
    if (w->kineto) {
        strcpy(id, name + 12);
    } else {
        id[0] = '"';
        char *e = aip__fmt_u64(id + 1, n);
        e[0] = '"';
        e[1] = 0;
    }
    int64_t cpid = aip__tj_layer_pid(p->pid, SORT_CANN, AIP__TJ_HOST_DEVICE);
    flow_point(w, "s", 0, "HostToDevice", name, id, cpid, p->threads[c->thread].tid, c->start);
    flow_point(w, "f", 1, "HostToDevice", name, id, dpid, dtid, k->start);
}

static void device_meta(aip__tj *w, const aip__process *p, uint32_t d, int64_t pid,
                        const char *name, unsigned sort)
{
    const aip__device *dv = aip__model_device(p, d); /* NULL: tasks of an undescribed device */
    char label[32];
    snprintf(label, sizeof label, "NPU %u", d);
    aip__tj_meta_head(w, "process_name", pid, 0);
    AIP_OUT_LIT(w->o, ",\"args\":{\"name\":");
    aip__trace_put_cstr(w->o, name);
    if (sort == SORT_HARDWARE && dv) {
        AIP_OUT_LIT(w->o, ",\"device\":");
        aip__tj_put_id(w, dv->name);
        AIP_OUT_LIT(w->o, ",\"vendor\":");
        aip__tj_put_id(w, dv->vendor);
        AIP_OUT_LIT(w->o, ",\"kind\":");
        aip__trace_put_cstr(w->o, aip__dev_kind_name(dv->kind));
    }
    AIP_OUT_LIT(w->o, "}}");
    aip__tj_meta_str(w, "process_labels", pid, 0, "labels", label);
    aip__tj_meta_sort(w, "process_sort_index", pid, 0, sort);
}

/* thread_name of queue index q, lane l: the queue's label ("queue 0"),
 * " (l+1)" after it on an extra lane. */
static void queue_thread(aip__tj *w, const aip__process *p, size_t q, uint32_t l, int64_t pid)
{
    uint64_t tid = aip__dev_track_tid(q, l);
    const aip__queue *qu = q < p->queues.n && p->queues.v[q].present ? &p->queues.v[q] : NULL;
    char suffix[24] = "";
    if (l)
        snprintf(suffix, sizeof suffix, " (%u)", l + 1);
    aip__tj_meta_head(w, "thread_name", pid, tid);
    AIP_OUT_LIT(w->o, ",\"args\":{\"name\":");
    size_t n = 0;
    const char *s = qu && qu->label ? aip__esc_get(&w->esc, qu->label, &n) : NULL;
    if (s && n > 2) {
        aip__out_put(w->o, s, n - 1); /* up to its closing quote */
        aip__out_str(w->o, suffix);
        AIP_OUT_LIT(w->o, "\"");
    } else {
        char name[64];
        if (q < AIP_DEV_TRACK_NO_QUEUE)
            snprintf(name, sizeof name, "Queue %zu%s", q, suffix);
        else
            snprintf(name, sizeof name, "No queue%s", suffix);
        aip__trace_put_cstr(w->o, name);
    }
    AIP_OUT_LIT(w->o, "}}");
    aip__tj_meta_sort(w, "thread_sort_index", pid, tid, tid);
}

static void device_layer(aip__tj *w, const aip__process *p, const aip__dev_tracks *t, uint32_t d,
                         int64_t conn_base)
{
    int64_t pid = aip__tj_layer_pid(p->pid, SORT_HARDWARE, d);
    device_meta(w, p, d, pid, "Ascend Hardware", SORT_HARDWARE);
    uint8_t *seen = calloc(t->n_queues, 1); /* queues with tasks of device d */
    if (!seen) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for device tracks");
        return;
    }
    for (size_t i = 0; i < p->dev_tasks.n; i++)
        if (p->dev_tasks.v[i].device == d)
            seen[aip__dev_task_queue_index(&p->dev_tasks.v[i])] = 1;
    for (size_t q = 0; q < t->n_queues; q++)
        for (uint32_t l = 0; seen[q] && l < t->lanes[q]; l++)
            queue_thread(w, p, q, l, pid);
    free(seen);
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        const aip__device_task *k = &p->dev_tasks.v[i];
        if (k->device != d)
            continue;
        uint64_t tid = aip__dev_track_tid(aip__dev_task_queue_index(k), t->lane[i]);
        int launched = k->api >= 0 && (size_t)k->api < p->dev_api.n;
        int64_t conn = launched ? conn_base + k->api : -1;
        aip__tj_prefix(w, pid, tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"name\":");
        aip__tj_put_id(w, k->name);
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, k->start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, k->start, k->end);
        task_args(w, p, k, t->task_id[i], conn);
        AIP_OUT_LIT(w->o, "}");
        if (launched)
            task_flows(w, p, k, conn, pid, tid);
    }
}

/* ---- Overlap Analysis ------------------------------------------------- */

static const char *const overlap_names[4] = {"Computing", "Communication",
                                             "Communication(Not Overlapped)", "Free"};

static void overlap_layer(aip__tj *w, const aip__process *p, uint32_t d)
{
    aip__overlap_section *sec;
    size_t n;
    aip_status s = aip__device_overlap(p, d, &sec, &n);
    if (s) {
        if (!w->status)
            w->status = s;
        return;
    }
    int64_t pid = aip__tj_layer_pid(p->pid, SORT_OVERLAP, d);
    device_meta(w, p, d, pid, "Overlap Analysis", SORT_OVERLAP);
    for (unsigned tid = 0; tid < 4; tid++) {
        aip__tj_meta_str(w, "thread_name", pid, tid, "name", overlap_names[tid]);
        aip__tj_meta_sort(w, "thread_sort_index", pid, tid, tid);
    }
    for (size_t i = 0; i < n; i++) {
        aip__tj_prefix(w, pid, sec[i].type);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"name\":\"");
        aip__out_str(w->o, overlap_names[sec[i].type]);
        AIP_OUT_LIT(w->o, "\"");
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, sec[i].start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, sec[i].start, sec[i].end);
        AIP_OUT_LIT(w->o, "}");
    }
    free(sec);
}

void aip__trace_device_layers(aip__tj *w, const aip__process *p)
{
    if (!p->dev_api.n && !p->dev_tasks.n)
        return;
    int64_t conn_base = aip__dev_connection_base(w->m, p);
    api_layer(w, p, conn_base);
    if (!p->dev_tasks.n)
        return;
    aip__dev_tracks t;
    aip_status s = aip__dev_tracks_build(p, &t);
    if (s) {
        if (!w->status)
            w->status = s;
        return;
    }
    uint64_t with_tasks = 0; /* raw device ids are below 64 (device_load.c) */
    for (size_t i = 0; i < p->dev_tasks.n; i++)
        with_tasks |= (uint64_t)1 << (p->dev_tasks.v[i].device & 63);
    for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES; d++) {
        if (!(with_tasks >> d & 1))
            continue;
        device_layer(w, p, &t, d, conn_base);
        overlap_layer(w, p, d);
    }
    aip__dev_tracks_free(&t);
}
