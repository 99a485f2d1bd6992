/*
 * host_sampler.h — the host system sampler (host_sys CPU / MEM / DISK /
 * NETWORK and sys_io, docs/HOST_SYS.md): a thread that reads /proc and /sys
 * every period while a trace records and writes what it read as
 * HOST_SAMPLE records (raw format 1.5) through the calling thread's own
 * buffer, like any other recording thread.
 *
 * It is the collector aip__collector_host (src/core/collector.h): the
 * core starts it after recording is on and stops it before recording
 * ends, so that its last sample lands in the trace.
 * The parsers (host_read.c) are pure functions of a file's text, so the
 * unit tests feed them text; the sampler can be pointed at a fake /proc
 * and /sys (AIPROF_HOST_PROC_ROOT, AIPROF_HOST_SYS_ROOT: tests only).
 */
#ifndef AIP_HOST_SAMPLER_H
#define AIP_HOST_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

/* The default period: msprof's --host-sys-usage-freq default, 50 Hz. */
#define AIP_HOST_PERIOD_DEFAULT_MS 20
#define AIP_HOST_PERIOD_MIN_MS 1
#define AIP_HOST_PERIOD_MAX_MS 1000
#define AIP_HOST_MAX_THREADS 512 /* per-thread CPU: more threads are summed only */
#define AIP_HOST_MAX_IFACES 64

/* aip__host_sampler_start() : start sampling what `host_sys` (aip_host_sys
 * bits; OSRT is not sampled) and `sys_io` ask for; nothing when neither
 * asks for a sample.  Call after recording is on; reads
 * AIPROF_HOST_SYS_PERIOD_MS.  A sampler that cannot start says so in the
 * trace's log; the trace goes on. */
void aip__host_sampler_start(unsigned host_sys, int sys_io);

/* aip__host_sampler_stop() : take a last sample, write the STATUS record
 * and join the thread; nothing when none runs.  Call while recording is
 * still on, so that the last sample lands in the trace. */
void aip__host_sampler_stop(void);

/* aip__host_sampler_fork_child() : in a forked child, which has no sampler
 * thread: forget the parent's (collector.h's fork_child). */
void aip__host_sampler_fork_child(void);

/* aip__host_sampler_emitted() : HOST_SAMPLE records the last sampler made
 * (recorded, or refused at the buffer cap and counted as dropped); read
 * once it stopped. */
uint64_t aip__host_sampler_emitted(void);

/* aip__host_sample_emit() : one HOST_SAMPLE record (raw_format.h's
 * fields) through the calling thread's buffer, counted in
 * aip__host_sampler_emitted() whether recorded or dropped at the cap: the
 * way the sampler writes each of its samples, callable from any thread so
 * that the tests can fill the buffers with host samples. */
void aip__host_sample_emit(uint8_t what, uint8_t flags, uint32_t name, uint32_t index,
                           const uint64_t *v, uint64_t ts);

/* ---- parsers (host_read.c), pure: text in, numbers out ------------------ */

typedef struct aip__proc_stat {
    uint64_t utime, stime;      /* clock ticks */
    uint64_t minflt, majflt;
    uint64_t num_threads;
    uint64_t processor;         /* CPU it last ran on */
    uint64_t blkio_ticks;       /* delayacct_blkio_ticks */
} aip__proc_stat;

/* aip__parse_proc_stat() : /proc/<pid>[/task/<tid>]/stat; the command name
 * may hold spaces and parentheses (the last ')' ends it).  0 on success. */
int aip__parse_proc_stat(const char *text, size_t n, aip__proc_stat *out);

/* aip__parse_statm() : size, resident, shared (pages).  0 on success. */
int aip__parse_statm(const char *text, size_t n, uint64_t out[3]);

/* aip__parse_proc_io() : rchar, wchar, syscr, syscw, read_bytes,
 * write_bytes, cancelled_write_bytes of /proc/<pid>/io, in that order;
 * a key missing leaves its slot 0.  @return the keys found. */
int aip__parse_proc_io(const char *text, size_t n, uint64_t out[7]);

/* aip__parse_meminfo_total() : MemTotal in bytes, 0 if absent. */
uint64_t aip__parse_meminfo_total(const char *text, size_t n);

typedef struct aip__netdev {
    char name[32];
    uint64_t rx_bytes, rx_packets, rx_errs, rx_drop;
    uint64_t tx_bytes, tx_packets, tx_errs, tx_drop;
} aip__netdev;

/* aip__parse_net_dev() : the interfaces of /proc/net/dev into out[0..cap);
 * lines that do not parse are skipped.  @return the interfaces stored. */
size_t aip__parse_net_dev(const char *text, size_t n, aip__netdev *out, size_t cap);

/* aip__parse_link_rate() : an InfiniBand port's "rate" file ("100 Gb/sec
 * (4X EDR)", "2.5 Gb/sec (1X SDR)") in Mb/s; 0 if it does not parse. */
uint32_t aip__parse_link_rate(const char *text, size_t n);

#endif
