/*
 * model.h — the analysis model: what a result directory's raw files say,
 * after loading (model_load.c), clock conversion (tick_convert.c) and
 * derivation (derive.c), with what the directory's profiler_info.json and
 * profiler_metadata.json said (read by src/result/).  Exporters only read
 * it.  This header is what they, src/result and src/insight may know: the
 * model's types, loading and deriving it as a whole, and the queries over
 * it; the steps of loading and deriving are analysis_int.h's, for
 * src/analysis alone (scripts/check_includes.py).
 *
 * Memory is the design constraint: a profile holds millions of ops, so each
 * is one 24-byte aip__span in a per-thread array (plus an 8-byte self time);
 * the rare optional fields (sequence number, shapes, stack) live in a
 * per-thread side array of 64-bit words that a span points into.  No event
 * is allocated on its own.  All times are wall-clock nanoseconds (clamped to
 * [0, 2^62)) once loading is finished.
 */
#ifndef AIP_MODEL_H
#define AIP_MODEL_H

#include "aiprof.h"
#include "raw.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AIP_NAME_ID_MAX ((1u << 27) - 1) /* string ids the model can hold */
#define AIP_AUX_MAX ((1u << 26) - 2)     /* aux words per thread */

/* PYFUNC: a Python function call or nn.Module forward (with_stack /
 * with_modules, raw PYFUNC records).  Trace only: never an op or an
 * annotation for statistics, self times, steps or memory attribution. */
enum aip__span_kind {
    AIP_SPAN_OP = 0,
    AIP_SPAN_ANNOTATION = 1,
    AIP_SPAN_RANGE = 2,
    AIP_SPAN_PYFUNC = 3
};

typedef struct aip__span {
    int64_t start;          /* wall-clock ns */
    int64_t end;            /* wall-clock ns, >= start */
    uint32_t name : 27;     /* string id, 0 = none */
    uint32_t unfinished : 1; /* still open when a flight recorder dumped: its end is
                              * the dump's time (raw AIP_REC_UNFINISHED) */
    uint32_t kind : 2;      /* enum aip__span_kind */
    uint32_t top_op : 1;    /* derived: an op with no enclosing op on its thread */
    uint32_t piece : 1;     /* a slice continuing a split span (nesting.c) */
    uint32_t aux : 26;      /* 1 + index of the first aux word; 0 = none */
    uint32_t opflags : 6;   /* AIP_OPF_* of an OP (which aux words exist) */
} aip__span;
_Static_assert(sizeof(aip__span) == 24, "aip__span must stay compact");

/* The optional fields of an OP, decoded from its aux words. */
typedef struct aip__op_fields {
    int64_t sequence_number; /* -1 when absent */
    uint64_t fwd_thread_id;  /* 0 when absent */
    uint32_t input_shapes, input_dtypes, call_stack, module_hierarchy; /* string ids */
    uint64_t flops;          /* 0 when absent */
    int has_seq, has_shapes, has_stack, is_backward;
} aip__op_fields;

typedef struct aip__thread {
    uint64_t tid;
    uint32_t name;            /* last THREAD_NAME string id, 0 = none */
    aip__span *spans;          /* load: file order; after derive: by start, parents first */
    size_t n_spans, cap_spans;
    uint64_t *aux;
    size_t n_aux, cap_aux;
    int64_t *self_ns;         /* derived, parallel to spans */
    aip__span *slices;         /* derived: what a timeline draws, NULL = the spans
                                 (nesting.c; aip__thread_slices) */
    size_t n_slices;
    uint64_t recorded, dropped; /* from STATS */
} aip__thread;

typedef struct aip__mark_ev {
    int64_t ts;
    uint32_t name, domain, thread; /* thread: index in aip__process.threads */
    uint32_t pad;
} aip__mark_ev;

typedef struct aip__range_point { /* RANGE_START or RANGE_END */
    int64_t ts;
    uint64_t range_id;
    uint32_t name, domain, thread; /* name/domain 0 for an END */
    int32_t match;                 /* derived, starts only: index of its END, -1 if none */
} aip__range_point;

typedef struct aip__mem_ev {
    int64_t ts;
    uint64_t address;
    int64_t bytes, total_allocated, total_reserved;
    uint32_t thread;
    uint8_t device_type;
    int8_t device_index;
} aip__mem_ev;

/* Memory categories, numbered as torch's memory timeline indexes them
 * (_CATEGORY_TO_INDEX; the raw/plot index). */
