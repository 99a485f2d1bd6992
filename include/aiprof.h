/*
 * aiprof.h — the one public header of libaiprof.
 *
 * libaiprof records what an AI training or inference program does (ranges,
 * marks, framework ops with shapes and call stacks, memory events, GC passes)
 * into a crash-safe raw format, following the torch_npu.profiler contract:
 * a session with a step schedule (skip_first / wait / warmup / active /
 * repeat) writes one `{worker}_{timestamp}_ascend_pt` result directory per
 * finished trace.  The `aiprof analyse` command turns the raw data into
 * trace_view.json and CSV summaries.
 *
 * Anything not declared here is not API (aiprof_integration.h, beside it,
 * holds the hooks that aiprof's own Python package, PyTorch adapter and
 * `aiprof run` preload use; a program does not need them).  Every function
 * returns an aip_status (AIP_OK == 0) unless documented otherwise; nothing
 * in the library aborts the profiled program.  A failed call also leaves a message
 * for aip_last_error() (thread-local) and, when a session is open, in the
 * session's logs/aiprof.log.
 *
 * Threads: the recording calls and aip_intern() may be called from any
 * thread at any time; a session is driven by one thread at a time; the
 * dynamic calls may be called from any thread (they share one lock).  Only
 * AIP_RECORDING(), aip_is_recording() and aip_now_ns() are
 * async-signal-safe.  Each section below says more.
 *
 * Defining AIP_DISABLE before including this header turns every AIP_*
 * instrumentation macro into nothing: such a program needs no libaiprof.
 *
 * ABI: the major version changes when a struct layout or a signature
 * changes; aip_config carries its own size so that a program built against
 * an older header keeps working with a newer library of the same major.
 */
#ifndef AIPROF_H
#define AIPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AIP_VERSION_MAJOR 0
#define AIP_VERSION_MINOR 1
#define AIP_VERSION_PATCH 0
#define AIP_VERSION_NUMBER \
    (AIP_VERSION_MAJOR * 10000 + AIP_VERSION_MINOR * 100 + AIP_VERSION_PATCH)
#define AIP_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define AIP_API __attribute__((visibility("default")))
#else
#define AIP_API
#endif

/*! aip_version() : @return the library's version string, e.g. "0.1.0". */
AIP_API const char *aip_version(void);
/*! aip_version_number() : @return AIP_VERSION_NUMBER of the library. */
AIP_API unsigned aip_version_number(void);

/* ---------------------------------------------------------------------
 * Status codes.  Numbered, never renumbered.
 * ------------------------------------------------------------------- */
/* AIP_STATUS_LIST(X) : every status, once, as X(code, number, message):
 * the enum below and aip_strerror() are generated from it, and a program
 * may expand it too (a table of names, a mapping to its own errors).
 * Append new codes at the end; never reuse or renumber one. */
#define AIP_STATUS_LIST(X)                                        \
    X(AIP_OK, 0, "success")                                       \
    /* a parameter is out of range or NULL */                     \
    X(AIP_ERR_INVALID_ARG, 1, "invalid argument")                 \
    /* call not allowed now (double start, ...) */                \
    X(AIP_ERR_STATE, 2, "call not allowed in the current state")  \
    /* allocation failed */                                       \
    X(AIP_ERR_NOMEM, 3, "out of memory")                          \
    /* read/write/create failed (errno in message) */             \
    X(AIP_ERR_IO, 4, "input/output error")                        \
    /* path has characters outside [A-Za-z0-9_-./] */             \
    X(AIP_ERR_PATH, 5, "invalid path")                            \
    /* a path component is a symbolic link */                     \
    X(AIP_ERR_SYMLINK, 6, "path is a symbolic link")              \
    /* raw data is not aiprof raw data */                         \
    X(AIP_ERR_FORMAT, 7, "not aiprof raw data")                   \
    /* raw data from a newer format version */                    \
    X(AIP_ERR_VERSION, 8, "raw data from a newer aiprof version") \
    /* checksum mismatch or inconsistent record */                \
    X(AIP_ERR_CORRUPT, 9, "corrupt data")                         \
    /* raw data ends mid-chunk */                                 \
    X(AIP_ERR_TRUNCATED, 10, "truncated data")                    \
    /* pop without push, end of unknown range */                  \
    X(AIP_ERR_UNBALANCED, 11, "unbalanced push/pop")              \
    /* feature cannot work on this machine */                     \
    X(AIP_ERR_UNSUPPORTED, 12, "not supported on this machine")   \
    /* file or directory does not exist */                        \
    X(AIP_ERR_NOT_FOUND, 13, "not found")                         \
    /* a size limit was exceeded */                               \
    X(AIP_ERR_LIMIT, 14, "size limit exceeded")                   \
    /* stopped at the caller's request (aip_analyse_dirs) */      \
    X(AIP_ERR_CANCELLED, 15, "cancelled")                         \
    /* the process doing the work ended by a signal */            \
    X(AIP_ERR_CRASHED, 16, "the analysing process crashed")

typedef enum aip_status {
#define AIP__STATUS_ENUM(code, number, message) code = number,
    AIP_STATUS_LIST(AIP__STATUS_ENUM)
#undef AIP__STATUS_ENUM
} aip_status;

/*! aip_strerror() : @return a static text for a status code (never NULL). */
AIP_API const char *aip_strerror(aip_status status);

/*! aip_last_error() : @return the message of the last failed call on this
 *  thread ("" if none).  Valid until the next failing call on this thread. */
AIP_API const char *aip_last_error(void);

/* ---------------------------------------------------------------------
 * Enumerations mirroring torch_npu.profiler.
 * ------------------------------------------------------------------- */
typedef enum aip_action {          /* torch.profiler.ProfilerAction */
    AIP_ACTION_NONE = 0,
    AIP_ACTION_WARMUP = 1,
    AIP_ACTION_RECORD = 2,
    AIP_ACTION_RECORD_AND_SAVE = 3
} aip_action;

