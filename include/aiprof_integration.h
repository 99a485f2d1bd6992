/*
 * aiprof_integration.h — libaiprof's hooks for the code that integrates it
 * with a runtime: aiprof's own Python package (python/_C), PyTorch adapter
 * (adapters/torch) and `aiprof run` preload (src/preload).
 *
 * A program that profiles itself needs only aiprof.h.  What is here lets a
 * host feed what only it can see (Python frames, GC passes, what a memory
 * block holds, which threads to leave out) and drive sessions the way
 * torch_npu does (dynamic profiling, external control).  It is built with
 * the library, not installed: every integrator lives in this tree, and
 * these calls change with them.  Beyond the ABI note in aiprof.h (exported
 * symbols keep their signatures within a major version) there is no
 * stability promise.
 *
 * Threads: as in aiprof.h, section by section below.
 */
#ifndef AIPROF_INTEGRATION_H
#define AIPROF_INTEGRATION_H

#include "aiprof.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Sessions driven by a host.  Same thread rules as the session calls in
 * aiprof.h: one thread at a time per session.
 * ------------------------------------------------------------------- */

/*! aip_session_step_started() : the current step begins now rather than
 *  when aip_session_start()/aip_session_step() returned.  A host that
 *  switches its own collectors on once the session began a trace (loading
 *  hooks, labelling known tensors, replaying the running Python frames) calls it
 *  when they are on: that set-up is then not timed as part of the step, and
 *  frames found running start before the step that runs inside them.  No
 *  effect without a schedule or while no trace records.  AIP_ERR_STATE
 *  before start. */
AIP_API aip_status aip_session_step_started(aip_session *session);

/*! aip_session_set_step_offset() : ProfilerStep# numbers are step + offset
 *  (dynamic profiling continues the training step count).  Before start. */
AIP_API aip_status aip_session_set_step_offset(aip_session *session, int64_t offset);

/* ---------------------------------------------------------------------
 * What only the host sees.  Recording calls: thread-safe, never waiting
 * for I/O, not async-signal-safe, as in aiprof.h.
 * ------------------------------------------------------------------- */

/*! aip_thread_pause() : while `paused` is non-zero the calling thread's
 *  framework ops and annotations are not recorded, in this trace and later
 *  ones, until it calls aip_thread_pause(0); other threads are unaffected
 *  (torch_npu's disable_profiler_in_child_thread).  Its mstx ranges and
 *  marks, Python calls and memory events are still recorded. */
AIP_API void aip_thread_pause(int paused);

/*! Per-thread additions to the trace's op options (torch_npu's
 *  enable_profiler_in_child_thread(record_shapes=..., with_flops=...)). */
enum {
    AIP_THREAD_RECORD_SHAPES = 1u << 0, /* keep input shapes/dtypes of this thread's ops */
    AIP_THREAD_WITH_FLOPS = 1u << 1     /* keep FLOPs estimates (implies shapes) */
};

/*! aip_thread_op_options() : the calling thread's ops keep what `options`
 *  (AIP_THREAD_* bits) names even when the trace's config does not ask for
 *  it, in this trace and later ones, until called again (0: the config
 *  alone decides).  The host fills the fields in aip_op_info as usual. */
AIP_API void aip_thread_op_options(unsigned options);

/*! aip_pyfunc_push() / aip_pyfunc_pop() : a Python function call (with_stack)
 *  or an nn.Module forward (with_modules; `module` names it, e.g.
 *  "nn.Module: Linear_0") on the calling thread, shown as python_function
 *  events with "Python id" / "Python parent id".  The library numbers the
 *  calls and links each to the enclosing one.  Recorded when with_stack or
 *  with_modules is on. */
AIP_API void aip_pyfunc_push(aip_string_id name, aip_string_id module);
/* Closes the calling thread's innermost aip_pyfunc_push(). */
AIP_API void aip_pyfunc_pop(void);
/*! aip_pyfunc_push_running() : aip_pyfunc_push() for a call that was
 *  already running when the host began following this thread's calls (the
 *  frames it replays at the trace start).  Its start is no later than that
 *  of anything the thread has open in the trace (annotations, mstx ranges,
 *  ops), so the call encloses them instead of beginning inside them. */
