/*
 * trace_json_kineto_dev.c — device activity in Kineto's form of
 * trace_view.json, laid out as Kineto lays out CUPTI's, so that torch 2.x
 * readers find it (perfetto_hta_kineto.md: HTA drops events of an unknown
 * `cat` and takes a kernel for an event with args "stream" >= 0 and
 * "correlation" >= 0; the TensorBoard plugin lower-cases every X event's
 * `cat`).  torch_npu's CANN / Ascend Hardware / Overlap Analysis layers
 * (trace_json_device.c) are the other form's; HTA and the plugin compute
 * their own overlap.
 *
 * - Runtime API calls: X events `cat` "cuda_runtime" (Kineto's category
 *   for runtime calls of every back end here, OpenCL's included) on the
 *   calling host thread, named as the API ("clEnqueueNDRangeKernel"),
 *   args "External id" (the launching op's, trace_json.c) and
 *   "correlation".
 * - Tasks: one process per device (pid = the device id, as Kineto's GPU
 *   pids), one thread per stream (tid = the stream), X events `cat`
 *   "kernel", "gpu_memcpy" (copies and maps), "gpu_memset" (fills), and
 *   "device_task" for what Kineto has no category for (markers, barriers,
 *   other commands); args "External id", "device", "stream",
 *   "correlation", "grid" / "block" (work-groups and work-group size, as
 *   CUDA's grid and block) of kernels, "bytes" and "memory bandwidth
 *   (GB/s)" of copies and fills, and our "Task Name".  Copies and fills
 *   are named as Kineto names them ("Memcpy HtoD", "Memset"): HTA and the
 *   plugin class memory work by those names.
 * - Flows "ac2g" from each call to each task it launched (id = the
 *   correlation, "bp":"e" on the end), as Kineto's.
 *
 * "correlation" is the call's connection id (CANN_API.connectionId, the
 * other form's "connection_id") + 1: Kineto's readers take 0 for "none",
 * which is what a task that no recorded call launched gets.  "stream" is
 * the back end's own stream number (CUDA) or the queue id + 1 (OpenCL
 * queues have no number, and Kineto's readers take stream 0 for none);
 * overlapping tasks of an out-of-order queue go to sibling threads of the
 * stream (tid + lane << 32), the "stream" arg unchanged.
 */
#include "trace_json_int.h"
#include "device_tracks.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t task_stream(const aip__process *p, const aip__device_task *k)
{
    const aip__queue *q = k->queue < p->queues.n ? &p->queues.v[k->queue] : NULL;
    if (q && q->present && q->has_native)
        return q->native;
    return (uint64_t)aip__dev_task_queue_index(k) + 1;
}

/* The correlation of call `api` (index in dev_api), 0 = none. */
static uint64_t call_correlation(int64_t conn_base, int64_t api)
{
    return api < 0 ? 0 : (uint64_t)(conn_base + api) + 1;
}

/* The External id of call c's launching op, 0 = none. */
static uint64_t call_external_id(const aip__tj *w, const aip__process *p,
                                 const aip__device_call *c)
{
    if (c->parent_span < 0 || c->parent_thread >= p->n_threads ||
        (size_t)c->parent_span >= p->threads[c->parent_thread].n_spans)
        return 0;
    return aip__tj_external_id(w, c->parent_thread, (size_t)c->parent_span);
}

static void runtime_calls(aip__tj *w, const aip__process *p, int64_t conn_base)
{
    for (size_t i = 0; i < p->dev_api.n; i++) {
        const aip__device_call *c = &p->dev_api.v[i];
        aip__tj_prefix(w, p->pid, p->threads[c->thread].tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":");
        aip__tj_put_id(w, c->name);
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, c->start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, c->start, c->end);
        AIP_OUT_LIT(w->o, ",\"args\":{");
        uint64_t ext = call_external_id(w, p, c);
        if (ext) {
            AIP_OUT_LIT(w->o, "\"External id\":");
            aip__out_u64(w->o, ext);
            AIP_OUT_LIT(w->o, ",");
        }
        AIP_OUT_LIT(w->o, "\"correlation\":");
        aip__out_u64(w->o, call_correlation(conn_base, (int64_t)i));
        AIP_OUT_LIT(w->o, "}}");
    }
}

