/*
 * nesting.c — the slices a timeline draws for one thread: its spans, with
 * partial overlaps split so that any two nest or are disjoint.
 *
 * Viewers (Perfetto, speedscope, the Chrome DevTools engine) draw a thread
 * track as one stack; a slice that starts inside another and ends after it
 * is drawn wrongly or dropped.  Recorded spans can overlap so: Python calls
 * (with_stack) are seen by the interpreter while ops and ranges are opened
 * and closed inside them (torch's record_function opens its range inside
 * the `_ops.py __call__` that `__enter__` makes, and closes it inside
 * `__exit__`'s), and separate stacks (ranges, annotations, the step range)
 * can be closed out of order by the program.  The rule (docs/ANALYSIS.md):
 *
 *   - a Python-function slice yields to an op, annotation or range: when
 *     one of those starts inside it and ends after it, the Python slice
 *     ends where the other starts, and continues from there as a second
 *     slice (same name and ids) inside the other;
 *   - otherwise the later-starting slice yields: it ends where the earlier
 *     one ends and continues from there as a second slice.
 *
 * No recorded time is changed and no time is lost: every piece is a part
 * of its span, and the pieces of a span cover it.  Only the drawn slices
 * (aip__thread.slices) are split; the spans stay as recorded, so
 * statistics, self times, steps and flows do not see the pieces.  A thread
 * whose spans already nest gets no copy (slices == NULL).
 *
 * One pass in start order: a stack of open slices, and a heap of pending
 * pieces (continuations) merged with the sorted spans.
 */
#include "analysis_int.h"
#include "error.h"

#include <stdlib.h>

/* Do the sorted spans of t nest?  One pass, a stack of open ends (as deep
 * as the spans nest, not as long as the thread). */
static aip_status spans_nest_already(const aip__thread *t, int *yes)
{
    size_t n = t->n_spans, depth = 0, cap = 0;
    int64_t *ends = NULL;
    *yes = 1;
    for (size_t i = 0; i < n && *yes; i++) {
        const aip__span *s = &t->spans[i];
        while (depth && ends[depth - 1] <= s->start)
            depth--;
        if (depth && ends[depth - 1] < s->end) {
            *yes = 0;
            break;
        }
        if (aip__model_grow((void **)&ends, &cap, depth + 1, sizeof *ends)) {
            free(ends);
            return aip__fail(AIP_ERR_NOMEM, "no memory to check slice nesting");
        }
        ends[depth++] = s->end;
    }
    free(ends);
    return AIP_OK;
}

typedef struct pending {
    aip__span sp;
    uint64_t seq;           /* ties: first made, first drawn (outer first) */
} pending;

typedef struct repair {
    aip__span *out;
    size_t n_out, cap_out;
    size_t *stk;            /* indices into out */
    size_t depth, cap_stk;
    pending *heap;
    size_t n_heap, cap_heap;
    uint64_t seq, pieces;
} repair;

/* Draw order: start ascending, longer first. */
static int before(const aip__span *a, const aip__span *b)
{
    return a->start < b->start || (a->start == b->start && a->end > b->end);
}

static int heap_less(const pending *a, const pending *b)
{
    if (before(&a->sp, &b->sp))
        return 1;
    if (before(&b->sp, &a->sp))
        return 0;
    return a->seq < b->seq;
}

static aip_status heap_push(repair *r, const aip__span *sp)
{
    if (aip__model_grow((void **)&r->heap, &r->cap_heap, r->n_heap + 1, sizeof *r->heap))
        return AIP_ERR_NOMEM;
    size_t i = r->n_heap++;
    pending x = {*sp, r->seq++};
    x.sp.piece = 1;
    while (i && heap_less(&x, &r->heap[(i - 1) / 2])) {
        r->heap[i] = r->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->heap[i] = x;
    r->pieces++;
    return AIP_OK;
}

static aip__span heap_pop(repair *r)
{
    aip__span top = r->heap[0].sp;
    pending x = r->heap[--r->n_heap];
    size_t i = 0, n = r->n_heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_less(&r->heap[c + 1], &r->heap[c]))
            c++;
        if (!heap_less(&r->heap[c], &x))
            break;
        r->heap[i] = r->heap[c];
        i = c;
    }
    if (n)
        r->heap[i] = x;
    return top;
}

/* Place span s (the next in draw order) on the stack of open slices,
 * splitting what partially overlaps by the rule above. */
static aip_status place(repair *r, aip__span s)
{
    while (r->depth && r->out[r->stk[r->depth - 1]].end <= s.start)
        r->depth--;
    while (r->depth) {
        aip__span *top = &r->out[r->stk[r->depth - 1]];
        if (top->end >= s.end)
            break; /* s nests in top */
        /* top->start <= s.start < top->end < s.end: a partial overlap. */
        if (s.kind != AIP_SPAN_PYFUNC && top->kind == AIP_SPAN_PYFUNC &&
            top->start < s.start) {
            /* The Python call yields: it ends where s starts and goes on inside s. */
            aip__span rest = *top;
            rest.start = s.start;
            if (heap_push(r, &rest))
                return AIP_ERR_NOMEM;
            top->end = s.start;
            r->depth--;
            continue;
        }
        /* s yields: it ends with top and goes on after it. */
        aip__span rest = s;
        rest.start = top->end;
        if (heap_push(r, &rest))
            return AIP_ERR_NOMEM;
        s.end = top->end;
        break;
    }
    if (aip__array_grow((void **)&r->out, &r->cap_out, r->n_out + 1, sizeof *r->out) ||
        aip__model_grow((void **)&r->stk, &r->cap_stk, r->depth + 1, sizeof *r->stk))
        return AIP_ERR_NOMEM;
    r->out[r->n_out] = s;
    r->stk[r->depth++] = r->n_out++;
    return AIP_OK;
}

aip_status aip__slices_build(aip__thread *t, uint64_t *pieces)
{
    aip__array_free(t->slices);
    t->slices = NULL;
    t->n_slices = 0;
    int nested;
    aip_status st = spans_nest_already(t, &nested);
    if (st || nested)
        return st;
    repair r = {0};
    size_t i = 0;
    while (!st && (i < t->n_spans || r.n_heap)) {
        aip__span next;
        /* On a tie a pending piece goes first: it continues an outer slice. */
        if (r.n_heap && (i == t->n_spans || !before(&t->spans[i], &r.heap[0].sp)))
            next = heap_pop(&r);
        else
            next = t->spans[i++];
        st = place(&r, next);
    }
    free(r.stk);
    free(r.heap);
    if (st) {
        aip__array_free(r.out);
        return aip__fail(AIP_ERR_NOMEM, "no memory to split overlapping slices");
    }
    t->slices = r.out;
    t->n_slices = r.n_out;
    *pieces += r.pieces;
    return AIP_OK;
}
