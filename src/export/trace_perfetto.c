/*
 * trace_perfetto.c — trace.perfetto-trace (--trace-format perfetto): the
 * timeline of trace_view.json in Perfetto's own protobuf format
 * (TracePacket / TrackEvent, protos/perfetto/trace/ of the perfetto
 * repository), for the Perfetto UI and trace processor: integer ns times,
 * so nothing is rounded through a float64 as the JSON importer does, and
 * a size that loads where a JSON trace is too big for the browser.
 *
 * This file writes the packets (pb_writer.h's encoders, through the
 * aip__out of every exporter: temporary file, 0640, renamed when
 * complete), keeps the sequences and their interning (trace_perfetto_int.h
 * says how), and drives the layers process by process, in the order
 * trace_view.json has them.  Track uuids are counted from 1 in that order,
 * flow ids as the Kineto form counts them (fwdbwd 1..n, then per device
 * task two: from its op, from its runtime call): the same model gives the
 * same bytes.
 */
#include "export.h"
#include "trace_perfetto_int.h"
#include "pb_writer.h"
#include "text_escape.h"
#include "utf8.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

/* TracePacket and TrackEvent field numbers (perfetto_trace.proto). */
enum {
    F_TRACE_PACKET = 1,
    P_CLOCK_SNAPSHOT = 6, P_TIMESTAMP = 8, P_SEQ_ID = 10, P_TRACK_EVENT = 11,
    P_INTERNED = 12, P_SEQ_FLAGS = 13, P_CLOCK_ID = 58, P_DEFAULTS = 59, P_TRACK_DESC = 60,
    E_CATEGORY_IIDS = 3, E_TYPE = 9, E_NAME_IID = 10, E_TRACK_UUID = 11, E_NAME = 23,
    E_COUNTER = 30, E_DOUBLE_COUNTER = 44, E_FLOW_IDS = 47, E_TERMINATING_FLOW_IDS = 48,
    I_CATEGORIES = 1, I_NAMES = 2,
    T_UUID = 1, T_NAME = 2, T_PROCESS = 3, T_THREAD = 4, T_PARENT = 5, T_COUNTER = 8,
    T_CHILD_ORDERING = 11, T_SIBLING_RANK = 12
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4 };
enum { CLOCK_BOOTTIME = 6, CLOCK_INCREMENTAL = 64, SEQ_INCREMENTAL_STATE_CLEARED = 1 };
enum { ORDERING_EXPLICIT = 3 };

static const char *const cat_names[AIP_PF_N_CATS] = {
    [AIP_PF_CAT_CPU_OP] = "cpu_op", [AIP_PF_CAT_USER_ANNOTATION] = "user_annotation",
    [AIP_PF_CAT_MSTX] = "mstx", [AIP_PF_CAT_PYTHON_FUNCTION] = "python_function",
    [AIP_PF_CAT_GC] = "GC", [AIP_PF_CAT_CPU_INSTANT] = "cpu_instant_event",
    [AIP_PF_CAT_MEMORY] = "memory", [AIP_PF_CAT_OS_RUNTIME] = "os_runtime",
    [AIP_PF_CAT_COMMUNICATION] = "communication"};

/* ---- packets ------------------------------------------------------------ */

/* Room a packet needs beyond its strings and flows. */
#define PACKET_ROOM 160u
/* Packets up to this size are formatted in the output buffer itself. */
#define IN_BUFFER_MAX (AIP_OUT_CAP / 4)

typedef struct pkt {
    uint8_t *start, *d, *mark;
    uint8_t *heap;            /* a packet too big for the buffer, or NULL */
} pkt;

static int pkt_begin(aip__pf *w, pkt *k, size_t room)
{
    k->heap = NULL;
    if (room <= IN_BUFFER_MAX) {
        k->start = (uint8_t *)aip__out_reserve(w->o, room);
    } else if (!(k->start = k->heap = malloc(room))) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for a trace packet");
        return -1;
    }
    k->d = aip__pb_open(k->start, F_TRACE_PACKET, &k->mark);
    return 0;
}

