/*
 * db_host.c — the host system tables of ascend_pytorch_profiler.db
 * (host_sys and sys_io, docs/HOST_SYS.md), with msprof's columns and types
 * (msprof_db.cpp; the reference §2.4 lists them):
 *
 *   CPU_USAGE (timestampNs, cpuId, usage)  each core's share used by this
 *       process's threads, per interval (msprof leaves its "Avg" rows out
 *       of the table, and so does aiprof)
 *   HOST_MEM_USAGE (timestampNs, usage)    RSS as a percentage of MemTotal
 *   HOST_DISK_USAGE (timestampNs, readRate, writeRate, usage)  bytes/s the
 *       process read from / wrote to storage; usage: the share of the
 *       interval its threads waited for block I/O (NULL without the
 *       kernel's delay accounting)
 *   HOST_NETWORK_USAGE (timestampNs, usage, speed)  bytes/s through the
 *       system's interfaces but loopback; usage of their links' capacity
 *       (NULL when no link speed is known)
 *   NIC, ROCE (deviceId, timestampNs, bandwidth, rx/tx packet and byte
 *       rates, cumulative counters, funcId)  per interface / RDMA port;
 *       deviceId -1 (the host, RANK_DEVICE_MAP's "no device"), funcId the
 *       interface's number (nic.csv names it), bandwidth NULL when unknown
 *
 * A table is created only when its samples were recorded.
 */
#include "db_pytorch.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

static const aip__db_col cpu_cols[] = {
    {"timestampNs", "NUMERIC"}, {"cpuId", "NUMERIC"}, {"usage", "NUMERIC"}};
static const aip__db_col mem_cols[] = {{"timestampNs", "NUMERIC"}, {"usage", "NUMERIC"}};
static const aip__db_col disk_cols[] = {{"timestampNs", "NUMERIC"}, {"readRate", "NUMERIC"},
                                        {"writeRate", "NUMERIC"}, {"usage", "NUMERIC"}};
static const aip__db_col net_cols[] = {
    {"timestampNs", "NUMERIC"}, {"usage", "NUMERIC"}, {"speed", "NUMERIC"}};
static const aip__db_col nic_cols[] = {
    {"deviceId", "INTEGER"},    {"timestampNs", "INTEGER"}, {"bandwidth", "INTEGER"},
    {"rxPacketRate", "NUMERIC"}, {"rxByteRate", "NUMERIC"}, {"rxPackets", "INTEGER"},
    {"rxBytes", "INTEGER"},     {"rxErrors", "INTEGER"},    {"rxDropped", "INTEGER"},
    {"txPacketRate", "NUMERIC"}, {"txByteRate", "NUMERIC"}, {"txPackets", "INTEGER"},
    {"txBytes", "INTEGER"},     {"txErrors", "INTEGER"},    {"txDropped", "INTEGER"},
    {"funcId", "INTEGER"}};
static const aip__db_table tbl_cpu = {"CPU_USAGE", cpu_cols, 3, -1};
static const aip__db_table tbl_mem = {"HOST_MEM_USAGE", mem_cols, 2, -1};
static const aip__db_table tbl_disk = {"HOST_DISK_USAGE", disk_cols, 4, -1};
static const aip__db_table tbl_net = {"HOST_NETWORK_USAGE", net_cols, 3, -1};
static const aip__db_table tbl_nic = {"NIC", nic_cols, 16, -1};
static const aip__db_table tbl_roce = {"ROCE", nic_cols, 16, -1};

enum { T_CPU, T_MEM, T_DISK, T_NET, T_NIC, T_ROCE, T_COUNT };

static size_t rows_of(const aip__host_series *s, int t)
{
    switch (t) {
    case T_CPU: return s->n_core;
    case T_MEM: return s->n_mem;
    case T_DISK: return s->n_disk;
    case T_NET: return s->n_net;
    case T_NIC: return s->n_nic;
    default: return s->n_roce;
    }
}

static void pct_or_null(aip__db_insert *ins, int col, double v)
{
    if (v < 0)
        aip__db_null(ins, col);
    else
        aip__db_f64(ins, col, v);
}

