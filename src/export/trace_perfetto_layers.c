/*
 * trace_perfetto_layers.c — the host-side layers of trace.perfetto-trace
 * beside a process, as trace_view.json has them: "Communication" (sort 16,
 * a track per group lane, trace_json_comm.c), the host_sys / sys_io
 * counter layers "CPU Usage" (9), "Memory Usage" (10), "Network Usage"
 * (11), "Disk Usage" (12), "NIC" (21), "RoCE" (22) (trace_json_host.c), and
 * "OS Runtime API" (13, a track per thread, trace_json_osrt.c).
 *
 * A JSON counter event with several args is one counter per arg; Perfetto's
 * JSON importer names those "<name> <arg>", and so do these counter
 * tracks.  Each series is its own sequence (each is in time order).
 */
#include "trace_perfetto_int.h"
#include "comm_derive.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_COMMUNICATION 16
#define SORT_OS_RUNTIME_API 13

static void nomem(aip__pf *w, const char *what)
{
    if (!w->status)
        w->status = aip__fail(AIP_ERR_NOMEM, "no memory for %s", what);
}

/* ---- Communication --------------------------------------------------------- */

typedef struct lane_set {
    uint32_t group;
    int64_t *ends;
    uint64_t *tracks;
    size_t n, cap, cap_tracks;
} lane_set;

static uint64_t group_track(aip__pf *w, uint64_t layer, uint32_t group, size_t lane)
{
    const aip__comm_group_info *g = aip__model_comm_group(w->p, group);
    /* torch_npu's track name, as trace_view.json: "Group <hashed name> Communication" */
    const char *gname = g ? g->label : "ungrouped";
    size_t n = strlen(gname);
    char *buf = malloc(n + 48);
    if (!buf) {
        nomem(w, "the communication layer");
        return 0;
    }
    int k = snprintf(buf, n + 48, "Group ");
    memcpy(buf + k, gname, n);
    int m = lane ? snprintf(buf + k + n, 48 - (size_t)k, " Communication (%zu)", lane + 1)
                 : snprintf(buf + k + n, 48 - (size_t)k, " Communication");
    uint64_t tid = group + (uint64_t)lane * (AIP_RAW_MAX_GROUPS + 1);
    uint64_t uuid = aip__pf_named_track(w, layer, buf, (size_t)k + n + (size_t)m, (int64_t)tid);
    free(buf);
    return uuid;
}

void aip__pf_comm_layer(aip__pf *w)
{
    const aip__process *p = w->p;
    if (!p->comm_ops.n || w->status)
        return;
    aip__comm_name *names;
    if ((w->status = aip__comm_op_names(p, &names)))
        return;
    uint64_t layer = aip__pf_layer(w, SORT_COMMUNICATION, AIP__TJ_HOST_DEVICE, "Communication",
                                   "CPU");
    lane_set *sets = NULL;
    size_t n_sets = 0, cap_sets = 0;
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < p->comm_ops.n && !w->status; i++) {
        const aip__comm_event *e = &p->comm_ops.v[i];
        uint32_t gi = aip__model_comm_group(p, e->group) ? e->group : AIP_RAW_MAX_GROUPS;
        size_t si = 0;
        while (si < n_sets && sets[si].group != gi)
            si++;
        if (si == n_sets) {
            if (aip__model_grow((void **)&sets, &cap_sets, n_sets + 1, sizeof *sets)) {
                nomem(w, "the communication layer");
                break;
            }
            sets[n_sets++] = (lane_set){.group = gi};
        }
        lane_set *ls = &sets[si];
        size_t l = 0;
        while (l < ls->n && ls->ends[l] > e->start)
            l++;
        if (l == ls->n) {
            if (aip__model_grow((void **)&ls->ends, &ls->cap, l + 1, sizeof *ls->ends) ||
                aip__model_grow((void **)&ls->tracks, &ls->cap_tracks, l + 1,
                                sizeof *ls->tracks)) {
                nomem(w, "the communication layer");
                break;
            }
            ls->tracks[l] = group_track(w, layer, gi, l);
            ls->n++;
        }
        ls->ends[l] = e->end;
        aip__pf_arg args[AIP_PF_MAX_ARGS];
        aip__pf_ev ev = {.track = ls->tracks[l], .lit = names[i].s,
                         .cat = AIP_PF_CAT_COMMUNICATION, .args = args,
                         .n_args = aip__pf_comm_args(p, e, args)};
        aip__pf_slice(w, &ev, e->start, e->end);
    }
    for (size_t si = 0; si < n_sets; si++) {
        free(sets[si].ends);
        free(sets[si].tracks);
    }
    free(sets);
    free(names);
}

