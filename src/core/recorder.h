/*
 * recorder.h — per-thread event buffers and the raw writer thread.
 *
 * The hot path (record.c) writes fixed-layout records into the calling
 * thread's own buffer without locks, mallocs or syscalls.  A full buffer is
 * handed to the writer thread, which appends it to the raw file as one
 * EVENTS chunk and recycles it.  The number of buffers is capped
 * (buffer_cap_bytes); when none is free, events are dropped and counted.
 *
 * Concurrency contract:
 *  - aip_recording_generation (public, read-only) is 0 when nothing records, else the generation of the open
 *    trace.  Recording threads read it relaxed; a thread whose state has an
 *    older generation re-attaches (resets its buffer and stacks).
 *  - Each thread publishes the end of its last complete record in buf->used
 *    (release).  At trace end the stopper copies [0, used) of every attached
 *    thread's buffer under the pool lock; a record still being written at that
 *    moment is lost, never torn.  Buffers are never taken away from a live
 *    thread, so a late write can only land in its own buffer.
 */
#ifndef AIP_RECORDER_H
#define AIP_RECORDER_H

#include "aiprof.h"
#include "raw_format.h"

#include <stdatomic.h>
#include <stdint.h>

#define AIP_BUF_BYTES (512u * 1024u)
#define AIP_STACK_DEPTH 128

/* What the open trace records (bits of aip__rec_mask). */
enum {
    AIP_MASK_CPU = 1u << 0,      /* ops, annotations */
    AIP_MASK_MSTX = 1u << 1,     /* ranges, marks */
    AIP_MASK_SHAPES = 1u << 2,
    AIP_MASK_STACK = 1u << 3,
    AIP_MASK_MODULES = 1u << 4,
    AIP_MASK_MEMORY = 1u << 5,
    AIP_MASK_GC = 1u << 6,
    AIP_MASK_DOMAIN_FILTER = 1u << 7,
    AIP_MASK_FLOPS = 1u << 8,
    AIP_MASK_DEVICE = 1u << 9,   /* device activity (src/core/device.h) */
    AIP_MASK_COMM = 1u << 10     /* communication (src/core/comm.h) */
};

typedef struct aip__buf {
    struct aip__buf *next;
    uint64_t tid;
    uint32_t gen;
    uint32_t start;                /* first byte not yet written (queued buffers) */
    _Atomic uint32_t used;
    uint8_t data[] __attribute__((aligned(8)));
} aip__buf;

typedef struct aip__frame {
    uint64_t start;
    uint32_t name;
    uint32_t domain;
} aip__frame;

typedef struct aip__py_frame {
    uint64_t start;
    uint32_t name, module, id, parent;
} aip__py_frame;

/* An open op: its OP record as aip_op_end writes it (header and optional
 * fields made at the begin, the start in its place; the end filled in at
 * the end), so that the end is a copy: the code run for every op stays
 * short.  One cache line: the record's header holds its size. */
typedef struct aip__op_frame {
    uint64_t rec[8];   /* header, start, (end), optional fields */
} __attribute__((aligned(64))) aip__op_frame;

typedef struct aip__tstate {
    uint8_t *pos, *end;            /* write cursor in buf (owner only) */
    uint32_t gen;                  /* trace generation this state belongs to */
    uint32_t ann_depth, range_depth, op_depth, py_depth;
    /* A pop at depth 0 is misuse only if this thread pushed in this trace;
     * otherwise its push came before the trace started (not an error). */
    uint8_t ann_pushed, range_pushed, op_pushed, py_pushed;
    aip__buf *buf;
    uint64_t tid;
    _Atomic uint64_t dropped;      /* written by the owner, read by the stopper */
    _Atomic uint64_t unbalanced;   /* pops without push on this thread */
    uint32_t thread_name;          /* string id, re-emitted in every trace */
    uint8_t name_pending;          /* its name is owed to this trace (pool lock) */
    uint32_t registry_epoch;
    uint32_t flushed;              /* bytes of buf already written (pool lock) */
    struct aip__tstate *next;
    aip__frame ann[AIP_STACK_DEPTH];
    aip__frame range[AIP_STACK_DEPTH];
    aip__op_frame op[AIP_STACK_DEPTH];
    aip__py_frame py[AIP_STACK_DEPTH];
} aip__tstate;

