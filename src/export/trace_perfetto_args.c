/*
 * trace_perfetto_args.c — the args of trace.perfetto-trace's events: what
 * trace_view.json carries in an event's "args" (an op's Sequence number,
 * Input Dims, Input type, Call stack, Module Hierarchy, flops; an mstx
 * range's domain; a Python function's ids; "unfinished" on a span a flight
 * recorder dump wrote still open; an OS runtime call's result and errno;
 * a communication op's op, lib, group, sizes, ranks, seq, tag), as
 * TrackEvent debug annotations.  Their
 * names are interned on the sequence (DebugAnnotationName, one id per
 * AIP_PF_ARG_*), and so are string values that are string ids of the
 * profile (debug_annotation_string_values, the string id as iid): a call
 * stack repeated on thousands of ops is written once per sequence.  An
 * event without args costs nothing here (the bytes-per-event target of a
 * host-only profile holds).
 */
#include "trace_perfetto_int.h"
#include "error.h"
#include "osrt_export.h"
#include "pb_writer.h"

#include <stdlib.h>
#include <string.h>

enum {
    I_DEBUG_ANNOTATION_NAMES = 3, I_DEBUG_ANNOTATION_STRING_VALUES = 29,
    E_DEBUG_ANNOTATIONS = 4,
    D_NAME_IID = 1, D_BOOL = 2, D_UINT = 3, D_INT = 4, D_STRING = 6, D_STRING_IID = 17
};

static const char *const arg_names[AIP_PF_N_ARGS] = {
    [AIP_PF_ARG_SEQUENCE_NUMBER] = "Sequence number", [AIP_PF_ARG_FWD_THREAD_ID] = "Fwd thread id",
    [AIP_PF_ARG_INPUT_DIMS] = "Input Dims", [AIP_PF_ARG_INPUT_TYPE] = "Input type",
    [AIP_PF_ARG_CALL_STACK] = "Call stack", [AIP_PF_ARG_MODULE_HIERARCHY] = "Module Hierarchy",
    [AIP_PF_ARG_FLOPS] = "flops", [AIP_PF_ARG_DOMAIN] = "domain",
    [AIP_PF_ARG_PYTHON_ID] = "Python id", [AIP_PF_ARG_PYTHON_PARENT_ID] = "Python parent id",
    [AIP_PF_ARG_PYTHON_MODULE_ID] = "Python module id", [AIP_PF_ARG_CONTINUED] = "continued",
    [AIP_PF_ARG_UNFINISHED] = "unfinished", [AIP_PF_ARG_RESULT] = "Result",
    [AIP_PF_ARG_ERRNO] = "errno", [AIP_PF_ARG_ERRNO_NAME] = "errno name", [AIP_PF_ARG_OP] = "op",
    [AIP_PF_ARG_LIB] = "lib", [AIP_PF_ARG_GROUP] = "group", [AIP_PF_ARG_RANK_SIZE] = "rank_size",
    [AIP_PF_ARG_GROUP_RANK] = "group_rank", [AIP_PF_ARG_SIZE_BYTE] = "size(Byte)",
    [AIP_PF_ARG_COUNT] = "count", [AIP_PF_ARG_DATA_TYPE] = "data_type", [AIP_PF_ARG_SEQ] = "seq",
    [AIP_PF_ARG_SRC_RANK] = "src rank", [AIP_PF_ARG_DST_RANK] = "dst rank",
    [AIP_PF_ARG_ROOT] = "root", [AIP_PF_ARG_TAG] = "tag", [AIP_PF_ARG_NON_BLOCKING] = "non_blocking"};

_Static_assert(AIP_PF_N_ARGS <= 32, "arg_names is a 32-bit mask");

/* A string id of p that can be interned (defined): else written inline. */
static int internable(const aip__pf *w, uint32_t id)
{
    const aip__process *p = w->p;
    return id && id < p->strings.n_ent && p->strings.ent[id].defined && w->val_seq;
}

size_t aip__pf_args_room(const aip__pf *w, const aip__pf_ev *e)
{
    size_t room = 0, n;
    for (size_t i = 0; i < e->n_args; i++) {
        const aip__pf_arg *a = &e->args[i];
        room += 2 * 48 + 2 * strlen(arg_names[a->key]); /* annotation + interned name */
        if (a->type == AIP_PF_V_STR) {
            aip__model_str(w->p, a->str, &n);
            room += 3 * n + 32; /* U+FFFD for each invalid byte at worst */
        } else if (a->type == AIP_PF_V_LIT) {
            room += 3 * strlen(a->lit) + 32;
        }
    }
    return room;
}

