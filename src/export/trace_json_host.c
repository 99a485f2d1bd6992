/*
 * trace_json_host.c — the host system layers of trace_view.json (host_sys
 * and sys_io, docs/HOST_SYS.md), as msprof draws them (its
 * host_usage_assembler / sys_io_assembler): one process per layer with
 * msprof's name, label "CPU" and sort index, pid (pid<<10)|(sort<<5)|31,
 * and counter ("C") events on tid 0:
 *
 *   CPU Usage (9)     "CPU <n>" {"Usage(%)"} per core the process ran on,
 *                     "CPU Avg" {"Usage(%)"} of all cores, and
 *                     "Process CPU" {"User(%)","System(%)"} (100 = one core)
 *   Memory Usage (10) "Memory Usage" {"Usage(%)"} (RSS of MemTotal) and
 *                     "Process Memory" {"RSS(MB)","VMS(MB)","Shared(MB)"}
 *   Network Usage (11) "Network Usage" {"Usage(%)"} (when a link speed is
 *                     known), "Network Speed" {"Speed(B/s)"}, and per
 *                     interface "<interface>" {"Rx(B/s)","Tx(B/s)"}
 *   Disk Usage (12)   "Disk Usage" {"Usage(%)"} (with delay accounting) and
 *                     "Disk I/O" {"Read(B/s)","Write(B/s)"}
 *   NIC (21), RoCE (22) "Port <funcId>/Rx" and "/Tx" {"Rx Dropped Rate",
 *                     "Rx Error Rate","Rx Packets","Rx Bandwidth
 *                     Efficiency"} and the Tx ones, as msprof's NIC track
 *
 * The label is "CPU", not msprof's "NPU <n>" for NIC: these are the host's
 * interfaces, and torch_npu maps a layer labelled NPU to a device.  A value
 * with no meaning here (a percentage of an unknown capacity) is left out
 * of its event rather than made up.
 */
#include "trace_json_int.h"
#include "error.h"

#include <stdio.h>

static int64_t layer_pid(const aip__process *p, unsigned sort)
{
    return aip__tj_layer_pid(p->pid, sort, AIP__TJ_HOST_DEVICE);
}

static void layer(aip__tj *w, int64_t lpid, const char *name, unsigned sort)
{
    aip__tj_layer_meta(w, lpid, name, "CPU", sort);
}

/* `{"ph":"C","name":NAME,"pid":P,"tid":0,"ts":T,"args":{` */
static void counter(aip__tj *w, const char *name, int64_t lpid, int64_t ts)
{
    aip__tj_begin(w);
    AIP_OUT_LIT(w->o, "{\"ph\":\"C\",\"name\":");
    aip__trace_put_cstr(w->o, name);
    AIP_OUT_LIT(w->o, ",\"pid\":");
    aip__out_i64(w->o, lpid);
    AIP_OUT_LIT(w->o, ",\"tid\":0,\"ts\":");
    aip__tj_ts(w, ts);
    AIP_OUT_LIT(w->o, ",\"args\":{");
}

static void val(aip__tj *w, int first, const char *key, double v)
{
    aip__out_printf(w->o, "%s\"%s\":%.3f", first ? "" : ",", key, v);
}

static void end(aip__tj *w) { AIP_OUT_LIT(w->o, "}}"); }

static void cpu_layer(aip__tj *w, const aip__process *p, const aip__host_series *s)
{
    if (!s->n_cpu && !s->n_core)
        return;
    int64_t lp = layer_pid(p, 9);
    layer(w, lp, "CPU Usage", 9);
    char name[32];
    for (size_t i = 0; i < s->n_core; i++) {
        snprintf(name, sizeof name, "CPU %u", s->core[i].core);
        counter(w, name, lp, s->core[i].ts);
        val(w, 1, "Usage(%)", s->core[i].usage_pct);
        end(w);
    }
    for (size_t i = 0; i < s->n_cpu; i++) {
        counter(w, "CPU Avg", lp, s->cpu[i].ts);
        val(w, 1, "Usage(%)", s->cpu[i].avg_pct);
        end(w);
        counter(w, "Process CPU", lp, s->cpu[i].ts);
        val(w, 1, "User(%)", s->cpu[i].user_pct);
        val(w, 0, "System(%)", s->cpu[i].sys_pct);
        end(w);
    }
}