/* Where the calling thread is in the recorder, for a signal handler that
 * interrupts it on the same thread (an OSRT wrapper run by the handler):
 * between a reserve and its commit (aip__tls_writing), or in a section
 * that takes the pool lock or allocates (aip__tls_inside, a depth).  Such
 * a handler must not record: it would write over the record being made,
 * or wait for a lock its own thread holds.  Plain thread-local stores with
 * compiler-only fences: only the thread itself (and its handlers) reads
 * them. */
extern __thread uint8_t aip__tls_writing __attribute__((tls_model("initial-exec")));
extern __thread uint32_t aip__tls_inside __attribute__((tls_model("initial-exec")));
#define aip__signal_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The thread may record now: it is not inside the recorder (above). */
static inline int aip__tls_may_record(void)
{
    return !aip__tls_writing && !aip__tls_inside;
}

extern uint32_t aip__rec_mask_v;   /* what the open trace records; set before the generation */
#define aip__rec_mask (__atomic_load_n(&aip__rec_mask_v, __ATOMIC_RELAXED))
extern __thread aip__tstate *aip__tls __attribute__((tls_model("initial-exec")));

/* aip__attach() : slow path — make the calling thread's state current for
 * generation `gen`.  NULL if it cannot (out of memory). */
aip__tstate *aip__attach(uint32_t gen);

/* aip__tls_state() : the calling thread's state, created if needed (not
 * attached to any trace). */
aip__tstate *aip__tls_state(void);

/* aip__reserve_slow() : swap a full buffer; NULL when the event is dropped
 * (counted) or belongs to a trace that already ended.  `meta`: the record
 * describes what others name (a device, a queue, a group), is not an
 * event, and is not counted when it cannot be written: the event that
 * needed it is, once, so that recorded + dropped is what was emitted. */
void *aip__reserve_slow_as(aip__tstate *t, size_t n, int meta);
#define aip__reserve_slow(t, n) aip__reserve_slow_as(t, n, 0)

/* aip__pyfunc_close_open() : PYFUNC records ending the Python calls still
 * open on `t` at `end` (innermost first) into `out`; @return the bytes
 * written.  For the stopper, once recording is off (the owner no longer
 * pushes or pops). */
size_t aip__pyfunc_close_open(const aip__tstate *t, uint64_t end, uint8_t *out, size_t cap);
/* aip__pyfunc_put() : frame `f` as one PYFUNC record ending at `end` (not
 * before its start) with `flags`, at `out`; returns its size. */
size_t aip__pyfunc_put(const aip__py_frame *f, uint8_t flags, uint64_t end, uint8_t *out);

static inline aip__tstate *aip__current(void)
{
    uint32_t g = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    if (__builtin_expect(!g, 1))
        return NULL;
    aip__tstate *t = aip__tls;
    if (__builtin_expect(!t || t->gen != g, 0))
        t = aip__attach(g);
    return t;
}

/* aip__reserve() : room for an `n`-byte record at the thread's cursor,
 * to be finished by aip__commit(); NULL when it is dropped (counted). */
static inline void *aip__reserve(aip__tstate *t, size_t n)
{
    aip__tls_writing = 1;
    aip__signal_fence();
    if (__builtin_expect(t->pos + n <= t->end, 1))
        return t->pos;
    return aip__reserve_slow(t, n);
}

/* aip__reserve_meta() : aip__reserve() for a description (see
 * aip__reserve_slow_as): not counted as dropped when it cannot be had. */
static inline void *aip__reserve_meta(aip__tstate *t, size_t n)
{
    aip__tls_writing = 1;
    aip__signal_fence();
    if (__builtin_expect(t->pos + n <= t->end, 1))
        return t->pos;
    return aip__reserve_slow_as(t, n, 1);
}