enum aip_activity {                /* bit flags: ProfilerActivity */
    AIP_ACTIVITY_CPU = 1u << 0,
    AIP_ACTIVITY_NPU = 1u << 1,
    AIP_ACTIVITY_CUDA = 1u << 2,
    AIP_ACTIVITY_XPU = 1u << 3
};
/* The device activity switch: any of these bits (or aip_config.use_cuda)
 * makes a trace record device activity through every device back end built
 * into this libaiprof (OpenCL and CUDA where their headers were found at
 * build time; aip_supported_activities() says which find a device): NPU is
 * torch_npu's name for it, CUDA and XPU are torch.profiler's, accepted so
 * that its scripts run unchanged. */
#define AIP_ACTIVITY_DEVICES (AIP_ACTIVITY_NPU | AIP_ACTIVITY_CUDA | AIP_ACTIVITY_XPU)

/*! aip_supported_activities() : the aip_activity bits that really record
 *  something on this machine: CPU always; NPU when a device back end built
 *  into this libaiprof finds a device (the device activity, whatever its
 *  back end); CUDA too when that back end is CUDA's.  Asks the back ends
 *  each time; the first call may load and initialise a device runtime the
 *  program did not load (an OpenCL back end enumerates its platforms). */
AIP_API unsigned aip_supported_activities(void);

/*! aip_device_status() : why there is, or is not, device data to collect
 *  in this process now (never loading a device runtime: a program that has
 *  not loaded OpenCL is told so),
 *  one clause per device back end ("OpenCL: 1 device (pthread-...)" or
 *  "OpenCL: no OpenCL platform found"), or a sentence saying this
 *  libaiprof has none, written NUL-terminated into buf (cut to cap).
 *  @return the number of back ends that find a device (0 = no device data
 *  can be collected here). */
AIP_API int aip_device_status(char *buf, size_t cap);

typedef enum aip_profiler_level {  /* ProfilerLevel */
    AIP_LEVEL_NONE = 0,            /* "Level_none" */
    AIP_LEVEL0 = 1,                /* "Level0" (default) */
    AIP_LEVEL1 = 2,
    AIP_LEVEL2 = 3
} aip_profiler_level;

typedef enum aip_aic_metrics {     /* AiCMetrics */
    AIP_AIC_DEFAULT = 0,           /* AiCoreNone at Level0/none, PipeUtilization at Level1/2 */
    AIP_AIC_NONE = 1,              /* AiCoreNone */
    AIP_AIC_PIPE_UTILIZATION = 2,
    AIP_AIC_ARITHMETIC_UTILIZATION = 3,
    AIP_AIC_MEMORY = 4,
    AIP_AIC_MEMORY_L0 = 5,
    AIP_AIC_RESOURCE_CONFLICT_RATIO = 6,
    AIP_AIC_MEMORY_UB = 7,
    AIP_AIC_L2_CACHE = 8,
    AIP_AIC_MEMORY_ACCESS = 9
} aip_aic_metrics;

enum aip_export_type {             /* bit flags: ExportType */
    AIP_EXPORT_TEXT = 1u << 0,
    AIP_EXPORT_DB = 1u << 1
};

enum aip_host_sys {                /* bit flags: HostSystem */
    AIP_HOST_SYS_CPU = 1u << 0,
    AIP_HOST_SYS_MEM = 1u << 1,
    AIP_HOST_SYS_DISK = 1u << 2,
    AIP_HOST_SYS_NETWORK = 1u << 3,
    AIP_HOST_SYS_OSRT = 1u << 4
};

/*! aip_profiler_level_name(), aip_aic_metrics_name() : @return the seed's
 *  spelling ("Level0", "ACL_AICORE_PIPE_UTILIZATION", ...), or NULL. */
AIP_API const char *aip_profiler_level_name(aip_profiler_level level);
AIP_API const char *aip_aic_metrics_name(aip_aic_metrics metrics);

/* ---------------------------------------------------------------------
 * Schedule: torch.profiler.schedule(wait, active, warmup, repeat, skip_first)
 * ------------------------------------------------------------------- */
typedef struct aip_schedule {
    int64_t skip_first;   /* steps skipped once at the start (>= 0) */
    int64_t wait;         /* idle steps per cycle (>= 0) */
    int64_t warmup;       /* warmup steps per cycle (>= 0) */
    int64_t active;       /* recorded steps per cycle (> 0) */
    int64_t repeat;       /* cycles; 0 = no limit (>= 0) */
} aip_schedule;

/*! aip_schedule_validate() : AIP_ERR_INVALID_ARG naming the bad field when
 *  a value is out of range (torch.profiler.schedule's rules). */
AIP_API aip_status aip_schedule_validate(const aip_schedule *schedule);

/*! aip_schedule_action() : the action for step `step` (>= 0), with exactly
 *  torch.profiler.schedule's semantics: the last active step of each cycle
 *  is RECORD_AND_SAVE; after `repeat` cycles (repeat > 0) everything is
 *  NONE.  @return AIP_ACTION_NONE for a NULL or invalid schedule or step<0. */
AIP_API aip_action aip_schedule_action(const aip_schedule *schedule, int64_t step);

/* ---------------------------------------------------------------------
 * Configuration: torch_npu.profiler.profile + _ExperimentalConfig
 * ------------------------------------------------------------------- */
struct aip_session;
typedef struct aip_session aip_session;

/*! Called after each RECORD_AND_SAVE, once the trace's raw data is complete
 *  on disk.  `result_dir` is the `..._ascend_pt` directory.  Runs on the
 *  thread that called aip_session_step()/aip_session_stop(); for an armed
 *  flight recorder, after each dump, on the recorder's writer thread. */
typedef void (*aip_trace_ready_fn)(aip_session *session, const char *result_dir,
                                   void *user_data);

