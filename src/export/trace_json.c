/*
 * trace_json.c — trace_view.json: Chrome Trace Event JSON, streamed event
 * by event, in one of two forms (m->trace_format, aip_trace_format):
 *
 * - torch_npu's (the default): a top-level array, as msprof-analyze
 *   (`ijson.items(f, "item")`, `for e in json.load(f)`) and MindStudio
 *   Insight read it.  `ts` is a string of absolute epoch µs with exactly 3
 *   decimals made from integer ns (torch_npu's convert_ns2us_str: no float
 *   rounding; advisor keys op → kernel flows by that text).  The run-wide
 *   facts that the object form keeps at the top (host, rank, switches,
 *   aiprof's counters) ride in the args of the first process_name event,
 *   beside the "name" every reader looks for.
 * - Kineto's: {"schemaVersion":1, ..., "baseTimeNanoseconds":B,
 *   "traceEvents":[...]} with numeric `ts` relative to B, so that viewers
 *   that read ts as float64 (speedscope, the old chrome://tracing) keep ns
 *   precision (Ascend/pytorch#133); add_metadata entries are top-level keys
 *   as torch.profiler writes them.  B is the earliest recorded time rounded
 *   down to a whole second: derived from the data, so analysing twice gives
 *   the same bytes.
 *
 * `dur` is a number of µs: with 3 decimals in torch_npu's form, in exact
 * binary fractions of a µs in Kineto's (as its ts, so that ts + dur, which
 * float64 readers compute, is exactly the end's ts).  Every recorded string
 * goes through the escape cache (text_escape.c).  Flow and async ids are
 * small integers counted from 1 in output order (unique where torch_npu's
 * sequence numbers repeat across threads; no reader needs more).
 *
 * The keys around the events (Kineto's header, the run facts) are
 * trace_json_header.c's.
 *
 * Layout: per process its metadata, then per thread (by tid) its spans in
 * start order, marks, mstx start/end ranges, memory, GC (own process
 * "Python GC"), its device layers (torch_npu's: trace_json_device.c;
 * Kineto's: trace_json_kineto_dev.c), and last the fwdbwd flows.  In
 * Kineto's form ops and annotations carry its "External id" / "Ev Idx"
 * (external_ids_begin) and the header the keys torch 2.x readers look up
 * (trace_json_kineto.c).
 */
#include "export.h"
#include "trace_json_int.h"
#include "osrt_export.h"
#include "text_escape.h"
#include "error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



void aip__tj_begin(aip__tj *w)
{
    if (w->first) {
        AIP_OUT_LIT(w->o, "\n");
        w->first = 0;
    } else {
        AIP_OUT_LIT(w->o, ",\n");
    }
}

void aip__tj_put_id(aip__tj *w, uint32_t id)
{
    size_t n;
    const char *s = aip__esc_get(&w->esc, id, &n);
    if (!s) {
        if (!w->status)
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for trace strings");
        AIP_OUT_LIT(w->o, "\"\"");
        return;
    }
    aip__out_put(w->o, s, n);
}

/* A C string from INFO or profiler_info: escaped on the spot (rare). */
static void put_cstr(aip__tj *w, const char *s) { aip__trace_put_cstr(w->o, s); }

void aip__tj_ts(aip__tj *w, int64_t ns)
{
    aip__out_commit(w->o, aip__tj_fmt_ts(w, aip__out_reserve(w->o, 40), ns));
}

void aip__tj_dur(aip__tj *w, int64_t start, int64_t end)
{
    aip__out_commit(w->o, aip__tj_fmt_dur(w, aip__out_reserve(w->o, 40), start, end));
}

void aip__tj_prefix(aip__tj *w, int64_t pid, uint64_t tid)
{
    char *d = w->pfx;
    memcpy(d, ",\"pid\":", 7);
    d = aip__fmt_i64(d + 7, pid);
    memcpy(d, ",\"tid\":", 7);
    d = aip__fmt_u64(d + 7, tid);
    memcpy(d, ",\"ts\":", 6);
    w->pfx_len = (size_t)(d + 6 - w->pfx);
}

/* ---- metadata --------------------------------------------------------- */

