/*
 * steps.c — training steps and the host-only step trace.
 *
 * Steps are the `ProfilerStep#N` annotations (the same N on several threads
 * or processes is one step spanning all of them).  step_trace_time's host
 * definitions (docs/RESULT_LAYOUT.md): Computing is the length of the
 * host's work inside the step (host_compute.c: ops, annotations and
 * mstx / NVTX ranges that are not communication, less the blocking
 * communication inside them); Communication, Bubble (the receives) come
 * from the communication ops' union (comm_derive.c, docs/COMMUNICATION.md),
 * Overlapped is what of it the work covers; Preparing is the first work or
 * communication in the step minus the step start.  The other columns
 * follow here (aip__step_row_derive), once for both files that print the
 * step trace.
 */
#include "analysis_int.h"
#include "comm_derive.h"
#include "error.h"
#include "intervals.h"

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

/* ---- the host step trace ------------------------------------------ */

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
    if (!m->step_rows)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the step trace");
    m->n_step_rows = n;
    if (m->n_steps) {
        for (size_t i = 0; i < n; i++)
            m->step_rows[i] = (aip__step_row){.has_number = 1, .device = -1,
                                             .number = m->steps[i].number,
                                             .start = m->steps[i].start, .end = m->steps[i].end};
    } else {
        m->step_rows[0] = (aip__step_row){.device = -1, .start = m->first_ns, .end = m->last_ns};
    }
    int64_t *work = NULL, *comm = NULL, *recv = NULL;
    size_t n_work = 0, n_comm = 0, n_recv = 0;
    aip_status s = aip__host_compute_intervals(m, &work, &n_work);
    if (!s)
        s = aip__comm_intervals(m, 0, &comm, &n_comm);
    if (!s)
        s = aip__comm_intervals(m, 1, &recv, &n_recv);
    for (size_t i = 0; i < n && !s; i++) {
        aip__step_row *r = &m->step_rows[i];
        int64_t first_work = -1, first_comm = -1;
        r->computing = aip__intervals_clip(work, n_work, r->start, r->end, &first_work);
        r->communication = aip__intervals_clip(comm, n_comm, r->start, r->end, &first_comm);
        r->bubble = aip__intervals_clip(recv, n_recv, r->start, r->end, NULL);
        r->overlapped = aip__intervals_both(work, n_work, comm, n_comm, r->start, r->end);
        r->comm_not_overlapped = r->communication - r->overlapped;
        int64_t first = first_work < 0 ? first_comm
                        : first_comm < 0 || first_work < first_comm ? first_work : first_comm;
        r->preparing = first < 0 ? 0 : first - r->start;
        aip__step_row_derive(r);
    }
    free(work);
    free(comm);
    free(recv);
    return s;
}