typedef struct aip_config {
    size_t struct_size;          /* sizeof(aip_config), set by aip_config_init */

    /* profile(...) */
    unsigned activities;         /* aip_activity bits; default CPU|NPU (NPU, CUDA
                                  * or XPU: record device activity) */
    int has_schedule;            /* 0 = torch's default: every step RECORD, no ProfilerStep# */
    aip_schedule schedule;
    int record_shapes;           /* default 0 */
    int profile_memory;          /* default 0 */
    int with_stack;              /* default 0 */
    int with_flops;              /* default 0 */
    int with_modules;            /* default 0 */
    int use_cuda;                /* default 0 */

    /* tensorboard_trace_handler(dir_name, worker_name, analyse_flag, async_mode) */
    const char *dir_name;        /* NULL: $ASCEND_WORK_PATH/profiling_data, else cwd */
    const char *worker_name;     /* NULL: "{hostname}_{pid}" */
    aip_trace_ready_fn on_trace_ready;
    void *on_trace_ready_data;

    /* _ExperimentalConfig */
    unsigned export_type;        /* aip_export_type bits; default TEXT */
    aip_profiler_level profiler_level;  /* default LEVEL0 */
    aip_aic_metrics aic_metrics; /* default AIP_AIC_DEFAULT */
    int l2_cache;                /* default 0 */
    int op_attr;                 /* default 0 */
    int data_simplification;     /* default 1 */
    int record_op_args;          /* default 0 */
    int mstx;                    /* default 0 (alias msprof_tx); Level_none forces 1 */
    double gc_detect_threshold_ms; /* < 0 = None (default, off); >= 0 ms */
    unsigned host_sys;           /* aip_host_sys bits; default 0.  CPU/MEM/DISK/NETWORK:
                                  * a sampler thread reads /proc every 20 ms
                                  * (AIPROF_HOST_SYS_PERIOD_MS), docs/HOST_SYS.md */
    const char *const *mstx_domain_include; /* NULL-terminated list or NULL */
    const char *const *mstx_domain_exclude; /* ignored (with a warning) if include set */
    int sys_io;                  /* default 0; the host's NICs and RDMA ports (HOST_SYS.md) */
    int sys_interconnection;     /* default 0 */

    /* aiprof's own knobs */
    size_t buffer_cap_bytes;     /* bound on buffered event memory; default 64 MiB */

    /* A schedule the host computes (torch.profiler takes any callable
     * step -> ProfilerAction): when set, the session asks it for each
     * step's action instead of `schedule`, and steps are ProfilerStep#N as
     * with a schedule.  Called on the thread that starts or steps the
     * session; an out-of-range action counts as AIP_ACTION_NONE. */
    aip_action (*schedule_fn)(void *user_data, int64_t step);
    void *schedule_fn_data;

    /* Size cap of one trace's raw file in bytes; 0 (the default) = none,
     * else at least 1 MiB.  Reached, the trace stops being written (a
     * warning says so), the program runs on, and later events are counted
     * as dropped.  `aiprof run` sets 4 GiB unless told otherwise
     * (--max-size).  A file size limit (RLIMIT_FSIZE) is honoured the same
     * way. */
    uint64_t max_raw_bytes;

    /* Flight recorder (docs/FLIGHT_RECORDER.md).  flight_recorder_seconds
     * > 0 arms it: the session records from start() to stop() whatever its
     * schedule says, into a ring of segment files bounded by
     * flight_ring_bytes, and writes no result directory until a trigger;
     * then it writes the last flight_recorder_seconds of every collector
     * as a normal result directory (aip_flight_dump() and the triggers
     * below).  0 (the default) = off. */
    double flight_recorder_seconds;
    uint64_t flight_ring_bytes;  /* the ring's bound; 0 = 256 MiB; else at least 4 MiB */
    const char *flight_ring_dir; /* where the ring lives; NULL: /dev/shm (memory) when it
                                  * has room, else {dir_name}/.aiprof_flight */
    double flight_slow_step;     /* k > 1: a step slower than k x the running median of
                                  * the last 64 steps dumps; 0 = off */
    double flight_hang_seconds;  /* T > 0: no step for T seconds dumps (once per hang),
                                  * with every thread's open ranges; 0 = off */
    int flight_signal;           /* the signal that dumps; 0 = SIGUSR2, -1 = none */
} aip_config;

/*! aip_config_init() : fill `config` with the seed's defaults. */
AIP_API void aip_config_init(aip_config *config);

/*! aip_config_validate() : AIP_OK, or AIP_ERR_INVALID_ARG / AIP_ERR_PATH with
 *  a message naming the parameter.  Warnings (include+exclude both set,
 *  unsupported activities) are logged, not errors. */
AIP_API aip_status aip_config_validate(const aip_config *config);

/* ---------------------------------------------------------------------
 * Session: create / start / step / stop / destroy.
 * One session records at a time in a process; recording calls below go
 * to the session that is recording.
 *
 * Threads: the calls on one session are not synchronised with each other;
 * make them from one thread at a time (normally the training loop's).
 * Different sessions may be used from different threads: which one records
 * is decided under a lock.  A session belongs to the process that created
 * it: in a forked child its calls fail with AIP_ERR_STATE (create a new one
 * there), and aip_session_destroy() only frees it.  on_trace_ready and
 * schedule_fn run on the thread that called start/step/stop.  None of
 * these is async-signal-safe.
 * ------------------------------------------------------------------- */

/*! aip_session_create() : validate and copy `config` (strings are copied).
 *  @return AIP_OK and *out, or an error with *out == NULL. */
AIP_API aip_status aip_session_create(const aip_config *config, aip_session **out);

/*! aip_session_start() : begin at step 0.  AIP_ERR_STATE if this session is
 *  already started or another session is recording.  When its first trace
 *  cannot begin (AIP_ERR_IO, AIP_ERR_PATH, AIP_ERR_SYMLINK: the reason is
 *  logged), the session still counts as started, so the program's step and
 *  stop calls stay harmless, but it holds nothing: another session may
 *  start and record. */
AIP_API aip_status aip_session_start(aip_session *session);

/*! aip_session_step() : end step N and begin step N+1, applying the
 *  schedule's transitions (a finished trace is saved and on_trace_ready
 *  called).  With a schedule, closes `ProfilerStep#N` and opens
 *  `ProfilerStep#N+1` on the calling thread.  AIP_ERR_STATE before start. */
AIP_API aip_status aip_session_step(aip_session *session);

/*! aip_session_stop() : end the session; a trace being recorded is saved
 *  (and on_trace_ready called), one in warmup is discarded.
 *  AIP_ERR_STATE when not started. */
AIP_API aip_status aip_session_stop(aip_session *session);