void aip__tj_meta_head(aip__tj *w, const char *what, int64_t pid, uint64_t tid)
{
    aip__tj_begin(w);
    AIP_OUT_LIT(w->o, "{\"ph\":\"M\",\"name\":\"");
    aip__out_str(w->o, what);
    AIP_OUT_LIT(w->o, "\",\"pid\":");
    aip__out_i64(w->o, pid);
    AIP_OUT_LIT(w->o, ",\"tid\":");
    aip__out_u64(w->o, tid);
}

void aip__tj_meta_str(aip__tj *w, const char *what, int64_t pid, uint64_t tid, const char *key,
                     const char *value)
{
    aip__tj_meta_head(w, what, pid, tid);
    AIP_OUT_LIT(w->o, ",\"args\":{\"");
    aip__out_str(w->o, key);
    AIP_OUT_LIT(w->o, "\":");
    put_cstr(w, value);
    AIP_OUT_LIT(w->o, "}}");
}

void aip__tj_meta_sort(aip__tj *w, const char *what, int64_t pid, uint64_t tid, uint64_t index)
{
    aip__tj_meta_head(w, what, pid, tid);
    AIP_OUT_LIT(w->o, ",\"args\":{\"sort_index\":");
    aip__out_u64(w->o, index);
    AIP_OUT_LIT(w->o, "}}");
}

int64_t aip__tj_layer_pid(int64_t pid, unsigned sort, uint32_t device)
{
    if (device <= AIP__TJ_HOST_DEVICE)
        return (int64_t)(((uint64_t)pid << 10) | ((uint64_t)sort << 5) | device);
    return (int64_t)(((uint64_t)pid << 16) | ((uint64_t)sort << 6) | device);
}

void aip__tj_memory_device(char *out, size_t cap, uint8_t type, int8_t index)
{
    const char *n = type == AIP_DEVICE_CPU ? "CPU" : type == AIP_DEVICE_CUDA ? "CUDA"
                  : type == AIP_DEVICE_NPU ? "NPU" : NULL;
    char other[16];
    if (!n) {
        snprintf(other, sizeof other, "Device%u", type);
        n = other;
    }
    if (index >= 0)
        snprintf(out, cap, "%s:%d", n, index);
    else
        snprintf(out, cap, "%s", n);
}

void aip__tj_layer_meta(aip__tj *w, int64_t lpid, const char *name, const char *label,
                        unsigned sort)
{
    aip__tj_meta_str(w, "process_name", lpid, 0, "name", name);
    aip__tj_meta_str(w, "process_labels", lpid, 0, "labels", label);
    aip__tj_meta_sort(w, "process_sort_index", lpid, 0, sort);
}

void aip__tj_thread_meta(aip__tj *w, int64_t lpid, uint64_t tid)
{
    char n[40];
    snprintf(n, sizeof n, "Thread %llu", (unsigned long long)tid);
    aip__tj_meta_str(w, "thread_name", lpid, tid, "name", n);
    aip__tj_meta_sort(w, "thread_sort_index", lpid, tid, tid);
}

/* `first`: the first process, whose process_name carries the run-wide
 * facts in torch_npu's form (an array has no top-level keys). */
static void process_meta(aip__tj *w, const aip__process *p, int first)
{
    char fallback[48];
    const char *name = p->program && p->program[0] ? p->program : NULL;
    if (!name) {
        snprintf(fallback, sizeof fallback, "Process %lld", (long long)p->pid);
        name = fallback;
    }
    aip__tj_meta_head(w, "process_name", p->pid, 0);
    AIP_OUT_LIT(w->o, ",\"args\":{\"name\":");
    put_cstr(w, name);
    if (first && !w->kineto) {
        AIP_OUT_LIT(w->o, ",");
        aip__trace_run_facts(w->o, w->m);
    }
    AIP_OUT_LIT(w->o, "}}");
    aip__tj_meta_str(w, "process_labels", p->pid, 0, "labels", "CPU");
    aip__tj_meta_sort(w, "process_sort_index", p->pid, 0, 0);
    for (size_t i = 0; i < p->n_threads; i++) {
        const aip__thread *t = &p->threads[i];
        if (t->name && t->name < p->strings.n_ent && p->strings.ent[t->name].defined) {
            aip__tj_meta_head(w, "thread_name", p->pid, t->tid);
            AIP_OUT_LIT(w->o, ",\"args\":{\"name\":");
            aip__tj_put_id(w, t->name);
            AIP_OUT_LIT(w->o, "}}");
        } else {
            char n[40];
            snprintf(n, sizeof n, "Thread %llu", (unsigned long long)t->tid);
            aip__tj_meta_str(w, "thread_name", p->pid, t->tid, "name", n);
        }
        aip__tj_meta_sort(w, "thread_sort_index", p->pid, t->tid, t->tid);
    }
}