static void pkt_end(aip__pf *w, pkt *k)
{
    uint8_t *end = aip__pb_close(k->d, k->mark);
    if (!k->heap) {
        aip__out_commit(w->o, (char *)end);
        return;
    }
    aip__out_put(w->o, k->heap, (size_t)(end - k->heap));
    free(k->heap);
}

/* The packet's time: ns since the sequence's last, or absolute on the
 * trace clock when before it. */
static uint8_t *put_time(aip__pf *w, uint8_t *d, int64_t ts)
{
    if (ts >= w->clock) {
        d = aip__pb_uint(d, P_TIMESTAMP, (uint64_t)(ts - w->clock));
        w->clock = ts;
        return d;
    }
    d = aip__pb_uint(d, P_TIMESTAMP, (uint64_t)(ts < 0 ? 0 : ts));
    return aip__pb_uint(d, P_CLOCK_ID, CLOCK_BOOTTIME);
}

/* `s` when it is valid UTF-8, else a copy in *tmp (to free) with each
 * invalid byte as U+FFFD, as every other output has it: protobuf strings
 * are UTF-8 to their readers. */
const char *aip__pf_utf8_text(aip__pf *w, const char *s, size_t *n, char **tmp)
{
    *tmp = NULL;
    for (size_t i = 0; i < *n;) {
        size_t k = (unsigned char)s[i] < 0x80 ? 1
                 : aip__utf8_seq((const unsigned char *)s + i, *n - i);
        if (!k) {
            if (!(*tmp = malloc(3 * *n + 1))) {
                if (!w->status)
                    w->status = aip__fail(AIP_ERR_NOMEM, "no memory for trace strings");
                *n = 0;
                return "";
            }
            *n = aip__utf8_clean(s, *n, *tmp);
            return *tmp;
        }
        i += k;
    }
    return s;
}