enum aip__mem_category {
    AIP_MEMCAT_PARAMETER = 0,
    AIP_MEMCAT_OPTIMIZER_STATE = 1,
    AIP_MEMCAT_INPUT = 2,
    AIP_MEMCAT_TEMPORARY = 3,
    AIP_MEMCAT_ACTIVATION = 4,
    AIP_MEMCAT_GRADIENT = 5,
    AIP_MEMCAT_AUTOGRAD_DETAIL = 6,
    AIP_MEMCAT_UNKNOWN = 7,
    AIP_MEMCAT_COUNT = 8
};

/* A category the framework gave a block (proposed raw record kind 10,
 * MEMORY_CATEGORY, docs/MEMORY.md): the block at `address` live at `ts`
 * holds `category`; `bytes` is its size, for a block allocated before the
 * trace.  Written by aip_memory_label() (raw format 1.1). */
#define AIP_REC_MEMORY_CATEGORY_PROPOSED AIP_REC_MEMORY_CATEGORY
typedef struct aip__mem_label {
    int64_t ts;
    uint64_t address;
    int64_t bytes;
    uint32_t thread;
    uint8_t device_type;
    int8_t device_index;
    uint8_t category;
    uint8_t preexisting;      /* derived: no allocation of it in the trace */
    int64_t free_idx;         /* derived: preexisting, the record that freed it; -1 none */
} aip__mem_label;

/* Derived per memory record (memory.c), parallel to aip__process.memory. */
typedef struct aip__mem_info {
    int64_t pair;             /* alloc: index of its free; free: of its alloc; -1 none */
    uint32_t name;            /* string id of the innermost op/annotation open on the
                                 record's thread at its time, 0 = none */
    uint8_t category;         /* enum aip__mem_category (allocs and unmatched frees) */
    uint8_t in_backward;      /* inside an op of backward scope */
    uint8_t labeled;          /* category given by the framework (a label) */
    uint8_t pad;
} aip__mem_info;

/* Derived: peak totals of one device in one process. */
typedef struct aip__mem_peak {
    uint32_t process;
    uint8_t device_type;
    int8_t device_index;
    uint64_t records;
    int64_t max_allocated, max_reserved;
    int64_t first_ns, last_ns;
} aip__mem_peak;

typedef struct aip__gc_ev {
    int64_t start, end;
    uint32_t thread;
} aip__gc_ev;

typedef struct aip__str_entry {
    uint64_t offset;          /* in aip__strings.blob */
    uint32_t len;
    uint32_t defined;
} aip__str_entry;

typedef struct aip__strings {
    char *blob;
    size_t blob_len, blob_cap;
    aip__str_entry *ent;       /* indexed by id */
    size_t n_ent, cap_ent;
    size_t max_ent;           /* bound from the file size: no huge tables from forged ids */
} aip__strings;

/* Growable arrays of plain structs (aip__array_grow). */
#define AIP_VEC(T) struct { T *v; size_t n, cap; }
/* Append `val` to an AIP_VEC; on no memory, return the status from the
 * enclosing function (the loaders' decoders). */
#define AIP_VEC_PUSH(vec, val)                                                           \
    do {                                                                                 \
        aip_status ps_ = aip__array_grow((void **)&(vec).v, &(vec).cap, (vec).n + 1,     \
                                         sizeof *(vec).v);                               \
        if (ps_)                                                                         \
            return ps_;                                                                  \
        (vec).v[(vec).n++] = (val);                                                      \
    } while (0)

#include "model_device.h"
#include "model_host.h"
#include "model_osrt.h"