/* ---- spans ------------------------------------------------------------ */

/* The end of a span's args: a span still open when a flight recorder
 * dumped (its end is the dump's time, not its own) says so, so that no
 * reader takes it for a finished one (docs/FLIGHT_RECORDER.md). */
static void close_args(aip__tj *w, const aip__span *s)
{
    if (s->unfinished)
        AIP_OUT_LIT(w->o, ",\"unfinished\":true}");
    else
        AIP_OUT_LIT(w->o, "}");
}

/* A span without args of its own: only the mark of an unfinished one. */
static void bare_args(aip__tj *w, const aip__span *s)
{
    if (s->unfinished)
        AIP_OUT_LIT(w->o, ",\"args\":{\"unfinished\":true}");
}

/* `ext`: Kineto's "External id" of the op (0: none; torch_npu's form). */
static void op_args(aip__tj *w, const aip__thread *t, const aip__span *s, uint64_t ext)
{
    aip__op_fields f;
    aip__model_op_fields(t, s, &f);
    int any = 0;
#define ARG(lit)                                   \
    do {                                           \
        if (any)                                   \
            AIP_OUT_LIT(w->o, ",\"" lit "\":");        \
        else                                       \
            AIP_OUT_LIT(w->o, ",\"args\":{\"" lit "\":"); \
        any = 1;                                   \
    } while (0)
    if (ext) {
        ARG("External id");
        aip__out_u64(w->o, ext);
    }
    if (f.has_seq && f.sequence_number >= 0) {
        ARG("Sequence number");
        aip__out_i64(w->o, f.sequence_number);
        ARG("Fwd thread id");
        aip__out_u64(w->o, f.fwd_thread_id);
    }
    if (f.has_shapes) {
        ARG("Input Dims");
        aip__tj_put_id(w, f.input_shapes);
        ARG("Input type");
        aip__tj_put_id(w, f.input_dtypes);
    }
    if (f.has_stack && f.call_stack) {
        ARG("Call stack");
        aip__tj_put_id(w, f.call_stack);
    }
    if (f.has_stack && f.module_hierarchy) {
        ARG("Module Hierarchy");
        aip__tj_put_id(w, f.module_hierarchy);
    }
    if (f.flops) {
        ARG("flops");
        aip__out_u64(w->o, f.flops);
    }
    if (ext) {
        ARG("Ev Idx");
        aip__out_u64(w->o, ext - 1);
    }
#undef ARG
    if (any)
        close_args(w, s);
    else
        bare_args(w, s);
}

static void put_domain(aip__tj *w, uint32_t domain)
{
    if (domain)
        aip__tj_put_id(w, domain);
    else
        AIP_OUT_LIT(w->o, "\"default\"");
}

