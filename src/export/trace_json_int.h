/*
 * trace_json_int.h — what trace_json.c (the events of trace_view.json),
 * trace_json_device.c (its device layers), trace_json_comm.c (its
 * Communication layer) and trace_json_header.c (the
 * keys around them) share: the writer's state and its event pieces.
 * Nothing outside these files includes it but trace_perfetto_int.h, for
 * the layers' pids (aip__tj_layer_pid) and the memory counters' device
 * names (aip__tj_memory_device), which both timelines share.
 */
#ifndef AIP_TRACE_JSON_INT_H
#define AIP_TRACE_JSON_INT_H

#include "model.h"
#include "outbuf.h"
#include "text_escape.h"

/* The writer of one trace_view.json. */
typedef struct aip__tj {
    aip__out *o;
    const aip__model *m;
    int kineto;               /* AIP_TRACE_KINETO: numeric ts relative to base */
    int64_t base;             /* 0 in torch_npu's form: ts are absolute */
    int first;                /* no event written yet */
    uint64_t async_id;
    aip_status status;        /* first non-I/O error (no memory) */
    aip__esc_cache esc;        /* strings of the current process */
    aip__us3_cache ts_text;   /* torch_npu's ts: the leading digits kept */
    uint64_t *ext_base;       /* Kineto's form: per thread of the current process, the
                                 External id before its first span's */
    uint64_t ext_next;        /* the first External id of the next process, less 1 */
    char pfx[80];             /* `,"pid":P,"tid":T,"ts":` of the current thread */
    size_t pfx_len;
} aip__tj;

/* A `ts` value: "<µs>.<3 digits>" quoted (torch_npu) or a number relative
 * to the base in exact binary fractions of a µs (Kineto: its readers
 * compute ts + dur in float64, outbuf.h's aip__us_bin() says why); at most
 * 36 bytes (40 writable at d). */
static inline char *aip__tj_fmt_ts(aip__tj *w, char *d, int64_t ns)
{
    if (w->kineto)
        return aip__fmt_us_bin(d, aip__us_bin(ns - w->base));
    *d++ = '"';
    d = aip__fmt_us3_cached(&w->ts_text, d, ns);
    *d++ = '"';
    return d;
}

/* A `dur` value: 3-decimal µs (torch_npu), or in Kineto's form the
 * difference of the two ends' binary units, so that ts + dur is the end's
 * ts exactly. */
static inline char *aip__tj_fmt_dur(const aip__tj *w, char *d, int64_t start, int64_t end)
{
    if (w->kineto)
        return aip__fmt_us_bin(d, aip__us_bin(end - w->base) - aip__us_bin(start - w->base));
    return aip__fmt_us3(d, end - start);
}

/* Pieces of events (trace_json.c).  aip__tj_begin(): the separator before
 * an event; aip__tj_put_id(): raw string `id` of the current process as a
 * JSON string; aip__tj_ts()/aip__tj_dur(): a ts / dur value in the form's
 * format; aip__tj_prefix(): sets `,"pid":P,"tid":T,"ts":` (w->pfx);
 * aip__tj_meta_*(): an "M" event with a string or sort_index arg. */
void aip__tj_begin(aip__tj *w);
void aip__tj_put_id(aip__tj *w, uint32_t id);
void aip__tj_ts(aip__tj *w, int64_t ns);
void aip__tj_dur(aip__tj *w, int64_t start, int64_t end);
void aip__tj_prefix(aip__tj *w, int64_t pid, uint64_t tid);
void aip__tj_meta_head(aip__tj *w, const char *what, int64_t pid, uint64_t tid);
void aip__tj_meta_str(aip__tj *w, const char *what, int64_t pid, uint64_t tid, const char *key,
                      const char *value);
void aip__tj_meta_sort(aip__tj *w, const char *what, int64_t pid, uint64_t tid, uint64_t index);

/* aip__tj_external_id() : Kineto's "External id" of span `span` of thread
 * index `thread` of the current process; 0 in torch_npu's form. */
