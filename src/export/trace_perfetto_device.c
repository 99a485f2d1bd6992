/*
 * trace_perfetto_device.c — the device layers of trace.perfetto-trace, as
 * trace_view.json draws them (trace_json_device.c says what each is and
 * why): "CANN" (the runtime API calls, "Runtime@<api>", one track per
 * thread), one "Ascend Hardware" process per device (label "NPU <d>"; a
 * track per queue lane, device_tracks.h) with its tasks, and "Overlap
 * Analysis" (Computing / Communication / Communication(Not Overlapped) /
 * Free).  Flows: each task ends the flow from its launching op
 * (aip__pf_op_flow, left on the op by trace_perfetto_host.c) and the one
 * from its runtime call (aip__pf_call_flow, left on the call here).
 * Each CANN thread and each overlap track is a sequence; a device's tasks
 * are one (in start order, over all its lanes).
 */
#include "trace_perfetto_int.h"
#include "device_tracks.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_CANN 7
#define SORT_HARDWARE 14
#define SORT_OVERLAP 31

static void nomem(aip__pf *w, const char *what)
{
    if (!w->status)
        w->status = aip__fail(AIP_ERR_NOMEM, "no memory for %s", what);
}

static int launched_by_op(const aip__process *p, const aip__device_call *c)
{
    return c->parent_span >= 0 && c->parent_thread < p->n_threads &&
           (size_t)c->parent_span < p->threads[c->parent_thread].n_spans;
}

/* The tasks each call launched, as offsets into one list (by call). */
typedef struct launches {
    size_t *first;            /* per call + 1 */
    size_t *task;
} launches;

static int launches_build(const aip__process *p, launches *l)
{
    size_t n = p->dev_api.n;
    l->first = calloc(n + 1, sizeof *l->first);
    l->task = malloc((p->dev_tasks.n ? p->dev_tasks.n : 1) * sizeof *l->task);
    if (!l->first || !l->task)
        return -1;
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        int64_t a = p->dev_tasks.v[i].api;
        if (a >= 0 && (size_t)a < n)
            l->first[a + 1]++;
    }
    for (size_t a = 0; a < n; a++)
        l->first[a + 1] += l->first[a];
    size_t *fill = calloc(n ? n : 1, sizeof *fill);
    if (!fill)
        return -1;
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        int64_t a = p->dev_tasks.v[i].api;
        if (a >= 0 && (size_t)a < n)
            l->task[l->first[a] + fill[a]++] = i;
    }
    free(fill);
    return 0;
}

static void api_layer(aip__pf *w)
{
    const aip__process *p = w->p;
    if (!p->dev_api.n)
        return;
    launches l = {0};
    uint64_t *ids = NULL;
    size_t cap = 0;
    if (launches_build(p, &l)) {
        nomem(w, "the CANN layer");
        goto out;
    }
    uint64_t layer = aip__pf_layer(w, SORT_CANN, AIP__TJ_HOST_DEVICE, "CANN", "CPU");
    /* dev_api is by thread, then start: one sequence per thread */
    for (size_t i = 0; i < p->dev_api.n && !w->status; i++) {
        const aip__device_call *c = &p->dev_api.v[i];
        if (!i || c->thread != p->dev_api.v[i - 1].thread) {
            char name[40];
            uint64_t tid = c->thread < p->n_threads ? p->threads[c->thread].tid : 0;
            size_t n = (size_t)snprintf(name, sizeof name, "Thread %llu", (unsigned long long)tid);
            aip__pf_seq(w, aip__pf_named_track(w, layer, name, n, (int64_t)tid));
        }
        size_t k = l.first[i + 1] - l.first[i];
        if (aip__model_grow((void **)&ids, &cap, k ? k : 1, sizeof *ids)) {
            nomem(w, "the CANN layer");
            break;
        }
        for (size_t j = 0; j < k; j++)
            ids[j] = aip__pf_call_flow(w, l.task[l.first[i] + j]);
        aip__pf_ev e = {.name = c->name, .runtime = 1, .lit = "Runtime@", .out = ids,
                        .n_out = k};
        aip__pf_slice(w, &e, c->start, c->end);
    }
out:
    free(ids);
    free(l.first);
    free(l.task);
}