int aip__pf_args_new(aip__pf *w, const aip__pf_ev *e)
{
    int any = 0;
    for (size_t i = 0; i < e->n_args; i++) {
        const aip__pf_arg *a = &e->args[i];
        any |= !(w->arg_names >> a->key & 1);
        if (a->type != AIP_PF_V_STR)
            continue;
        if (!w->val_seq && !w->status) { /* the first string value of p */
            w->val_seq = calloc(w->p->strings.n_ent + 1, sizeof *w->val_seq);
            if (!w->val_seq)
                w->status = aip__fail(AIP_ERR_NOMEM, "no memory for the trace's args");
        }
        any |= internable(w, a->str) && w->val_seq[a->str] != w->seq;
    }
    return any;
}

uint8_t *aip__pf_args_intern(aip__pf *w, uint8_t *d, const aip__pf_ev *e)
{
    uint8_t *m;
    for (size_t i = 0; i < e->n_args; i++) {
        const aip__pf_arg *a = &e->args[i];
        if (!(w->arg_names >> a->key & 1)) {
            d = aip__pb_open(d, I_DEBUG_ANNOTATION_NAMES, &m);
            d = aip__pb_uint(d, 1, a->key);
            d = aip__pb_str(d, 2, arg_names[a->key]);
            d = aip__pb_close(d, m);
            w->arg_names |= 1u << a->key;
        }
        if (a->type == AIP_PF_V_STR && internable(w, a->str) && w->val_seq[a->str] != w->seq) {
            size_t n;
            char *tmp;
            const char *s = aip__model_str(w->p, a->str, &n);
            s = aip__pf_utf8_text(w, s, &n, &tmp);
            d = aip__pb_open(d, I_DEBUG_ANNOTATION_STRING_VALUES, &m);
            d = aip__pb_uint(d, 1, a->str);
            d = aip__pb_bytes(d, 2, s, n);
            d = aip__pb_close(d, m);
            free(tmp);
            w->val_seq[a->str] = w->seq;
        }
    }
    return d;
}

uint8_t *aip__pf_args_put(aip__pf *w, uint8_t *d, const aip__pf_ev *e)
{
    uint8_t *m;
    for (size_t i = 0; i < e->n_args; i++) {
        const aip__pf_arg *a = &e->args[i];
        d = aip__pb_open(d, E_DEBUG_ANNOTATIONS, &m);
        d = aip__pb_uint(d, D_NAME_IID, a->key);
        switch (a->type) {
        case AIP_PF_V_UINT:
            d = aip__pb_uint(d, D_UINT, a->u);
            break;
        case AIP_PF_V_INT:
            d = aip__pb_uint(d, D_INT, a->u);
            break;
        case AIP_PF_V_TRUE:
            d = aip__pb_uint(d, D_BOOL, 1);
            break;
        case AIP_PF_V_STR:
            if (internable(w, a->str)) {
                d = aip__pb_uint(d, D_STRING_IID, a->str);
                break;
            }
            d = aip__pb_bytes(d, D_STRING, "", 0); /* not defined: "" as the JSON's */
            break;
        default: {
            size_t n = strlen(a->lit);
            char *tmp;
            const char *s = aip__pf_utf8_text(w, a->lit, &n, &tmp);
            d = aip__pb_bytes(d, D_STRING, s, n);
            free(tmp);
        }
        }
        d = aip__pb_close(d, m);
    }
    return d;
}

