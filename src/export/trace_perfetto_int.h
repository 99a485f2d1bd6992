/*
 * trace_perfetto_int.h — what the writers of trace.perfetto-trace share
 * (trace_perfetto.c: packets, sequences, tracks and the file;
 * trace_perfetto_host.c: a process's threads, marks, ranges, memory, GC
 * and flows; trace_perfetto_layers.c: its device, communication, host
 * system and OS runtime layers).  Nothing else includes it.
 *
 * The file is a Perfetto `Trace`: a stream of TracePackets holding
 * TrackDescriptors (a process, thread, named or counter track each) and
 * TrackEvents (slice begin / end, instant, counter) on them.  Events are
 * written on sequences (trusted_packet_sequence_id): one per host thread,
 * one per layer.  A sequence starts with a packet that clears its
 * incremental state and sets its defaults: timestamps on an incremental
 * clock (id 64, 1 ns units, starting at the model's first time, mapped to
 * the trace clock by a ClockSnapshot) so that each packet carries the ns
 * since the previous one, and the track its events are on.  Event names
 * and categories are interned on the sequence (interned_data, in the
 * packet of their first use).  Slice ends are kept in a heap and written
 * when the sequence's time passes them, so a sequence's packets are in
 * time order; a time before the clock's (not expected) is written as an
 * absolute trace-clock time instead: nothing is ever moved.
 */
#ifndef AIP_TRACE_PERFETTO_INT_H
#define AIP_TRACE_PERFETTO_INT_H

#include "model.h"
#include "outbuf.h"
#include "trace_json_int.h" /* shared: aip__tj_layer_pid(), aip__tj_memory_device() */

/* Categories, as trace_view.json's "cat" (interned ids 1..). */
enum {
    AIP_PF_CAT_NONE = 0,
    AIP_PF_CAT_CPU_OP,
    AIP_PF_CAT_USER_ANNOTATION,
    AIP_PF_CAT_MSTX,
    AIP_PF_CAT_PYTHON_FUNCTION,
    AIP_PF_CAT_GC,
    AIP_PF_CAT_CPU_INSTANT,
    AIP_PF_CAT_MEMORY,
    AIP_PF_CAT_OS_RUNTIME,
    AIP_PF_CAT_COMMUNICATION,
    AIP_PF_N_CATS
};

/* Argument names, as trace_view.json's "args" keys (interned ids 1..,
 * DebugAnnotationName; trace_perfetto_args.c). */
enum {
    AIP_PF_ARG_NONE = 0,
    AIP_PF_ARG_SEQUENCE_NUMBER,
    AIP_PF_ARG_FWD_THREAD_ID,
    AIP_PF_ARG_INPUT_DIMS,
    AIP_PF_ARG_INPUT_TYPE,
    AIP_PF_ARG_CALL_STACK,
    AIP_PF_ARG_MODULE_HIERARCHY,
    AIP_PF_ARG_FLOPS,
    AIP_PF_ARG_DOMAIN,
    AIP_PF_ARG_PYTHON_ID,
    AIP_PF_ARG_PYTHON_PARENT_ID,
    AIP_PF_ARG_PYTHON_MODULE_ID,
    AIP_PF_ARG_CONTINUED,
    AIP_PF_ARG_UNFINISHED,
    AIP_PF_ARG_RESULT,        /* OS runtime calls */
    AIP_PF_ARG_ERRNO,
    AIP_PF_ARG_ERRNO_NAME,
    AIP_PF_ARG_OP,            /* communication ops */
    AIP_PF_ARG_LIB,
    AIP_PF_ARG_GROUP,
    AIP_PF_ARG_RANK_SIZE,
    AIP_PF_ARG_GROUP_RANK,
    AIP_PF_ARG_SIZE_BYTE,
    AIP_PF_ARG_COUNT,
    AIP_PF_ARG_DATA_TYPE,
    AIP_PF_ARG_SEQ,
    AIP_PF_ARG_SRC_RANK,
    AIP_PF_ARG_DST_RANK,
    AIP_PF_ARG_ROOT,
    AIP_PF_ARG_TAG,
    AIP_PF_ARG_NON_BLOCKING,
    AIP_PF_N_ARGS
};

/* One argument: a debug annotation of the event. */
typedef struct aip__pf_arg {
    uint8_t key;              /* AIP_PF_ARG_* */
    uint8_t type;             /* AIP_PF_V_* */
    uint32_t str;             /* AIP_PF_V_STR: a string id of p (interned) */
    uint64_t u;               /* AIP_PF_V_UINT / _INT (as two's complement) */
    const char *lit;          /* AIP_PF_V_LIT */
} aip__pf_arg;
enum { AIP_PF_V_UINT, AIP_PF_V_INT, AIP_PF_V_TRUE, AIP_PF_V_STR, AIP_PF_V_LIT };
#define AIP_PF_MAX_ARGS 16

typedef struct aip__pf_end {  /* a slice end not written yet */
    int64_t ts;
    uint64_t order;           /* later begins end first at equal times */
    uint64_t track;
} aip__pf_end;

typedef struct aip__pf {
    aip__out *o;
    const aip__model *m;
    const aip__process *p;    /* the process being written */
    aip_status status;        /* first non-I/O error (no memory) */
    int64_t base;             /* the incremental clocks' start */
    uint64_t next_uuid;       /* tracks: 1.. */
    uint32_t seq;             /* the current sequence; 0: none */
    uint64_t seq_track;       /* its default track */
    int64_t clock;            /* its incremental clock's value */
    uint32_t cats;            /* categories interned on it, bit per category */
    uint32_t arg_names;       /* argument names interned on it, bit per AIP_PF_ARG_* */
    uint32_t *val_seq;        /* per string id of p: the sequence that interned it as an
                               * argument's value (allocated at the first; NULL: none) */
    uint32_t *iid_seq;        /* per name iid of p: the sequence that interned it */
    size_t n_iid;
    aip__pf_end *heap;
    size_t n_heap, cap_heap;
    uint64_t order;
    uint64_t events;          /* trace_view.json events written (begin = one X) */
    uint64_t flow_base;       /* p's first device flow id (after fwdbwd's 1..n_flows) */
} aip__pf;