/*! aip_session_destroy() : stop if needed and free.  NULL is a no-op. */
AIP_API void aip_session_destroy(aip_session *session);

/*! aip_session_step_num() : @return the current step number (0 before the
 *  first aip_session_step(); 0 for NULL). */
AIP_API int64_t aip_session_step_num(const aip_session *session);

/*! aip_session_current_action() : @return the schedule's action for the
 *  current step; AIP_ACTION_NONE when not started or NULL. */
AIP_API aip_action aip_session_current_action(const aip_session *session);

/*! aip_session_result_dir() : the result directory of the trace being
 *  recorded, or of the last saved one; NULL if none yet.  Owned by the
 *  session, valid until the next step/stop/destroy. */
AIP_API const char *aip_session_result_dir(const aip_session *session);

/*! aip_session_add_metadata() : a string entry for profiler_metadata.json.
 *  aip_session_add_metadata_json() : `json_value` is stored as JSON (it must
 *  parse, else AIP_ERR_INVALID_ARG).  Keys/values ≤ 4096 chars, 50 KiB total
 *  (AIP_ERR_LIMIT beyond).  Allowed while the session exists. */
AIP_API aip_status aip_session_add_metadata(aip_session *session, const char *key,
                                            const char *value);
AIP_API aip_status aip_session_add_metadata_json(aip_session *session, const char *key,
                                                 const char *json_value);

/*! aip_flight_dump() : dump the flight recorder of the recording session
 *  now: the last flight_recorder_seconds of every collector become a new
 *  result directory, whose path is copied into `result_dir` (`cap` bytes;
 *  NULL: not wanted).  `reason` (NULL: "api") is written into
 *  profiler_info.json.  Waits until the directory is complete (it is
 *  written on the recorder's writer thread).  AIP_ERR_STATE when no
 *  flight recorder is armed in this process, AIP_ERR_IO when the dump
 *  could not be written.  Not async-signal-safe: a signal handler sends
 *  flight_signal instead. */
AIP_API aip_status aip_flight_dump(const char *reason, char *result_dir, size_t cap);

/*! aip_flight_salvage() : the flight recorder's ring left by a process
 *  that died while armed (SIGKILL, a crash) into a result directory under
 *  `out_dir`: everything the ring's files hold, which is every event that
 *  the recorder's last flush (at most 100 ms before the death) wrote.
 *  `ring_dir` is the process's ring (flight_ring_dir/{worker}.ring).  The
 *  path is copied into `result_dir` (`cap` bytes; NULL: not wanted).
 *  AIP_ERR_NOT_FOUND when `ring_dir` holds no segment. */
AIP_API aip_status aip_flight_salvage(const char *ring_dir, const char *out_dir,
                                      char *result_dir, size_t cap);

/*! aip_session_dropped_events() : @return the events dropped at the buffer
 *  cap so far in the trace being recorded, else in the last saved one
 *  (0 for NULL). */
AIP_API uint64_t aip_session_dropped_events(const aip_session *session);

/* ---------------------------------------------------------------------
 * Recording.  All of these are thread-safe, never wait for I/O, never
 * allocate per event, and cost one relaxed atomic load when nothing is
 * recording.  A lock is taken only when a thread first records in a trace,
 * when its 512 KiB buffer fills, and when a text is interned for the first
 * time, so none of them is async-signal-safe (a signal handler must not
 * record).  Push/pop pairs nest per thread: a pop closes the calling
 * thread's innermost push.  They return nothing: a misuse (pop without
 * push) is counted and logged; beyond the buffer cap events are dropped and
 * counted (aip_session_dropped_events()).
 * ------------------------------------------------------------------- */

typedef uint32_t aip_string_id;    /* interned text; 0 = none */

/*! aip_intern() : intern `text` (copied) and return its id; stable for the
 *  process lifetime.  NULL or "" → 0.  Thread-safe; takes a lock on first
 *  sight of a text, lock-free afterwards. */
AIP_API aip_string_id aip_intern(const char *text);

/*! aip_is_recording() : @return nonzero while a session is in a RECORD
 *  phase.  One atomic load: async-signal-safe. */
AIP_API int aip_is_recording(void);

/*! aip_annotation_push() : open an annotation `name` (torch's
 *  record_function, category user_annotation) on the calling thread; `name`
 *  is interned, so the caller may free it.  Not recorded while the thread
 *  is paused (aip_thread_pause() in aiprof_integration.h) or the trace
 *  records no CPU activity. */
AIP_API void aip_annotation_push(const char *name);
/*! aip_annotation_push_id() : aip_annotation_push() with an interned name
 *  (aip_intern()), for callers that open the same name often. */
AIP_API void aip_annotation_push_id(aip_string_id name);
/*! aip_annotation_pop() : close the calling thread's innermost annotation. */
AIP_API void aip_annotation_pop(void);

/* mstx ranges and marks.  domain NULL or "" means "default".  Recorded when
 * the config's mstx is on, filtered by mstx_domain_include/_exclude.  Texts
 * are interned, so the caller may free them afterwards. */

/*! aip_range_push() : open an mstx range `message` in `domain` on the
 *  calling thread, closed by its aip_range_pop() (aip_range_start() is
 *  mstx.range_start's form).  A range that the domain filter drops still
 *  pairs with its pop. */
AIP_API void aip_range_push(const char *domain, const char *message);
/*! aip_range_push_id() : aip_range_push() with interned texts (0: domain
 *  "default"); what AIP_RANGE_PUSH() calls. */
AIP_API void aip_range_push_id(aip_string_id domain, aip_string_id message);
/*! aip_range_pop() : close the calling thread's innermost mstx range. */
AIP_API void aip_range_pop(void);
/*! aip_range_start() : a range that may end on another thread.
 *  @return its id (never 0 while recording; 0 when filtered or off). */
AIP_API uint64_t aip_range_start(const char *domain, const char *message);
/*! aip_range_end() : end the range aip_range_start() returned `range_id`
 *  for, from any thread.  0 is ignored. */