typedef struct aip__process {
    char *source;             /* raw file path */
    int64_t pid;
    char *hostname, *program, *clock_name, *writer_version;
    char *host_uid;           /* INFO "host_uid" if the writer recorded one, else NULL */
    double ticks_per_second;
    int has_info;
    aip__strings strings;
    aip__thread *threads;      /* after loading: sorted by tid */
    size_t n_threads, cap_threads;
    AIP_VEC(aip__mark_ev) marks;
    AIP_VEC(aip__range_point) range_starts;
    AIP_VEC(aip__range_point) range_ends;
    AIP_VEC(aip__mem_ev) memory;
    AIP_VEC(aip__mem_label) mem_labels;
    aip__mem_info *mem_info;   /* derived, parallel to memory */
    size_t *mem_order;        /* derived: memory indices by time (stable) */
    AIP_VEC(aip__gc_ev) gc;
    /* device activity (format 1.4) */
    AIP_VEC(aip__device) devices;     /* indexed by raw device id */
    AIP_VEC(aip__queue) queues;       /* indexed by raw queue id */
    AIP_VEC(aip__device_task) dev_tasks; /* after derive: by start time */
    AIP_VEC(aip__device_call) dev_api;    /* after derive: by start time */
    AIP_VEC(aip__device_mem) dev_memory; /* after derive: by time */
    AIP_VEC(aip__device_clock) dev_clocks;
    uint64_t dev_bad_records;         /* device records naming unknown ids or bad times */
    AIP_VEC(aip__comm_group_info) comm_groups; /* indexed by raw group id */
    AIP_VEC(aip__comm_event) comm_ops;   /* after derive: by start time */
    uint64_t comm_bad_records;
    AIP_VEC(aip__host_sample) host;   /* host system samples (format 1.5), as recorded */
    uint64_t host_bad_records;
    AIP_VEC(aip__osrt_call) osrt;        /* OS runtime calls (1.5); after derive: by start */
    uint64_t osrt_bad_records;
    uint64_t dev_unaligned_tasks;     /* tasks of devices without clock samples */
    aip__clock_pair first_sync, last_sync;
    uint64_t n_syncs;
    int clock_fallback;       /* times converted without two usable sync points */
    /* what the file looked like */
    uint64_t file_bytes, chunks, events;
    aip__raw_damage raw;     /* reader's findings */
    uint64_t bad_event_chunks;  /* CRC-valid EVENTS chunks with inconsistent records */
    uint64_t bad_other_chunks;  /* CRC-valid INFO/STRINGS/STATS that did not parse */
    uint64_t recorded, dropped; /* STATS totals */
    uint64_t invalid_utf8_strings; /* strings with invalid UTF-8 (U+FFFD in the outputs) */
    int has_stats;
    /* a flight recorder dump (FLIGHT chunk, format 1.8; docs/FLIGHT_RECORDER.md) */
    int has_flight;
    uint64_t flight_overwritten, flight_outside_window, flight_open_ranges, flight_window_ns;
    uint64_t unmatched_range_starts, unmatched_range_ends; /* derived */
    uint64_t split_slices;    /* derived: pieces added so that slices nest */
    char load_problem[256];   /* first problem found while decoding, "" if none */
} aip__process;

typedef struct aip__step {       /* derived from ProfilerStep#N annotations */
    int64_t number;
    int64_t start, end;
} aip__step;

/* Derived: one row of the step trace (step_trace_time.csv and analysis.db's
 * StepTraceTime both print these), ns; the columns in the files' order.
 * Host-only definitions (docs/RESULT_LAYOUT.md) without device tasks; with
 * them one row per device and step from its tasks (device_steps.c).  The
 * communication columns and Bubble come from the recorded communication
 * ops (docs/COMMUNICATION.md), 0 without any. */
typedef struct aip__step_row {
    int has_number;             /* 0: the whole-profile row without steps */
    int32_t device;             /* raw device id of a device row, -1: a host row */
    int64_t number;
    int64_t start, end;
    int64_t computing;          /* union of top-level op (device: kernel) time in the step */
    int64_t comm_not_overlapped;          /* Communication(Not Overlapped) */
    int64_t overlapped;                   /* Communication - Not Overlapped */
    int64_t communication;
    int64_t free;                         /* step - Computing, at least 0 */
    int64_t stage;                        /* step - Bubble */
    int64_t bubble;
    int64_t comm_not_overlapped_excl_recv; /* Not Overlapped - Bubble, at least 0 */
    int64_t preparing;          /* first top-level op (kernel) start - step start, 0 if none */
} aip__step_row;

typedef struct aip__flow {       /* derived: forward op -> backward op (fwdbwd) */
    uint32_t process;
    uint32_t fwd_thread, bwd_thread;
    size_t fwd_span, bwd_span;  /* indices after derive's sort */
} aip__flow;

/* What profiler_info[_{rank}].json says (read by src/result/profiler_info.c):
 * the export type, the rank, the config flags shown in trace metadata, and
 * the start clock sync (used only when a raw file lost its CLOCK chunks).
 * A missing or unreadable file is normal (the program may have crashed
 * before writing it): the defaults (aip__profiler_info_defaults) stay and
 * the reason is kept in `problem`. */