AIP_API void aip_pyfunc_push_running(aip_string_id name, aip_string_id module);

/* Memory categories of torch's memory timeline. */
typedef enum aip_memory_category {
    AIP_MEM_PARAMETER = 0,
    AIP_MEM_OPTIMIZER_STATE = 1,
    AIP_MEM_INPUT = 2,
    AIP_MEM_TEMPORARY = 3,
    AIP_MEM_ACTIVATION = 4,
    AIP_MEM_GRADIENT = 5,
    AIP_MEM_AUTOGRAD_DETAIL = 6,
    AIP_MEM_UNKNOWN = 7
} aip_memory_category;

/*! aip_memory_label() : the framework says what the live block at `address`
 *  (of `bytes`) holds, e.g. a module parameter or an optimizer state tensor.
 *  The label overrides what the analyser would derive; a block allocated
 *  before the trace appears as PREEXISTING of `bytes`.  Recorded while
 *  profile_memory is on (docs/MEMORY.md). */
AIP_API void aip_memory_label(uint64_t address, int64_t bytes, aip_device_type device_type,
                              int device_index, aip_memory_category category);

/*! aip_gc_event() : a garbage-collection pass [start_ns, end_ns] measured
 *  with aip_now_ns(); kept when longer than gc_detect_threshold_ms.
 *  Recorded while gc_detect_threshold_ms >= 0. */
AIP_API void aip_gc_event(uint64_t start_ns, uint64_t end_ns);

/*! aip_set_process_name() : the name shown for this process in traces
 *  (default: the program name; the Python package sets "Python").  Copied;
 *  thread-safe (under a lock), for the traces that begin afterwards. */
AIP_API void aip_set_process_name(const char *name);

/* ---------------------------------------------------------------------
 * Dynamic profiling: collectors outside the C library.  Same thread rules
 * as the aip_dynamic_*() calls in aiprof.h (one lock, any thread).
 * ------------------------------------------------------------------- */

/*! Called when a dynamic collection starts (before its first step) and
 *  when it ends; `config` is the collection's configuration.  Collectors
 *  outside the C library (the Python package) switch themselves on/off here. */
typedef void (*aip_dynamic_hook)(const aip_config *config, aip_session *session, int starting,
                                 void *user_data);

/*! aip_dynamic_current_step() : @return the number of aip_dynamic_step()
 *  calls since aip_dynamic_init() (the training step count that dynamic
 *  collections' ProfilerStep# numbers continue). */
AIP_API int64_t aip_dynamic_current_step(void);

/*! aip_dynamic_set_hook() : call `hook(config, session, starting,
 *  user_data)` when a dynamic collection starts (before its first step) and
 *  when it ends; NULL removes it.  The hook runs on the thread that called
 *  aip_dynamic_step()/aip_dynamic_start()/aip_dynamic_shutdown(), while the
 *  dynamic lock is held: it must not call aip_dynamic_*() (that thread would
 *  wait on itself). */
AIP_API void aip_dynamic_set_hook(aip_dynamic_hook hook, void *user_data);

/* ---------------------------------------------------------------------
 * External control (what `aiprof run` injects into a program).
 * ------------------------------------------------------------------- */

/*! aip_external_control() : hand profiling decisions to an outside
 *  controller.  While set, sessions the program creates itself do not
 *  record: their start/stop succeed and each aip_session_step() calls
 *  `on_program_step(user_data)` instead, so the controller turns the
 *  program's own step calls into its steps.  `controller_session` (may be
 *  NULL) and sessions of dynamic profiling are exempt.  NULL on_program_step
 *  ends external control.  Thread-safe (under the session lock);
 *  `on_program_step` runs on the thread that calls aip_session_step(). */
AIP_API void aip_external_control(void (*on_program_step)(void *user_data), void *user_data,
                                  aip_session *controller_session);

/* ---------------------------------------------------------------------
 * Communication collectors (src/collect/mpi's PMPI wrappers, the Python
 * package's torch.distributed capture): the public face of
 * src/core/comm.h, for collectors that live outside libaiprof.  Recording
 * calls: thread-safe, never waiting for I/O, as in aiprof.h.
 * ------------------------------------------------------------------- */

