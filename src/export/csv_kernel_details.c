/*
 * csv_kernel_details.c — kernel_details.csv: one row per device task
 * (kernels, copies, fills, maps, markers, barriers), processes in raw file
 * order, tasks by start time.  Written only when device tasks exist (the
 * seed: generated when the NPU activity collects).
 *
 * Columns, as the seed's table 1 names them (docs/ANALYSIS.md):
 * - Step Id: only when the profile has steps (the seed adds the column
 *   with a schedule); the number of the task's step (device_steps.c),
 *   empty for a task outside every step.
 * - Device_id: the device's raw id.  Stream ID: the queue's own number
 *   where the back end has one (the CUDA stream id), else aiprof's queue
 *   id (OpenCL; aip__queue_stream_id).  Task ID:
 *   the task's number on its queue in start order, from 0, as Ascend
 *   numbers tasks per stream (device_tracks.c; the same number as the
 *   timeline's "Task Id" and the database's TASK.taskId).
 * - Name: the task's name.  Type: aip__task_type() (kernel name, or the
 *   kind of a copy, fill...).  Accelerator Core: the device's kind (GPU,
 *   CPU...).
 * - Start Time(us): absolute µs, 3 decimals, with msprof's trailing tab
 *   (its summaries keep spreadsheets from turning it into a float).
 *   Duration(us): end − start, exactly the device's own duration.  Wait
 *   Time(us): start − the end of the previous task on the same queue (0 for
 *   a queue's first task, and when tasks overlap on an out-of-order queue).
 * - Block Num: work-groups of a kernel, Π ceil(global / local) (CUDA's
 *   back end records global = grid x block, local = block: the grid's
 *   blocks); N/A when the local size was left to the runtime, and for
 *   tasks that are not kernels.
 * - Input Shapes / Input Data Types: the task's own inputs, known only for a
 *   kernel that is the only task its op launched (the op's, when
 *   recorded: launch_fields); N/A for the others.
 * - OP State: "static" for kernels.  CANN's state says whether an op's
 *   binary was built for its shapes ahead of the launch (static) or is
 *   compiled/tiled for the shapes at run time (dynamic); an OpenCL or CUDA
 *   kernel's binary is fixed once the program is built and no launch
 *   compiles anything, which is the static case.  Writing N/A made
 *   msprof-analyze's advisor (which counts the static ops) report "all
 *   operators are dynamic shape" and advise turning JIT compilation off.
 *   N/A for copies and other tasks.
 * - Model ID, Mix Block Num, HF32 Eligible, Input Formats and the
 *   Output columns have no meaning for these back ends or were not
 *   recorded: N/A, as the seed writes them.
 */
#include "device_tracks.h"
#include "export.h"
#include "text_escape.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>

#define KERNEL_DETAILS_COLUMNS                                                            \
    "Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,"           \
    "Start Time(us),Duration(us),Wait Time(us),Block Num,Mix Block Num,HF32 Eligible,"    \
    "Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,"        \
    "Output Formats"

/* Work-groups (blocks) of a kernel of a known device, 0 when not known. */
static uint64_t block_num(const aip__process *p, const aip__device_task *t)
{
    uint32_t g[3];
    return aip__model_device(p, t->device) ? aip__task_groups(t, g) : 0;
}

/* The op span whose call launched t: its thread and span index, or -1. */
static int64_t launch_span(const aip__process *p, const aip__device_task *t, uint32_t *thread)
{
    if (t->api < 0 || (size_t)t->api >= p->dev_api.n)
        return -1;
    const aip__device_call *a = &p->dev_api.v[t->api];
    if (a->parent_span < 0 || a->parent_thread >= p->n_threads ||
        (size_t)a->parent_span >= p->threads[a->parent_thread].n_spans ||
        p->threads[a->parent_thread].spans[a->parent_span].kind != AIP_SPAN_OP)
        return -1;
    *thread = a->parent_thread;
    return a->parent_span;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Per process: the launching op span of every task, as (thread << 40 |
 * span), sorted, so that the tasks an op launched can be counted. */
static aip_status launch_keys(const aip__process *p, uint64_t **out)
{
    uint64_t *k = malloc((p->dev_tasks.n ? p->dev_tasks.n : 1) * sizeof *k);
    if (!k)
        return aip__fail(AIP_ERR_NOMEM, "no memory for kernel_details.csv");
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        uint32_t th = 0;
        int64_t sp = launch_span(p, &p->dev_tasks.v[i], &th);
        k[i] = sp < 0 ? UINT64_MAX : ((uint64_t)th << 40 | (uint64_t)sp);
    }
    qsort(k, p->dev_tasks.n, sizeof *k, cmp_u64);
    *out = k;
    return AIP_OK;
}

static size_t launched_by(const uint64_t *keys, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t c = 0;
    while (lo + c < n && keys[lo + c] == key)
        c++;
    return c;
}

/* The seed's Input Shapes / Input Data Types are the task's own inputs.
 * A task's own tensors are not recorded, but a kernel that is the only
 * task its op launched runs that op, whose inputs are its inputs: that
 * op's shapes and dtypes, when recorded.  A copy, fill or marker, and any
 * of several tasks of one op (each runs a part with its own operands),
 * have none: 0, and the columns say N/A. */