static void mem_layer(aip__tj *w, const aip__process *p, const aip__host_series *s)
{
    if (!s->n_mem)
        return;
    int64_t lp = layer_pid(p, 10);
    layer(w, lp, "Memory Usage", 10);
    for (size_t i = 0; i < s->n_mem; i++) {
        const aip__host_mem *m = &s->mem[i];
        if (m->usage_pct >= 0) {
            counter(w, "Memory Usage", lp, m->ts);
            val(w, 1, "Usage(%)", m->usage_pct);
            end(w);
        }
        counter(w, "Process Memory", lp, m->ts);
        val(w, 1, "RSS(MB)", (double)m->rss / 1048576.0);
        val(w, 0, "VMS(MB)", (double)m->vms / 1048576.0);
        val(w, 0, "Shared(MB)", (double)m->shared / 1048576.0);
        end(w);
    }
}

static void net_layer(aip__tj *w, const aip__process *p, const aip__host_series *s)
{
    if (!s->n_net)
        return;
    int64_t lp = layer_pid(p, 11);
    layer(w, lp, "Network Usage", 11);
    for (size_t i = 0; i < s->n_net; i++) {
        if (s->net[i].usage_pct >= 0) {
            counter(w, "Network Usage", lp, s->net[i].ts);
            val(w, 1, "Usage(%)", s->net[i].usage_pct);
            end(w);
        }
        counter(w, "Network Speed", lp, s->net[i].ts);
        val(w, 1, "Speed(B/s)", s->net[i].speed);
        end(w);
    }
    for (size_t i = 0; i < s->n_net_if; i++) {
        const aip__host_nic *r = &s->net_if[i];
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"C\",\"name\":");
        aip__tj_put_id(w, r->name);
        AIP_OUT_LIT(w->o, ",\"pid\":");
        aip__out_i64(w->o, lp);
        AIP_OUT_LIT(w->o, ",\"tid\":0,\"ts\":");
        aip__tj_ts(w, r->ts);
        AIP_OUT_LIT(w->o, ",\"args\":{");
        val(w, 1, "Rx(B/s)", r->rx_byte_rate);
        val(w, 0, "Tx(B/s)", r->tx_byte_rate);
        end(w);
    }
}

static void disk_layer(aip__tj *w, const aip__process *p, const aip__host_series *s)
{
    if (!s->n_disk)
        return;
    int64_t lp = layer_pid(p, 12);
    layer(w, lp, "Disk Usage", 12);
    for (size_t i = 0; i < s->n_disk; i++) {
        const aip__host_disk *d = &s->disk[i];
        if (d->usage_pct >= 0) {
            counter(w, "Disk Usage", lp, d->ts);
            val(w, 1, "Usage(%)", d->usage_pct);
            end(w);
        }
        counter(w, "Disk I/O", lp, d->ts);
        val(w, 1, "Read(B/s)", d->read_rate);
        val(w, 0, "Write(B/s)", d->write_rate);
        end(w);
    }
}

static void port_layer(aip__tj *w, const aip__process *p, const aip__host_nic *v, size_t n,
                       const char *name, unsigned sort)
{
    if (!n)
        return;
    int64_t lp = layer_pid(p, sort);
    layer(w, lp, name, sort);
    char c[48];
    for (size_t i = 0; i < n; i++) {
        const aip__host_nic *r = &v[i];
        snprintf(c, sizeof c, "Port %u/Rx", r->func_id);
        counter(w, c, lp, r->ts);
        val(w, 1, "Rx Dropped Rate", r->rx_drop_pct / 100.0);
        val(w, 0, "Rx Error Rate", r->rx_error_pct / 100.0);
        val(w, 0, "Rx Packets", r->rx_packet_rate);
        if (r->bandwidth > 0)
            val(w, 0, "Rx Bandwidth Efficiency", r->rx_byte_rate / (double)r->bandwidth);
        end(w);
        snprintf(c, sizeof c, "Port %u/Tx", r->func_id);
        counter(w, c, lp, r->ts);
        val(w, 1, "Tx Dropped Rate", r->tx_drop_pct / 100.0);
        val(w, 0, "Tx Error Rate", r->tx_error_pct / 100.0);
        val(w, 0, "Tx Packets", r->tx_packet_rate);
        if (r->bandwidth > 0)
            val(w, 0, "Tx Bandwidth Efficiency", r->tx_byte_rate / (double)r->bandwidth);
        end(w);
    }
}

void aip__trace_host_layers(aip__tj *w, const aip__process *p)
{
    if (!p->host.n || w->status)
        return;
    aip__host_series s;
    if ((w->status = aip__host_derive(p, &s)))
        return;
    cpu_layer(w, p, &s);
    mem_layer(w, p, &s);
    net_layer(w, p, &s);
    disk_layer(w, p, &s);
    port_layer(w, p, s.nic, s.n_nic, "NIC", 21);
    port_layer(w, p, s.roce, s.n_roce, "RoCE", 22);
    aip__host_series_free(&s);
}