static void port_rows(aip__db_insert *ins, const aip__host_nic *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const aip__host_nic *r = &v[i];
        aip__db_i64(ins, 0, -1);
        aip__db_i64(ins, 1, r->ts);
        if (r->bandwidth < 0)
            aip__db_null(ins, 2);
        else
            aip__db_i64(ins, 2, r->bandwidth);
        aip__db_f64(ins, 3, r->rx_packet_rate);
        aip__db_f64(ins, 4, r->rx_byte_rate);
        aip__db_i64(ins, 5, (int64_t)r->rx_packets);
        aip__db_i64(ins, 6, (int64_t)r->rx_bytes);
        aip__db_i64(ins, 7, (int64_t)r->rx_errors);
        aip__db_i64(ins, 8, (int64_t)r->rx_dropped);
        aip__db_f64(ins, 9, r->tx_packet_rate);
        aip__db_f64(ins, 10, r->tx_byte_rate);
        aip__db_i64(ins, 11, (int64_t)r->tx_packets);
        aip__db_i64(ins, 12, (int64_t)r->tx_bytes);
        aip__db_i64(ins, 13, (int64_t)r->tx_errors);
        aip__db_i64(ins, 14, (int64_t)r->tx_dropped);
        aip__db_i64(ins, 15, r->func_id);
        aip__db_row(ins);
    }
}

static void rows(aip__db_insert *ins, const aip__host_series *s, int t)
{
    switch (t) {
    case T_CPU:
        for (size_t i = 0; i < s->n_core; i++) {
            aip__db_i64(ins, 0, s->core[i].ts);
            aip__db_i64(ins, 1, s->core[i].core);
            aip__db_f64(ins, 2, s->core[i].usage_pct);
            aip__db_row(ins);
        }
        break;
    case T_MEM:
        for (size_t i = 0; i < s->n_mem; i++) {
            aip__db_i64(ins, 0, s->mem[i].ts);
            pct_or_null(ins, 1, s->mem[i].usage_pct);
            aip__db_row(ins);
        }
        break;
    case T_DISK:
        for (size_t i = 0; i < s->n_disk; i++) {
            aip__db_i64(ins, 0, s->disk[i].ts);
            aip__db_f64(ins, 1, s->disk[i].read_rate);
            aip__db_f64(ins, 2, s->disk[i].write_rate);
            pct_or_null(ins, 3, s->disk[i].usage_pct);
            aip__db_row(ins);
        }
        break;
    case T_NET:
        for (size_t i = 0; i < s->n_net; i++) {
            aip__db_i64(ins, 0, s->net[i].ts);
            pct_or_null(ins, 1, s->net[i].usage_pct);
            aip__db_f64(ins, 2, s->net[i].speed);
            aip__db_row(ins);
        }
        break;
    case T_NIC:
        port_rows(ins, s->nic, s->n_nic);
        break;
    default:
        port_rows(ins, s->roce, s->n_roce);
    }
}

aip_status aip__db_write_host(aip__db *d, const aip__model *m)
{
    static const aip__db_table *const tables[T_COUNT] = {&tbl_cpu, &tbl_mem, &tbl_disk,
                                                         &tbl_net, &tbl_nic, &tbl_roce};
    size_t n = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        n += m->procs[i].host.n;
    if (!n)
        return AIP_OK;
    aip__host_series *s = calloc(m->n_procs, sizeof *s);
    if (!s)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the host system tables");
    aip_status st = AIP_OK;
    for (size_t i = 0; i < m->n_procs && !st; i++)
        st = aip__host_derive(&m->procs[i], &s[i]);
    for (int t = 0; t < T_COUNT && !st; t++) {
        size_t k = 0;
        for (size_t i = 0; i < m->n_procs; i++)
            k += rows_of(&s[i], t);
        aip__db_insert ins;
        if (!k || aip__db_insert_begin(d, tables[t], &ins))
            continue; /* none, or the database's status reports it */
        for (size_t i = 0; i < m->n_procs; i++)
            rows(&ins, &s[i], t);
        aip__db_insert_end(&ins);
    }
    for (size_t i = 0; i < m->n_procs; i++)
        aip__host_series_free(&s[i]);
    free(s);
    return st;
}