#define HEAD(lit) {lit, sizeof(lit) - 1}
static const struct {
    const char *s;
    size_t n;
} span_head[4] = {
    [AIP_SPAN_OP] = HEAD("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":"),
    [AIP_SPAN_ANNOTATION] = HEAD("{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"),
    [AIP_SPAN_RANGE] = HEAD("{\"ph\":\"X\",\"cat\":\"mstx\",\"name\":"),
    [AIP_SPAN_PYFUNC] = HEAD("{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":")};
#undef HEAD

/* torch's args of a python_function event; the module id only for an
 * nn.Module forward; "continued" on a later piece of a call split so that
 * slices nest (nesting.c: same ids, the call goes on inside another slice). */
static void pyfunc_args(aip__tj *w, const aip__thread *t, const aip__span *s)
{
    aip__pyfunc_fields f;
    aip__model_pyfunc_fields(t, s, &f);
    AIP_OUT_LIT(w->o, ",\"args\":{\"Python id\":");
    aip__out_u64(w->o, f.python_id);
    AIP_OUT_LIT(w->o, ",\"Python parent id\":");
    aip__out_u64(w->o, f.parent_id);
    if (f.module_id) {
        AIP_OUT_LIT(w->o, ",\"Python module id\":");
        aip__out_u64(w->o, f.module_id);
    }
    if (s->piece)
        AIP_OUT_LIT(w->o, ",\"continued\":true");
    close_args(w, s);
}

/* Kineto's "External id" of slice `i` of thread `ti` (aip__tj_external_id
 * of its span), 0 in torch_npu's form and for the later pieces of a split
 * span.  Spans and slices are both in start order, parents first, so a
 * walk (`*j`: the first span not before the slice, `*last`: the last span
 * matched) finds each whole or first slice's span. */
static uint64_t slice_external_id(aip__tj *w, const aip__thread *t, size_t ti, size_t i,
                                  size_t *j, size_t *last)
{
    if (!w->kineto || !w->ext_base)
        return 0;
    if (!t->slices)
        return aip__tj_external_id(w, ti, i);
    const aip__span *s = &t->slices[i];
    if (s->piece)
        return 0;
    while (*j < t->n_spans && t->spans[*j].start < s->start)
        (*j)++;
    size_t k = *last != SIZE_MAX && *last >= *j ? *last + 1 : *j;
    for (; k < t->n_spans && t->spans[k].start == s->start; k++)
        if (t->spans[k].name == s->name && t->spans[k].kind == s->kind) {
            *last = k;
            return aip__tj_external_id(w, ti, k);
        }
    return 0;
}

/* What follows a span's dur: its args, if any. */
static void span_args(aip__tj *w, const aip__thread *t, const aip__span *s, uint64_t ext)
{
    if (s->kind == AIP_SPAN_OP || (s->kind == AIP_SPAN_ANNOTATION && s->aux)) {
        op_args(w, t, s, ext); /* an annotation's: its call stack / modules */
    } else if (s->kind == AIP_SPAN_RANGE) {
        AIP_OUT_LIT(w->o, ",\"args\":{\"domain\":");
        put_domain(w, s->aux ? aip__model_range_domain(t, s) : 0);
        close_args(w, s);
    } else if (s->kind == AIP_SPAN_PYFUNC) {
        if (s->aux)
            pyfunc_args(w, t, s);
        else
            bare_args(w, s);
    } else if (ext) { /* a user_annotation: Kineto's ids only */
        AIP_OUT_LIT(w->o, ",\"args\":{\"External id\":");
        aip__out_u64(w->o, ext);
        AIP_OUT_LIT(w->o, ",\"Ev Idx\":");
        aip__out_u64(w->o, ext - 1);
        close_args(w, s);
    } else {
        bare_args(w, s);
    }
}

/* The hot loop: one X event per span, formatted straight into the output
 * buffer with a single capacity check for names of ordinary length. */
static void thread_spans(aip__tj *w, const aip__thread *t, size_t ti)
{
    size_t n, j = 0, last = SIZE_MAX;
    const aip__span *slices = aip__thread_slices(t, &n); /* nested: nesting.c */
    for (size_t i = 0; i < n; i++) {
        const aip__span *s = &slices[i];
        size_t nlen;
        const char *name = aip__esc_get(&w->esc, s->name, &nlen);
        if (!name) {
            if (!w->status)
                w->status = aip__fail(AIP_ERR_NOMEM, "no memory for trace strings");
            name = "\"\"";
            nlen = 2;
        }
        /* An unfinished span's name says so: " (unfinished)" inside its quotes. */
        static const char tail[] = " (unfinished)\"";
        size_t keep = s->unfinished ? nlen - 1 : nlen;
        if (nlen > AIP_OUT_CAP / 4) { /* a huge name: never in the buffer at once */
            aip__tj_begin(w);
            aip__out_put(w->o, span_head[s->kind].s, span_head[s->kind].n);
            aip__out_put(w->o, name, keep);
            if (s->unfinished)
                aip__out_put(w->o, tail, sizeof tail - 1);
        } else {
            char *d = aip__out_reserve(w->o, nlen + w->pfx_len + 128);
            if (w->first) {
                *d++ = '\n';
                w->first = 0;
            } else {
                *d++ = ',';
                *d++ = '\n';
            }
            memcpy(d, span_head[s->kind].s, span_head[s->kind].n);
            d += span_head[s->kind].n;
            memcpy(d, name, keep);
            d += keep;
            if (s->unfinished) {
                memcpy(d, tail, sizeof tail - 1);
                d += sizeof tail - 1;
            }
            aip__out_commit(w->o, d);
        }
        char *d = aip__out_reserve(w->o, w->pfx_len + 96);
        memcpy(d, w->pfx, w->pfx_len);
        d = aip__tj_fmt_ts(w, d + w->pfx_len, s->start);
        memcpy(d, ",\"dur\":", 7);
        d = aip__tj_fmt_dur(w, d + 7, s->start, s->end);
        uint64_t ext = s->kind == AIP_SPAN_OP || s->kind == AIP_SPAN_ANNOTATION
                           ? slice_external_id(w, t, ti, i, &j, &last)
                           : 0;
        if (s->aux || s->kind == AIP_SPAN_RANGE || ext || s->unfinished) {
            aip__out_commit(w->o, d);
            span_args(w, t, s, ext);
            d = aip__out_reserve(w->o, 1);
        }
        *d++ = '}';
        aip__out_commit(w->o, d);
    }
}

/* ---- instants, mstx start/end, memory, GC ---------------------------- */

static void marks(aip__tj *w, const aip__process *p)
{
    for (size_t i = 0; i < p->marks.n; i++) {
        const aip__mark_ev *k = &p->marks.v[i];
        aip__tj_prefix(w, p->pid, p->threads[k->thread].tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mstx\",\"name\":");
        aip__tj_put_id(w, k->name);
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, k->ts);
        AIP_OUT_LIT(w->o, ",\"args\":{\"domain\":");
        put_domain(w, k->domain);
        AIP_OUT_LIT(w->o, "}}");
    }
}

static void async_point(aip__tj *w, const aip__process *p, const aip__range_point *r, uint32_t name,
                        const char *ph, uint64_t id, int with_domain)
{
    aip__tj_prefix(w, p->pid, p->threads[r->thread].tid);
    aip__tj_begin(w);
    AIP_OUT_LIT(w->o, "{\"ph\":\"");
    aip__out_str(w->o, ph);
    AIP_OUT_LIT(w->o, "\",\"cat\":\"mstx\",\"id\":");
    aip__out_u64(w->o, id);
    AIP_OUT_LIT(w->o, ",\"name\":");
    aip__tj_put_id(w, name);
    aip__out_put(w->o, w->pfx, w->pfx_len);
    aip__tj_ts(w, r->ts);
    if (with_domain) {
        AIP_OUT_LIT(w->o, ",\"args\":{\"domain\":");
        put_domain(w, r->domain);
        AIP_OUT_LIT(w->o, "}");
    }
    AIP_OUT_LIT(w->o, "}");
}

static void ranges(aip__tj *w, const aip__process *p)
{
    for (size_t i = 0; i < p->range_starts.n; i++) {
        const aip__range_point *s = &p->range_starts.v[i];
        if (s->match < 0) {
            /* No end was recorded (crash, or ended after stop): an instant
             * keeps the start visible without inventing a duration. */
            aip__tj_prefix(w, p->pid, p->threads[s->thread].tid);
            aip__tj_begin(w);
            AIP_OUT_LIT(w->o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mstx\",\"name\":");
            aip__tj_put_id(w, s->name);
            aip__out_put(w->o, w->pfx, w->pfx_len);
            aip__tj_ts(w, s->ts);
            AIP_OUT_LIT(w->o, ",\"args\":{\"domain\":");
            put_domain(w, s->domain);
            AIP_OUT_LIT(w->o, ",\"unmatched\":\"no range end recorded\"}}");
            continue;
        }
        const aip__range_point *e = &p->range_ends.v[s->match];
        if (e->thread == s->thread && e->ts >= s->ts) {
            /* Begun and ended on one thread: a slice on that thread's
             * track, where the seed's timeline has it (and its readers
             * look for it), like a push/pop range. */
            aip__tj_prefix(w, p->pid, p->threads[s->thread].tid);
            aip__tj_begin(w);
            AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"cat\":\"mstx\",\"name\":");
            aip__tj_put_id(w, s->name);
            aip__out_put(w->o, w->pfx, w->pfx_len);
            aip__tj_ts(w, s->ts);
            AIP_OUT_LIT(w->o, ",\"dur\":");
            aip__tj_dur(w, s->ts, e->ts);
            AIP_OUT_LIT(w->o, ",\"args\":{\"domain\":");
            put_domain(w, s->domain);
            AIP_OUT_LIT(w->o, "}}");
            continue;
        }
        /* Ended on another thread: no one track holds it, an async pair
         * (b on the starting thread, e on the ending one) keeps both ends. */
        uint64_t id = ++w->async_id;
        async_point(w, p, s, s->name, "b", id, 1);
        async_point(w, p, e, s->name, "e", id, 0);
    }
}

static void memory(aip__tj *w, const aip__process *p)
{
    for (size_t i = 0; i < p->memory.n; i++) {
        const aip__mem_ev *e = &p->memory.v[i];
        aip__tj_prefix(w, p->pid, p->threads[e->thread].tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\","
                          "\"name\":\"[memory]\"");
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, e->ts);
        AIP_OUT_LIT(w->o, ",\"args\":{\"Device Type\":");
        aip__out_u64(w->o, e->device_type);
        AIP_OUT_LIT(w->o, ",\"Device Id\":");
        aip__out_i64(w->o, e->device_index);
        AIP_OUT_LIT(w->o, ",\"Addr\":");
        aip__out_u64(w->o, e->address);
        AIP_OUT_LIT(w->o, ",\"Bytes\":");
        aip__out_i64(w->o, e->bytes);
        AIP_OUT_LIT(w->o, ",\"Total Allocated\":");
        aip__out_i64(w->o, e->total_allocated);
        AIP_OUT_LIT(w->o, ",\"Total Reserved\":");
        aip__out_i64(w->o, e->total_reserved);
        AIP_OUT_LIT(w->o, "}}");
        /* The counter track: one series pair per device. */
        char dev[40], name[64];
        aip__tj_memory_device(dev, sizeof dev, e->device_type, e->device_index);
        snprintf(name, sizeof name, "Memory (%s)", dev);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"C\",\"cat\":\"memory\",\"name\":");
        put_cstr(w, name);
        AIP_OUT_LIT(w->o, ",\"pid\":");
        aip__out_i64(w->o, p->pid);
        AIP_OUT_LIT(w->o, ",\"tid\":0,\"ts\":");
        aip__tj_ts(w, e->ts);
        AIP_OUT_LIT(w->o, ",\"args\":{\"Total Allocated\":");
        aip__out_i64(w->o, e->total_allocated);
        AIP_OUT_LIT(w->o, ",\"Total Reserved\":");
        aip__out_i64(w->o, e->total_reserved);
        AIP_OUT_LIT(w->o, "}}");
    }
}