/* Kineto's category and, for copies and fills, its name of a task
 * (CUPTI's memcpy kind strings); NULL name: the task's own. */
static const char *task_cat(const aip__device_task *k, const char **name)
{
    static const char *const copy[] = {"Memcpy HtoH", "Memcpy HtoD", "Memcpy DtoH",
                                       "Memcpy DtoD"};
    *name = NULL;
    switch (k->kind) {
    case AIP_TASK_KERNEL: return "kernel";
    case AIP_TASK_MEMCPY:
    case AIP_TASK_MAP: {
        int op = aip__memcpy_operation(k->direction);
        *name = op >= 0 && op < 4 ? copy[op] : "Memcpy";
        return "gpu_memcpy";
    }
    case AIP_TASK_MEMSET: *name = "Memset"; return "gpu_memset";
    default: return "device_task";
    }
}

static void put_dim3(aip__tj *w, const char *key, const uint32_t v[3])
{
    aip__out_printf(w->o, ",\"%s\":[%u,%u,%u]", key, v[0] ? v[0] : 1, v[1] ? v[1] : 1,
                    v[2] ? v[2] : 1);
}

static void task_args(aip__tj *w, const aip__process *p, const aip__device_task *k,
                      int64_t conn_base)
{
    int launched = k->api >= 0 && (size_t)k->api < p->dev_api.n;
    uint64_t ext = launched ? call_external_id(w, p, &p->dev_api.v[k->api]) : 0;
    AIP_OUT_LIT(w->o, ",\"args\":{");
    if (ext) {
        AIP_OUT_LIT(w->o, "\"External id\":");
        aip__out_u64(w->o, ext);
        AIP_OUT_LIT(w->o, ",");
    }
    aip__out_printf(w->o, "\"device\":%u,\"stream\":%llu,\"correlation\":%llu", k->device,
                    (unsigned long long)task_stream(p, k),
                    (unsigned long long)call_correlation(conn_base, launched ? k->api : -1));
    uint32_t g[3];
    if (k->kind == AIP_TASK_KERNEL && aip__task_groups(k, g)) {
        put_dim3(w, "grid", g);
        put_dim3(w, "block", k->local);
    }
    if (k->kind != AIP_TASK_KERNEL && (k->bytes || k->kind == AIP_TASK_MEMCPY)) {
        AIP_OUT_LIT(w->o, ",\"bytes\":");
        aip__out_u64(w->o, k->bytes);
        if (k->end > k->start) {
            /* bytes per ns are GB/s; 3 decimals, integer arithmetic */
            unsigned __int128 milli =
                (unsigned __int128)k->bytes * 1000u / (uint64_t)(k->end - k->start);
            AIP_OUT_LIT(w->o, ",\"memory bandwidth (GB/s)\":");
            aip__out_commit(w->o, aip__fmt_us3(aip__out_reserve(w->o, 32),
                                               milli > INT64_MAX ? INT64_MAX : (int64_t)milli));
        }
    }
    AIP_OUT_LIT(w->o, ",\"Task Name\":");
    aip__tj_put_id(w, k->name);
    AIP_OUT_LIT(w->o, "}");
}

/* The ac2g flow from call `api` to task k on track (pid, tid). */
static void task_flow(aip__tj *w, const aip__process *p, const aip__device_task *k,
                      int64_t conn_base, int64_t pid, uint64_t tid)
{
    const aip__device_call *c = &p->dev_api.v[k->api];
    uint64_t id = call_correlation(conn_base, k->api);
    aip__tj_begin(w);
    aip__out_printf(w->o, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%llu",
                    (unsigned long long)id);
    aip__tj_prefix(w, p->pid, p->threads[c->thread].tid);
    aip__out_put(w->o, w->pfx, w->pfx_len);
    aip__tj_ts(w, c->start);
    AIP_OUT_LIT(w->o, "}");
    aip__tj_begin(w);
    aip__out_printf(w->o, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\","
                          "\"id\":%llu", (unsigned long long)id);
    aip__tj_prefix(w, pid, tid);
    aip__out_put(w->o, w->pfx, w->pfx_len);
    aip__tj_ts(w, k->start);
    AIP_OUT_LIT(w->o, "}");
}

