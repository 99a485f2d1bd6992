/*
 * op_rows.c — aip_result_op_rows(): a result directory's ops and
 * annotations as rows for the Python package (aiprof_integration.h).
 *
 * The directory is loaded and derived as the analyser does
 * (aip__result_open); the rows are what trace_view.json draws as cpu_op
 * and user_annotation slices (aip__thread_slices, with the same args
 * trace_json.c writes) and its [memory] instants, gathered here and handed
 * to torch's rules in op_rows_tree.c.  Python used to get the same by
 * parsing trace_view.json back with a JSON scanner of its own; now the
 * column schema lives in one place and Python needs no trace file.
 *
 * Strings are the texts of the model's string tables, numbered in the
 * order rows first use them (each process's ids mapped once); the model
 * stays loaded until aip_op_rows_free(), so the texts are not copied.
 */
#include "op_rows.h"
#include "result.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

typedef struct holder {
    aip__model m;
    aip__ostrings s;
    size_t cap_text, cap_len;
} holder;

/* What gathering one process needs. */
typedef struct gather {
    holder *h;
    const aip__process *p;
    int32_t *gid;           /* by string id of p: global index, -1 = not yet */
    int8_t *filt;           /* by string id: -1 unknown, 0 kept, 1 filtered */
    const char **filtered;  /* sorted */
    size_t n_filtered;
    aip__orow *v;
    size_t n, cap;
    aip__omem *mem;
    size_t nm, cap_m;
} gather;

static aip_status grow(void **a, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return AIP_OK;
    size_t c = *cap ? *cap * 2 : 1024;
    while (c < need)
        c *= 2;
    void *p = realloc(*a, c * elem);
    if (!p)
        return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    *a = p;
    *cap = c;
    return AIP_OK;
}

static int32_t add_string(holder *h, const char *text, size_t len)
{
    if (grow((void **)&h->s.text, &h->cap_text, h->s.n + 1, sizeof *h->s.text) ||
        grow((void **)&h->s.len, &h->cap_len, h->s.n + 1, sizeof *h->s.len))
        return -2;
    h->s.text[h->s.n] = text;
    h->s.len[h->s.n] = len;
    return (int32_t)h->s.n++;
}

/* The global index of string `id` of the process (id 0: the empty text,
 * as trace_view.json writes it); -2 on no memory. */
