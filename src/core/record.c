/*
 * record.c — the public recording calls (the hot path).
 *
 * Each call: one relaxed load of the recording generation (all that runs
 * when nothing records), a TSC read, and a fixed-layout record written into
 * the thread's own buffer.  Push/pop pairs are emitted as one complete
 * record at pop time, from a per-thread stack, which halves the bytes and
 * lets the analyser skip begin/end matching.
 */
#include "aiprof.h"
#include "aiprof_integration.h"
#include "clock.h"
#include "domain_filter.h"
#include "recorder.h"
#include "intern.h"

#include <string.h>

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

static _Atomic uint64_t next_range_id = 1;
static aip_string_id default_domain_id;

static aip_string_id default_domain(void)
{
    aip_string_id id = __atomic_load_n(&default_domain_id, __ATOMIC_RELAXED);
    if (!id) {
        id = aip_intern("default");
        __atomic_store_n(&default_domain_id, id, __ATOMIC_RELAXED);
    }
    return id;
}

static inline aip_string_id domain_or_default(aip_string_id d) { return d ? d : default_domain(); }

static inline aip_string_id intern_opt(const char *s) { return s && *s ? aip_intern(s) : 0; }

int aip_is_recording(void) { return AIP_RECORDING(); }

uint64_t aip_now_ns(void) { return aip__mono_ns(); }

/* ---- annotations (record_function) ---------------------------------- */

/* aip_thread_pause(): per thread and across traces, so not in aip__tstate
 * (which belongs to one trace). */
static __thread int thread_paused __attribute__((tls_model("initial-exec")));

void aip_thread_pause(int paused) { thread_paused = paused != 0; }

/* aip_thread_op_options(), as AIP_MASK_* bits ORed into the trace's mask
 * for this thread's op fields. */
static __thread uint32_t thread_op_mask __attribute__((tls_model("initial-exec")));

void aip_thread_op_options(unsigned options)
{
    uint32_t m = 0;
    if (options & (AIP_THREAD_RECORD_SHAPES | AIP_THREAD_WITH_FLOPS))
        m |= AIP_MASK_SHAPES;
    if (options & AIP_THREAD_WITH_FLOPS)
        m |= AIP_MASK_FLOPS;
    thread_op_mask = m;
}

void aip_annotation_push_id(aip_string_id name)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_CPU) || UNLIKELY(thread_paused))
        return;
    t->ann_pushed = 1;
    if (UNLIKELY(t->ann_depth >= AIP_STACK_DEPTH)) {
        t->ann_depth++; /* keep pairing; the deep frame is dropped at pop */
        return;
    }
    aip__frame *f = &t->ann[t->ann_depth++];
    f->name = name;
    f->start = aip__ticks();
}

void aip_annotation_push(const char *name)
{
    if (aip_is_recording())
        aip_annotation_push_id(aip_intern(name));
}

static inline void emit_span(aip__tstate *t, uint8_t kind, uint32_t name, uint64_t start,
                             uint64_t end)
{
    aip__rec_span *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, kind, 0, sizeof *r, name);
    r->start = start;
    r->end = end;
    aip__commit(t, sizeof *r);
}

void aip_annotation_pop(void)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_CPU) || UNLIKELY(thread_paused))
        return;
    if (UNLIKELY(t->ann_depth == 0)) {
        if (t->ann_pushed)
            atomic_fetch_add_explicit(&t->unbalanced, 1, memory_order_relaxed);
        return;
    }
    uint32_t d = --t->ann_depth;
    if (UNLIKELY(d >= AIP_STACK_DEPTH)) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t end = aip__ticks();
    emit_span(t, AIP_REC_ANNOTATION, t->ann[d].name, t->ann[d].start, end);
}

/* Used by the session for ProfilerStep#N, whose start it keeps itself. */
void aip__emit_annotation(aip_string_id name, uint64_t start, uint64_t end)
{
    aip__tstate *t = aip__current();
    if (t)
        emit_span(t, AIP_REC_ANNOTATION, name, start, end);
}

/* ---- mstx ranges and marks ------------------------------------------ */

static inline int mstx_on(aip_string_id domain)
{
    uint32_t m = aip__rec_mask;
    if (!(m & AIP_MASK_MSTX))
        return 0;
    return !(m & AIP_MASK_DOMAIN_FILTER) || aip__domain_allowed(domain);
}