static void event(aip__pf *w, int type, const aip__pf_ev *e, uint64_t track, int64_t ts,
                  int has_value, int is_double, double dv, int64_t iv)
{
    size_t name_len = 0;
    const char *name = NULL;
    char *tmp = NULL;
    uint64_t iid = 0;
    int intern = 0;
    if (e && type != TYPE_SLICE_END && e->name && (size_t)e->name < w->p->strings.n_ent) {
        iid = 2 * (uint64_t)e->name + e->runtime;
        intern = iid < w->n_iid && w->iid_seq[iid] != w->seq;
        if (iid >= w->n_iid) /* not in the table: written inline */
            iid = 0;
        if (intern || !iid) {
            name = aip__model_str(w->p, e->name, &name_len);
            name = aip__pf_utf8_text(w, name, &name_len, &tmp);
        }
    } else if (e && type != TYPE_SLICE_END && e->lit) {
        name = e->lit;
        name_len = e->lit_len ? e->lit_len : strlen(e->lit);
        name = aip__pf_utf8_text(w, name, &name_len, &tmp);
    }
    int cat = e && type != TYPE_SLICE_END ? e->cat : 0;
    int intern_cat = cat && !(w->cats >> cat & 1);
    int args = e && type != TYPE_SLICE_END && e->n_args;
    int intern_args = args && aip__pf_args_new(w, e);
    size_t n_flows = e && type != TYPE_SLICE_END ? e->n_out + e->n_in : 0;
    size_t room = PACKET_ROOM + 10 * n_flows + (name ? 2 * name_len + 16 : 0) +
                  (args ? aip__pf_args_room(w, e) : 0);
    pkt k;
    if (pkt_begin(w, &k, room)) {
        free(tmp);
        return;
    }
    uint8_t *d = put_time(w, k.d, ts), *m1, *m2;
    d = aip__pb_uint(d, P_SEQ_ID, w->seq);
    if (type != TYPE_SLICE_END && (intern || intern_cat || intern_args)) {
        d = aip__pb_open(d, P_INTERNED, &m1);
        if (intern_cat) {
            d = aip__pb_open(d, I_CATEGORIES, &m2);
            d = aip__pb_uint(d, 1, (uint64_t)cat);
            d = aip__pb_str(d, 2, cat_names[cat]);
            d = aip__pb_close(d, m2);
            w->cats |= 1u << cat;
        }
        if (intern && iid) {
            d = aip__pb_open(d, I_NAMES, &m2);
            d = aip__pb_uint(d, 1, iid);
            if (e->runtime) {
                d = aip__pb_varint(aip__pb_tag(d, 2, AIP_PB_LEN), 8 + name_len);
                memcpy(d, "Runtime@", 8);
                memcpy(d + 8, name, name_len);
                d += 8 + name_len;
            } else {
                d = aip__pb_bytes(d, 2, name, name_len);
            }
            d = aip__pb_close(d, m2);
            w->iid_seq[iid] = w->seq;
        }
        if (intern_args)
            d = aip__pf_args_intern(w, d, e);
        d = aip__pb_close(d, m1);
    }
    d = aip__pb_open(d, P_TRACK_EVENT, &m1);
    d = aip__pb_uint(d, E_TYPE, (uint64_t)type);
    if (track && track != w->seq_track)
        d = aip__pb_uint(d, E_TRACK_UUID, track);
    if (cat)
        d = aip__pb_uint(d, E_CATEGORY_IIDS, (uint64_t)cat);
    if (type != TYPE_SLICE_END && type != TYPE_COUNTER) {
        if (iid)
            d = aip__pb_uint(d, E_NAME_IID, iid);
        else if (name)
            d = aip__pb_bytes(d, E_NAME, name, name_len);
    }
    free(tmp);
    if (args)
        d = aip__pf_args_put(w, d, e);
    for (size_t i = 0; e && type != TYPE_SLICE_END && i < e->n_out; i++)
        d = aip__pb_fixed64(d, E_FLOW_IDS, e->out[i]);
    for (size_t i = 0; e && type != TYPE_SLICE_END && i < e->n_in; i++)
        d = aip__pb_fixed64(d, E_TERMINATING_FLOW_IDS, e->in[i]);
    if (has_value)
        d = is_double ? aip__pb_double(d, E_DOUBLE_COUNTER, dv)
                      : aip__pb_uint(d, E_COUNTER, (uint64_t)iv);
    d = aip__pb_close(d, m1);
    k.d = d;
    pkt_end(w, &k);
}

/* ---- slice ends: a min-heap by (time, later begin first) ----------------- */

static int end_before(const aip__pf_end *a, const aip__pf_end *b)
{
    return a->ts < b->ts || (a->ts == b->ts && a->order > b->order);
}