static void gc_events(aip__tj *w, const aip__process *p)
{
    if (!p->gc.n)
        return;
    int64_t gpid = aip__tj_layer_pid(p->pid, 1, AIP__TJ_HOST_DEVICE);
    aip__tj_layer_meta(w, gpid, "Python GC", "CPU", 1);
    uint8_t *named = calloc(p->n_threads ? p->n_threads : 1, 1);
    for (size_t i = 0; i < p->gc.n; i++) {
        const aip__gc_ev *g = &p->gc.v[i];
        uint64_t tid = p->threads[g->thread].tid;
        if (named && !named[g->thread]) {
            named[g->thread] = 1;
            aip__tj_meta_str(w, "thread_name", gpid, tid, "name", "Python GC");
            aip__tj_meta_sort(w, "thread_sort_index", gpid, tid, tid); /* create_gc_m_event's */
        }
        aip__tj_prefix(w, gpid, tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"cat\":\"GC\",\"name\":\"GC\"");
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, g->start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, g->start, g->end);
        AIP_OUT_LIT(w->o, "}");
    }
    free(named);
}

static void flows(aip__tj *w)
{
    const aip__model *m = w->m;
    for (size_t i = 0; i < m->n_flows; i++) {
        const aip__flow *f = &m->flows[i];
        const aip__process *p = &m->procs[f->process];
        const aip__thread *ft = &p->threads[f->fwd_thread], *bt = &p->threads[f->bwd_thread];
        for (int end = 0; end < 2; end++) {
            const aip__thread *t = end ? bt : ft;
            const aip__span *s = &t->spans[end ? f->bwd_span : f->fwd_span];
            aip__tj_prefix(w, p->pid, t->tid);
            aip__tj_begin(w);
            if (end)
                AIP_OUT_LIT(w->o, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"fwdbwd\","
                                  "\"name\":\"fwdbwd\",\"id\":");
            else if (w->kineto)
                AIP_OUT_LIT(w->o, "{\"ph\":\"s\",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\",\"id\":");
            else /* torch_npu's create_fwd_flow puts "bp":"e" on both ends */
                AIP_OUT_LIT(w->o, "{\"ph\":\"s\",\"bp\":\"e\",\"cat\":\"fwdbwd\","
                                  "\"name\":\"fwdbwd\",\"id\":");
            aip__out_u64(w->o, i + 1);
            aip__out_put(w->o, w->pfx, w->pfx_len);
            aip__tj_ts(w, s->start);
            AIP_OUT_LIT(w->o, "}");
        }
    }
}