/* What an event is: on `track` (0: the sequence's), named by string id
 * `name` of p ("Runtime@" before it when `runtime`) or else `lit`, with
 * flows leaving (`out`) and ending (`in`) at it. */
typedef struct aip__pf_ev {
    uint64_t track;
    uint32_t name;
    uint8_t runtime;
    uint8_t cat;              /* AIP_PF_CAT_* */
    const char *lit;
    size_t lit_len;           /* 0: strlen(lit) */
    const uint64_t *out, *in;
    size_t n_out, n_in;
    const aip__pf_arg *args;  /* its args (debug annotations), n_args of them */
    size_t n_args;
} aip__pf_ev;

/* ---- trace_perfetto.c ------------------------------------------------- */
/* aip__pf_seq() : end the current sequence (its pending slice ends) and
 * start a new one whose events default to `track`. */
void aip__pf_seq(aip__pf *w, uint64_t track);
/* aip__pf_flush() : write the current sequence's pending slice ends. */
void aip__pf_flush(aip__pf *w);
/* aip__pf_slice() : a slice [start, end] (its end written later). */
void aip__pf_slice(aip__pf *w, const aip__pf_ev *e, int64_t start, int64_t end);
void aip__pf_instant(aip__pf *w, const aip__pf_ev *e, int64_t ts);
/* aip__pf_counter() / aip__pf_counter_i() : a counter value on counter track `track`. */
void aip__pf_counter(aip__pf *w, uint64_t track, int64_t ts, double v);
void aip__pf_counter_i(aip__pf *w, uint64_t track, int64_t ts, int64_t v);

/* Tracks; each returns its uuid.  `sort`: its place among its siblings
 * (trace_view.json's sort_index). */
uint64_t aip__pf_process_track(aip__pf *w, int64_t pid, const char *name, size_t name_len,
                               const char *label, int64_t sort);
uint64_t aip__pf_thread_track(aip__pf *w, uint64_t parent, int64_t pid, uint64_t tid,
                              const char *name, size_t name_len);
/* A named track of a layer (its "threads": queues, groups, lanes). */
uint64_t aip__pf_named_track(aip__pf *w, uint64_t parent, const char *name, size_t name_len,
                             int64_t sort);
uint64_t aip__pf_counter_track(aip__pf *w, uint64_t parent, const char *name);
/* A layer's process (trace_view.json's pid, aip__tj_layer_pid). */
uint64_t aip__pf_layer(aip__pf *w, unsigned sort, uint32_t device, const char *name,
                       const char *label);

/* aip__pf_utf8_text() : `s` when it is valid UTF-8, else a copy in *tmp
 * (to free) with each invalid byte as U+FFFD; *n its length. */
const char *aip__pf_utf8_text(aip__pf *w, const char *s, size_t *n, char **tmp);

/* ---- trace_perfetto_args.c -------------------------------------------- */
/* aip__pf_args_room() : bytes the args of `e` may take in their packet
 * (interning included). */
size_t aip__pf_args_room(const aip__pf *w, const aip__pf_ev *e);
/* aip__pf_args_new() : whether the args of `e` use a name or string value
 * not interned on the current sequence yet. */
int aip__pf_args_new(aip__pf *w, const aip__pf_ev *e);
/* aip__pf_args_intern() : inside InternedData: those names and values. */
uint8_t *aip__pf_args_intern(aip__pf *w, uint8_t *d, const aip__pf_ev *e);
/* aip__pf_args_put() : inside TrackEvent: the debug annotations. */
uint8_t *aip__pf_args_put(aip__pf *w, uint8_t *d, const aip__pf_ev *e);
/* aip__pf_span_args() : the args trace_view.json gives span `s` of thread
 * `t` (torch_npu's form: trace_json.c's span_args), into `a`; @return how
 * many. */
size_t aip__pf_span_args(const aip__thread *t, const aip__span *s, aip__pf_arg *a);
/* aip__pf_osrt_args() / aip__pf_comm_args() : the same for an OS runtime
 * call (trace_json_osrt.c) and a communication op of p (trace_json_comm.c). */
size_t aip__pf_osrt_args(const aip__osrt_call *c, aip__pf_arg *a);
size_t aip__pf_comm_args(const aip__process *p, const aip__comm_event *e, aip__pf_arg *a);

/* ---- trace_perfetto_host.c -------------------------------------------- */
/* aip__pf_host() : process p's main process, its threads with their
 * slices and flows, marks, ranges, memory and GC. */
void aip__pf_host(aip__pf *w);

/* ---- trace_perfetto_layers.c ------------------------------------------ */
void aip__pf_device_layers(aip__pf *w);
void aip__pf_comm_layer(aip__pf *w);
void aip__pf_host_layers(aip__pf *w);
void aip__pf_osrt_layer(aip__pf *w);

/* Device flow ids of task i of p: from its launching op, and from its
 * runtime call (HostToDevice). */
static inline uint64_t aip__pf_op_flow(const aip__pf *w, size_t task)
{
    return w->flow_base + 2 * (uint64_t)task + 1;
}
static inline uint64_t aip__pf_call_flow(const aip__pf *w, size_t task)
{
    return w->flow_base + 2 * (uint64_t)task + 2;
}

#endif
