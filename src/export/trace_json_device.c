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
 *   aip__device_overlap(): the step trace's device rows cut into time, so a
 *   step's Free slices sum to its step_trace_time Free;
 * - flows, both ends written beside the task: op → task `torch_to_npu`
 *   (cat async_npu, "bp":"e" on both ends as torch_npu), its start at the
 *   launching op's start on its thread, as torch_npu: msprof-analyze's
 *   compare finds an op's kernels by that ts (kernel_dict keyed by the flow
 *   start's ts); call → task `HostToDevice<id>` (cat HostToDevice, start on
 *   the CANN call, end "bp":"e" on the task).  The ids are torch_npu's and
 *   msprof's: the kernel's ts text, and the string of connection id << 32.
 *
 * These are torch_npu's form's layers; Kineto's form lays device activity
 * out as Kineto does (trace_json_kineto_dev.c).
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

/* ---- the hot path's pieces -------------------------------------------
 * A device task is one X event and four flow ends on up to four tracks,
 * and a big profile has millions: each event is formatted straight into
 * the output buffer (one capacity check, literals copied at known length),
 * the task's ts text is made once for its event, its flow id and both flow
 * ends, and the `,"pid":P,"tid":T,"ts":` text of a track is kept in a
 * small cache rather than formatted per event.  The bytes are those of
 * the event-by-event writers elsewhere in trace_json*.c. */

#define PUT(d, lit) (memcpy((d), (lit), sizeof(lit) - 1), (d) + sizeof(lit) - 1)

/* Room for everything of a task's event and flows but its name (bounded:
 * numbers of at most 25 bytes, prefixes of at most 62, ids of at most 40,
 * and the whole-word copies below writing up to 64 bytes past a piece). */
#define TASK_ROOM 2048u

typedef struct track_pfx {
    char s[64];               /* copied whole: 64 bytes are writable after it */
    int64_t pid;
    uint64_t tid;
    uint8_t n;                /* 0: empty slot */
} track_pfx;

#define PFX_SLOTS 256u

/* Prefixes: of the process's threads (the launching ops' and the CANN
 * layer's, by thread index) and, hashed, of the device and overlap
 * tracks. */
typedef struct dev_writer {
    aip__tj *w;
    track_pfx *host, *cann;   /* per thread index, NULL: no memory (hashed then) */
    size_t n_threads;
    track_pfx pfx[PFX_SLOTS];
} dev_writer;

static void pfx_fill(track_pfx *e, int64_t pid, uint64_t tid)
{
    char *d = e->s;
    d = PUT(d, ",\"pid\":");
    d = aip__fmt_i64(d, pid);
    d = PUT(d, ",\"tid\":");
    d = aip__fmt_u64(d, tid);
    d = PUT(d, ",\"ts\":");
    e->pid = pid;
    e->tid = tid;
    e->n = (uint8_t)(d - e->s);
}

/* The `,"pid":P,"tid":T,"ts":` text of a track (aip__tj_prefix's). */
static const track_pfx *pfx_of(dev_writer *dw, int64_t pid, uint64_t tid)
{
    uint64_t h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull + tid) * 0xC2B2AE3D27D4EB4Full;
    track_pfx *e = &dw->pfx[h >> 56];
    if (!e->n || e->pid != pid || e->tid != tid)
        pfx_fill(e, pid, tid);
    return e;
}

/* The same for thread index `ti` of layer `pid` from one of the per-thread
 * tables. */
static inline const track_pfx *pfx_thread(dev_writer *dw, track_pfx *table, int64_t pid,
                                          const aip__process *p, uint32_t ti)
{
    if (!table || ti >= dw->n_threads)
        return pfx_of(dw, pid, p->threads[ti].tid);
    track_pfx *e = &table[ti];
    if (!e->n)
        pfx_fill(e, pid, p->threads[ti].tid);
    return e;
}

static inline char *put_pfx(char *d, const track_pfx *x)
{
    memcpy(d, x->s, sizeof x->s);
    return d + x->n;
}

/* The separator before an event (aip__tj_begin's). */
static inline char *put_sep(aip__tj *w, char *d)
{
    if (w->first) {
        w->first = 0;
        *d++ = '\n';
        return d;
    }
    return PUT(d, ",\n");
}

/* An escaped string of the current process; `skip` leading bytes left
 * out (1: its opening quote). */
