/*
 * device_steps.c — device tasks in training steps, and the step trace
 * computed from them (step_trace_time.csv, analysis.db's StepTraceTime).
 *
 * A task belongs to the step during which the runtime call that launched
 * it began: a kernel launched in step N and still running when the host
 * has moved on is step N's work, which is what torch_npu's device step
 * ranges (first kernel of the step .. max(last kernel end, host step end))
 * achieve.  A task without a known launching call belongs to the step
 * around its start.  Tasks outside every step belong to none (their
 * kernel_details Step Id is empty, as the seed allows).
 *
 * With device tasks, the seed defines the step trace on them (its table 6:
 * "Computing: NPU上算子的计算总时间", Free = step time − computing and
 * communication, Preparing = step start to the first computing op), one
 * row per device and step, Device_id the device's id:
 *   - window: the host step's start to the later of its end and the end of
 *     the last task of the device launched in it; without steps, the whole
 *     profile (the host-only row's span);
 *   - Computing: the length of the union of the device's kernels in the
 *     window (copies, fills, markers and barriers are not computation: the
 *     seed's compute tasks are its AI Core / AI CPU kernels);
 *   - Preparing: first kernel start − window start (0 without kernels);
 *   - Communication: the length of the union of the recorded communication
 *     ops (comm_derive.c; host collectives, the same for every device) in
 *     the window, Communication(Not Overlapped) what of it no kernel of the
 *     device covers, Bubble the receives' union, Preparing from the first
 *     kernel or op, whichever is first;
 *   - Free = window − Computing − Communication(Not Overlapped), Stage =
 *     window − Bubble; without ops the communication columns are 0.
 * Every device gets a row for every step, so a step where a device idled
 * shows it (Computing 0).  Device ids are the raw ids; processes that
 * recorded the same id share its rows.
 */
#include "analysis_int.h"
#include "comm_derive.h"
#include "error.h"
#include "intervals.h"
#include "sort_keys.h"

#include <stdlib.h>
#include <string.h>

/* ---- which step a task belongs to ---------------------------------- */

typedef struct step_index {
    const aip__step *steps;
    size_t n;
    size_t *by_start;         /* step indices by start */
    int64_t *max_end;         /* running max of end over by_start */
} step_index;

static int cmp_step_start(const void *a, const void *b, void *ctx)
{
    const aip__step *s = ctx;
    int64_t x = s[*(const size_t *)a].start, y = s[*(const size_t *)b].start;
    return (x > y) - (x < y);
}

static aip_status index_init(step_index *ix, const aip__model *m)
{
    *ix = (step_index){m->steps, m->n_steps, NULL, NULL};
    if (!m->n_steps)
        return AIP_OK;
    ix->by_start = malloc(m->n_steps * sizeof *ix->by_start);
    ix->max_end = malloc(m->n_steps * sizeof *ix->max_end);
    if (!ix->by_start || !ix->max_end)
        return aip__fail(AIP_ERR_NOMEM, "no memory for device steps");
    for (size_t i = 0; i < m->n_steps; i++)
        ix->by_start[i] = i;
    qsort_r(ix->by_start, m->n_steps, sizeof *ix->by_start, cmp_step_start, (void *)m->steps);
    for (size_t i = 0; i < m->n_steps; i++) {
        int64_t e = m->steps[ix->by_start[i]].end;
        ix->max_end[i] = i && ix->max_end[i - 1] > e ? ix->max_end[i - 1] : e;
    }
    return AIP_OK;
}

static void index_free(step_index *ix)
{
    free(ix->by_start);
    free(ix->max_end);
}

/* The step around time t (the latest-starting one when steps overlap), -1
 * if none. */
static int64_t step_at(const step_index *ix, int64_t t)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) { /* first step starting after t */
        size_t mid = (lo + hi) / 2;
        if (ix->steps[ix->by_start[mid]].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k-- > 0 && ix->max_end[k] >= t;)
        if (ix->steps[ix->by_start[k]].end >= t)
            return (int64_t)ix->by_start[k];
    return -1;
}

/* ---- the rows --------------------------------------------------------- */

typedef struct dev_task_ref {
    uint32_t device;
    uint32_t kernel;          /* 1: counts as computation */
    int64_t step;             /* index in m->steps, -1 none */
    int64_t start, end;
} dev_task_ref;

/* The recorded communication ops as sorted disjoint intervals: all, and
 * the receives (comm_derive.c). */
typedef struct comm_iv {
    int64_t *all, *recv;
    size_t n_all, n_recv;
} comm_iv;

/* One row from the tasks [r, e) of one device and step (sorted by start),
 * whose window begins at r->start and ends no earlier than r->end. */
