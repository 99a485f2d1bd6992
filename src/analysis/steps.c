/*
 * steps.c — training steps and the host-only step trace.
 *
 * Steps are the `ProfilerStep#N` annotations (the same N on several threads
 * or processes is one step spanning all of them).  step_trace_time's host
 * definitions (docs/RESULT_LAYOUT.md): Computing is the length of the union
 * of top-level op intervals inside the step; Preparing is the first
 * top-level op start in the step minus the step start.  Both come from one
 * sweep over every thread's top-level ops in start order (a k-way merge of
 * the already sorted per-thread arrays), so no interval list of ops is
 * built.  The same sweep measures how much of the communication ops' union
 * (comm_derive.c) the top-level ops cover; Communication, Bubble (the
 * receives) and an earlier Preparing come from that union
 * (docs/COMMUNICATION.md).  The other columns follow here
 * (aip__step_row_derive), once for both files that print the step trace.
 */
#include "model.h"
#include "comm_derive.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

#define STEP_PREFIX "ProfilerStep#"
#define STEP_PREFIX_LEN 13

int aip__step_number(const char *name, size_t len, int64_t *number)
{
    if (len <= STEP_PREFIX_LEN || len > STEP_PREFIX_LEN + 18 ||
        memcmp(name, STEP_PREFIX, STEP_PREFIX_LEN) != 0)
        return 0;
    int64_t v = 0;
    for (size_t i = STEP_PREFIX_LEN; i < len; i++) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        v = v * 10 + (name[i] - '0');
    }
    *number = v;
    return 1;
}

uint8_t *aip__step_name_flags(const aip__process *p)
{
    size_t n = p->strings.n_ent;
    uint8_t *f = calloc(n ? n : 1, 1);
    if (!f)
        return NULL;
    for (size_t id = 1; id < n; id++) {
        size_t len;
        const char *s = aip__model_str(p, (uint32_t)id, &len);
        int64_t num;
        f[id] = (uint8_t)aip__step_number(s, len, &num);
    }
    return f;
}

aip_status aip__steps_add(aip__model *m, const aip__process *p, const uint8_t *is_step,
                          size_t *cap)
{
    for (size_t ti = 0; ti < p->n_threads; ti++) {
        const aip__thread *t = &p->threads[ti];
        for (size_t i = 0; i < t->n_spans; i++) {
            const aip__span *s = &t->spans[i];
            if (s->kind != AIP_SPAN_ANNOTATION || s->name >= p->strings.n_ent || !is_step[s->name])
                continue;
            size_t len;
            const char *name = aip__model_str(p, s->name, &len);
            aip__step st = {0, s->start, s->end};
            aip__step_number(name, len, &st.number);
            aip_status rc = aip__model_grow((void **)&m->steps, cap, m->n_steps + 1, sizeof st);
            if (rc)
                return rc;
            m->steps[m->n_steps++] = st;
        }
    }
    return AIP_OK;
}

static int cmp_step(const void *a, const void *b)
{
    const aip__step *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

void aip__steps_finish(aip__model *m)
{
    if (!m->n_steps)
        return;
    qsort(m->steps, m->n_steps, sizeof *m->steps, cmp_step);
    size_t k = 0;
    for (size_t i = 0; i < m->n_steps; i++) {
        if (k && m->steps[k - 1].number == m->steps[i].number) {
            aip__step *d = &m->steps[k - 1];
            if (m->steps[i].start < d->start)
                d->start = m->steps[i].start;
            if (m->steps[i].end > d->end)
                d->end = m->steps[i].end;
        } else {
            m->steps[k++] = m->steps[i];
        }
    }
    m->n_steps = k;
}

/* ---- the sweep ---------------------------------------------------- */

typedef struct cursor {
    int64_t key;              /* start of the cursor's current top-level op */
    const aip__thread *t;
    size_t i;
} cursor;

static int cursor_less(const cursor *a, const cursor *b) { return a->key < b->key; }

static void heap_down(cursor *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cursor_less(&h[l], &h[m]))
            m = l;
        if (r < n && cursor_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        cursor x = h[i];
        h[i] = h[m];
        h[m] = x;
        i = m;
    }
}