AIP_API void aip_range_end(uint64_t range_id);
/*! aip_mark() : an instant mstx event `message` in `domain` (mstx.mark). */
AIP_API void aip_mark(const char *domain, const char *message);
/*! aip_mark_id() : aip_mark() with interned texts (0: domain "default");
 *  what AIP_MARK() calls. */
AIP_API void aip_mark_id(aip_string_id domain, aip_string_id message);

/* Framework ops (category cpu_op). */
typedef struct aip_op_info {
    const char *name;            /* op name, e.g. "aten::mm" (copied/interned) */
    aip_string_id name_id;       /* used instead of name when nonzero */
    int64_t sequence_number;     /* autograd sequence number; -1 = none */
    uint64_t fwd_thread_id;      /* 0 = forward op; else the forward op's thread */
    const char *input_shapes;    /* "[[2, 3], [3]]" or NULL (record_shapes) */
    const char *input_dtypes;    /* "[float, float]" or NULL (record_shapes) */
    const char *call_stack;      /* frames joined by ";\n" or NULL (with_stack) */
    const char *module_hierarchy;/* "nn.Module: MLP_0;..." or NULL (with_modules) */
    int is_backward;             /* backward scope */
    /* Pre-interned texts (aip_intern), used instead of the strings above
     * when nonzero: a caller that sees the same shapes/stacks again and
     * again interns them once and skips hashing on every op. */
    aip_string_id input_shapes_id, input_dtypes_id, call_stack_id, module_hierarchy_id;
    /* Estimated floating-point operations (with_flops), 0 = none; shown as
     * the op's "flops" and summed by key_averages(). */
    uint64_t flops;
} aip_op_info;
#define AIP_OP_INFO_HAS_IDS 1
#define AIP_OP_INFO_HAS_FLOPS 1

/*! aip_op_begin() / aip_op_end() : an op on the calling thread; strings are
 *  interned at begin, so the caller may free them afterwards. */
AIP_API void aip_op_begin(const aip_op_info *op);
AIP_API void aip_op_end(void);
/*! aip_annotation_begin() : open an annotation with an op's context: `op`'s
 *  name (name / name_id), call stack and module hierarchy (recorded when the
 *  trace has with_stack / with_modules, as an op's), its other fields
 *  ignored; torch's record_function ranges get their Python stack so.
 *  Close it with aip_annotation_end() (it pairs with the thread's ops, not
 *  with aip_annotation_push()). */
AIP_API void aip_annotation_begin(const aip_op_info *op);
/*! aip_annotation_end() : close the innermost aip_annotation_begin() or
 *  aip_op_begin() of the calling thread. */
AIP_API void aip_annotation_end(void);

/* Memory devices, numbered as torch's DeviceType. */
typedef enum aip_device_type { AIP_DEVICE_CPU = 0, AIP_DEVICE_NPU = 20, AIP_DEVICE_CUDA = 1 }
    aip_device_type;
/*! aip_memory_event() : one allocation (`bytes` > 0) or free (`bytes` < 0)
 *  of the block at `address` on a device, with the allocator's running
 *  totals after it (torch's [memory] events, memory_record.csv).  Recorded
 *  while profile_memory is on. */
AIP_API void aip_memory_event(uint64_t address, int64_t bytes, int64_t total_allocated,
                              int64_t total_reserved, aip_device_type device_type,
                              int device_index);

/*! aip_thread_name() : name the calling thread in the trace (copied); kept
 *  for later traces too. */
AIP_API void aip_thread_name(const char *name);

/*! aip_now_ns() : @return the recording clock in nanoseconds
 *  (CLOCK_MONOTONIC).  Async-signal-safe. */
AIP_API uint64_t aip_now_ns(void);

/* ---------------------------------------------------------------------
 * Call-site macros: one inline load when nothing records; the literal is
 * interned once per call site.  Statements (AIP_RECORDING() is an
 * expression), safe in an unbraced if/else, callable from any thread like
 * the functions they call.
 *
 * With AIP_DISABLE defined before this header is included, each of them
 * compiles to nothing: AIP_RECORDING() is 0, the others are empty
 * statements that evaluate none of their arguments (they stay type-checked
 * through sizeof, so a variable used only there is not reported unused).
 * Such a program references no libaiprof symbol through them.
 * ------------------------------------------------------------------- */

/*! aip_recording_generation : nonzero while a trace records.  Read-only for
 *  users (the library writes it); read it only through AIP_RECORDING(). */
AIP_API extern uint32_t aip_recording_generation;

#if defined(AIP_DISABLE)

#define AIP_RECORDING() (0)
#define AIP_ANNOTATION_PUSH(lit) do { (void)sizeof(lit); } while (0)
#define AIP_ANNOTATION_POP() do { } while (0)
#define AIP_RANGE_PUSH(domain_lit, msg_lit)                                \
    do {                                                                   \
        (void)sizeof(domain_lit);                                          \
        (void)sizeof(msg_lit);                                             \
    } while (0)
#define AIP_RANGE_POP() do { } while (0)
#define AIP_MARK(domain_lit, msg_lit)                                      \
    do {                                                                   \
        (void)sizeof(domain_lit);                                          \
        (void)sizeof(msg_lit);                                             \
    } while (0)

#else /* !AIP_DISABLE */

/*! AIP_RECORDING() : nonzero while a trace records (aip_is_recording()
 *  inline: one relaxed atomic load, async-signal-safe). */
#define AIP_RECORDING() (__atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED) != 0)

/* The call site's interned id for `lit`, computed on first use. */
#define AIP__ID(lit)                                                       \
    __extension__({                                                        \
        static aip_string_id aip__site_id;                                 \
        aip_string_id aip__v = __atomic_load_n(&aip__site_id, __ATOMIC_RELAXED); \
        if (!aip__v) {                                                     \
            aip__v = aip_intern(lit);                                      \
            __atomic_store_n(&aip__site_id, aip__v, __ATOMIC_RELAXED);     \
        }                                                                  \
        aip__v;                                                            \
    })
/*! AIP_ANNOTATION_PUSH(lit) / AIP_ANNOTATION_POP() : aip_annotation_push()
 *  / aip_annotation_pop(); `lit` should be a literal (its first value is
 *  kept for the call site). */