static void fill_row(aip__step_row *row, const dev_task_ref *t, const dev_task_ref *e,
                     const comm_iv *cv)
{
    int64_t covered = 0; /* communication under the device's kernels */
    for (const dev_task_ref *k = t; k < e; k++)
        if (k->end > row->end)
            row->end = k->end;
    int have = 0;
    int64_t a = 0, b = 0;
    for (const dev_task_ref *k = t; k < e; k++) {
        if (!k->kernel)
            continue;
        int64_t s = k->start > row->start ? k->start : row->start;
        int64_t f = k->end;
        if (!have) {
            row->preparing = s - row->start;
            a = s;
            b = f;
            have = 1;
        } else if (s <= b) {
            if (f > b)
                b = f;
        } else {
            row->computing = aip__sat_add(row->computing, b - a);
            covered += aip__intervals_clip(cv->all, cv->n_all, a, b, NULL);
            a = s;
            b = f;
        }
    }
    if (have) {
        row->computing = aip__sat_add(row->computing, b - a);
        covered += aip__intervals_clip(cv->all, cv->n_all, a, b, NULL);
    }
    if (cv->n_all) {
        int64_t first = -1;
        row->communication = aip__intervals_clip(cv->all, cv->n_all, row->start, row->end, &first);
        row->bubble = aip__intervals_clip(cv->recv, cv->n_recv, row->start, row->end, NULL);
        row->comm_not_overlapped = row->communication - covered;
        if (first >= 0 && (!have || first - row->start < row->preparing))
            row->preparing = first - row->start;
    }
    aip__step_row_derive(row);
}

/* refs by (device, step, start), stable (three stable passes, minor key
 * first: sort_keys.h). */
static aip_status sort_refs(dev_task_ref *refs, size_t n)
{
    if (n < 2)
        return AIP_OK;
    aip__sort_key *k = malloc(n * sizeof *k);
    if (!k)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device step trace");
    for (size_t i = 0; i < n; i++)
        k[i] = (aip__sort_key){aip__sort_key_i64(refs[i].start), i};
    aip_status s = aip__sort_keys(k, n);
    for (size_t i = 0; i < n && !s; i++)
        k[i].key = aip__sort_key_i64(refs[k[i].idx].step);
    if (!s)
        s = aip__sort_keys(k, n);
    for (size_t i = 0; i < n && !s; i++)
        k[i].key = refs[k[i].idx].device;
    if (!s)
        s = aip__sort_keys(k, n);
    if (!s)
        s = aip__permute(refs, n, sizeof *refs, k);
    free(k);
    return s;
}

static aip_status build_rows(aip__model *m, dev_task_ref *refs, size_t n, const comm_iv *cv)
{
    aip_status s = sort_refs(refs, n);
    if (s)
        return s;
    uint64_t devices[(AIP_RAW_MAX_DEVICES + 63) / 64] = {0};
    size_t n_dev = 0;
    for (size_t i = 0; i < n; i++)
        if (!(devices[refs[i].device / 64] & (1ull << (refs[i].device % 64)))) {
            devices[refs[i].device / 64] |= 1ull << (refs[i].device % 64);
            n_dev++;
        }
    size_t per_dev = m->n_steps ? m->n_steps : 1;
    aip__step_row *rows = calloc(n_dev * per_dev, sizeof *rows);
    if (!rows)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device step trace");
    size_t r = 0, i = 0;
    for (uint32_t d = 0; d < AIP_RAW_MAX_DEVICES; d++) {
        if (!(devices[d / 64] & (1ull << (d % 64))))
            continue;
        for (size_t k = 0; k < per_dev; k++, r++) {
            aip__step_row *row = &rows[r];
            row->device = (int32_t)d;
            if (m->n_steps) {
                row->has_number = 1;
                row->number = m->steps[k].number;
                row->start = m->steps[k].start;
                row->end = m->steps[k].end;
            } else {
                row->start = m->first_ns;
                row->end = m->last_ns;
            }
            /* refs of this device before this step (tasks in no step) */
            int64_t step = m->n_steps ? (int64_t)k : -1;
            while (i < n && refs[i].device == d && refs[i].step < step)
                i++;
            size_t j = i;
            while (j < n && refs[j].device == d && refs[j].step == step)
                j++;
            fill_row(row, &refs[i], &refs[j], cv);
            i = j;
        }
        while (i < n && refs[i].device == d)
            i++;
    }
    free(m->step_rows);
    m->step_rows = rows;
    m->n_step_rows = r;
    return AIP_OK;
}

aip_status aip__device_steps(aip__model *m)
{
    size_t n = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        n += m->procs[pi].dev_tasks.n;
    if (!n)
        return AIP_OK;
    step_index ix;
    dev_task_ref *refs = malloc(n * sizeof *refs);
    aip_status s = index_init(&ix, m);
    if (!s && !refs)
        s = aip__fail(AIP_ERR_NOMEM, "no memory for the device step trace");
    size_t k = 0;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->dev_tasks.n; i++) {
            aip__device_task *t = &p->dev_tasks.v[i];
            int64_t at = t->api >= 0 && (size_t)t->api < p->dev_api.n
                             ? p->dev_api.v[t->api].start : t->start;
            t->step = m->n_steps ? step_at(&ix, at) : -1;
            /* device ids are below AIP_RAW_MAX_DEVICES (device_load.c) */
            refs[k++] = (dev_task_ref){t->device % AIP_RAW_MAX_DEVICES,
                                       t->kind == AIP_TASK_KERNEL, t->step, t->start, t->end};
        }
    }
    comm_iv cv = {0};
    if (!s)
        s = aip__comm_intervals(m, 0, &cv.all, &cv.n_all);
    if (!s)
        s = aip__comm_intervals(m, 1, &cv.recv, &cv.n_recv);
    if (!s)
        s = build_rows(m, refs, k, &cv);
    free(cv.all);
    free(cv.recv);
    free(refs);
    index_free(&ix);
    return s;
}