/* The 8-byte header every record starts with (docs/RAW_FORMAT.md). */
static inline void aip__rec_set_header(aip__rec_header *h, uint8_t kind, uint8_t flags,
                                       size_t size, uint32_t name)
{
    h->kind = kind;
    h->flags = flags;
    h->size = (uint16_t)size;
    h->name = name;
}

/* aip__publish() : the `n` bytes at the cursor are a complete record. */
static inline void aip__publish(aip__tstate *t, size_t n)
{
    t->pos += n;
    atomic_store_explicit(&t->buf->used, (uint32_t)(t->pos - t->buf->data),
                          memory_order_release);
}

/* aip__commit() : the record aip__reserve() made room for is complete. */
static inline void aip__commit(aip__tstate *t, size_t n)
{
    aip__publish(t, n);
    aip__signal_fence();
    aip__tls_writing = 0;
}

struct aip__flight_counts;

/* Information written into the raw file's INFO chunk, and the start's
 * file-system work.  start() does none of it: creating the raw file (and
 * whatever `prepare` creates: its directory, the trace log) costs several
 * directory-entry creations, more than torch.profiler's whole start(), so
 * the writer thread does it before its first write (writer.c: a full
 * buffer, the first snapshot, or the stop); events recorded meanwhile wait
 * in the buffers.  A failure there is the writer's write
 * error: reported once, the events counted as dropped. */
typedef struct aip__trace_info {
    const char *raw_path;
    const char *hostname;
    const char *program;
    size_t cap_bytes;
    uint64_t max_bytes;         /* size cap of the raw file, 0 = none */
    uint32_t rec_mask;
    aip__clock_pair start;      /* the trace's first clock sync point */
    void (*prepare)(void *arg); /* run first on the writer thread; NULL: none */
    void *prepare_arg;
    /* Flight recorder (flight.h): the ring's directory, NULL for a normal
     * trace (raw_path is then unused); a dump's result directory made
     * (with FRAMEWORK/) and named in `out` by dump_dir, and told, with its
     * counts, to dump_done; both run on the writer thread. */
    const char *ring_dir;
    uint64_t ring_bytes;
    uint64_t window_ticks;
    aip_status (*dump_dir)(void *arg, char *out, size_t cap);
    void (*dump_done)(void *arg, const char *dir, const struct aip__flight_counts *counts);
    void *dump_arg;
} aip__trace_info;

/* Totals of a finished trace. */
typedef struct aip__trace_totals {
    uint64_t recorded;
    uint64_t dropped;
    uint64_t unbalanced;
    uint64_t bytes;
    int io_error;               /* errno of a failed raw-file write, 0 if none */
    int size_capped;            /* writing stopped at the size limit */
    aip__clock_pair start, end;
} aip__trace_totals;

/* aip__recorder_begin() : start the writer (which creates the raw file, see
 * aip__trace_info) and turn recording on; `*start` is info->start.
 * AIP_ERR_STATE if a trace is open, AIP_ERR_NOMEM if no thread starts. */
aip_status aip__recorder_begin(const aip__trace_info *info, aip__clock_pair *start);

/* aip__recorder_end() : turn recording off, flush every thread's data, write
 * STATS/CLOCK/END and close.  AIP_ERR_IO if data could not be written (it is
 * counted as dropped). */
aip_status aip__recorder_end(aip__trace_totals *totals);

/* Events dropped so far in the open trace (0 if none is open). */
uint64_t aip__recorder_live_dropped(void);

/* Emit a complete annotation on the calling thread (ProfilerStep#N). */
void aip__emit_annotation(uint32_t name, uint64_t start, uint64_t end);

/* aip_range_start() with interned texts (0: domain "default", no message),
 * for callers that hold ids, not texts (the NVTX collector). */
uint64_t aip__range_start_id(aip_string_id domain, aip_string_id message);

/* Set up the clock and the per-thread state, and install the fork handlers
 * (fork_handlers.h); idempotent. */
void aip__recorder_init(void);

#endif