static void pop_end(aip__pf *w)
{
    aip__pf_end top = w->heap[0], last = w->heap[--w->n_heap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= w->n_heap)
            break;
        if (c + 1 < w->n_heap && end_before(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!end_before(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->n_heap)
        w->heap[i] = last;
    event(w, TYPE_SLICE_END, NULL, top.track, top.ts, 0, 0, 0, 0);
}

/* Write the ends at or before `ts`. */
static void ends_until(aip__pf *w, int64_t ts)
{
    while (w->n_heap && w->heap[0].ts <= ts)
        pop_end(w);
}

static void push_end(aip__pf *w, uint64_t track, int64_t ts)
{
    if (aip__model_grow((void **)&w->heap, &w->cap_heap, w->n_heap + 1, sizeof *w->heap)) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's open slices");
        return;
    }
    aip__pf_end e = {ts, ++w->order, track};
    size_t i = w->n_heap++;
    while (i && end_before(&e, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = e;
}

void aip__pf_flush(aip__pf *w)
{
    while (w->n_heap)
        pop_end(w);
}

void aip__pf_slice(aip__pf *w, const aip__pf_ev *e, int64_t start, int64_t end)
{
    ends_until(w, start);
    uint64_t track = e->track ? e->track : w->seq_track;
    event(w, TYPE_SLICE_BEGIN, e, track, start, 0, 0, 0, 0);
    push_end(w, track, end < start ? start : end);
    w->events++;
}

void aip__pf_instant(aip__pf *w, const aip__pf_ev *e, int64_t ts)
{
    ends_until(w, ts);
    event(w, TYPE_INSTANT, e, e->track ? e->track : w->seq_track, ts, 0, 0, 0, 0);
    w->events++;
}

void aip__pf_counter(aip__pf *w, uint64_t track, int64_t ts, double v)
{
    ends_until(w, ts);
    event(w, TYPE_COUNTER, NULL, track, ts, 1, 1, v, 0);
    w->events++;
}

void aip__pf_counter_i(aip__pf *w, uint64_t track, int64_t ts, int64_t v)
{
    ends_until(w, ts);
    event(w, TYPE_COUNTER, NULL, track, ts, 1, 0, 0, v);
    w->events++;
}

/* ---- sequences ------------------------------------------------------------ */

void aip__pf_seq(aip__pf *w, uint64_t track)
{
    aip__pf_flush(w);
    w->seq++;
    w->seq_track = track;
    w->clock = w->base;
    w->cats = 0;
    w->arg_names = 0;
    pkt k;
    if (pkt_begin(w, &k, PACKET_ROOM))
        return;
    uint8_t *d = k.d, *m1, *m2, *m3;
    d = aip__pb_uint(d, P_SEQ_ID, w->seq);
    d = aip__pb_uint(d, P_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    d = aip__pb_open(d, P_DEFAULTS, &m1);
    d = aip__pb_uint(d, P_CLOCK_ID, CLOCK_INCREMENTAL);
    if (track) {
        d = aip__pb_open(d, 11 /* track_event_defaults */, &m2);
        d = aip__pb_uint(d, 11 /* track_uuid */, track);
        d = aip__pb_close(d, m2);
    }
    d = aip__pb_close(d, m1);
    /* The incremental clock starts at `base` on the trace clock. */
    d = aip__pb_open(d, P_CLOCK_SNAPSHOT, &m1);
    d = aip__pb_open(d, 1, &m2);
    d = aip__pb_uint(d, 1, CLOCK_BOOTTIME);
    d = aip__pb_uint(d, 2, (uint64_t)w->base);
    d = aip__pb_close(d, m2);
    d = aip__pb_open(d, 1, &m3);
    d = aip__pb_uint(d, 1, CLOCK_INCREMENTAL);
    d = aip__pb_uint(d, 2, (uint64_t)w->base);
    d = aip__pb_uint(d, 3, 1); /* is_incremental */
    d = aip__pb_close(d, m3);
    d = aip__pb_close(d, m1);
    k.d = d;
    pkt_end(w, &k);
}

/* ---- tracks ---------------------------------------------------------------- */

typedef struct desc {
    uint64_t parent;
    const char *name;
    size_t name_len;
    int is_process, is_thread, is_counter;
    int64_t pid;
    uint64_t tid;
    const char *label;
    int64_t sort;
} desc;

static uint64_t track(aip__pf *w, const desc *in)
{
    uint64_t uuid = ++w->next_uuid;
    desc c = *in, *t = &c;
    char *tmp;
    c.name = aip__pf_utf8_text(w, in->name, &c.name_len, &tmp);
    pkt k;
    size_t label_len = t->label ? strlen(t->label) : 0;
    if (pkt_begin(w, &k, PACKET_ROOM + t->name_len + label_len)) {
        free(tmp);
        return uuid;
    }
    uint8_t *d = k.d, *m1, *m2;
    d = aip__pb_open(d, P_TRACK_DESC, &m1);
    d = aip__pb_uint(d, T_UUID, uuid);
    if (t->parent)
        d = aip__pb_uint(d, T_PARENT, t->parent);
    if (t->is_process) {
        d = aip__pb_open(d, T_PROCESS, &m2);
        d = aip__pb_uint(d, 1, (uint64_t)t->pid);
        d = aip__pb_bytes(d, 6, t->name, t->name_len);
        if (t->label)
            d = aip__pb_bytes(d, 8, t->label, label_len);
        d = aip__pb_close(d, m2);
        d = aip__pb_uint(d, T_CHILD_ORDERING, ORDERING_EXPLICIT);
    } else if (t->is_thread) {
        d = aip__pb_open(d, T_THREAD, &m2);
        d = aip__pb_uint(d, 1, (uint64_t)t->pid);
        d = aip__pb_uint(d, 2, t->tid);
        d = aip__pb_bytes(d, 5, t->name, t->name_len);
        d = aip__pb_close(d, m2);
    } else {
        d = aip__pb_bytes(d, T_NAME, t->name, t->name_len);
        if (t->is_counter) {
            d = aip__pb_open(d, T_COUNTER, &m2);
            d = aip__pb_close(d, m2);
        }
    }
    /* int32 on the wire: a rank past it keeps its order's low bits only */
    d = aip__pb_uint(d, T_SIBLING_RANK, (uint64_t)(int64_t)(int32_t)t->sort);
    d = aip__pb_close(d, m1);
    k.d = d;
    pkt_end(w, &k);
    free(tmp);
    return uuid;
}

uint64_t aip__pf_process_track(aip__pf *w, int64_t pid, const char *name, size_t name_len,
                               const char *label, int64_t sort)
{
    desc t = {.name = name, .name_len = name_len, .is_process = 1, .pid = pid, .label = label,
              .sort = sort};
    return track(w, &t);
}

uint64_t aip__pf_thread_track(aip__pf *w, uint64_t parent, int64_t pid, uint64_t tid,
                              const char *name, size_t name_len)
{
    desc t = {.parent = parent, .name = name, .name_len = name_len, .is_thread = 1, .pid = pid,
              .tid = tid, .sort = (int64_t)tid};
    return track(w, &t);
}

uint64_t aip__pf_named_track(aip__pf *w, uint64_t parent, const char *name, size_t name_len,
                             int64_t sort)
{
    desc t = {.parent = parent, .name = name, .name_len = name_len, .sort = sort};
    return track(w, &t);
}

uint64_t aip__pf_counter_track(aip__pf *w, uint64_t parent, const char *name)
{
    desc t = {.parent = parent, .name = name, .name_len = strlen(name), .is_counter = 1};
    return track(w, &t);
}

uint64_t aip__pf_layer(aip__pf *w, unsigned sort, uint32_t device, const char *name,
                       const char *label)
{
    int64_t pid = aip__tj_layer_pid(w->p->pid, sort, device);
    return aip__pf_process_track(w, pid, name, strlen(name), label, sort);
}

/* ---- the file ---------------------------------------------------------------- */

aip_status aip__export_trace_perfetto(const aip__model *m, aip__out *o)
{
    aip__pf w = {.o = o, .m = m, .base = m->first_ns > 0 ? m->first_ns : 0};
    uint64_t device_flows = m->n_flows;
    for (size_t pi = 0; pi < m->n_procs && !w.status; pi++) {
        const aip__process *p = &m->procs[pi];
        w.p = p;
        w.flow_base = device_flows;
        device_flows += 2 * (uint64_t)p->dev_tasks.n;
        w.n_iid = 2 * p->strings.n_ent + 2;
        w.iid_seq = calloc(w.n_iid, sizeof *w.iid_seq);
        if (!w.iid_seq) {
            w.status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's strings");
            break;
        }
        aip__pf_host(&w);
        aip__pf_device_layers(&w);
        aip__pf_comm_layer(&w);
        aip__pf_host_layers(&w);
        aip__pf_osrt_layer(&w);
        aip__pf_flush(&w);
        free(w.iid_seq);
        w.iid_seq = NULL;
        free(w.val_seq); /* string ids are p's own */
        w.val_seq = NULL;
    }
    free(w.heap);
    return w.status ? w.status : o->status;
}