typedef struct aip__profiler_info_data {
    int found;                /* a file was read and parsed */
    char file[64];            /* its name */
    unsigned export_type;     /* AIP_EXPORT_* from _export_type; 0 = not given */
    int64_t rank;             /* rank_id; -1 = none */
    int has_config;
    int record_shapes, profile_memory, with_stack, with_flops, with_modules;
    /* What the seed makes outputs depend on (defaults when absent). */
    unsigned activities;      /* AIP_ACTIVITY_* named in common_config; 0 = not given */
    int has_schedule;         /* a non-empty schedule object */
    aip_profiler_level profiler_level;  /* _profiler_level; Level0 when absent */
    int level_known;          /* _profiler_level was there (every profile aiprof or
                                 torch_npu writes has it) */
    int data_simplification;  /* _data_simplification; 1 when absent */
    int record_op_args;       /* record_op_args */
    int mstx;                 /* _mstx or _msprof_tx */
    int gc_detect;            /* _gc_detect_threshold is a number (not null) */
    unsigned host_sys;        /* AIP_HOST_SYS_* named in _host_sys */
    int l2_cache, sys_io, sys_interconnection, op_attr;
    int has_start_sync;
    aip__clock_pair start_sync;
    uint64_t texts_cut;       /* aiprof.texts_cut: texts cut at 64 KiB when recorded */
    int has_texts_cut;        /* the key was there (written when the trace was saved) */
    char problem[256];        /* why nothing (or not everything) was read */
} aip__profiler_info_data;

/* profiler_metadata.json as (key, JSON text) pairs, in the file's key order
 * (read by src/result/profiler_metadata.c; the META_DATA table). */
typedef struct aip__metadata {
    int found;
    size_t n;
    char **keys;
    char **values;            /* json.dumps()-style text of each value */
    char problem[160];        /* why nothing was read, "" if read */
} aip__metadata;

typedef struct aip__model {
    aip__process *procs;
    size_t n_procs, cap_procs;
    /* What the result directory's JSON files said, beside the raw data
     * (defaults until src/result/ fills them); every exporter reads the
     * model alone. */
    aip__profiler_info_data info;
    aip__metadata meta;
    /* How trace_view.json is written: aip_trace_format, the analysis
     * caller's choice (aip_analyse_options), not the directory's. */
    unsigned trace_format;
    /* derived */
    aip__step *steps;            /* sorted by number */
    size_t n_steps;
    aip__step_row *step_rows;
    size_t n_step_rows;
    aip__flow *flows;
    size_t n_flows;
    aip__mem_peak *mem_peaks;    /* by process, then device type and index */
    size_t n_mem_peaks;
    int64_t first_ns, last_ns;  /* extent of everything recorded; 0,0 if nothing */
    uint64_t n_events;
    uint64_t dropped_events;
    uint64_t flight_overwritten;  /* events the flight recorder's ring discarded in its window */
    int flight_dump;              /* the profile is a flight recorder dump */
    uint64_t invalid_utf8_texts;  /* sum of the processes' invalid_utf8_strings */
    uint64_t dev_bad_records;     /* sum of the processes' dev_bad_records (left out) */
    /* Each device's overlap sections and each process's task tracks once
     * an exporter asked for them (dev_share.c; made by aip__model_derive()
     * when there are device tasks, NULL otherwise: then each asker
     * computes them). */
    struct aip__dev_share *dev_share;
    int derived;
} aip__model;

/* --- model.c ---------------------------------------------------------- */
/* aip__model_init() : an empty model, info at its defaults. */
void aip__model_init(aip__model *m);
/* aip__model_free() : free everything; the model is empty again (as after init). */
void aip__model_free(aip__model *m);
/* aip__model_has_device_tasks() : whether any process holds a device task. */
int aip__model_has_device_tasks(const aip__model *m);
/* aip__profiler_info_defaults() : what holds without profiler_info.json:
 * rank -1, Level0, data_simplification on, everything else off. */
void aip__profiler_info_defaults(aip__profiler_info_data *info);
/* aip__info_comm_summaries() : whether the profile's level writes the
 * communication summaries (communication.json, communication_matrix.json,
 * analysis.db's CommAnalyzer* tables): the seed writes them at Level1 and
 * Level2 only; a profile whose level is unknown (no profiler_info.json)
 * keeps what it recorded. */
int aip__info_comm_summaries(const aip__profiler_info_data *info);
/* aip__comm_level_note() : why they are not written, said once in the
 * summary and the run log when communication was recorded. */