/* Queue lane tracks of device d, uuid per (queue, lane) at off[q] + lane. */
static uint64_t *lane_tracks(aip__pf *w, const aip__dev_tracks *t, uint32_t d, uint64_t layer,
                             size_t **off_out)
{
    const aip__process *p = w->p;
    size_t *off = calloc(t->n_queues + 1, sizeof *off);
    uint8_t *seen = calloc(t->n_queues ? t->n_queues : 1, 1);
    uint64_t *tr = NULL;
    if (off && seen) {
        for (size_t i = 0; i < p->dev_tasks.n; i++)
            if (p->dev_tasks.v[i].device == d)
                seen[aip__dev_task_queue_index(&p->dev_tasks.v[i])] = 1;
        for (size_t q = 0; q < t->n_queues; q++)
            off[q + 1] = off[q] + (seen[q] ? t->lanes[q] : 0);
        tr = calloc(off[t->n_queues] ? off[t->n_queues] : 1, sizeof *tr);
    }
    for (size_t q = 0; tr && q < t->n_queues; q++)
        for (uint32_t l = 0; seen[q] && l < t->lanes[q]; l++) {
            const aip__queue *qu = q < p->queues.n && p->queues.v[q].present ? &p->queues.v[q]
                                                                           : NULL;
            char suffix[24] = "", name[96];
            if (l)
                snprintf(suffix, sizeof suffix, " (%u)", l + 1);
            size_t n = 0;
            const char *label = qu && qu->label ? aip__model_str(p, qu->label, &n) : NULL;
            char *buf = NULL;
            if (label && n) {
                buf = malloc(n + sizeof suffix);
                if (buf) {
                    memcpy(buf, label, n);
                    size_t sl = strlen(suffix);
                    memcpy(buf + n, suffix, sl);
                    n += sl;
                }
            }
            if (!buf) {
                n = q < AIP_DEV_TRACK_NO_QUEUE
                        ? (size_t)snprintf(name, sizeof name, "Queue %zu%s", q, suffix)
                        : (size_t)snprintf(name, sizeof name, "No queue%s", suffix);
            }
            tr[off[q] + l] = aip__pf_named_track(w, layer, buf ? buf : name, n,
                                                 (int64_t)aip__dev_track_tid(q, l));
            free(buf);
        }
    free(seen);
    if (!tr) {
        free(off);
        off = NULL;
        nomem(w, "the device tracks");
    }
    *off_out = off;
    return tr;
}

static uint64_t device_process(aip__pf *w, uint32_t d, unsigned sort, const char *name)
{
    char label[32];
    snprintf(label, sizeof label, "NPU %u", d);
    return aip__pf_layer(w, sort, d, name, label);
}

static void device_layer(aip__pf *w, const aip__dev_tracks *t, uint32_t d)
{
    const aip__process *p = w->p;
    uint64_t layer = device_process(w, d, SORT_HARDWARE, "Ascend Hardware");
    size_t *off;
    uint64_t *tr = lane_tracks(w, t, d, layer, &off);
    if (!tr)
        return;
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < p->dev_tasks.n && !w->status; i++) {
        const aip__device_task *k = &p->dev_tasks.v[i];
        if (k->device != d)
            continue;
        uint64_t in[2];
        size_t n_in = 0;
        if (k->api >= 0 && (size_t)k->api < p->dev_api.n) {
            if (launched_by_op(p, &p->dev_api.v[k->api]))
                in[n_in++] = aip__pf_op_flow(w, i);
            in[n_in++] = aip__pf_call_flow(w, i);
        }
        aip__pf_ev e = {.track = tr[off[aip__dev_task_queue_index(k)] + t->lane[i]],
                        .name = k->name, .lit = "", .in = in, .n_in = n_in};
        aip__pf_slice(w, &e, k->start, k->end);
    }
    free(tr);
    free(off);
}

static const char *const overlap_names[4] = {"Computing", "Communication",
                                             "Communication(Not Overlapped)", "Free"};

static void overlap_layer(aip__pf *w, uint32_t d)
{
    aip__overlap_section *sec;
    size_t n;
    aip_status s = aip__device_overlap(w->m, d, &sec, &n);
    if (s) {
        if (!w->status)
            w->status = s;
        return;
    }
    uint64_t layer = device_process(w, d, SORT_OVERLAP, "Overlap Analysis");
    uint64_t tr[4];
    for (unsigned i = 0; i < 4; i++)
        tr[i] = aip__pf_named_track(w, layer, overlap_names[i], strlen(overlap_names[i]), i);
    for (unsigned type = 0; type < 4; type++) {
        aip__pf_seq(w, tr[type]);
        for (size_t i = 0; i < n; i++)
            if ((sec[i].type & 3u) == type) {
                aip__pf_ev e = {.lit = overlap_names[type]};
                aip__pf_slice(w, &e, sec[i].start, sec[i].end);
            }
    }
    free(sec);
}

void aip__pf_device_layers(aip__pf *w)
{
    const aip__process *p = w->p;
    if (w->status || (!p->dev_api.n && !p->dev_tasks.n))
        return;
    api_layer(w);
    if (!p->dev_tasks.n || w->status)
        return;
    aip__dev_tracks t;
    aip_status s = aip__dev_tracks_of(w->m, p, &t);
    if (s) {
        w->status = s;
        return;
    }
    uint64_t with_tasks = 0; /* raw device ids are below 64 (device_load.c) */
    for (size_t i = 0; i < p->dev_tasks.n; i++)
        with_tasks |= (uint64_t)1 << (p->dev_tasks.v[i].device & 63);
    for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES && !w->status; d++) {
        if (!(with_tasks >> d & 1))
            continue;
        device_layer(w, &t, d);
        overlap_layer(w, d);
    }
    aip__dev_tracks_free(&t);
}