uint64_t aip__tj_external_id(const aip__tj *w, size_t thread, size_t span);

/* The layers torch_npu adds beside a process (Python GC, CANN,
 * Communication, OS Runtime API, CPU Usage, a device's hardware...) have a
 * pid of their own: pid << 10 | sort << 5 | device, device 31 being the
 * host; a device id above 31 takes pid << 16 | sort << 6 | device. */
#define AIP__TJ_HOST_DEVICE 31u
int64_t aip__tj_layer_pid(int64_t pid, unsigned sort, uint32_t device);
/* The device of a memory event as both timelines name its counter tracks
 * ("Memory (CUDA:0)"): CPU, CUDA, NPU or DeviceN, ":index" unless index < 0. */
void aip__tj_memory_device(char *out, size_t cap, uint8_t type, int8_t index);
/* A layer's process_name, process_labels and process_sort_index. */
void aip__tj_layer_meta(aip__tj *w, int64_t lpid, const char *name, const char *label,
                        unsigned sort);
/* A thread of a layer without a name of its own: "Thread TID", sorted by tid. */
void aip__tj_thread_meta(aip__tj *w, int64_t lpid, uint64_t tid);

/* aip__trace_device_layers() (trace_json_device.c) : torch_npu's form's
 * device layers of process `p` (its CANN-style runtime API process, one hardware process
 * per device, the Overlap Analysis process) with their flows; nothing
 * for a process without device activity. */
void aip__trace_device_layers(aip__tj *w, const aip__process *p);

/* aip__trace_kineto_device() (trace_json_kineto_dev.c) : p's runtime
 * calls, device tasks and their ac2g flows in Kineto's layout (the layers
 * of Kineto's form in place of aip__trace_device_layers'). */
void aip__trace_kineto_device(aip__tj *w, const aip__process *p);

/* aip__trace_comm_layer() (trace_json_comm.c) : the Communication process
 * of p's recorded communication ops, one thread per group; nothing
 * without ops. */
void aip__trace_comm_layer(aip__tj *w, const aip__process *p);

/* aip__trace_host_layers() (trace_json_host.c) : the host_sys / sys_io
 * counter layers of p's host samples (CPU, Memory, Network, Disk Usage,
 * NIC, RoCE); nothing without samples. */
void aip__trace_host_layers(aip__tj *w, const aip__process *p);

/* aip__trace_put_cstr() : `s` as a JSON string, escaped like every other
 * string of the trace (text_escape.h). */
void aip__trace_put_cstr(aip__out *o, const char *s);

/* aip__trace_run_facts() : the run-wide facts as `"key":value,...` without
 * braces: Kineto's header keys, or the first process_name's args in
 * torch_npu's form (an array has no top-level keys). */
void aip__trace_run_facts(aip__out *o, const aip__model *m);

/* aip__trace_kineto_header() : everything of Kineto's form up to and
 * including `"traceEvents":[`; `base` is baseTimeNanoseconds. */
void aip__trace_kineto_header(aip__out *o, const aip__model *m, int64_t base);
/* aip__trace_kineto_footer() : the end of Kineto's form: the events'
 * closing bracket, "traceName" and the closing brace. */
void aip__trace_kineto_footer(aip__out *o);

/* trace_json_kineto.c: aip__trace_kineto_devices() writes the
 * "deviceProperties" key and its array; aip__trace_kineto_dist_info() the
 * "distributedInfo" key derived from the recorded rank and groups, and
 * returns 0 (nothing written) when neither was recorded. */
void aip__trace_kineto_devices(aip__out *o, const aip__model *m);
int aip__trace_kineto_dist_info(aip__out *o, const aip__model *m);

/* aip__tj_comm_lib_name() : a communication op's "lib" arg (MPI, gloo,
 * NCCL, HCCL, other); trace.perfetto-trace gives the same. */
const char *aip__tj_comm_lib_name(uint8_t lib);

#endif