void aip_range_push_id(aip_string_id domain, aip_string_id message)
{
    aip__tstate *t = aip__current();
    if (!t)
        return;
    domain = domain_or_default(domain);
    t->range_pushed = 1;
    if (UNLIKELY(t->range_depth >= AIP_STACK_DEPTH)) {
        t->range_depth++;
        return;
    }
    aip__frame *f = &t->range[t->range_depth++];
    /* A filtered range still takes a stack slot so that pops stay paired;
     * domain 0 marks it (real domains are never 0). */
    f->name = message;
    f->domain = mstx_on(domain) ? domain : 0;
    f->start = aip__ticks();
}

void aip_range_push(const char *domain, const char *message)
{
    if (aip_is_recording())
        aip_range_push_id(intern_opt(domain), aip_intern(message));
}

void aip_range_pop(void)
{
    aip__tstate *t = aip__current();
    if (!t)
        return;
    if (UNLIKELY(t->range_depth == 0)) {
        if (t->range_pushed)
            atomic_fetch_add_explicit(&t->unbalanced, 1, memory_order_relaxed);
        return;
    }
    uint32_t d = --t->range_depth;
    if (UNLIKELY(d >= AIP_STACK_DEPTH)) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    aip__frame *f = &t->range[d];
    if (!f->domain)
        return; /* filtered out by domain or mstx off */
    uint64_t end = aip__ticks();
    aip__rec_range *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_RANGE, 0, sizeof *r, f->name);
    r->start = f->start;
    r->end = end;
    r->domain = f->domain;
    r->reserved = 0;
    aip__commit(t, sizeof *r);
}

uint64_t aip__range_start_id(aip_string_id domain, aip_string_id message)
{
    aip__tstate *t = aip__current();
    if (!t)
        return 0;
    aip_string_id d = domain_or_default(domain);
    if (!mstx_on(d))
        return 0;
    aip__rec_range_start *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return 0;
    uint64_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
    aip__rec_set_header(&r->h, AIP_REC_RANGE_START, 0, sizeof *r, message);
    r->ts = aip__ticks();
    r->range_id = id;
    r->domain = d;
    r->reserved = 0;
    aip__commit(t, sizeof *r);
    return id;
}

uint64_t aip_range_start(const char *domain, const char *message)
{
    if (!aip_is_recording())
        return 0;
    return aip__range_start_id(intern_opt(domain), aip_intern(message));
}

void aip_range_end(uint64_t range_id)
{
    if (!range_id)
        return;
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_MSTX))
        return;
    aip__rec_range_end *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_RANGE_END, 0, sizeof *r, 0);
    r->ts = aip__ticks();
    r->range_id = range_id;
    aip__commit(t, sizeof *r);
}

void aip_mark_id(aip_string_id domain, aip_string_id message)
{
    aip__tstate *t = aip__current();
    if (!t)
        return;
    domain = domain_or_default(domain);
    if (!mstx_on(domain))
        return;
    aip__rec_mark *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_MARK, 0, sizeof *r, message);
    r->ts = aip__ticks();
    r->domain = domain;
    r->reserved = 0;
    aip__commit(t, sizeof *r);
}

void aip_mark(const char *domain, const char *message)
{
    if (aip_is_recording())
        aip_mark_id(intern_opt(domain), aip_intern(message));
}

/* ---- framework ops ---------------------------------------------------- */

/* A text given instead of its id (aip_op_info allows either): interned
 * here, apart, so that the path of the adapters, which pass ids, stays
 * short. */
static __attribute__((noinline, cold)) aip_string_id intern_text(const char *s)
{
    return intern_opt(s);
}

/* The OP record of `op` into frame `f`, start and end left to the end:
 * the optional fields in flag order (docs/RAW_FORMAT.md). */