#define AIP_COMM_NO_GROUP UINT32_MAX /* aip_comm_group() failed / no group */
#define AIP_COMM_NO_RANK UINT32_MAX  /* no peer, no root, rank unknown */

/* Values of aip_comm_op_info.kind and .lib (raw format 1.4's COMM_OP). */
enum { AIP_COMM_OP_COLLECTIVE = 1, AIP_COMM_OP_SEND = 2, AIP_COMM_OP_RECV = 3,
       AIP_COMM_OP_SENDRECV = 4 };
enum { AIP_COMM_LIB_OTHER = 0, AIP_COMM_LIB_MPI = 1, AIP_COMM_LIB_GLOO = 2,
       AIP_COMM_LIB_NCCL = 3, AIP_COMM_LIB_HCCL = 4 };

typedef struct aip_comm_op_info {
    const char *name;      /* "MPI_Allreduce", "allreduce" (copied) */
    uint64_t start, end;   /* aip_comm_ticks() at the call and at its completion */
    uint32_t group;        /* from aip_comm_group(), AIP_COMM_NO_GROUP = none */
    uint32_t peer, root;   /* global (world) ranks, AIP_COMM_NO_RANK = none */
    uint64_t bytes;        /* this rank's payload */
    uint64_t count;        /* elements of `dtype` */
    uint64_t seq;          /* collectives: aip_comm_next_seq(group) at the call */
    const char *dtype;     /* "MPI_FLOAT", "float32" (copied); NULL = unknown */
    int32_t tag;           /* point-to-point tag, -1 = none */
    uint8_t kind;          /* AIP_COMM_OP_* */
    uint8_t lib;           /* AIP_COMM_LIB_* */
    uint8_t nonblocking;   /* started by a non-blocking call, ended at its completion */
} aip_comm_op_info;

/*! aip_comm_recording() : nonzero while a trace records communication
 *  (CPU activity).  Call it after AIP_RECORDING() said yes: that inline
 *  load is the whole cost of a wrapper while nothing records. */
AIP_API int aip_comm_recording(void);

/*! aip_comm_set_drain() : `drain` is called when a trace stops, on the
 *  stopping thread, while the trace still records: a collector whose
 *  operations are recorded by completion callbacks on other threads (the
 *  torch adapter: a Work's future) waits there, bounded, for the callbacks
 *  of operations that have already completed, so that an op that ended
 *  inside the trace is not lost to the race with the stop.  NULL removes
 *  it; one drain per process. */
AIP_API void aip_comm_set_drain(void (*drain)(void));

/*! aip_comm_ticks() : the recording clock, in the ticks that
 *  aip_comm_op_info's start and end take. */
AIP_API uint64_t aip_comm_ticks(void);

/*! aip_comm_ticks_from_ns() : a CLOCK_MONOTONIC time in ns (aip_now_ns(),
 *  Python's time.monotonic_ns()) as ticks. */
AIP_API uint64_t aip_comm_ticks_from_ns(uint64_t monotonic_ns);

/*! aip_comm_group() : register a communicator / process group once per
 *  process under the collector's `key` for it: its name, this process's
 *  rank in it, its size and its members' global ranks (`ranks[i]` = global
 *  rank of group rank i, NULL if unknown; copied).  The same key gives the
 *  same id.  @return its id, or AIP_COMM_NO_GROUP (logged once). */
AIP_API uint32_t aip_comm_group(uint64_t key, const char *name, uint32_t my_rank,
                                uint32_t n_ranks, const uint32_t *ranks);

/*! aip_comm_group_forget() : the group under `key` was freed; the key may
 *  name another group later. */
AIP_API void aip_comm_group_forget(uint64_t key);

/*! aip_comm_next_seq() : the group's next collective sequence number (from
 *  0): the n-th collective of a group is the same operation on every rank. */
AIP_API uint64_t aip_comm_next_seq(uint32_t group);

/*! aip_comm_op() : record one operation on the calling thread. */
AIP_API void aip_comm_op(const aip_comm_op_info *op);