/* Move a cursor to its next top-level op at index >= c->i; 0 if none. */
static int cursor_seek(cursor *c)
{
    const aip__thread *t = c->t;
    while (c->i < t->n_spans && !t->spans[c->i].top_op)
        c->i++;
    if (c->i >= t->n_spans)
        return 0;
    c->key = t->spans[c->i].start;
    return 1;
}

typedef struct sweep {
    aip__step_row *rows;
    size_t n_rows;
    const size_t *order;      /* rows by start */
    size_t next_first, next_comp;
    size_t *pending, n_pending;
    size_t *active, n_active;
    const int64_t *comm;      /* union of comm op intervals, pairs */
    size_t n_comm, next_comm; /* first pair that may meet a later segment */
    int64_t *covered;         /* per row: comm time inside top-level ops */
} sweep;

static void first_op(sweep *w, int64_t s)
{
    while (w->next_first < w->n_rows && w->rows[w->order[w->next_first]].start <= s)
        w->pending[w->n_pending++] = w->order[w->next_first++];
    /* Every pending row is settled by the first op starting at or after its
     * start: either the op is inside the row or no op started in it. */
    for (size_t k = 0; k < w->n_pending; k++) {
        aip__step_row *r = &w->rows[w->pending[k]];
        if (s < r->end)
            r->preparing = s - r->start;
    }
    w->n_pending = 0;
}

static void add_segment(sweep *w, int64_t a, int64_t b)
{
    while (w->next_comm < w->n_comm && w->comm[2 * w->next_comm + 1] <= a)
        w->next_comm++; /* segments come in order: this pair ends before them all */
    while (w->next_comp < w->n_rows && w->rows[w->order[w->next_comp]].start < b)
        w->active[w->n_active++] = w->order[w->next_comp++];
    size_t keep = 0;
    for (size_t k = 0; k < w->n_active; k++) {
        aip__step_row *r = &w->rows[w->active[k]];
        int64_t lo = a > r->start ? a : r->start, hi = b < r->end ? b : r->end;
        if (hi > lo) {
            r->computing += hi - lo;
            for (size_t c = w->next_comm; c < w->n_comm && w->comm[2 * c] < hi; c++) {
                int64_t x = w->comm[2 * c] > lo ? w->comm[2 * c] : lo;
                int64_t y = w->comm[2 * c + 1] < hi ? w->comm[2 * c + 1] : hi;
                if (y > x)
                    w->covered[w->active[k]] += y - x;
            }
        }
        if (r->end > b) /* later segments start after b */
            w->active[keep++] = w->active[k];
    }
    w->n_active = keep;
}