/* ---- the file ---------------------------------------------------------- */

/* Kineto's "External id" numbers every op and annotation of the file from
 * 1 (the "Ev Idx" one less): here a span's is 1 + the spans of the threads
 * and processes before it + its index on its thread, so that a device
 * call finds its launching op's id from (thread, span) alone. */
static aip_status external_ids_begin(aip__tj *w, const aip__process *p)
{
    free(w->ext_base);
    w->ext_base = malloc((p->n_threads ? p->n_threads : 1) * sizeof *w->ext_base);
    if (!w->ext_base)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the trace's external ids");
    for (size_t i = 0; i < p->n_threads; i++) {
        w->ext_base[i] = w->ext_next;
        w->ext_next += p->threads[i].n_spans;
    }
    return AIP_OK;
}

static void external_ids_end(aip__tj *w, const aip__process *p)
{
    (void)p;
    free(w->ext_base);
    w->ext_base = NULL;
}

uint64_t aip__tj_external_id(const aip__tj *w, size_t thread, size_t span)
{
    return w->ext_base ? w->ext_base[thread] + span + 1 : 0;
}

aip_status aip__export_trace_json(const aip__model *m, aip__out *o)
{
    aip__tj w = {.o = o, .m = m, .first = 1, .kineto = m->trace_format == AIP_TRACE_KINETO};
    if (w.kineto) {
        /* Whole seconds below the earliest time: short, exact, reproducible. */
        w.base = m->first_ns - m->first_ns % 1000000000;
        aip__trace_kineto_header(o, m, w.base);
    } else {
        AIP_OUT_LIT(o, "[");
    }
    for (size_t pi = 0; pi < m->n_procs && !w.status; pi++) {
        const aip__process *p = &m->procs[pi];
        w.status = aip__esc_init(&w.esc, p, AIP_ESC_JSON);
        if (w.status)
            break;
        if (w.kineto && (w.status = external_ids_begin(&w, p)))
            break;
        process_meta(&w, p, pi == 0);
        for (size_t ti = 0; ti < p->n_threads; ti++) {
            aip__tj_prefix(&w, p->pid, p->threads[ti].tid);
            thread_spans(&w, &p->threads[ti], ti);
        }
        marks(&w, p);
        ranges(&w, p);
        memory(&w, p);
        gc_events(&w, p);
        if (w.kineto)
            aip__trace_kineto_device(&w, p);
        else
            aip__trace_device_layers(&w, p);
        aip__trace_comm_layer(&w, p);
        aip__trace_host_layers(&w, p);
        aip__trace_osrt_layer(&w, p);
        aip__esc_free(&w.esc);
        external_ids_end(&w, p);
    }
    aip__esc_free(&w.esc);
    free(w.ext_base);
    if (!w.status)
        flows(&w);
    if (w.kineto)
        aip__trace_kineto_footer(o);
    else
        AIP_OUT_LIT(o, "\n]\n");
    return w.status ? w.status : o->status;
}