#define AIP_ANNOTATION_PUSH(lit)                                           \
    do {                                                                   \
        if (__builtin_expect(AIP_RECORDING(), 0))                          \
            aip_annotation_push_id(AIP__ID(lit));                          \
    } while (0)
#define AIP_ANNOTATION_POP()                                               \
    do {                                                                   \
        if (__builtin_expect(AIP_RECORDING(), 0))                          \
            aip_annotation_pop();                                          \
    } while (0)
/*! AIP_RANGE_PUSH(domain_lit, msg_lit) / AIP_RANGE_POP() : aip_range_push()
 *  / aip_range_pop() with literals. */
#define AIP_RANGE_PUSH(domain_lit, msg_lit)                                \
    do {                                                                   \
        if (__builtin_expect(AIP_RECORDING(), 0))                          \
            aip_range_push_id(AIP__ID(domain_lit), AIP__ID(msg_lit));      \
    } while (0)
#define AIP_RANGE_POP()                                                    \
    do {                                                                   \
        if (__builtin_expect(AIP_RECORDING(), 0))                          \
            aip_range_pop();                                               \
    } while (0)
/*! AIP_MARK(domain_lit, msg_lit) : aip_mark() with literals. */
#define AIP_MARK(domain_lit, msg_lit)                                      \
    do {                                                                   \
        if (__builtin_expect(AIP_RECORDING(), 0))                          \
            aip_mark_id(AIP__ID(domain_lit), AIP__ID(msg_lit));            \
    } while (0)

#endif /* AIP_DISABLE */

/* ---------------------------------------------------------------------
 * Dynamic profiling: profiler_config.json drives collections while the
 * program runs (torch_npu.profiler.dynamic_profile).  One watcher per
 * config directory polls the file and publishes each edit to every process
 * that called aip_dynamic_init() on it; aip_dynamic_step() applies them.
 * All of these log to <config dir>/log/ and never stop the program.
 *
 * Threads: these calls may come from any thread; they take one process-wide
 * lock, and a collection's session is started, stepped and saved (and, when
 * the config asks, analysed) inside them, under that lock, on the calling
 * thread: ProfilerStep# ranges belong to the thread that calls
 * aip_dynamic_step().  Not async-signal-safe.
 * ------------------------------------------------------------------- */
typedef enum aip_dynamic_state {
    AIP_DYN_UNINITIALIZED = -1,
    AIP_DYN_IDLE = 0,      /* watching, nothing pending */
    AIP_DYN_RUNNING = 1,   /* a collection is recording */
    AIP_DYN_READY = 2      /* a valid config waits for its start_step */
} aip_dynamic_state;

/*! aip_dynamic_init() : watch `config_dir`/profiler_config.json (created with
 *  the seed's defaults when missing).  Only edits made after this call count.
 *  AIP_ERR_PATH / AIP_ERR_SYMLINK / AIP_ERR_IO for a bad directory,
 *  AIP_ERR_STATE if already initialised. */
AIP_API aip_status aip_dynamic_init(const char *config_dir);

/*! aip_dynamic_step() : the training step ended.  Costs an uncontended
 *  lock and one shared-memory load when idle.  Starts, steps and ends
 *  collections.  AIP_ERR_STATE before aip_dynamic_init(). */
AIP_API aip_status aip_dynamic_step(void);

/*! aip_dynamic_start() : collect once now from `config_path` (NULL or
 *  invalid: the init directory's profiler_config.json); ignores later edits
 *  of that file.  Refused (AIP_ERR_STATE, logged) while a collection runs. */
AIP_API aip_status aip_dynamic_start(const char *config_path);

/*! aip_dynamic_shutdown() : stop a running collection (saved, with a
 *  warning), detach from the watcher.  Also runs at exit. */
AIP_API void aip_dynamic_shutdown(void);

/*! aip_dynamic_get_state() : @return AIP_DYN_UNINITIALIZED before
 *  aip_dynamic_init() and after aip_dynamic_shutdown(), AIP_DYN_RUNNING
 *  while a collection records, AIP_DYN_READY while a loaded config waits
 *  for its start_step, else AIP_DYN_IDLE (dynamic_profile's state). */
AIP_API aip_dynamic_state aip_dynamic_get_state(void);

/* ---------------------------------------------------------------------
 * Analysis (what the `aiprof` command uses).  These read a result
 * directory and write beside it; they share no state, so different
 * directories may be analysed from different threads at once (not the same
 * one).  Not async-signal-safe.
 * ------------------------------------------------------------------- */
enum aip_analyse_outputs {
    AIP_OUTPUTS_ALL = 0,         /* everything export_type asks for */
    AIP_OUTPUTS_TRACE_VIEW = 1   /* only trace_view.json (export_chrome_trace,
                                    key_averages); nothing else is touched */
};

/* The forms of the timeline: trace_view.json's two (docs/RESULT_LAYOUT.md says which
 * viewer or tool wants which). */
enum aip_trace_format {
    AIP_TRACE_TORCH_NPU = 0,     /* torch_npu's: a top-level array, `ts` a string
                                    of absolute epoch µs with 3 decimals (what
                                    msprof-analyze and MindStudio Insight read) */
    AIP_TRACE_KINETO = 1,        /* torch.profiler's: {"traceEvents": [...],
                                    "baseTimeNanoseconds": B, ...}, numeric `ts`
                                    relative to B, add_metadata entries as
                                    top-level keys (for float64 readers such as
                                    speedscope and the old chrome://tracing) */
    AIP_TRACE_PERFETTO = 2       /* torch_npu's trace_view.json and also
                                    trace.perfetto-trace: Perfetto's native protobuf
                                    TrackEvent trace (integer ns, interned strings)
                                    for the Perfetto UI / trace processor */
};

typedef struct aip_analyse_options {
    size_t struct_size;          /* sizeof(aip_analyse_options) */
    unsigned export_type;        /* 0 = as recorded in profiler_info.json */
    int quiet;                   /* no messages on stderr */
    unsigned outputs;            /* aip_analyse_outputs; default ALL */
    unsigned trace_format;       /* aip_trace_format; default AIP_TRACE_TORCH_NPU
                                    (a caller built against a header without
                                    this field passes a smaller struct_size
                                    and gets the default) */
} aip_analyse_options;