/* ---- host_sys / sys_io counters --------------------------------------------- */

/* The counter tracks of one layer, found by name. */
typedef struct series {
    aip__pf *w;
    uint64_t layer;
    struct { char name[128]; uint64_t uuid; } *v;
    size_t n, cap;
} series;

static uint64_t series_track(series *s, const char *name, const char *arg)
{
    char full[128];
    snprintf(full, sizeof full, "%s %s", name, arg);
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].name, full))
            return s->v[i].uuid;
    if (aip__model_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
        nomem(s->w, "the host counters");
        return 0;
    }
    snprintf(s->v[s->n].name, sizeof s->v[s->n].name, "%s", full);
    return s->v[s->n++].uuid = aip__pf_counter_track(s->w, s->layer, full);
}

static void val(series *s, const char *name, const char *arg, int64_t ts, double v)
{
    uint64_t t = series_track(s, name, arg);
    if (t)
        aip__pf_counter(s->w, t, ts, v);
}

static void layer_begin(series *s, aip__pf *w, unsigned sort, const char *name)
{
    *s = (series){.w = w};
    s->layer = aip__pf_layer(w, sort, AIP__TJ_HOST_DEVICE, name, "CPU");
}

static void cpu_layer(aip__pf *w, const aip__host_series *h)
{
    if (!h->n_cpu && !h->n_core)
        return;
    series s;
    layer_begin(&s, w, 9, "CPU Usage");
    char name[32];
    aip__pf_seq(w, 0); /* cores interleave in time order */
    for (size_t i = 0; i < h->n_core; i++) {
        snprintf(name, sizeof name, "CPU %u", h->core[i].core);
        val(&s, name, "Usage(%)", h->core[i].ts, h->core[i].usage_pct);
    }
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < h->n_cpu; i++) {
        val(&s, "CPU Avg", "Usage(%)", h->cpu[i].ts, h->cpu[i].avg_pct);
        val(&s, "Process CPU", "User(%)", h->cpu[i].ts, h->cpu[i].user_pct);
        val(&s, "Process CPU", "System(%)", h->cpu[i].ts, h->cpu[i].sys_pct);
    }
    free(s.v);
}

static void mem_layer(aip__pf *w, const aip__host_series *h)
{
    if (!h->n_mem)
        return;
    series s;
    layer_begin(&s, w, 10, "Memory Usage");
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < h->n_mem; i++) {
        const aip__host_mem *m = &h->mem[i];
        if (m->usage_pct >= 0)
            val(&s, "Memory Usage", "Usage(%)", m->ts, m->usage_pct);
        val(&s, "Process Memory", "RSS(MB)", m->ts, (double)m->rss / 1048576.0);
        val(&s, "Process Memory", "VMS(MB)", m->ts, (double)m->vms / 1048576.0);
        val(&s, "Process Memory", "Shared(MB)", m->ts, (double)m->shared / 1048576.0);
    }
    free(s.v);
}

static void net_layer(aip__pf *w, const aip__host_series *h)
{
    if (!h->n_net)
        return;
    series s;
    layer_begin(&s, w, 11, "Network Usage");
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < h->n_net; i++) {
        if (h->net[i].usage_pct >= 0)
            val(&s, "Network Usage", "Usage(%)", h->net[i].ts, h->net[i].usage_pct);
        val(&s, "Network Speed", "Speed(B/s)", h->net[i].ts, h->net[i].speed);
    }
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < h->n_net_if; i++) {
        const aip__host_nic *r = &h->net_if[i];
        size_t n;
        const char *nm = aip__model_str(w->p, r->name, &n);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n < 63 ? n : 63), nm);
        val(&s, name, "Rx(B/s)", r->ts, r->rx_byte_rate);
        val(&s, name, "Tx(B/s)", r->ts, r->tx_byte_rate);
    }
    free(s.v);
}

