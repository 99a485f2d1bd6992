/*
 * analysis_int.h — what only src/analysis uses of the model: decoding raw
 * records into it, sorting, nesting, pairing, alignment and the derive
 * steps (SQLite's btreeInt.h beside btree.h).  The exporters, result, insight
 * and the tools read the loaded and derived model through model.h alone;
 * scripts/check_includes.py lets no file outside src/analysis (tests
 * aside) include this one.
 */
#ifndef AIP_ANALYSIS_INT_H
#define AIP_ANALYSIS_INT_H

#include "model.h"

/* --- span_load.c -------------------------------------------------------- */
/* aip__op_words() : optional 8-byte fields of an OP (SEQ, FWD, SHAPES,
 * STACK, FLOPS) by its flags: a table, as __builtin_popcount is a libgcc
 * call without -mpopcnt. */
static inline unsigned aip__op_words(uint8_t flags)
{
    static const uint8_t bits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
    return bits[flags & 0x0F] + ((flags & AIP_OPF_FLOPS) ? 1 : 0);
}
/* aip__span_kind() : 1 for the record kinds that become spans of their
 * thread (OP, ANNOTATION, RANGE, PYFUNC). */
int aip__span_kind(uint8_t kind);
/* aip__spans_decode_chunk() : the span records of a validated EVENTS
 * payload appended to t, room made for `spans` spans and `aux` aux words
 * first (the counts model_load.c's check found); other records skipped. */
aip_status aip__spans_decode_chunk(aip__thread *t, const uint8_t *payload, uint32_t size,
                                   size_t spans, size_t aux);
/* The span loader: a worker that decodes the span records of the chunks
 * handed to it into its own per-thread arrays, in order.
 * aip__span_loader_start() : NULL when there is no second CPU or thread
 * (the caller decodes the spans itself).
 * aip__span_loader_put() : queue a copy of a validated EVENTS payload of
 * thread index ti (waits while the queue is full); the worker's failure,
 * if any.
 * aip__span_loader_finish() : wait for the worker, move its spans into
 * p's threads (p->threads[ti] must have none of its own), free it;
 * @return s, or the worker's failure when s is AIP_OK.  NULL: returns s. */
typedef struct aip__span_loader aip__span_loader;
aip__span_loader *aip__span_loader_start(void);
aip_status aip__span_loader_put(aip__span_loader *L, uint32_t ti, const uint8_t *payload,
                                uint32_t size, size_t spans, size_t aux);
aip_status aip__span_loader_finish(aip__span_loader *L, aip__process *p, aip_status s);

/* --- device_load.c ----------------------------------------------------- */
/* aip__device_decode() : one device record (kinds AIP_REC_DEVICE..
 * AIP_REC_DEVICE_CLOCK) of thread index `ti`; sizes already checked. */
aip_status aip__device_decode(aip__process *p, uint32_t ti, const uint8_t *r,
                              const aip__rec_header *h);
/* aip__device_min_size() : the fixed size of a device record kind, 0 if
 * `kind` is not one. */
size_t aip__device_min_size(uint8_t kind);

/* --- comm_load.c ------------------------------------------------------- */
/* aip__comm_decode() : one COMM_GROUP / COMM_OP record of thread index
 * `ti` (size already checked against aip__comm_min_size). */
aip_status aip__comm_decode(aip__process *p, uint32_t ti, const uint8_t *r,
                            const aip__rec_header *h);
size_t aip__comm_min_size(uint8_t kind);
/* aip__comm_sort() : comm_ops by start (derive). */
void aip__comm_sort(aip__process *p);

/* --- host_load.c ------------------------------------------------------- */
/* aip__host_decode() : one HOST_SAMPLE record (size already checked). */
aip_status aip__host_decode(aip__process *p, const uint8_t *r, const aip__rec_header *h);

/* --- device_align.c --------------------------------------------------- */
/* aip__device_align() : device times of p to wall-clock ns from the
 * DEVICE_CLOCK samples (docs/DEVICE.md "Clock alignment"); host ticks of
 * the device records through `to_wall`. */
typedef int64_t (*aip__tick_fn)(const void *ctx, int64_t ticks);
void aip__device_align(aip__process *p, aip__tick_fn to_wall, const void *ctx);

/* --- device_derive.c -------------------------------------------------- */
/* aip__device_sort_tasks() : device tasks and memory records of every
 * process by time; aip__device_sort_calls() : API calls by thread and
 * time.  Neither reads or writes anything else of the model, so they may
 * run beside each other and beside the host side's derive (derive.c).
 * aip__device_parents() : after the calls are sorted and the spans sorted
 * and nested, each call's parent, the op open around it (writes only the
 * calls' parent fields; may run beside aip__device_sort_tasks()).
 * aip__device_link() : after both sorts, each task linked to the API call
 * of its correlation id, and the tasks counted per device and queue. */