static inline void op_record(aip__op_frame *f, const aip_op_info *op, uint32_t m,
                             uint8_t extra)
{
    uint8_t *r = (uint8_t *)f->rec, *q = r + sizeof(aip__rec_span);
    aip_string_id name = op->name_id ? op->name_id : intern_text(op->name);
    uint8_t flags = (uint8_t)(extra | (op->is_backward ? AIP_OPF_BACKWARD : 0));
    if (op->sequence_number >= 0) {
        memcpy(q, &op->sequence_number, 8);
        q += 8;
        flags |= AIP_OPF_SEQ;
    }
    if (op->fwd_thread_id) {
        memcpy(q, &op->fwd_thread_id, 8);
        q += 8;
        flags |= AIP_OPF_FWD;
    }
    if ((m & AIP_MASK_SHAPES) && (op->input_shapes || op->input_dtypes || op->input_shapes_id ||
                                  op->input_dtypes_id)) {
        uint32_t ids[2] = {op->input_shapes_id ? op->input_shapes_id
                                               : intern_text(op->input_shapes),
                           op->input_dtypes_id ? op->input_dtypes_id
                                               : intern_text(op->input_dtypes)};
        memcpy(q, ids, 8);
        q += 8;
        flags |= AIP_OPF_SHAPES;
    }
    uint32_t ctx[2] = {0, 0};
    if (m & AIP_MASK_STACK)
        ctx[0] = op->call_stack_id ? op->call_stack_id : intern_text(op->call_stack);
    if (m & AIP_MASK_MODULES)
        ctx[1] = op->module_hierarchy_id ? op->module_hierarchy_id
                                         : intern_text(op->module_hierarchy);
    if (ctx[0] || ctx[1]) {
        memcpy(q, ctx, 8);
        q += 8;
        flags |= AIP_OPF_STACK;
    }
    if ((m & AIP_MASK_FLOPS) && op->flops) {
        memcpy(q, &op->flops, 8);
        q += 8;
        flags |= AIP_OPF_FLOPS;
    }
    aip__rec_set_header((aip__rec_header *)r, AIP_REC_OP, flags, (size_t)(q - r), name);
}

static inline void op_begin(const aip_op_info *op, uint8_t extra)
{
    aip__tstate *t = aip__current();
    if (!t || !op || !(aip__rec_mask & AIP_MASK_CPU) || UNLIKELY(thread_paused))
        return;
    t->op_pushed = 1;
    uint32_t d = t->op_depth++;
    if (UNLIKELY(d >= AIP_STACK_DEPTH))
        return; /* keep pairing; the deep frame is dropped at the end */
    aip__op_frame *f = &t->op[d];
    op_record(f, op, aip__rec_mask | thread_op_mask, extra);
    f->rec[1] = aip__ticks();
}

void aip_op_begin(const aip_op_info *op) { op_begin(op, 0); }

/* A record_function scope that carries an op's context (the call stack
 * with_stack captured where it opened, the module hierarchy): an OP record
 * flagged AIP_OPF_ANNOTATION, which the reader turns into the annotation
 * it is (docs/RAW_FORMAT.md).  Its sequence number, shapes and flops are
 * not an annotation's: not written. */
void aip_annotation_begin(const aip_op_info *op)
{
    if (!op)
        return;
    aip_op_info a = *op;
    a.sequence_number = -1;
    a.fwd_thread_id = 0;
    a.input_shapes = a.input_dtypes = NULL;
    a.input_shapes_id = a.input_dtypes_id = 0;
    a.flops = 0;
    a.is_backward = 0;
    op_begin(&a, AIP_OPF_ANNOTATION);
}

void aip_annotation_end(void) { aip_op_end(); }

/* The last record of a buffer, too close to its end for the whole frame:
 * its optional fields alone. */
static __attribute__((noinline, cold)) void put_short(uint64_t *w, const uint64_t *rec,
                                                      uint32_t size)
{
    memcpy(w + 3, rec + 3, size - 24);
}

void aip_op_end(void)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_CPU) || UNLIKELY(thread_paused))
        return;
    if (UNLIKELY(t->op_depth == 0)) {
        if (t->op_pushed)
            atomic_fetch_add_explicit(&t->unbalanced, 1, memory_order_relaxed);
        return;
    }
    uint32_t d = --t->op_depth;
    if (UNLIKELY(d >= AIP_STACK_DEPTH)) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t end = aip__ticks();
    const aip__op_frame *f = &t->op[d];
    aip__rec_header h;
    memcpy(&h, f->rec, sizeof h);
    uint32_t size = h.size;
    uint8_t *p = aip__reserve(t, size);
    if (UNLIKELY(!p))
        return;
    /* The words after the fixed part: all five where the buffer has room
     * past the record (what lies beyond `size` is not committed and is
     * written over next), a fixed-size copy of a few moves; a copy of the
     * record's own size would be a call into libc for every op. */
    uint64_t *w = (uint64_t *)p;
    w[0] = f->rec[0];
    w[1] = f->rec[1];
    w[2] = end;
    if (LIKELY((size_t)(t->end - p) >= sizeof f->rec))
        memcpy(w + 3, f->rec + 3, sizeof f->rec - 24);
    else
        put_short(w, f->rec, size);
    aip__commit(t, size);
}