/*! aip_set_rank() : this process's global rank, once the communication
 *  library knows it (MPI_Init, torch.distributed): the rank of
 *  profiler_info_{rank}.json and of the results of traces that begin
 *  afterwards, over RANK / OMPI_COMM_WORLD_RANK / PMI_RANK.  A negative
 *  rank goes back to the environment.  Thread-safe. */
AIP_API void aip_set_rank(int rank);

/* ---------------------------------------------------------------------
 * Op rows: a result directory's ops and annotations as torch's profiler
 * results show them (the Python package's events(), key_averages(),
 * export_stacks(), aiprof.mindspore's layout), from the raw data through
 * the analyser's own load and derive (src/result/op_rows.c), in one call.
 * ------------------------------------------------------------------- */

/* Values of aip_op_row.kind. */
enum { AIP_OP_ROW_OP = 0,         /* an op (trace_view.json's cpu_op) */
       AIP_OP_ROW_ANNOTATION = 1, /* record_function / a step (user_annotation) */
       AIP_OP_ROW_MEMORY = 2 };   /* a memory record outside every row of its thread */

/* One row.  Strings are indices into aip_op_rows.strings, -1 = none. */
typedef struct aip_op_row {
    int64_t start_ns;       /* from aip_op_rows.base_ns */
    int64_t dur_ns, self_ns;  /* self: dur less the children's durations */
    int64_t tid;
    int64_t sequence_nr;    /* -1 when none */
    int64_t fwd_thread;     /* 0 when none */
    int64_t flops;          /* 0 when none */
    int64_t memory, self_memory; /* bytes of the memory records inside, net */
    int32_t parent;         /* row index (parents precede children), -1 = none */
    int32_t name, shapes, types, stack, module;
    uint8_t kind;           /* AIP_OP_ROW_* */
} aip_op_row;

typedef struct aip_op_rows {
    aip_op_row *rows;       /* by start, longer first on equal starts */
    size_t n;
    const char **strings;   /* the texts rows name, as recorded (UTF-8 unchecked) */
    size_t *string_lens;
    size_t n_strings;
    int64_t base_ns;        /* wall-clock ns of start 0: the earliest time recorded,
                               rounded down to a whole second (Kineto's base) */
    void *internal;
} aip_op_rows;

/*! aip_result_op_rows() : load `result_dir`'s raw data (FRAMEWORK/, as
 *  aip_analyse_dir() does, writing nothing) and make its rows with
 *  torch.autograd.profiler's rules: the slices trace_view.json draws of
 *  ops and annotations, less the `n_filtered` names in `filtered`; per
 *  thread id, a row is the child of the innermost earlier row that ends no
 *  earlier; a row that is the only child of one of the same name is folded
 *  into it; each memory record counts for the innermost row around it on
 *  its thread and that row's ancestors (outside every row it becomes an
 *  AIP_OP_ROW_MEMORY row of duration 0).  `quiet`: no warnings on stderr.
 *  Free *out with aip_op_rows_free() (also after an error). */
AIP_API aip_status aip_result_op_rows(const char *result_dir, const char *const *filtered,
                                      size_t n_filtered, int quiet, aip_op_rows *out);
AIP_API void aip_op_rows_free(aip_op_rows *rows);

/* ---------------------------------------------------------------------
 * Injection: how `aiprof run` lets a runtime load libaiprof as its tool.
 * ------------------------------------------------------------------- */

/*! aip_injection_var() : the n-th (from 0) environment variable through
 *  which a runtime loads its tool library, for the collectors built into
 *  this libaiprof ("CUDA_INJECTION64_PATH" for the CUDA back end,
 *  "NVTX_INJECTION64_PATH" for NVTX), or NULL past the last.  A launcher
 *  sets it to libaiprof's path unless the user set it; `*off` (when `off`
 *  is not NULL) gets the variable that, set to "0", says to leave it unset
 *  ("AIPROF_NVTX"), or NULL.  Thread-safe; the strings are static. */
AIP_API const char *aip_injection_var(size_t n, const char **off);

#ifdef __cplusplus
}
#endif
#endif /* AIPROF_INTEGRATION_H */
