/*
 * host_collector.c — the host system sampler as a collector
 * (src/core/collector.h): wanted by a trace whose host_sys names CPU, MEM,
 * DISK or NETWORK, or that asks for sys_io; the core starts and stops it
 * with the trace (host_sampler.c does the work).
 */
#include "collector.h"
#include "host_sampler.h"
#include "raw_format.h"

static const unsigned sampled = AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK |
                                 AIP_HOST_SYS_NETWORK;

static int wanted(const aip_config *cfg) { return (cfg->host_sys & sampled) || cfg->sys_io; }

static void start(const aip_config *cfg) { aip__host_sampler_start(cfg->host_sys, cfg->sys_io); }

const aip__collector aip__collector_host = {
    .name = "host_sys",
    .wanted = wanted,
    .start = start,
    .stop = aip__host_sampler_stop,
    .fork_child = aip__host_sampler_fork_child,
    .record_kinds = 1ull << AIP_REC_HOST_SAMPLE,
};
