/*
 * model_host.h — the analysis model's host system samples (raw format 1.5
 * HOST_SAMPLE, src/collect/host) and the series derived from them, part of
 * every aip__process (model.h includes it; include model.h, not this
 * file).  Loaded and derived by host_load.c; written by trace_json_host.c,
 * db_host.c, csv_nic.c and summary_host.c; docs/HOST_SYS.md says what each
 * figure means.
 *
 * The samples hold cumulative counters as the kernel gave them; a rate is
 * the difference of two consecutive samples of the same source over the
 * time between them, and is reported at the first sample's time (as
 * msprof does).  A counter that went backwards (an interface that was
 * reset) gives no rate for that interval.
 */
#ifndef AIP_MODEL_HOST_H
#define AIP_MODEL_HOST_H

#include <stddef.h>
#include <stdint.h>

typedef struct aip__host_sample {
    int64_t ts;                /* ticks when loaded, then wall ns */
    uint32_t name;             /* string id: interface or "device/port"; 0 = none */
    uint32_t index;            /* tid (THREAD_CPU), link speed Mb/s (NET, ROCE) */
    uint8_t what, flags;       /* enum aip__host_what, AIP_HOSTF_* */
    uint64_t v[8];
} aip__host_sample;

/* One interval of the process's CPU: 100 % is one core busy. */
typedef struct aip__host_cpu {
    int64_t ts, dt;            /* interval start, length (ns) */
    double user_pct, sys_pct;
    double avg_pct;            /* of all online CPUs: msprof's "Avg" */
    uint64_t cpu_ns;           /* CPU time in the interval */
} aip__host_cpu;

/* One interval of one core: the share of it this process's threads used
 * (msprof's CPU_USAGE: the threads' time, by the core they last ran on). */
typedef struct aip__host_core {
    int64_t ts;
    uint32_t core;
    double usage_pct;
} aip__host_core;

typedef struct aip__host_mem {  /* one sample */
    int64_t ts;
    uint64_t rss, vms, shared, minflt, majflt, mem_total;
    double usage_pct;          /* rss / MemTotal; < 0: MemTotal unknown */
} aip__host_mem;

typedef struct aip__host_disk {  /* one interval; rates in bytes (or calls) per second */
    int64_t ts, dt;
    double read_rate, write_rate;        /* storage (read_bytes / write_bytes) */
    double rchar_rate, wchar_rate;       /* read()/write() family, any file */
    double syscr_rate, syscw_rate;
    double usage_pct;          /* block I/O delay share; < 0: no delay accounting */
} aip__host_disk;

typedef struct aip__host_net {   /* one interval, interfaces but loopback together */
    int64_t ts, dt;
    double speed;              /* bytes/s received + sent */
    double usage_pct;          /* of the links' capacity; < 0: no speed known */
} aip__host_net;

/* One interval of one NIC (sys_io) or RoCE port: the NIC / ROCE tables,
 * nic.csv / roce.csv. */
typedef struct aip__host_nic {
    int64_t ts, dt;
    uint32_t func_id;          /* the interface's number, in order of first sight */
    uint32_t name;             /* string id */
    int64_t bandwidth;         /* link bytes/s; < 0: unknown */
    double rx_packet_rate, rx_byte_rate, tx_packet_rate, tx_byte_rate;
    double rx_error_pct, rx_drop_pct, tx_error_pct, tx_drop_pct; /* of the packets */
    uint64_t rx_packets, rx_bytes, rx_errors, rx_dropped; /* cumulative, at the start */
    uint64_t tx_packets, tx_bytes, tx_errors, tx_dropped;
} aip__host_nic;

/* Everything derived for one process (aip__host_derive); free with
 * aip__host_series_free.  Arrays are in time order. */
typedef struct aip__host_series {
    aip__host_cpu *cpu;   size_t n_cpu;
    aip__host_core *core; size_t n_core;
    aip__host_mem *mem;   size_t n_mem;
    aip__host_disk *disk; size_t n_disk;
    aip__host_net *net;   size_t n_net;
    aip__host_nic *net_if; size_t n_net_if; /* per interface, NET samples for NETWORK */
    aip__host_nic *nic;   size_t n_nic;   /* NET samples taken for sys_io */
    aip__host_nic *roce;  size_t n_roce;
    struct aip__host_thread { uint64_t tid, cpu_ns; } *threads; /* by CPU time, most first */
    size_t n_threads;
    int disk_has_usage;        /* delay accounting was on */
    /* whole-trace totals (first to last sample) */
    uint64_t cpu_user_ns, cpu_sys_ns, cpu_ns;
    uint64_t read_bytes, write_bytes, rchar, wchar, syscr, syscw;
    uint64_t minflt, majflt, rss_peak, vms_peak;
    /* the sampler's STATUS record (has_status 0: none, e.g. a killed run) */
    int has_status;
    uint64_t samples, missed, max_lag_ns, sampler_cpu_ns, sources_bad, period_ns;
} aip__host_series;

#endif