/* ---- Python calls (with_stack / with_modules) --------------------------- */

static _Atomic uint32_t next_python_id = 1;

/* Python calls are the most frequent records with with_stack: a thread
 * takes their ids from the process-wide counter a block at a time, not
 * one locked add per call.  A single thread numbers its calls 1, 2, 3...
 * as before; ids stay unique in the process, not ordered across threads. */
#define PY_ID_BLOCK 256u
static __thread uint32_t py_id_next __attribute__((tls_model("initial-exec")));
static __thread uint32_t py_id_end __attribute__((tls_model("initial-exec")));

static __attribute__((noinline)) uint32_t python_id_refill(void)
{
    uint32_t base = atomic_fetch_add_explicit(&next_python_id, PY_ID_BLOCK, memory_order_relaxed);
    if (UNLIKELY(base == 0 || base + PY_ID_BLOCK < base)) {
        /* The counter wrapped (2^32 calls): 0 is "no parent"; skip it. */
        base = atomic_fetch_add_explicit(&next_python_id, PY_ID_BLOCK, memory_order_relaxed);
    }
    py_id_next = base + 1;
    py_id_end = base + PY_ID_BLOCK;
    return base;
}

static inline uint32_t python_id(void)
{
    if (LIKELY(py_id_next != py_id_end))
        return py_id_next++;
    return python_id_refill();
}

/* The earliest start among the thread's open annotations, mstx ranges and
 * ops of this trace (each stack's bottom frame is its earliest), or `now`. */
static uint64_t earliest_open(const aip__tstate *t, uint64_t now)
{
    uint64_t e = now;
    if (t->ann_depth && t->ann[0].start < e)
        e = t->ann[0].start;
    if (t->range_depth && t->range[0].start < e)
        e = t->range[0].start;
    if (t->op_depth && t->op[0].rec[1] < e) /* an open op's start */
        e = t->op[0].rec[1];
    return e;
}

static void pyfunc_push(aip_string_id name, aip_string_id module, int running);

void aip_pyfunc_push(aip_string_id name, aip_string_id module) { pyfunc_push(name, module, 0); }

void aip_pyfunc_push_running(aip_string_id name, aip_string_id module)
{
    pyfunc_push(name, module, 1);
}

static void pyfunc_push(aip_string_id name, aip_string_id module, int running)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & (AIP_MASK_STACK | AIP_MASK_MODULES)))
        return;
    t->py_pushed = 1;
    if (UNLIKELY(t->py_depth >= AIP_STACK_DEPTH)) {
        t->py_depth++; /* deep recursion: keep pairing, drop the frame */
        return;
    }
    uint32_t d = t->py_depth;
    aip__py_frame *f = &t->py[d];
    f->parent = d ? t->py[d - 1].id : 0;
    f->name = name;
    f->module = module;
    f->id = python_id();
    f->start = aip__ticks();
    if (UNLIKELY(running)) {
        /* A call that was running before this thread's first Python call of
         * the trace encloses what the thread opened since (a range, an op):
         * it begins no later than they do, and no earlier than its caller. */
        f->start = earliest_open(t, f->start);
        if (d && f->start < t->py[d - 1].start)
            f->start = t->py[d - 1].start;
    }
    /* The frame is complete before the depth shows it: the stopper reads
     * other threads' open frames (aip__pyfunc_close_open). */
    __atomic_store_n(&t->py_depth, d + 1, __ATOMIC_RELEASE);
}

size_t aip__pyfunc_close_open(const aip__tstate *t, uint64_t end, uint8_t *out, size_t cap)
{
    uint32_t depth = __atomic_load_n(&t->py_depth, __ATOMIC_ACQUIRE);
    if (depth > AIP_STACK_DEPTH)
        depth = AIP_STACK_DEPTH; /* frames past the stack were never kept */
    size_t n = 0;
    for (uint32_t d = depth; d-- > 0 && n + sizeof(aip__rec_pyfunc) <= cap;)
        n += aip__pyfunc_put(&t->py[d], 0, end, out + n);
    return n;
}

