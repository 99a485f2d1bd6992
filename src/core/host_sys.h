/*
 * host_sys.h — what a trace asks of the host system sampler
 * (src/collect/host, docs/HOST_SYS.md): sample /proc and /sys every period
 * while the trace records.  The core owns this header and the collector
 * implements it, as with osrt.h, so that src/core includes nothing from
 * src/collect (scripts/check_includes.py).  A direct call, not a table the
 * sampler fills from a constructor: in libaiprof.a an object that nothing
 * references is not linked, so a sampler that only registered itself would
 * vanish from statically linked programs without a word.
 */
#ifndef AIP_HOST_SYS_H
#define AIP_HOST_SYS_H

/* aip__host_sampler_start() : start sampling what `host_sys` (aip_host_sys
 * bits; OSRT is not sampled) and `sys_io` ask for; nothing when neither
 * asks for a sample.  Call after recording is on.  A sampler that cannot
 * start says so in the trace's log; the trace goes on. */
void aip__host_sampler_start(unsigned host_sys, int sys_io);

/* aip__host_sampler_stop() : take a last sample, write the STATUS record
 * and join the thread; nothing when none runs.  Call while recording is
 * still on, so that the last sample lands in the trace. */
void aip__host_sampler_stop(void);

#endif
