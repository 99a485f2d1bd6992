/*
 * op_rows_tree.c — torch.autograd.profiler's view of the rows of
 * aip_result_op_rows() (op_rows.c gathers them from the model).
 *
 * These are torch's rules, not the model's nesting (span_tree.c): torch
 * nests what is left after its filtered names are removed, by thread id
 * alone, sorted by start with the longer first; folds an only child of the
 * same name into its parent (EventList._remove_dup_nodes); and attributes
 * memory to the innermost event open on the record's thread.  Moved here
 * from the Python extension's trace_view.json reader, which applied them
 * to the trace read back; the order of every sort is the same, so that
 * events() keeps its order.
 */
#include "op_rows.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

static int by_tid_start(const void *a, const void *b)
{
    const aip_op_row *x = &((const aip__orow *)a)->r, *y = &((const aip__orow *)b)->r;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->dur_ns > y->dur_ns ? -1 : x->dur_ns < y->dur_ns;
}

static int mem_by_tid_ts(const void *a, const void *b)
{
    const aip__omem *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int same_name(const aip__ostrings *s, int32_t a, int32_t b)
{
    if (a == b)
        return 1;
    if (a < 0 || b < 0 || s->len[a] != s->len[b])
        return 0;
    return !memcmp(s->text[a], s->text[b], s->len[a]);
}

/* Parents, then torch's folding, then self times; v sorted by thread and
 * start, so parents precede children. */
static aip_status build_tree(aip__orow *v, size_t n, const aip__ostrings *s)
{
    int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!stack)
        return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && v[i].r.tid != v[i - 1].r.tid)
            depth = 0;
        int64_t end = v[i].r.start_ns + v[i].r.dur_ns;
        while (depth && v[stack[depth - 1]].r.start_ns + v[stack[depth - 1]].r.dur_ns < end)
            depth--;
        if (depth) {
            v[i].r.parent = stack[depth - 1];
            v[stack[depth - 1]].nchild++;
        }
        stack[depth++] = (int32_t)i;
    }
    free(stack);
    for (size_t i = 0; i < n; i++) {
        int32_t p = v[i].r.parent;
        while (p >= 0 && v[p].removed)
            p = v[p].r.parent;
        v[i].r.parent = p;
        if (p >= 0 && v[p].nchild == 1 && same_name(s, v[p].r.name, v[i].r.name)) {
            v[i].removed = 1;
            v[p].nchild = v[i].nchild;
        }
    }
    for (size_t i = 0; i < n; i++)
        v[i].r.self_ns = v[i].r.dur_ns;
    for (size_t i = 0; i < n; i++)
        if (!v[i].removed && v[i].r.parent >= 0)
            v[v[i].r.parent].r.self_ns -= v[i].r.dur_ns;
    return AIP_OK;
}

/* Memory records to the rows around them; those outside every row are
 * appended to v as MEMORY rows.  Returns how many. */
static size_t attach_memory(aip__orow *v, size_t n, aip__omem *m, size_t nm, int32_t name)
{
    if (!nm)
        return 0; /* m may be NULL, which qsort must not get */
    qsort(m, nm, sizeof *m, mem_by_tid_ts);
    size_t top = 0, i = 0;
    for (size_t j = 0; j < nm; j++) {
        /* The last kept row of this thread starting no later. */
        while (i < n && (v[i].r.tid < m[j].tid ||
                         (v[i].r.tid == m[j].tid && v[i].r.start_ns <= m[j].ts)))
            i++;
        int32_t inner = -1;
        for (size_t k = i; k-- > 0 && v[k].r.tid == m[j].tid;)
            if (!v[k].removed) {
                inner = (int32_t)k;
                break;
            }
        while (inner >= 0 && v[inner].r.start_ns + v[inner].r.dur_ns < m[j].ts)
            inner = v[inner].r.parent;
        if (inner < 0) {
            v[n + top++] = (aip__orow){
                .r = {.start_ns = m[j].ts, .tid = m[j].tid, .sequence_nr = -1,
                      .memory = m[j].bytes, .self_memory = m[j].bytes, .parent = -1,
                      .name = name, .shapes = -1, .types = -1, .stack = -1, .module = -1,
                      .kind = AIP_OP_ROW_MEMORY}};
            continue;
        }
        v[inner].r.self_memory += m[j].bytes;
        for (int32_t p = inner; p >= 0; p = v[p].r.parent)
            v[p].r.memory += m[j].bytes;
    }
    return top;
}

static int by_start_end(const void *a, const void *b)
{
    const aip_op_row *x = &(*(aip__orow *const *)a)->r, *y = &(*(aip__orow *const *)b)->r;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    int64_t ex = x->start_ns + x->dur_ns, ey = y->start_ns + y->dur_ns;
    return ex > ey ? -1 : ex < ey;
}

aip_status aip__op_rows_tree(aip__orow *v, size_t n, aip__omem *m, size_t nm,
                             int32_t memory_name, const aip__ostrings *s, int64_t base,
                             aip_op_row **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (n) /* qsort wants a non-NULL array even for zero items */
        qsort(v, n, sizeof *v, by_tid_start);
    aip_status st = build_tree(v, n, s);
    if (st)
        return st;
    size_t total = n + attach_memory(v, n, m, nm, memory_name), k = 0;
    aip__orow **order = malloc((total ? total : 1) * sizeof *order);
    int32_t *pos = malloc((total ? total : 1) * sizeof *pos);
    aip_op_row *rows = malloc((total ? total : 1) * sizeof *rows);
    if (!order || !pos || !rows) {
        free(order);
        free(pos);
        free(rows);
        return aip__fail(AIP_ERR_NOMEM, "no memory for op rows");
    }
    for (size_t i = 0; i < total; i++)
        if (!v[i].removed)
            order[k++] = &v[i];
    qsort(order, k, sizeof *order, by_start_end);
    for (size_t i = 0; i < k; i++)
        pos[order[i] - v] = (int32_t)i;
    for (size_t i = 0; i < k; i++) {
        rows[i] = order[i]->r;
        rows[i].start_ns -= base;
        rows[i].parent = rows[i].parent >= 0 ? pos[rows[i].parent] : -1;
    }
    free(order);
    free(pos);
    *out = rows;
    *n_out = k;
    return AIP_OK;
}