size_t aip__pyfunc_put(const aip__py_frame *f, uint8_t flags, uint64_t end, uint8_t *out)
{
    aip__rec_pyfunc r;
    aip__rec_set_header(&r.h, AIP_REC_PYFUNC, flags, sizeof r, f->name);
    r.start = f->start;
    r.end = end > f->start ? end : f->start;
    r.python_id = f->id;
    r.parent_id = f->parent;
    r.module_id = f->module;
    r.reserved = 0;
    memcpy(out, &r, sizeof r);
    return sizeof r;
}

void aip_pyfunc_pop(void)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & (AIP_MASK_STACK | AIP_MASK_MODULES)))
        return;
    if (UNLIKELY(t->py_depth == 0)) {
        if (t->py_pushed)
            atomic_fetch_add_explicit(&t->unbalanced, 1, memory_order_relaxed);
        return;
    }
    uint32_t d = --t->py_depth;
    if (UNLIKELY(d >= AIP_STACK_DEPTH)) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return;
    }
    uint64_t end = aip__ticks();
    const aip__py_frame *f = &t->py[d];
    aip__rec_pyfunc *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_PYFUNC, 0, sizeof *r, f->name);
    r->start = f->start;
    r->end = end;
    r->python_id = f->id;
    r->parent_id = f->parent;
    r->module_id = f->module;
    r->reserved = 0;
    aip__commit(t, sizeof *r);
}

/* ---- memory, GC, thread names ----------------------------------------- */

void aip_memory_event(uint64_t address, int64_t bytes, int64_t total_allocated,
                      int64_t total_reserved, aip_device_type device_type, int device_index)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_MEMORY))
        return;
    aip__rec_memory *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_MEMORY, 0, sizeof *r, 0);
    r->ts = aip__ticks();
    r->address = address;
    r->bytes = bytes;
    r->total_allocated = total_allocated;
    r->total_reserved = total_reserved;
    r->device_type = (uint8_t)device_type;
    r->device_index = (int8_t)device_index;
    memset(r->reserved, 0, sizeof r->reserved);
    aip__commit(t, sizeof *r);
}

void aip_memory_label(uint64_t address, int64_t bytes, aip_device_type device_type,
                      int device_index, aip_memory_category category)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_MEMORY) || (unsigned)category > AIP_MEM_UNKNOWN)
        return;
    aip__rec_memory_category *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_MEMORY_CATEGORY, 0, sizeof *r, 0);
    r->ts = aip__ticks();
    r->address = address;
    r->bytes = bytes;
    r->device_type = (uint8_t)device_type;
    r->device_index = (int8_t)device_index;
    r->category = (uint8_t)category;
    memset(r->reserved, 0, sizeof r->reserved);
    aip__commit(t, sizeof *r);
}

extern uint64_t aip__gc_threshold_ns;

void aip_gc_event(uint64_t start_ns, uint64_t end_ns)
{
    aip__tstate *t = aip__current();
    if (!t || !(aip__rec_mask & AIP_MASK_GC) || end_ns < start_ns)
        return;
    if (end_ns - start_ns < aip__gc_threshold_ns)
        return;
    emit_span(t, AIP_REC_GC, 0, aip__clock_ns_to_ticks(start_ns), aip__clock_ns_to_ticks(end_ns));
}

void aip_thread_name(const char *name)
{
    aip_string_id id = intern_opt(name);
    aip__tstate *t = aip__tls_state();
    if (!t)
        return;
    uint32_t g = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    int attached = g && t->gen == g;
    t->thread_name = id; /* re-emitted at the start of every later trace */
    if (!g || !id)
        return;
    if (!attached) {
        aip__attach(g); /* attaching emits the name */
        return;
    }
    aip__rec_thread_name *r = aip__reserve(t, sizeof *r);
    if (UNLIKELY(!r))
        return;
    aip__rec_set_header(&r->h, AIP_REC_THREAD_NAME, 0, sizeof *r, id);
    r->ts = aip__ticks();
    aip__commit(t, sizeof *r);
}