/*! aip_analyse_options_init() : fill `options` with the defaults: struct_size
 *  set, export_type 0 (as recorded), messages on, AIP_OUTPUTS_ALL,
 *  AIP_TRACE_TORCH_NPU. */
AIP_API void aip_analyse_options_init(aip_analyse_options *options);

/*! aip_analyse_dir() : turn one `..._ascend_pt` directory's raw data into
 *  ASCEND_PROFILER_OUTPUT/.  Salvages truncated raw data (with a warning).
 *  Same input gives the same output.  @return AIP_OK or the first error;
 *  the message is in aip_last_error() and logs/. */
AIP_API aip_status aip_analyse_dir(const char *result_dir, const aip_analyse_options *options);

/* What aip_analyse_dirs() tells its progress callback, from the calling thread. */
enum aip_analyse_dirs_event {
    AIP_DIRS_STARTED = 0,        /* dirs[index] is being analysed now */
    AIP_DIRS_DONE = 1,           /* dirs[index] is finished: results[index] says how */
    AIP_DIRS_WAITING = 2         /* while other threads or processes analyse: nothing
                                    started or finished for about 0.2 s (index is
                                    (size_t)-1); a chance to notice Ctrl-C */
};

/*! A progress callback of aip_analyse_dirs(): `event` (aip_analyse_dirs_event)
 *  about `dirs[index]`; `done` of `total` directories are finished.  Return
 *  non-zero to cancel: no further directory is started, those being analysed
 *  finish, and those never started get AIP_ERR_CANCELLED. */
typedef int (*aip_analyse_dirs_fn)(void *arg, unsigned event, size_t index, size_t done,
                                   size_t total);

/*! How one directory of aip_analyse_dirs() went (an element of its `results`). */
typedef struct aip_dir_result {
    aip_status status;           /* AIP_OK; aip_analyse_dir()'s error; AIP_ERR_CRASHED
                                    (its process ended by `signal`); AIP_ERR_CANCELLED
                                    (never started) */
    int signal;                  /* the signal that ended its process, else 0 */
    char message[512];           /* the error (aip_last_error() of its analysis); "" if OK */
} aip_dir_result;

/*! Options of aip_analyse_dirs() (aip_analyse_dirs_options_init() first). */
typedef struct aip_analyse_dirs_options {
    size_t struct_size;          /* sizeof(aip_analyse_dirs_options), set by the init; a
                                    caller built against an older header passes a smaller
                                    size and gets the defaults of the fields it lacks */
    const aip_analyse_options *analyse; /* every directory's options; NULL: the defaults */
    long workers;                /* directories analysed at once; <= 0: half the online
                                    CPUs (at least 1, max_process_number's default);
                                    never more than the online CPUs nor than `n` */
    int processes;               /* 1: each directory in its own forked process, so that
                                    one's crash or memory blow-up cannot take the caller
                                    down (`aiprof analyse`); fork copies only the calling
                                    thread, so a program with other threads (an
                                    interpreter) had better use 0: threads of this
                                    process (workers 1: the calling thread itself) */
    int progress_fd;             /* >= 0 (a terminal): one progress bar rewritten in place
                                    there, a line above it for each directory that
                                    failed; -1 (the default): none */
    const char *progress_label;  /* the bar's words after "done/total"; NULL: "analysed" */
    aip_analyse_dirs_fn progress;  /* NULL: none */
    void *progress_arg;          /* passed to `progress` */
} aip_analyse_dirs_options;

/*! aip_analyse_dirs_options_init() : the defaults: struct_size set, default
 *  analysis options, workers 0 (half the CPUs), threads, no progress. */
AIP_API void aip_analyse_dirs_options_init(aip_analyse_dirs_options *options);

/*! aip_analyse_dirs() : aip_analyse_dir() on each of `dirs[0..n)`, `workers`
 *  at a time, started in the order given; one directory's failure does not
 *  stop the others.  `results` (n elements, the caller's) receives how each
 *  went.  `options` NULL: the defaults.  Thread-safety as aip_analyse_dir(): no
 *  directory may appear twice, nor be analysed elsewhere at the same time.
 *  @return AIP_OK when every directory was analysed; AIP_ERR_INVALID_ARG
 *  (nothing done) for NULL `dirs` or `results` with n > 0 or a struct_size
 *  too small; else the status of the first directory, in the order given,
 *  that was not analysed, with "DIR: its message" in aip_last_error(). */
AIP_API aip_status aip_analyse_dirs(const char *const *dirs, size_t n,
                                    const aip_analyse_dirs_options *options,
                                    aip_dir_result *results);

/*! Options of aip_cluster_run() (aip_cluster_options_init() first). */
typedef struct aip_cluster_options {
    size_t struct_size; /*!< sizeof(aip_cluster_options), set by aip_cluster_options_init();
                           a caller built against an older header passes a smaller size
                           and gets the defaults of the fields it lacks */
    long jobs;        /*!< rank directories analysed in parallel processes; <= 0: one at a
                           time in this process */
    int quiet;        /*!< no progress lines, no progress bar */
    int report_fd;    /*!< the verdict and the directories not used; -1: none */
    int progress_fd;  /*!< a terminal: one updating progress line there instead of a line
                           per directory on report_fd; -1: none */
    int html;         /*!< also cluster_analysis_output/cluster_report.html */
    size_t *incomplete; /*!< out (NULL: not wanted): the ranks of the job missing, truncated
                           or in directories that could not be read, 0 when the job is
                           complete (docs/CLUSTER.md) */
} aip_cluster_options;

/*! aip_cluster_options_init() : the defaults: struct_size set, one at a
 *  time, no report, no progress bar, no HTML. */
AIP_API void aip_cluster_options_init(aip_cluster_options *o);