static int32_t string_of(gather *g, uint32_t id)
{
    if (id >= g->p->strings.n_ent)
        id = 0; /* undefined ids read as "" (aip__model_str) */
    if (g->gid[id] < 0) {
        size_t len;
        const char *text = aip__model_str(g->p, id, &len);
        g->gid[id] = add_string(g->h, text, len);
    }
    return g->gid[id];
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_filtered(gather *g, uint32_t id)
{
    if (id >= g->p->strings.n_ent)
        id = 0;
    if (g->filt[id] < 0) {
        size_t len;
        const char *text = aip__model_str(g->p, id, &len);
        size_t lo = 0, hi = g->n_filtered;
        g->filt[id] = 0;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            const char *f = g->filtered[mid];
            int c = aip__text_cmp(text, len, f, strlen(f));
            if (!c) {
                g->filt[id] = 1;
                break;
            }
            if (c < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
    }
    return g->filt[id];
}

/* The args trace_json.c's op_args writes, as row fields. */
static int row_args(gather *g, const aip__thread *t, const aip__span *s, aip_op_row *r)
{
    aip__op_fields f;
    aip__model_op_fields(t, s, &f);
    if (f.has_seq && f.sequence_number >= 0) {
        r->sequence_nr = f.sequence_number;
        r->fwd_thread = (int64_t)f.fwd_thread_id;
    }
    if (f.has_shapes && ((r->shapes = string_of(g, f.input_shapes)) < -1 ||
                         (r->types = string_of(g, f.input_dtypes)) < -1))
        return -1;
    if (f.has_stack && f.call_stack && (r->stack = string_of(g, f.call_stack)) < -1)
        return -1;
    if (f.has_stack && f.module_hierarchy &&
        (r->module = string_of(g, f.module_hierarchy)) < -1)
        return -1;
    r->flops = (int64_t)f.flops;
    return 0;
}

static aip_status gather_thread(gather *g, const aip__thread *t)
{
    size_t n;
    const aip__span *sl = aip__thread_slices(t, &n);
    for (size_t i = 0; i < n; i++) {
        const aip__span *s = &sl[i];
        if ((s->kind != AIP_SPAN_OP && s->kind != AIP_SPAN_ANNOTATION) || is_filtered(g, s->name))
            continue;
        aip_status st = grow((void **)&g->v, &g->cap, g->n + 1, sizeof *g->v);
        if (st)
            return st;
        aip__orow *o = &g->v[g->n++];
        *o = (aip__orow){.r = {.start_ns = s->start, .dur_ns = s->end - s->start,
                               .tid = (int64_t)t->tid, .sequence_nr = -1, .parent = -1,
                               .name = string_of(g, s->name), .shapes = -1, .types = -1,
                               .stack = -1, .module = -1,
                               .kind = s->kind == AIP_SPAN_OP ? AIP_OP_ROW_OP
                                                              : AIP_OP_ROW_ANNOTATION}};
        if (o->r.name < 0 ||
            ((s->kind == AIP_SPAN_OP || s->aux) && row_args(g, t, s, &o->r)))
            return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    }
    return AIP_OK;
}

static aip_status gather_process(gather *g, const aip__process *p)
{
    g->p = p;
    size_t ne = p->strings.n_ent ? p->strings.n_ent : 1;
    g->gid = malloc(ne * sizeof *g->gid);
    g->filt = malloc(ne);
    if (!g->gid || !g->filt)
        return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    memset(g->gid, 0xff, ne * sizeof *g->gid);
    memset(g->filt, 0xff, ne);
    aip_status st = AIP_OK;
    for (size_t ti = 0; ti < p->n_threads && !st; ti++)
        st = gather_thread(g, &p->threads[ti]);
    for (size_t i = 0; i < p->memory.n && !st; i++) {
        const aip__mem_ev *e = &p->memory.v[i];
        st = grow((void **)&g->mem, &g->cap_m, g->nm + 1, sizeof *g->mem);
        if (!st)
            g->mem[g->nm++] = (aip__omem){(int64_t)p->threads[e->thread].tid, e->bytes, e->ts};
    }
    free(g->gid);
    free(g->filt);
    g->gid = NULL;
    g->filt = NULL;
    return st;
}

static aip_status make_rows(holder *h, const char *const *filtered, size_t n_filtered,
                            aip_op_rows *out)
{
    gather g = {.h = h, .n_filtered = n_filtered};
    g.filtered = malloc((n_filtered ? n_filtered : 1) * sizeof *g.filtered);
    if (!g.filtered)
        return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    for (size_t i = 0; i < n_filtered; i++)
        g.filtered[i] = filtered[i] ? filtered[i] : "";
    qsort(g.filtered, n_filtered, sizeof *g.filtered, cmp_cstr);
    aip_status st = AIP_OK;
    for (size_t pi = 0; pi < h->m.n_procs && !st; pi++)
        st = gather_process(&g, &h->m.procs[pi]);
    int32_t mem_name = -1;
    if (!st && g.nm && (mem_name = add_string(h, "[memory]", 8)) < 0)
        st = aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    if (!st) /* room for a MEMORY row per record */
        st = grow((void **)&g.v, &g.cap, g.n + g.nm + 1, sizeof *g.v);
    int64_t base = h->m.first_ns - h->m.first_ns % 1000000000;
    if (!st)
        st = aip__op_rows_tree(g.v, g.n, g.mem, g.nm, mem_name, &h->s, base, &out->rows,
                               &out->n);
    free(g.filtered);
    free(g.v);
    free(g.mem);
    free(g.gid);
    free(g.filt);
    out->base_ns = base;
    return st;
}

aip_status aip_result_op_rows(const char *result_dir, const char *const *filtered,
                              size_t n_filtered, int quiet, aip_op_rows *out)
{
    if (!out)
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_result_op_rows: out is required");
    memset(out, 0, sizeof *out);
    if (!result_dir || (n_filtered && !filtered))
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_result_op_rows: result_dir is required");
    holder *h = calloc(1, sizeof *h);
    if (!h)
        return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    out->internal = h;
    aip__run_log r;
    aip_status st = aip__result_open(result_dir, quiet, &r, &h->m);
    aip__runlog_free(&r);
    if (!st)
        st = make_rows(h, filtered, n_filtered, out);
    out->strings = h->s.text;
    out->string_lens = h->s.len;
    out->n_strings = h->s.n;
    return st;
}

void aip_op_rows_free(aip_op_rows *rows)
{
    if (!rows)
        return;
    holder *h = rows->internal;
    if (h) {
        aip__model_free(&h->m);
        free(h->s.text);
        free(h->s.len);
        free(h);
    }
    free(rows->rows);
    memset(rows, 0, sizeof *rows);
}