static void put_esc(aip__tj *w, uint32_t id, size_t skip)
{
    size_t n;
    const char *s = aip__esc_get(&w->esc, id, &n);
    if (!s || n < 2) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for trace strings");
        s = "\"\"";
        n = 2;
    }
    aip__out_put(w->o, s + skip, n - skip);
}

/* A short ASCII name of ours (task type, copy operation) as a JSON string:
 * nothing in them needs escaping. */
static inline char *put_name(char *d, const char *s)
{
    size_t n = strlen(s);
    *d++ = '"';
    memcpy(d, s, n);
    d += n;
    *d++ = '"';
    return d;
}

/* ---- runtime API calls ("CANN") --------------------------------------- */

static void api_layer(dev_writer *dw, const aip__process *p, int64_t conn_base)
{
    aip__tj *w = dw->w;
    if (!p->dev_api.n)
        return;
    int64_t cpid = aip__tj_layer_pid(p->pid, SORT_CANN, AIP__TJ_HOST_DEVICE);
    aip__tj_layer_meta(w, cpid, "CANN", "CPU", SORT_CANN);
    const track_pfx *x = NULL;
    /* dev_api is sorted by thread, then start: one group per thread */
    for (size_t i = 0; i < p->dev_api.n; i++) {
        const aip__device_call *c = &p->dev_api.v[i];
        uint64_t tid = p->threads[c->thread].tid;
        if (!i || c->thread != p->dev_api.v[i - 1].thread) {
            aip__tj_thread_meta(w, cpid, tid);
            x = pfx_thread(dw, dw->cann, cpid, p, c->thread);
        }
        char *d = aip__out_reserve(w->o, 64);
        d = put_sep(w, d);
        d = PUT(d, "{\"ph\":\"X\",\"name\":\"Runtime@");
        aip__out_commit(w->o, d);
        put_esc(w, c->name, 1); /* after its opening quote */
        d = aip__out_reserve(w->o, 256);
        d = put_pfx(d, x);
        d = aip__tj_fmt_ts(w, d, c->start);
        d = PUT(d, ",\"dur\":");
        d = aip__tj_fmt_dur(w, d, c->start, c->end);
        d = PUT(d, ",\"args\":{\"Thread Id\":");
        d = aip__fmt_u64(d, tid);
        d = PUT(d, ",\"level\":\"runtime\",\"connection_id\":");
        d = aip__fmt_i64(d, conn_base + (int64_t)i);
        if (c->correlation) {
            d = PUT(d, ",\"correlation_id\":");
            d = aip__fmt_u64(d, c->correlation);
        }
        d = PUT(d, "}}");
        aip__out_commit(w->o, d);
    }
}

/* ---- device tasks ("Ascend Hardware") --------------------------------- */

static char *put_dims(char *d, const char *key, size_t key_len, const uint32_t v[3])
{
    d = PUT(d, ",\"");
    memcpy(d, key, key_len);
    d += key_len;
    d = PUT(d, "\":\"");
    for (int i = 0; i < 3; i++) {
        if (i)
            *d++ = ',';
        d = aip__fmt_u64(d, v[i]);
    }
    *d++ = '"';
    return d;
}

static char *task_args(char *d, const aip__process *p, const aip__device_task *k,
                       uint32_t task_id, int64_t conn)
{
    d = PUT(d, ",\"args\":{\"Task Type\":");
    d = put_name(d, aip__task_type_name(p, k));
    d = PUT(d, ",\"Physic Stream Id\":");
    if (k->queue < p->queues.n)
        d = aip__fmt_u64(d, aip__queue_stream_id(p, k->queue));
    else
        d = PUT(d, "\"N/A\"");
    d = PUT(d, ",\"Task Id\":");
    d = aip__fmt_u64(d, task_id);
    d = PUT(d, ",\"Device Id\":");
    d = aip__fmt_u64(d, k->device);
    if (k->correlation) {
        d = PUT(d, ",\"correlation_id\":");
        d = aip__fmt_u64(d, k->correlation);
    }
    if (conn >= 0) {
        d = PUT(d, ",\"connection_id\":");
        d = aip__fmt_i64(d, conn);
    }
    if (k->global[0])
        d = put_dims(d, "Global Work Size", 16, k->global);
    if (k->local[0])
        d = put_dims(d, "Local Work Size", 15, k->local);
    if (k->bytes || k->kind == AIP_TASK_MEMCPY) {
        d = PUT(d, ",\"size(B)\":");
        d = aip__fmt_u64(d, k->bytes);
        if (k->end > k->start) {
            /* bytes per ns are GB/s (msprof counts in 1000s); 3 decimals */
            unsigned __int128 milli = (unsigned __int128)k->bytes * 1000u / (uint64_t)(k->end - k->start);
            d = PUT(d, ",\"bandwidth(GB/s)\":");
            d = aip__fmt_us3(d, milli > INT64_MAX ? INT64_MAX : (int64_t)milli);
        }
    }
    if (k->kind == AIP_TASK_MEMCPY) {
        d = PUT(d, ",\"operation\":");
        d = put_name(d, aip__memcpy_operation_name(aip__memcpy_operation(k->direction)));
    }
    *d++ = '}';
    return d;
}