size_t aip__pf_span_args(const aip__thread *t, const aip__span *s, aip__pf_arg *a)
{
    size_t n = 0;
#define ARG(k, ty, field, v) (a[n++] = (aip__pf_arg){.key = (k), .type = (ty), .field = (v)})
    if (s->kind == AIP_SPAN_OP || (s->kind == AIP_SPAN_ANNOTATION && s->aux)) {
        aip__op_fields f;
        aip__model_op_fields(t, s, &f);
        if (f.has_seq && f.sequence_number >= 0) {
            ARG(AIP_PF_ARG_SEQUENCE_NUMBER, AIP_PF_V_INT, u, (uint64_t)f.sequence_number);
            ARG(AIP_PF_ARG_FWD_THREAD_ID, AIP_PF_V_UINT, u, f.fwd_thread_id);
        }
        if (f.has_shapes) {
            ARG(AIP_PF_ARG_INPUT_DIMS, AIP_PF_V_STR, str, f.input_shapes);
            ARG(AIP_PF_ARG_INPUT_TYPE, AIP_PF_V_STR, str, f.input_dtypes);
        }
        if (f.has_stack && f.call_stack)
            ARG(AIP_PF_ARG_CALL_STACK, AIP_PF_V_STR, str, f.call_stack);
        if (f.has_stack && f.module_hierarchy)
            ARG(AIP_PF_ARG_MODULE_HIERARCHY, AIP_PF_V_STR, str, f.module_hierarchy);
        if (f.flops)
            ARG(AIP_PF_ARG_FLOPS, AIP_PF_V_UINT, u, f.flops);
    } else if (s->kind == AIP_SPAN_RANGE) {
        uint32_t dom = s->aux ? aip__model_range_domain(t, s) : 0;
        if (dom)
            ARG(AIP_PF_ARG_DOMAIN, AIP_PF_V_STR, str, dom);
        else
            ARG(AIP_PF_ARG_DOMAIN, AIP_PF_V_LIT, lit, "default");
    } else if (s->kind == AIP_SPAN_PYFUNC && s->aux) {
        aip__pyfunc_fields f;
        aip__model_pyfunc_fields(t, s, &f);
        ARG(AIP_PF_ARG_PYTHON_ID, AIP_PF_V_UINT, u, f.python_id);
        ARG(AIP_PF_ARG_PYTHON_PARENT_ID, AIP_PF_V_UINT, u, f.parent_id);
        if (f.module_id)
            ARG(AIP_PF_ARG_PYTHON_MODULE_ID, AIP_PF_V_UINT, u, f.module_id);
        if (s->piece)
            ARG(AIP_PF_ARG_CONTINUED, AIP_PF_V_TRUE, u, 1);
    }
    if (s->unfinished)
        ARG(AIP_PF_ARG_UNFINISHED, AIP_PF_V_TRUE, u, 1);
#undef ARG
    return n;
}

#define ARG(k, ty, field, v) (a[n++] = (aip__pf_arg){.key = (k), .type = (ty), .field = (v)})

size_t aip__pf_osrt_args(const aip__osrt_call *c, aip__pf_arg *a)
{
    size_t n = 0;
    ARG(AIP_PF_ARG_RESULT, AIP_PF_V_INT, u, (uint64_t)(int64_t)c->result);
    if (c->failed) {
        ARG(AIP_PF_ARG_ERRNO, AIP_PF_V_INT, u, (uint64_t)(int64_t)c->error);
        const char *en = aip__osrt_errno_name(c->error);
        if (en)
            ARG(AIP_PF_ARG_ERRNO_NAME, AIP_PF_V_LIT, lit, en);
    }
    return n;
}

size_t aip__pf_comm_args(const aip__process *p, const aip__comm_event *e, aip__pf_arg *a)
{
    size_t n = 0;
    const aip__comm_group_info *g = aip__model_comm_group(p, e->group);
    ARG(AIP_PF_ARG_OP, AIP_PF_V_STR, str, e->name);
    ARG(AIP_PF_ARG_LIB, AIP_PF_V_LIT, lit, aip__tj_comm_lib_name(e->lib));
    if (g) {
        ARG(AIP_PF_ARG_GROUP, AIP_PF_V_STR, str, g->name);
        ARG(AIP_PF_ARG_RANK_SIZE, AIP_PF_V_UINT, u, g->n_ranks);
        ARG(AIP_PF_ARG_GROUP_RANK, AIP_PF_V_UINT, u, g->my_rank);
    }
    ARG(AIP_PF_ARG_SIZE_BYTE, AIP_PF_V_UINT, u, e->bytes);
    ARG(AIP_PF_ARG_COUNT, AIP_PF_V_UINT, u, e->count);
    if (e->dtype)
        ARG(AIP_PF_ARG_DATA_TYPE, AIP_PF_V_STR, str, e->dtype);
    if (e->kind == AIP_COMM_COLLECTIVE)
        ARG(AIP_PF_ARG_SEQ, AIP_PF_V_UINT, u, e->seq);
    if (e->peer != AIP_RAW_NO_RANK)
        ARG(e->kind == AIP_COMM_RECV ? AIP_PF_ARG_SRC_RANK : AIP_PF_ARG_DST_RANK, AIP_PF_V_UINT,
            u, e->peer);
    if (e->root != AIP_RAW_NO_RANK)
        ARG(AIP_PF_ARG_ROOT, AIP_PF_V_UINT, u, e->root);
    if (e->tag >= 0)
        ARG(AIP_PF_ARG_TAG, AIP_PF_V_INT, u, (uint64_t)(int64_t)e->tag);
    if (e->flags & AIP_COMMF_NONBLOCKING)
        ARG(AIP_PF_ARG_NON_BLOCKING, AIP_PF_V_TRUE, u, 1);
    return n;
}
#undef ARG