aip_status aip__device_sort_tasks(aip__model *m);
aip_status aip__device_sort_calls(aip__model *m);
aip_status aip__device_parents(aip__model *m);
aip_status aip__device_link(aip__model *m);

/* --- tick_convert.c --------------------------------------------------- */
/* aip__ticks_convert() : turn every tick value of `p` into wall-clock ns. */
void aip__ticks_convert(aip__process *p, const aip__model *m);

/* --- span_tree.c ------------------------------------------------------ */
/* aip__spans_sort() : order spans by start, longer first on equal starts
 * (exact duplicates: later in the file first, so an outer span that
 * completed last encloses its twin). */
aip_status aip__spans_sort(aip__span *spans, size_t n);
/* aip__spans_nest() : fill self_ns and top_op for sorted spans. */
aip_status aip__spans_nest(aip__thread *t);
/* The spans of a sorted thread open at a moment, for queries in time
 * order (which op launched a device call, allocated device memory...):
 * one sweep over the spans with a stack, O(spans + queries).  `kinds`
 * selects the spans kept (bits 1 << AIP_SPAN_*).  After
 * aip__open_spans_at(o, at), stack[0..depth) holds the kept spans that
 * began by `at` and may still be open, outermost first; one may have ended
 * before `at` while one below it is open (they overlap without nesting),
 * so a user checks `end >= at`. */
typedef struct aip__open_spans {
    const aip__thread *t;
    unsigned kinds;
    size_t *stack, depth, next;
} aip__open_spans;
aip_status aip__open_spans_init(aip__open_spans *o, const aip__thread *t, unsigned kinds);
void aip__open_spans_at(aip__open_spans *o, int64_t at);
/* aip__open_spans_innermost() : after _at(o, at), the index of the
 * innermost kept span containing `at`, -1 if none. */
int64_t aip__open_spans_innermost(const aip__open_spans *o, int64_t at);
void aip__open_spans_free(aip__open_spans *o);

/* --- nesting.c --------------------------------------------------------- */
/* aip__slices_build() : t->slices, the sorted spans with partial overlaps
 * split (docs/ANALYSIS.md "Nesting"); NULL when the spans nest already.
 * Adds the number of pieces made to *pieces. */
aip_status aip__slices_build(aip__thread *t, uint64_t *pieces);

/* --- steps.c ----------------------------------------------------------- */
/* aip__step_number() : 1 and *number if `name` is "ProfilerStep#<N>". */
int aip__step_number(const char *name, size_t len, int64_t *number);

/* aip__steps_add() : append p's step annotations to m->steps (capacity *cap). */
aip_status aip__steps_add(aip__model *m, const aip__process *p, const uint8_t *is_step,
                          size_t *cap);
/* aip__steps_finish() : sort by number and merge equal numbers. */
void aip__steps_finish(aip__model *m);

/* --- steps.c, host_compute.c ------------------------------------------- */
/* aip__host_compute_intervals() (host_compute.c) : the host's work as
 * sorted disjoint pairs iv[2k], iv[2k+1] (malloc'd; NULL and 0 when none):
 * the union over threads of top-level ops, annotations that are no step and
 * enclose none, and mstx / NVTX ranges, whose names are not communication
 * (aip__comm_span_name), less the thread's blocking communication ops. */
aip_status aip__host_compute_intervals(const aip__model *m, int64_t **iv, size_t *n);
/* aip__comm_span_name() : 1 when a span's name says communication. */
int aip__comm_span_name(const char *s, size_t n);

/* aip__step_trace_compute() : m->step_rows, every column, from steps (or
 * the whole profile). */
aip_status aip__step_trace_compute(aip__model *m);

/* --- steps.c ----------------------------------------------------------- */
/* aip__step_row_derive() : the columns that follow from Computing,
 * Communication, Bubble and the row's start and end. */
void aip__step_row_derive(aip__step_row *r);

/* --- device_steps.c --------------------------------------------------- */
/* aip__device_steps() : each device task's step (the step during which
 * its launching call began; a task without one: the step around its
 * start), then, when any device task exists, m->step_rows from the device
 * tasks, one row per device and step (docs/ANALYSIS.md "step_trace_time").
 * After aip__step_trace_compute(). */
aip_status aip__device_steps(aip__model *m);

/* --- memory.c ---------------------------------------------------------- */
/* aip__memory_derive() : time order, alloc/free pairs, op names and
 * categories of p's memory records (docs/MEMORY.md); then m->mem_peaks. */
aip_status aip__memory_derive(aip__model *m);

/* --- pairing.c -------------------------------------------------------- */
aip_status aip__ranges_pair(aip__process *p);
aip_status aip__flows_pair(aip__model *m);

#endif