/* One flow end: {"ph":..,"cat":..,"name":..,"id":<id>,pid,tid,"ts":<ts>};
 * `head` is everything up to the name's closing quote, `name2` (may be
 * empty) what follows in the name.  name2, id and ts are buffers of 24, 48
 * and 40 bytes, copied whole (fixed-size copies are a few moves, a copy
 * of a length known only at run time a call). */
static inline char *flow_end(aip__tj *w, char *d, const char *head, size_t head_len,
                             const char *name2, size_t name2_len, const char *id,
                             size_t id_len, const track_pfx *x, const char *ts, size_t ts_len)
{
    d = put_sep(w, d);
    memcpy(d, head, head_len);
    d += head_len;
    memcpy(d, name2, 24); /* whole: its buffer's size */
    d += name2_len;
    d = PUT(d, "\",\"id\":");
    memcpy(d, id, 48);
    d += id_len;
    d = put_pfx(d, x);
    memcpy(d, ts, 40);
    d += ts_len;
    *d++ = '}';
    return d;
}

#define LIT_N(s) s, sizeof(s) - 1

/* The flows into task k (drawn on track `dx`, its ts text `kts`): from its
 * launching op (cat async_npu; "bp":"e" on the start too in torch_npu's
 * form) and from its launching call (cat HostToDevice). */
static char *task_flows(dev_writer *dw, char *d, const aip__process *p,
                        const aip__device_task *k, int64_t conn, const track_pfx *dx,
                        const char *kts, size_t kts_len)
{
    aip__tj *w = dw->w;
    const aip__device_call *c = &p->dev_api.v[k->api];
    char id[48], ts[40], num[24] = {0};
    size_t id_len;
    if (c->parent_span >= 0 && c->parent_thread < p->n_threads &&
        (size_t)c->parent_span < p->threads[c->parent_thread].n_spans) {
        /* torch_npu's id: the kernel's ts text, quoted as its ts is */
        memcpy(id, kts, kts_len);
        id_len = kts_len;
        const aip__thread *th = &p->threads[c->parent_thread];
        size_t ts_len = (size_t)(aip__tj_fmt_ts(w, ts, th->spans[c->parent_span].start) - ts);
        const track_pfx *hx = pfx_thread(dw, dw->host, p->pid, p, c->parent_thread);
        d = flow_end(w, d, LIT_N("{\"ph\":\"s\",\"bp\":\"e\",\"cat\":\"async_npu\","
                                 "\"name\":\"torch_to_npu"), num, 0, id, id_len, hx, ts, ts_len);
        d = flow_end(w, d, LIT_N("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"async_npu\","
                                 "\"name\":\"torch_to_npu"), num, 0, id, id_len, dx, kts, kts_len);
    }
    /* name "HostToDevice<n>", id "n" (msprof's: the connection id << 32,
     * as a string) */
    uint64_t n = (uint64_t)conn << 32;
    size_t num_len = (size_t)(aip__fmt_u64(num, n) - num);
    id[0] = '"';
    memcpy(id + 1, num, num_len);
    id[num_len + 1] = '"';
    id_len = num_len + 2;
    int64_t cpid = aip__tj_layer_pid(p->pid, SORT_CANN, AIP__TJ_HOST_DEVICE);
    size_t ts_len = (size_t)(aip__tj_fmt_ts(w, ts, c->start) - ts);
    d = flow_end(w, d, LIT_N("{\"ph\":\"s\",\"cat\":\"HostToDevice\",\"name\":\"HostToDevice"),
                 num, num_len, id, id_len, pfx_thread(dw, dw->cann, cpid, p, c->thread), ts,
                 ts_len);
    d = flow_end(w, d, LIT_N("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"HostToDevice\","
                             "\"name\":\"HostToDevice"), num, num_len, id, id_len, dx, kts, kts_len);
    return d;
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

static void device_layer(dev_writer *dw, const aip__process *p, const aip__dev_tracks *t,
                         uint32_t d, int64_t conn_base)
{
    aip__tj *w = dw->w;
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
        const track_pfx *x = pfx_of(dw, pid, tid);
        char kts[40];
        size_t kts_len = (size_t)(aip__tj_fmt_ts(w, kts, k->start) - kts);
        char *o = aip__out_reserve(w->o, 32);
        o = put_sep(w, o);
        o = PUT(o, "{\"ph\":\"X\",\"name\":");
        aip__out_commit(w->o, o);
        put_esc(w, k->name, 0);
        o = aip__out_reserve(w->o, TASK_ROOM);
        o = put_pfx(o, x);
        memcpy(o, kts, kts_len);
        o += kts_len;
        o = PUT(o, ",\"dur\":");
        o = aip__tj_fmt_dur(w, o, k->start, k->end);
        o = task_args(o, p, k, t->task_id[i], conn);
        *o++ = '}';
        if (launched)
            o = task_flows(dw, o, p, k, conn, x, kts, kts_len);
        aip__out_commit(w->o, o);
    }
}