static int launch_fields(const aip__process *p, const aip__device_task *t,
                         const uint64_t *keys, aip__op_fields *f)
{
    uint32_t th = 0;
    int64_t sp = launch_span(p, t, &th);
    if (sp < 0 || t->kind != AIP_TASK_KERNEL ||
        launched_by(keys, p->dev_tasks.n, (uint64_t)th << 40 | (uint64_t)sp) != 1)
        return 0;
    const aip__thread *thr = &p->threads[th];
    aip__model_op_fields(thr, &thr->spans[sp], f);
    return f->has_shapes;
}

typedef struct proc_state {
    int64_t *queue_end;       /* per queue id: the latest task end so far */
    uint64_t *launch_keys;    /* launch_keys() */
    aip__dev_tracks tracks;   /* task numbers per queue */
    aip__us3_cache start_text; /* Start Time's leading digits */
} proc_state;

static aip_status put_task(aip__out *o, const aip__model *m, const aip__process *p,
                           aip__esc_cache *c, proc_state *ps, size_t ti)
{
    const aip__device_task *t = &p->dev_tasks.v[ti];
    if (m->n_steps) {
        if (t->step >= 0 && (size_t)t->step < m->n_steps)
            aip__out_i64(o, m->steps[t->step].number);
        AIP_OUT_LIT(o, ",");
    }
    char *d = aip__out_reserve(o, 96);
    d = aip__fmt_u64(d, t->device);
    memcpy(d, ",N/A,", 5);
    d = aip__fmt_u64(d + 5, ps->tracks.task_id[ti]);
    *d++ = ',';
    if (t->queue < p->queues.n) {
        d = aip__fmt_u64(d, aip__queue_stream_id(p, t->queue));
    } else {
        memcpy(d, "N/A", 3);
        d += 3;
    }
    *d++ = ',';
    aip__out_commit(o, d);
    aip_status s = aip__esc_put(o, c, t->name);
    AIP_OUT_LIT(o, ",");
    size_t len;
    const char *type = aip__task_type(p, t, &len);
    if (t->kind == AIP_TASK_KERNEL) {
        if (!s)
            s = aip__esc_put(o, c, t->name);
    } else {
        aip__out_put(o, type, len);
    }
    /* a kernel is "static" (binary fixed when built, never recompiled for
     * a shape at launch; msprof's advisor reads no static op as "all
     * dynamic shape"); other tasks have no state */
    if (t->kind == AIP_TASK_KERNEL)
        AIP_OUT_LIT(o, ",static,");
    else
        AIP_OUT_LIT(o, ",N/A,");
    const aip__device *dv = aip__model_device(p, t->device);
    if (dv)
        aip__out_str(o, aip__dev_kind_name(dv->kind));
    else
        AIP_OUT_LIT(o, "N/A");
    int64_t wait = 0;
    if (t->queue < p->queues.n) {
        int64_t *qe = &ps->queue_end[t->queue];
        if (*qe != INT64_MIN && t->start > *qe)
            wait = t->start - *qe;
        if (t->end > *qe)
            *qe = t->end;
    }
    d = aip__out_reserve(o, 128);
    *d++ = ',';
    d = aip__fmt_us3_cached(&ps->start_text, d, t->start);
    *d++ = '\t';
    *d++ = ',';
    d = aip__fmt_us3(d, t->end - t->start);
    *d++ = ',';
    d = aip__fmt_us3(d, wait);
    *d++ = ',';
    uint64_t blocks = block_num(p, t);
    if (blocks) {
        d = aip__fmt_u64(d, blocks);
    } else {
        memcpy(d, "N/A", 3);
        d += 3;
    }
    memcpy(d, ",N/A,N/A,", 9);
    aip__out_commit(o, d + 9);
    aip__op_fields f;
    if (launch_fields(p, t, ps->launch_keys, &f)) {
        if (!s)
            s = aip__esc_put(o, c, f.input_shapes);
        AIP_OUT_LIT(o, ",");
        if (!s)
            s = aip__esc_put(o, c, f.input_dtypes);
        AIP_OUT_LIT(o, ",");
    } else {
        AIP_OUT_LIT(o, "N/A,N/A,");
    }
    AIP_OUT_LIT(o, "N/A,N/A,N/A,N/A\r\n");
    return s;
}

aip_status aip__export_kernel_details(const aip__model *m, aip__out *o)
{
    if (m->n_steps)
        AIP_OUT_LIT(o, "Step Id,");
    AIP_OUT_LIT(o, KERNEL_DETAILS_COLUMNS "\r\n");
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        if (!p->dev_tasks.n)
            continue;
        proc_state ps = {0};
        ps.queue_end = malloc((p->queues.n ? p->queues.n : 1) * sizeof *ps.queue_end);
        aip__esc_cache c;
        s = ps.queue_end ? launch_keys(p, &ps.launch_keys)
                         : aip__fail(AIP_ERR_NOMEM, "no memory for kernel_details.csv");
        if (!s && (s = aip__dev_tracks_of(m, p, &ps.tracks)) == AIP_OK &&
            (s = aip__esc_init(&c, p, AIP_ESC_CSV)))
            aip__dev_tracks_free(&ps.tracks);
        if (s) {
            free(ps.queue_end);
            free(ps.launch_keys);
            break;
        }
        for (size_t q = 0; q < p->queues.n; q++)
            ps.queue_end[q] = INT64_MIN;
        for (size_t i = 0; i < p->dev_tasks.n && !s; i++)
            s = put_task(o, m, p, &c, &ps, i);
        aip__esc_free(&c);
        aip__dev_tracks_free(&ps.tracks);
        free(ps.queue_end);
        free(ps.launch_keys);
    }
    return s ? s : o->status;
}