const char *aip__comm_level_note(const aip__profiler_info_data *info);
/* aip__metadata_free() : free the pairs; *md is empty again. */
void aip__metadata_free(aip__metadata *md);
/* aip__model_grow() : make room for `need` elements of `elem` bytes in a
 * growable array; AIP_ERR_NOMEM on failure. */
aip_status aip__model_grow(void **v, size_t *cap, size_t need, size_t elem);
/* --- big_array.c: per-event arrays (spans, aux words, records, strings,
 * flows); free them with aip__array_free, never free(). --- */
aip_status aip__array_grow(void **v, size_t *cap, size_t need, size_t elem);
void aip__array_free(void *v);
/* aip__model_str() : text of string `id` of process `p` ("" if undefined). */
const char *aip__model_str(const aip__process *p, uint32_t id, size_t *len);
/* aip__model_op_fields() : decode an OP span's optional fields. */
void aip__model_op_fields(const aip__thread *t, const aip__span *s, aip__op_fields *out);
/* aip__model_range_domain() : domain string id of a RANGE span. */
uint32_t aip__model_range_domain(const aip__thread *t, const aip__span *s);
/* The ids of a PYFUNC span (its two aux words; all 0 if it has none). */
typedef struct aip__pyfunc_fields {
    uint32_t python_id, parent_id, module_id; /* module_id: string id, 0 = none */
} aip__pyfunc_fields;
/* aip__model_pyfunc_fields() : decode a PYFUNC span's ids. */
void aip__model_pyfunc_fields(const aip__thread *t, const aip__span *s, aip__pyfunc_fields *out);

/* --- model_load.c ----------------------------------------------------- */
/* aip__model_load_raw() : read one raw file into a new process of `m`.
 * Truncated or corrupt data is recovered and described in the process's
 * problem fields (AIP_OK).  Errors: the file cannot be opened or is not raw
 * data of a supported version (nothing is added), or no memory (a partial
 * process may remain; free the model). */
aip_status aip__model_load_raw(aip__model *m, const char *path);

/* --- device_load.c ---------------------------------------------------- */
/* aip__model_device() / aip__model_queue() : the entry of a raw id, NULL
 * when the file did not describe it. */
static inline const aip__device *aip__model_device(const aip__process *p, uint32_t id)
{
    return id < p->devices.n && p->devices.v[id].present ? &p->devices.v[id] : NULL;
}
static inline const aip__queue *aip__model_queue(const aip__process *p, uint32_t id)
{
    return id < p->queues.n && p->queues.v[id].present ? &p->queues.v[id] : NULL;
}

/* --- comm_load.c ------------------------------------------------------ */
/* aip__model_comm_group() : the group of a raw id, NULL if not described. */
static inline const aip__comm_group_info *aip__model_comm_group(const aip__process *p, uint32_t id)
{
    return id < p->comm_groups.n && p->comm_groups.v[id].present ? &p->comm_groups.v[id]
                                                                   : NULL;
}

/* --- host_load.c ----------------------------------------------------- */
/* aip__host_derive() : the series of p's host samples (model_host.h);
 * zeroed and AIP_OK without samples.  Free with aip__host_series_free. */
aip_status aip__host_derive(const aip__process *p, aip__host_series *s);
void aip__host_series_free(aip__host_series *s);

/* --- derive.c --------------------------------------------------------- */
/* aip__model_derive() : sort and nest spans, self times, steps, step trace
 * rows, range pairs, fwdbwd flows, extent.  Call once after loading. */
aip_status aip__model_derive(aip__model *m);

/* --- nesting.c ------------------------------------------------------- */
/* aip__thread_slices() : the slices to draw for t, in start order, any
 * two nested or disjoint. */
static inline const aip__span *aip__thread_slices(const aip__thread *t, size_t *n)
{
    *n = t->slices ? t->n_slices : t->n_spans;
    return t->slices ? t->slices : t->spans;
}

/* --- steps.c ---------------------------------------------------------- */
/* aip__step_name_flags() : per string id, 1 if it names a step (malloc'd). */
uint8_t *aip__step_name_flags(const aip__process *p);
/* aip__step_row_columns() : a row's values in the files' column order,
 * Computing ... Preparing (after Device_id and Step); ns. */
#define AIP_STEP_TRACE_COLS 9
void aip__step_row_columns(const aip__step_row *r, int64_t out[AIP_STEP_TRACE_COLS]);