/* ---- Overlap Analysis ------------------------------------------------- */

static const char *const overlap_names[4] = {"Computing", "Communication",
                                             "Communication(Not Overlapped)", "Free"};

static void overlap_layer(dev_writer *dw, const aip__process *p, uint32_t d)
{
    aip__tj *w = dw->w;
    aip__overlap_section *sec;
    size_t n;
    aip_status s = aip__device_overlap(w->m, d, &sec, &n);
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
    const track_pfx *x[4];
    for (unsigned tid = 0; tid < 4; tid++)
        x[tid] = pfx_of(dw, pid, tid);
    for (size_t i = 0; i < n; i++) {
        char *o = aip__out_reserve(w->o, 256);
        o = put_sep(w, o);
        o = PUT(o, "{\"ph\":\"X\",\"name\":");
        o = put_name(o, overlap_names[sec[i].type & 3]);
        o = put_pfx(o, x[sec[i].type & 3]);
        o = aip__tj_fmt_ts(w, o, sec[i].start);
        o = PUT(o, ",\"dur\":");
        o = aip__tj_fmt_dur(w, o, sec[i].start, sec[i].end);
        *o++ = '}';
        aip__out_commit(w->o, o);
    }
    free(sec);
}

void aip__trace_device_layers(aip__tj *w, const aip__process *p)
{
    if (!p->dev_api.n && !p->dev_tasks.n)
        return;
    /* on the heap: the prefix cache is 22 KiB */
    dev_writer *dw = calloc(1, sizeof *dw);
    if (!dw) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the device layers");
        return;
    }
    dw->w = w;
    dw->n_threads = p->n_threads;
    if (p->n_threads) { /* without them, prefixes are hashed */
        dw->host = calloc(p->n_threads, sizeof *dw->host);
        dw->cann = calloc(p->n_threads, sizeof *dw->cann);
    }
    int64_t conn_base = aip__dev_connection_base(w->m, p);
    api_layer(dw, p, conn_base);
    aip__dev_tracks t;
    aip_status s = p->dev_tasks.n ? aip__dev_tracks_of(w->m, p, &t) : AIP_OK;
    if (s && !w->status)
        w->status = s;
    if (p->dev_tasks.n && !s) {
        uint64_t with_tasks = 0; /* raw device ids are below 64 (device_load.c) */
        for (size_t i = 0; i < p->dev_tasks.n; i++)
            with_tasks |= (uint64_t)1 << (p->dev_tasks.v[i].device & 63);
        for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES; d++) {
            if (!(with_tasks >> d & 1))
                continue;
            device_layer(dw, p, &t, d, conn_base);
            overlap_layer(dw, p, d);
        }
        aip__dev_tracks_free(&t);
    }
    free(dw->host);
    free(dw->cann);
    free(dw);
}