/*! aip_cluster_run() : `aiprof cluster DIR`: find the rank result
 *  directories under `dir` (`*ascend_pt` holding profiler_info_{rank}.json,
 *  any depth up to 10), analyse those not analysed yet (aip_analyse_dirs():
 *  each in a forked process, `o->jobs` at a time; <= 0: one at a time in this
 *  process), and
 *  write `dir`/cluster_analysis_output/ as msprof-analyze's cluster_analyse
 *  does, from the ranks' per-rank summaries only (step_trace_time.csv and
 *  communication*.json, or analysis.db for a rank exported as databases):
 *  cluster_step_trace_time.csv, communication_group.json,
 *  cluster_communication.json, cluster_communication_matrix.json,
 *  cluster_analysis.db and, with `o->html`, cluster_report.html.  The
 *  verdict (slow ranks and slow links, with their numbers) and every
 *  directory not used, with the reason, go to `o->report_fd`.  `o` NULL:
 *  the defaults; `o->struct_size` 0: AIP_ERR_INVALID_ARG.  `bad_dirs` (may
 *  be NULL) receives the number of directories not used.  @return AIP_OK
 *  if the outputs were written; docs/CLUSTER.md. */
AIP_API aip_status aip_cluster_run(const char *dir, const aip_cluster_options *o,
                                   size_t *bad_dirs);

/*! aip_cluster_run_mpi() : aip_cluster_run() as one process of an
 *  MPI job (`mpirun -np K aiprof cluster --mpi DIR`): the rank directories
 *  are split across the K processes, each analyses and reads its share, and
 *  process 0 writes the same outputs a single process would, byte for byte,
 *  and the verdict to its `report_fd` (the others are quiet).  MPI comes
 *  from the plugin `plugin` (NULL: $AIPROF_CLUSTER_MPI or
 *  libaiprof_cluster_mpi.so on the library path), loaded only here: libaiprof
 *  never links MPI.  Every process returns process 0's status and
 *  `bad_dirs`; `process` (may be NULL) receives this process's number.
 *  Without the plugin or MPI: AIP_ERR_NOT_FOUND / AIP_ERR_UNSUPPORTED,
 *  naming what is missing.  docs/CLUSTER.md. */
AIP_API aip_status aip_cluster_run_mpi(const char *dir, const aip_cluster_options *o,
                                       size_t *bad_dirs, const char *plugin, int *process);

/*! aip_export_trace() : trace_view.json of a result directory's raw data,
 *  in `trace_format` (aip_trace_format), written to `path` (gzip when it
 *  ends in .gz is the caller's business: the text is plain JSON; with
 *  AIP_TRACE_PERFETTO the file is Perfetto's protobuf trace instead).  The
 *  result directory is not changed.  This is export_chrome_trace() in a
 *  form other than the one ASCEND_PROFILER_OUTPUT holds. */
AIP_API aip_status aip_export_trace(const char *result_dir, const char *path,
                                    unsigned trace_format);

/*! aip_export_memory_timeline() : torch's export_memory_timeline from a
 *  result directory's raw data; the format follows `path`'s ending: .html,
 *  .json, .json.gz or .raw.json.gz.  `device`: "cpu" (NULL), "npu:N",
 *  "cuda:N", or "auto" (the CPU if the framework recorded its memory, else
 *  the device that has records).  `records` (may be NULL) receives the number of memory records
 *  of that device.  Categories: docs/MEMORY.md. */
AIP_API aip_status aip_export_memory_timeline(const char *result_dir, const char *path,
                                              const char *device, uint64_t *records);

/*! aip_summarise() : a summary of a result directory (top ops by self time,
 *  step times, memory peak, dropped events, what was not collected): text
 *  to `fd` (-1: none) and, when `html_path` is given, one self-contained
 *  page. */
AIP_API aip_status aip_summarise(const char *result_dir, int fd, const char *html_path);

/*! Severity of an `aiprof advise` finding (docs/ADVISE.md "Severity"): the
 *  share of the mean step the finding puts at stake (info < 1% <= low <
 *  5% <= medium < 20% <= high), or the rule's own scale (memory). */
typedef enum aip_severity {
    AIP_SEVERITY_INFO = 0,
    AIP_SEVERITY_LOW = 1,
    AIP_SEVERITY_MEDIUM = 2,
    AIP_SEVERITY_HIGH = 3
} aip_severity;

/*! aip_advise() : `aiprof advise DIR`: run the rules of docs/ADVISE.md over
 *  a result directory's raw data and write the findings, ranked by severity
 *  then time at stake per step, to `fd` (-1: none) as text for a terminal,
 *  or as JSON when `json` is nonzero.  `*worst` (if given) receives the
 *  highest severity found, -1 when nothing was found. */
AIP_API aip_status aip_advise(const char *result_dir, int fd, int json, int *worst);

/*! aip_advise_dirs() : `aiprof advise` on several result directories (each
 *  of `dirs` a result directory, or a folder searched for `*ascend_pt` ones,
 *  as `aiprof cluster` searches): each advised, the ranks of one job judged
 *  across by `aiprof cluster`'s slow-rank and slow-link rules (a rank not
 *  analysed yet is analysed first), every finding ranked in one list.  Text
 *  or JSON (`json`) to `fd`; `*worst` as aip_advise().  A directory that
 *  cannot be advised is named in the output and fails the call. */
AIP_API aip_status aip_advise_dirs(const char *const *dirs, size_t n, int fd, int json,
                                   int *worst);

/*! aip_compare() : `aiprof compare BASE NEW`: step-time breakdown, ops (name
 *  and input shapes), device kernels, runtime API calls, memory peak and
 *  communication ops of two result directories side by side, each ranked by
 *  the change per step.  Changes below `threshold` (a share of BASE's mean
 *  step time; memory: of BASE's peak) are left out.  Text to `fd` (-1:
 *  none); every row (threshold applied) as CSV to `csv_path` and the same
 *  tables as one self-contained HTML page at `html_path` (each NULL: none).
 *  BASE and NEW may both be jobs (folders holding rank result directories):
 *  their ranks are matched by global rank and compared pair by pair — the
 *  per-rank step breakdown and each rank's top changes (text, HTML), every
 *  row per rank with a Rank column (CSV). */
AIP_API aip_status aip_compare(const char *base_dir, const char *new_dir, int fd,
                               const char *csv_path, const char *html_path, double threshold);

#ifdef __cplusplus
}
#endif
#endif /* AIPROF_H */