/* --- device_stats.c --------------------------------------------------- */
/* aip__dev_kind_name() : "CPU", "GPU", "ACCELERATOR", "OTHER". */
const char *aip__dev_kind_name(unsigned kind);
/* aip__task_type() : what kernel_details' Type and op_statistic's OP Type
 * say of a task: its kernel name, or for other tasks its kind ("MEMCPY",
 * "MEMSET", "MARKER", "BARRIER", "MAP", "OTHER"). */
const char *aip__task_type(const aip__process *p, const aip__device_task *t, size_t *len);
/* Device tasks grouped by (device id, type), across processes. */
typedef struct aip__task_stat {
    uint32_t device;          /* raw device id */
    uint8_t core;             /* enum aip__dev_kind of the device, 0xff unknown */
    const char *type;         /* aip__task_type(), valid for the model's lifetime */
    size_t len;
    uint64_t count;
    int64_t total_ns, min_ns, max_ns;
} aip__task_stat;
/* aip__task_stats() : by device id, then total time (longest first), then
 * type.  *out is malloc'd (NULL with *n 0 when no tasks). */
aip_status aip__task_stats(const aip__model *m, aip__task_stat **out, size_t *n);
/* aip__device_call_ns() : per API call of p (index in dev_api), the summed
 * duration of the tasks it launched, -1 when it launched none; malloc'd
 * into *out (NULL when p has no calls). */
aip_status aip__device_call_ns(const aip__process *p, int64_t **out);
/* aip__op_device_ns() : per span of thread `ti`, the device time of the
 * tasks launched while the span was the innermost op or record_function
 * scope open (self) and while it was open at all (total), -1 when none
 * (operator_details.csv's tree nodes are both); from call_ns
 * (aip__device_call_ns).  Both NULL when the thread made no calls that
 * launched tasks; else malloc'd, parallel to the thread's spans. */
aip_status aip__op_device_ns(const aip__process *p, size_t ti, const int64_t *call_ns,
                             int64_t **self, int64_t **total);

/* --- memory.c --------------------------------------------------------- */
/* Every memory record of every process in time order (processes in
 * raw-file order on equal times). */
typedef struct aip__mem_iter {
    const aip__model *m;
    size_t *pos;
} aip__mem_iter;
aip_status aip__mem_iter_init(aip__mem_iter *it, const aip__model *m);
int aip__mem_iter_next(aip__mem_iter *it, size_t *proc, size_t *idx);
void aip__mem_iter_free(aip__mem_iter *it);
/* aip__mem_category_name() : "PARAMETER", ..., "UNKNOWN". */
const char *aip__mem_category_name(unsigned category);

/* --- op_stats.c ------------------------------------------------------- */
enum { AIP_STAT_OPS = 1, AIP_STAT_ANNOTATIONS = 2, AIP_STAT_RANGES = 4, /* kinds */
       AIP_STAT_DEVICE_API = 8 };  /* runtime API calls of a device back end */
enum { AIP_STAT_LEVEL_OP = 1, AIP_STAT_LEVEL_MSTX = 2,                   /* levels */
       AIP_STAT_LEVEL_RUNTIME = 3 };
typedef struct aip__op_stat {
    const char *name;         /* into a process's string blob (the model's lifetime) */
    size_t len;
    unsigned level;           /* AIP_STAT_LEVEL_*: ops and record_function, or mstx */
    uint64_t count;
    int64_t total_ns, self_ns, min_ns, max_ns;
    double mean_us, m2_us;    /* running mean and squared deviations (Welford) */
} aip__op_stat;
/* aip__op_stats() : spans of the chosen kinds (and device API calls with
 * AIP_STAT_DEVICE_API) grouped by (name, level), ProfilerStep#N excluded;
 * sorted by total time, longest first.  *out is malloc'd. */
aip_status aip__op_stats(const aip__model *m, unsigned kinds, aip__op_stat **out, size_t *n);

/* aip__text_cmp() : order of two texts of known length, bytewise, a
 * prefix first (strcmp's order without the terminators). */
static inline int aip__text_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

/* aip__sat_add() : a + b, held at INT64_MAX / INT64_MIN instead of
 * overflowing.  Sums of durations (totals, self times) use it: one span may
 * last up to 2^62 ns (the clamp of tick_convert.c), so a few crafted or
 * corrupt spans would overflow a plain sum (undefined behaviour). */
static inline int64_t aip__sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#endif