static void device_meta(aip__tj *w, const aip__process *p, uint32_t d)
{
    const aip__device *dv = aip__model_device(p, d);
    char name[48];
    if (dv && dv->kind == AIP_DEVKIND_GPU)
        snprintf(name, sizeof name, "GPU %u", d);
    else
        snprintf(name, sizeof name, "Device %u (%s)", d, dv ? aip__dev_kind_name(dv->kind) : "?");
    aip__tj_meta_str(w, "process_name", d, 0, "name", name);
    aip__tj_meta_head(w, "process_labels", d, 0);
    AIP_OUT_LIT(w->o, ",\"args\":{\"labels\":");
    if (dv)
        aip__tj_put_id(w, dv->name);
    else
        AIP_OUT_LIT(w->o, "\"\"");
    AIP_OUT_LIT(w->o, "}}");
    aip__tj_meta_sort(w, "process_sort_index", d, 0, d);
}

static uint64_t task_tid(const aip__process *p, const aip__device_task *k, uint32_t lane)
{
    return task_stream(p, k) + ((uint64_t)lane << 32);
}

static void device_tasks(aip__tj *w, const aip__process *p, const aip__dev_tracks *t,
                         uint32_t d, int64_t conn_base)
{
    device_meta(w, p, d);
    uint8_t *named = calloc(t->n_queues ? t->n_queues : 1, 1); /* lane 0 only: few lanes */
    if (!named) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the device tracks");
        return;
    }
    for (size_t i = 0; i < p->dev_tasks.n && !w->status; i++) {
        const aip__device_task *k = &p->dev_tasks.v[i];
        if (k->device != d)
            continue;
        size_t q = aip__dev_task_queue_index(k);
        uint64_t tid = task_tid(p, k, t->lane[i]);
        if (q < t->n_queues && !(named[q] >> (t->lane[i] < 7 ? t->lane[i] : 7) & 1)) {
            named[q] |= (uint8_t)(1u << (t->lane[i] < 7 ? t->lane[i] : 7));
            char tn[64];
            if (t->lane[i])
                snprintf(tn, sizeof tn, "stream %llu (%u)", (unsigned long long)task_stream(p, k),
                         t->lane[i] + 1);
            else
                snprintf(tn, sizeof tn, "stream %llu", (unsigned long long)task_stream(p, k));
            aip__tj_meta_str(w, "thread_name", d, tid, "name", tn);
            aip__tj_meta_sort(w, "thread_sort_index", d, tid, tid);
        }
        const char *kname;
        const char *cat = task_cat(k, &kname);
        aip__tj_prefix(w, d, tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"cat\":\"");
        aip__out_str(w->o, cat);
        AIP_OUT_LIT(w->o, "\",\"name\":");
        if (kname)
            aip__trace_put_cstr(w->o, kname);
        else
            aip__tj_put_id(w, k->name);
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, k->start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, k->start, k->end);
        task_args(w, p, k, conn_base);
        AIP_OUT_LIT(w->o, "}");
        if (k->api >= 0 && (size_t)k->api < p->dev_api.n)
            task_flow(w, p, k, conn_base, d, tid);
    }
    free(named);
}

void aip__trace_kineto_device(aip__tj *w, const aip__process *p)
{
    if (!p->dev_api.n && !p->dev_tasks.n)
        return;
    int64_t conn_base = aip__dev_connection_base(w->m, p);
    runtime_calls(w, p, conn_base);
    if (!p->dev_tasks.n)
        return;
    aip__dev_tracks t;
    aip_status s = aip__dev_tracks_of(w->m, p, &t);
    if (s) {
        if (!w->status)
            w->status = s;
        return;
    }
    uint64_t with_tasks = 0; /* raw device ids are below 64 (device_load.c) */
    for (size_t i = 0; i < p->dev_tasks.n; i++)
        with_tasks |= (uint64_t)1 << (p->dev_tasks.v[i].device & 63);
    for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES && !w->status; d++)
        if (with_tasks >> d & 1)
            device_tasks(w, p, &t, d, conn_base);
    aip__dev_tracks_free(&t);
}