static void disk_layer(aip__pf *w, const aip__host_series *h)
{
    if (!h->n_disk)
        return;
    series s;
    layer_begin(&s, w, 12, "Disk Usage");
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < h->n_disk; i++) {
        const aip__host_disk *d = &h->disk[i];
        if (d->usage_pct >= 0)
            val(&s, "Disk Usage", "Usage(%)", d->ts, d->usage_pct);
        val(&s, "Disk I/O", "Read(B/s)", d->ts, d->read_rate);
        val(&s, "Disk I/O", "Write(B/s)", d->ts, d->write_rate);
    }
    free(s.v);
}

static void port_layer(aip__pf *w, const aip__host_nic *v, size_t n, const char *layer,
                       unsigned sort)
{
    if (!n)
        return;
    series s;
    layer_begin(&s, w, sort, layer);
    char c[48];
    aip__pf_seq(w, 0);
    for (size_t i = 0; i < n; i++) {
        const aip__host_nic *r = &v[i];
        snprintf(c, sizeof c, "Port %u/Rx", r->func_id);
        val(&s, c, "Rx Dropped Rate", r->ts, r->rx_drop_pct / 100.0);
        val(&s, c, "Rx Error Rate", r->ts, r->rx_error_pct / 100.0);
        val(&s, c, "Rx Packets", r->ts, r->rx_packet_rate);
        if (r->bandwidth > 0)
            val(&s, c, "Rx Bandwidth Efficiency", r->ts, r->rx_byte_rate / (double)r->bandwidth);
        snprintf(c, sizeof c, "Port %u/Tx", r->func_id);
        val(&s, c, "Tx Dropped Rate", r->ts, r->tx_drop_pct / 100.0);
        val(&s, c, "Tx Error Rate", r->ts, r->tx_error_pct / 100.0);
        val(&s, c, "Tx Packets", r->ts, r->tx_packet_rate);
        if (r->bandwidth > 0)
            val(&s, c, "Tx Bandwidth Efficiency", r->ts, r->tx_byte_rate / (double)r->bandwidth);
    }
    free(s.v);
}

void aip__pf_host_layers(aip__pf *w)
{
    const aip__process *p = w->p;
    if (!p->host.n || w->status)
        return;
    aip__host_series h;
    if ((w->status = aip__host_derive(p, &h)))
        return;
    cpu_layer(w, &h);
    mem_layer(w, &h);
    net_layer(w, &h);
    disk_layer(w, &h);
    port_layer(w, h.nic, h.n_nic, "NIC", 21);
    port_layer(w, h.roce, h.n_roce, "RoCE", 22);
    aip__host_series_free(&h);
}

/* ---- OS Runtime API ------------------------------------------------------------ */

void aip__pf_osrt_layer(aip__pf *w)
{
    const aip__process *p = w->p;
    if (!p->osrt.n || w->status)
        return;
    uint64_t layer = aip__pf_layer(w, SORT_OS_RUNTIME_API, AIP__TJ_HOST_DEVICE,
                                   "OS Runtime API", "CPU");
    uint64_t *tr = calloc(p->n_threads ? p->n_threads : 1, sizeof *tr);
    if (!tr) {
        nomem(w, "the OS Runtime API layer");
        return;
    }
    aip__pf_seq(w, 0); /* by start over all threads; a thread's calls never overlap */
    for (size_t i = 0; i < p->osrt.n && !w->status; i++) {
        const aip__osrt_call *c = &p->osrt.v[i];
        if (c->thread >= p->n_threads)
            continue;
        if (!tr[c->thread]) {
            char name[40];
            uint64_t tid = p->threads[c->thread].tid;
            size_t n = (size_t)snprintf(name, sizeof name, "Thread %llu",
                                        (unsigned long long)tid);
            tr[c->thread] = aip__pf_named_track(w, layer, name, n, (int64_t)tid);
        }
        aip__pf_arg args[AIP_PF_MAX_ARGS];
        aip__pf_ev e = {.track = tr[c->thread], .name = c->name, .lit = "",
                        .cat = AIP_PF_CAT_OS_RUNTIME, .args = args,
                        .n_args = aip__pf_osrt_args(c, args)};
        aip__pf_slice(w, &e, c->start, c->end);
    }
    free(tr);
}
