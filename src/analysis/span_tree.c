/*
 * span_tree.c — per-thread ordering and nesting of spans.
 *
 * Spans arrive in completion order (children before their parent), which
 * is nearly sorted by start: turning it into start order moves each parent
 * back past its descendants, so an insertion sort costs n × depth.  That is
 * tried first with a work budget; input that is not of this shape (hostile
 * or reordered data) falls back to a merge sort, so the worst case stays
 * O(n log n).  Ordering: start ascending, longer first on equal starts, and
 * for identical intervals the one later in the file first (it completed
 * last, so it is the outer one).
 *
 * Nesting is one pass with a stack: a span is a child of the innermost open
 * span that contains it; a span that only partly overlaps the top closes it.
 * Self time = duration − total duration of direct children (any kind: ops,
 * record_function annotations and mstx ranges all count as work done inside
 * the parent), clamped at 0 for overlapping children.
 */
#include "analysis_int.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

/* `later` (from later in the file) goes before `earlier`? */
static inline int goes_before(const aip__span *later, const aip__span *earlier)
{
    return later->start < earlier->start ||
           (later->start == earlier->start && later->end >= earlier->end);
}

/* Merge sorted runs a (earlier in the file) and b (later) into out. */
static void merge(const aip__span *a, size_t na, const aip__span *b, size_t nb, aip__span *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = goes_before(&b[j], &a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* Bottom-up merge sort of s[0..n) (in file order) using tmp[0..n). */
static void merge_sort(aip__span *s, size_t n, aip__span *tmp)
{
    aip__span *src = s, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);
        }
        aip__span *x = src;
        src = dst;
        dst = x;
    }
    if (src != s)
        memcpy(s, src, n * sizeof *s);
}

aip_status aip__spans_sort(aip__span *s, size_t n)
{
    uint64_t budget = 32 * (uint64_t)n + 4096, work = 0;
    size_t i = 1;
    for (; i < n; i++) {
        if (!goes_before(&s[i], &s[i - 1]))
            continue;
        aip__span x = s[i];
        size_t j = i - 1;
        while (j > 0 && goes_before(&x, &s[j - 1]))
            j--;
        work += i - j;
        memmove(s + j + 1, s + j, (i - j) * sizeof *s);
        s[j] = x;
        if (work > budget) {
            i++;
            break;
        }
    }
    if (i >= n)
        return AIP_OK;
    /* s[0..i) is sorted; sort the rest (still in file order), then merge:
     * every element of the rest is later in the file than the prefix. */
    aip__span *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return aip__fail(AIP_ERR_NOMEM, "no memory to sort %zu spans", n);
    merge_sort(s + i, n - i, tmp);
    memcpy(tmp, s, i * sizeof *s);
    /* Merging back into s is safe: the write position never passes the
     * read position in the second run. */
    merge(tmp, i, s + i, n - i, s);
    free(tmp);
    return AIP_OK;
}

typedef struct open_span {
    size_t idx;
    int64_t children; /* total duration of direct children so far */
} open_span;

aip_status aip__spans_nest(aip__thread *t)
{
    size_t n = t->n_spans;
    free(t->self_ns);
    t->self_ns = n ? malloc(n * sizeof *t->self_ns) : NULL;
    if (n && !t->self_ns)
        return aip__fail(AIP_ERR_NOMEM, "no memory for self times");
    size_t cap = 64, depth = 0, ops_open = 0;
    open_span *stack = malloc(cap * sizeof *stack);
    if (!stack)
        return aip__fail(AIP_ERR_NOMEM, "no memory for nesting");
    aip__span *s = t->spans;
    for (size_t i = 0; i <= n; i++) {
        /* Python functions are trace-only: they neither nest ops nor take
         * from anyone's self time (torch leaves them out of its op tree). */
        if (i < n && s[i].kind == AIP_SPAN_PYFUNC) {
            t->self_ns[i] = s[i].end - s[i].start;
            s[i].top_op = 0;
            continue;
        }
        /* Close every open span that does not contain span i (all at the end). */
        while (depth) {
            open_span *top = &stack[depth - 1];
            const aip__span *p = &s[top->idx];
            if (i < n && s[i].end <= p->end)
                break;
            int64_t self = (p->end - p->start) - top->children;
            t->self_ns[top->idx] = self > 0 ? self : 0;
            if (p->kind == AIP_SPAN_OP)
                ops_open--;
            depth--;
        }
        if (i == n)
            break;
        if (depth)
            stack[depth - 1].children =
                aip__sat_add(stack[depth - 1].children, s[i].end - s[i].start);
        s[i].top_op = s[i].kind == AIP_SPAN_OP && ops_open == 0;
        if (depth == cap) {
            open_span *ns = realloc(stack, 2 * cap * sizeof *stack);
            if (!ns) {
                free(stack);
                return aip__fail(AIP_ERR_NOMEM, "no memory for nesting");
            }
            stack = ns;
            cap *= 2;
        }
        stack[depth++] = (open_span){i, 0};
        if (s[i].kind == AIP_SPAN_OP)
            ops_open++;
    }
    free(stack);
    return AIP_OK;
}

aip_status aip__open_spans_init(aip__open_spans *o, const aip__thread *t, unsigned kinds)
{
    o->t = t;
    o->kinds = kinds;
    o->depth = o->next = 0;
    o->stack = malloc((t->n_spans ? t->n_spans : 1) * sizeof *o->stack);
    return o->stack ? AIP_OK : aip__fail(AIP_ERR_NOMEM, "no memory for a span stack");
}

void aip__open_spans_at(aip__open_spans *o, int64_t at)
{
    const aip__span *sp = o->t->spans;
    /* Open every span that began by `at` (parents come before their
     * children in the sorted spans), closing those ended before it. */
    for (; o->next < o->t->n_spans && sp[o->next].start <= at; o->next++) {
        while (o->depth && sp[o->stack[o->depth - 1]].end < sp[o->next].start)
            o->depth--;
        if (o->kinds & (1u << sp[o->next].kind))
            o->stack[o->depth++] = o->next;
    }
    while (o->depth && sp[o->stack[o->depth - 1]].end < at)
        o->depth--;
}

int64_t aip__open_spans_innermost(const aip__open_spans *o, int64_t at)
{
    for (size_t k = o->depth; k-- > 0;)
        if (o->t->spans[o->stack[k]].end >= at)
            return (int64_t)o->stack[k];
    return -1;
}

void aip__open_spans_free(aip__open_spans *o)
{
    free(o->stack);
    o->stack = NULL;
}