static int cmp_row_start(const void *a, const void *b, void *ctx)
{
    const aip__step_row *rows = ctx;
    const aip__step_row *x = &rows[*(const size_t *)a];
    const aip__step_row *y = &rows[*(const size_t *)b];
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static aip_status run_sweep(aip__model *m, sweep *w)
{
    size_t n_threads = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        n_threads += m->procs[i].n_threads;
    cursor *heap = malloc((n_threads ? n_threads : 1) * sizeof *heap);
    if (!heap)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the step trace");
    size_t n = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        for (size_t j = 0; j < m->procs[i].n_threads; j++) {
            heap[n] = (cursor){0, &m->procs[i].threads[j], 0};
            if (cursor_seek(&heap[n]))
                n++;
        }
    for (size_t i = n; i-- > 0;)
        heap_down(heap, n, i);
    int have = 0;
    int64_t a = 0, b = 0;
    while (n) {
        const aip__span *s = &heap[0].t->spans[heap[0].i];
        first_op(w, s->start);
        if (have && s->start <= b) {
            if (s->end > b)
                b = s->end;
        } else {
            if (have)
                add_segment(w, a, b);
            a = s->start;
            b = s->end;
            have = 1;
        }
        heap[0].i++;
        if (!cursor_seek(&heap[0]))
            heap[0] = heap[--n];
        heap_down(heap, n, 0);
    }
    if (have)
        add_segment(w, a, b);
    free(heap);
    return AIP_OK;
}

/* The columns that follow from Computing, Communication, Communication(Not
 * Overlapped), Bubble and the step's length, so that Computing +
 * Communication(Not Overlapped) + Free = the step and Communication =
 * Overlapped + Communication(Not Overlapped). */
void aip__step_row_derive(aip__step_row *r)
{
    int64_t dur = r->end - r->start;
    r->overlapped = r->communication - r->comm_not_overlapped;
    int64_t busy = r->computing + r->comm_not_overlapped;
    r->free = dur - busy > 0 ? dur - busy : 0;
    r->stage = dur - r->bubble;
    r->comm_not_overlapped_excl_recv =
        r->comm_not_overlapped - r->bubble > 0 ? r->comm_not_overlapped - r->bubble : 0;
}

void aip__step_row_columns(const aip__step_row *r, int64_t out[AIP_STEP_TRACE_COLS])
{
    const int64_t cols[AIP_STEP_TRACE_COLS] = {
        r->computing, r->comm_not_overlapped, r->overlapped, r->communication, r->free,
        r->stage, r->bubble, r->comm_not_overlapped_excl_recv, r->preparing};
    memcpy(out, cols, sizeof cols);
}

aip_status aip__step_trace_compute(aip__model *m)
{
    size_t n = m->n_steps ? m->n_steps : 1;
    free(m->step_rows);
    m->step_rows = calloc(n, sizeof *m->step_rows);
    size_t *buf = malloc(3 * n * sizeof *buf);
    if (!m->step_rows || !buf) {
        free(buf);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the step trace");
    }
    m->n_step_rows = n;
    if (m->n_steps) {
        for (size_t i = 0; i < n; i++)
            m->step_rows[i] = (aip__step_row){.has_number = 1, .device = -1,
                                             .number = m->steps[i].number,
                                             .start = m->steps[i].start, .end = m->steps[i].end};
    } else {
        m->step_rows[0] = (aip__step_row){.device = -1, .start = m->first_ns, .end = m->last_ns};
    }
    int64_t *comm = NULL, *recv = NULL, *covered = NULL;
    size_t n_comm = 0, n_recv = 0;
    aip_status s = aip__comm_intervals(m, 0, &comm, &n_comm);
    if (!s)
        s = aip__comm_intervals(m, 1, &recv, &n_recv);
    if (!s && n_comm && !(covered = calloc(n, sizeof *covered)))
        s = aip__fail(AIP_ERR_NOMEM, "no memory for the step trace");
    if (s) {
        free(buf);
        free(comm);
        free(recv);
        return s;
    }
    sweep w = {.rows = m->step_rows, .n_rows = n, .order = buf, .pending = buf + n,
               .active = buf + 2 * n, .comm = comm, .n_comm = n_comm, .covered = covered};
    for (size_t i = 0; i < n; i++) {
        buf[i] = i;
        m->step_rows[i].preparing = -1; /* no top-level op yet */
    }
    qsort_r(buf, n, sizeof *buf, cmp_row_start, m->step_rows);
    s = run_sweep(m, &w);
    free(buf);
    for (size_t i = 0; i < n; i++) {
        aip__step_row *r = &m->step_rows[i];
        int64_t first = -1;
        r->communication = aip__intervals_clip(comm, n_comm, r->start, r->end, &first);
        r->bubble = aip__intervals_clip(recv, n_recv, r->start, r->end, NULL);
        r->comm_not_overlapped = r->communication - (covered ? covered[i] : 0);
        if (first >= 0 && (r->preparing < 0 || first - r->start < r->preparing))
            r->preparing = first - r->start;
        if (r->preparing < 0)
            r->preparing = 0;
        aip__step_row_derive(r);
    }
    free(comm);
    free(recv);
    free(covered);
    return s;
}
