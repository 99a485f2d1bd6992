/*
 * csv_nic.c — nic.csv and roce.csv (sys_io, docs/HOST_SYS.md): msprof's
 * nic_*.csv / roce_*.csv columns (msprof_export_data_config.py) for the
 * host's interfaces and RDMA ports, one row per interval of each:
 *
 *   Device_id           "host" (as step_trace_time.csv's host rows)
 *   Timestamp(us)       the interval's start
 *   Bandwidth(MB/s)     the link's speed; N/A where the kernel gives none
 *   Rx/Tx Bandwidth efficiency(%)  bytes/s of the link's bandwidth; N/A
 *   rx/txPacket/s       packets per second
 *   rx/txError rate(%), rx/txDropped rate(%)  of the interval's packets
 *   funcId              the interface's number (the NIC / ROCE tables' funcId)
 *   Interface           its name (aiprof's addition, last, so that readers
 *                       keyed by msprof's columns are unaffected)
 */
#include "export.h"

#include <string.h>

#define NIC_HEADER                                                                          \
    "Device_id,Timestamp(us),Bandwidth(MB/s),Rx Bandwidth efficiency(%),rxPacket/s,"        \
    "rxError rate(%),rxDropped rate(%),Tx Bandwidth efficiency(%),txPacket/s,"              \
    "txError rate(%),txDropped rate(%),funcId,Interface\r\n"

static void put_name(aip__out *o, const char *s, size_t n)
{
    int quote = memchr(s, ',', n) || memchr(s, '"', n) || memchr(s, '\n', n);
    if (quote)
        AIP_OUT_LIT(o, "\"");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            AIP_OUT_LIT(o, "\"");
        aip__out_put(o, &s[i], 1);
    }
    if (quote)
        AIP_OUT_LIT(o, "\"");
}

static void eff(aip__out *o, double rate, int64_t bandwidth)
{
    if (bandwidth > 0)
        aip__out_printf(o, ",%.3f", 100.0 * rate / (double)bandwidth);
    else
        AIP_OUT_LIT(o, ",N/A");
}

static aip_status write_ports(const aip__model *m, aip__out *o, int roce)
{
    AIP_OUT_LIT(o, NIC_HEADER);
    for (size_t pi = 0; pi < m->n_procs && !o->status; pi++) {
        const aip__process *p = &m->procs[pi];
        if (!p->host.n)
            continue;
        aip__host_series s;
        aip_status st = aip__host_derive(p, &s);
        if (st)
            return st;
        const aip__host_nic *v = roce ? s.roce : s.nic;
        size_t n = roce ? s.n_roce : s.n_nic;
        for (size_t i = 0; i < n; i++) {
            const aip__host_nic *r = &v[i];
            AIP_OUT_LIT(o, "host,");
            aip__out_us3(o, r->ts);
            if (r->bandwidth > 0)
                aip__out_printf(o, ",%.3f", (double)r->bandwidth / 1048576.0);
            else
                AIP_OUT_LIT(o, ",N/A");
            eff(o, r->rx_byte_rate, r->bandwidth);
            aip__out_printf(o, ",%.3f,%.3f,%.3f", r->rx_packet_rate, r->rx_error_pct,
                            r->rx_drop_pct);
            eff(o, r->tx_byte_rate, r->bandwidth);
            aip__out_printf(o, ",%.3f,%.3f,%.3f,%u,", r->tx_packet_rate, r->tx_error_pct,
                            r->tx_drop_pct, r->func_id);
            size_t len;
            const char *name = aip__model_str(p, r->name, &len);
            put_name(o, name, len);
            AIP_OUT_LIT(o, "\r\n");
        }
        aip__host_series_free(&s);
    }
    return o->status;
}

aip_status aip__export_nic_csv(const aip__model *m, aip__out *o) { return write_ports(m, o, 0); }
aip_status aip__export_roce_csv(const aip__model *m, aip__out *o) { return write_ports(m, o, 1); }
