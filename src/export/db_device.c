/*
 * db_device.c — the device tables of ascend_pytorch_profiler.db, the
 * tables torch_npu inherits from msprof's database (reference §2.4), from
 * the device model of any back end:
 *
 * Columns every row shares (CANN_API.type, TASK.contextId/modelId, the
 * N/A columns of COMPUTE_TASK_INFO) are literals of the insert statement,
 * not bound per row: a good part of SQLite's cost per row is binding.
 *
 * - CANN_API: one row per runtime API call (type 5000 `runtime`: OpenCL
 *   and CUDA runtime calls are what msprof calls runtime-level APIs),
 *   connectionId = the call's connection id (device_tracks.h), name into
 *   STRING_IDS;
 * - TASK: one row per device task: deviceId = the raw device id,
 *   connectionId = its launching call's (NULL when none was recorded),
 *   globalTaskId counted across the model from 0, globalPid = the process,
 *   taskType into STRING_IDS (aip__task_type_name), streamId = the stream
 *   id (aip__queue_stream_id: the CUDA stream id, else the queue id),
 *   taskId = its number on the queue (the timeline's "Task Id"); contextId
 *   and modelId have no meaning outside Ascend: NULL;
 * - COMPUTE_TASK_INFO: one row per kernel: name and opType = the kernel's
 *   name (a kernel is its own op type outside CANN), blockNum = the number
 *   of work-groups and gridDim / blockDim the work-groups and work-group
 *   size per dimension ("x,y,z") when the local size is known; the CANN
 *   columns (formats, data types, shapes, attrInfo, hf32Eligible) are
 *   "N/A" as msprof writes what it does not know, opState "static"
 *   (csv_kernel_details.c), mixBlockNum NULL;
 * - MEMCPY_INFO (globalTaskId, size, memcpyOperation) per copy, with
 *   ENUM_MEMCPY_OPERATION as msprof fills it;
 * - OVERLAP_ANALYSIS (the timeline's Overlap Analysis sections) and
 *   ENUM_OVERLAP_ANALYSIS_TYPE;
 * - NPU_INFO (id, name): the devices;
 * - msprof's ENUM_API_TYPE rows (acl, model, node, communication, runtime)
 *   beside torch_npu's.
 *
 * A model without device activity gets CANN_API, TASK and
 * COMPUTE_TASK_INFO empty, as a torch_npu profile in which nothing ran on
 * the device holds them: msprof-analyze's compare and recipes (compare's
 * db mode, free_analysis, slow_rank, cluster_time_summary, ...) query them
 * unconditionally and stop at a missing table; empty, they report no
 * device time, which is what was measured.  The other device tables are
 * not written then.  Device strings use msprof's STRING_IDS range (from 0,
 * below torch_npu's 1<<28).
 */
#include "db_pytorch.h"
#include "device_tracks.h"
#include "error.h"
#include "text_escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const aip__db_col task_cols[] = {
    {"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"deviceId", "INTEGER"},
    {"connectionId", "INTEGER"}, {"globalTaskId", "INTEGER"}, {"globalPid", "INTEGER"},
    {"taskType", "INTEGER"}, {"contextId", "INTEGER"}, {"streamId", "INTEGER"},
    {"taskId", "INTEGER"}, {"modelId", "INTEGER"}};
static const aip__db_table tbl_task = {"TASK", task_cols, 11, -1};

static const aip__db_col compute_cols[] = {
    {"name", "INTEGER"}, {"globalTaskId", "INTEGER"}, {"blockNum", "INTEGER"},
    {"mixBlockNum", "INTEGER"}, {"taskType", "INTEGER"}, {"opType", "INTEGER"},
    {"inputFormats", "INTEGER"}, {"inputDataTypes", "INTEGER"}, {"inputShapes", "INTEGER"},
    {"outputFormats", "INTEGER"}, {"outputDataTypes", "INTEGER"}, {"outputShapes", "INTEGER"},
    {"attrInfo", "INTEGER"}, {"opState", "INTEGER"}, {"hf32Eligible", "INTEGER"},
    {"gridDim", "INTEGER"}, {"blockDim", "INTEGER"}};
static const aip__db_table tbl_compute = {"COMPUTE_TASK_INFO", compute_cols, 17, 1};

static const aip__db_col cann_cols[] = {
    {"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"type", "INTEGER"},
    {"globalTid", "INTEGER"}, {"connectionId", "INTEGER"}, {"name", "INTEGER"}};
static const aip__db_table tbl_cann_api = {"CANN_API", cann_cols, 6, 4};

static const aip__db_col memcpy_cols[] = {
    {"globalTaskId", "INTEGER"}, {"size", "INTEGER"}, {"memcpyOperation", "INTEGER"}};
static const aip__db_table tbl_memcpy = {"MEMCPY_INFO", memcpy_cols, 3, -1};

static const aip__db_col overlap_cols[] = {
    {"id", "INTEGER"}, {"deviceId", "INTEGER"}, {"startNs", "INTEGER"}, {"endNs", "INTEGER"},
    {"type", "INTEGER"}};
static const aip__db_table tbl_overlap = {"OVERLAP_ANALYSIS", overlap_cols, 5, 0};

static const aip__db_col enum_cols[] = {{"id", "INTEGER"}, {"name", "TEXT"}};
static const aip__db_table tbl_enum_memcpy = {"ENUM_MEMCPY_OPERATION", enum_cols, 2, 0};
static const aip__db_table tbl_enum_overlap = {"ENUM_OVERLAP_ANALYSIS_TYPE", enum_cols, 2, 0};
static const aip__db_table tbl_npu_info = {"NPU_INFO", enum_cols, 2, -1};

typedef struct dev_writer {
    aip__db *d;
    const aip__model *m;
    aip__db_strings *str;
    aip__db_insert ins;       /* the table being written (one at a time) */
    int64_t na;               /* STRING_IDS id of "N/A" */
    /* per-row lookups made once: task type names are a dozen literals,
     * and a kernel's work sizes are mostly its predecessor's */
    struct { const char *name; int64_t id; } types[16];
    int n_types;
    uint32_t dims[2][3];
    int64_t dims_id[2];       /* -2: none cached */
} dev_writer;

static void opt_i64(aip__db_insert *ins, int col, int64_t v)
{
    if (v >= 0)
        aip__db_i64(ins, col, v);
    else
        aip__db_null(ins, col);
}

static int64_t text_id(dev_writer *w, const char *s) { return aip__dbs_text(w->str, s, strlen(s)); }

/* The id of a task type name (a literal of device_tracks.c). */
static int64_t type_id(dev_writer *w, const char *name)
{
    for (int i = 0; i < w->n_types; i++)
        if (w->types[i].name == name)
            return w->types[i].id;
    int64_t id = text_id(w, name);
    if (w->n_types < 16) {
        w->types[w->n_types].name = name;
        w->types[w->n_types++].id = id;
    }
    return id;
}

/* Create table t and prepare inserts in which the columns with a non-NULL
 * fixed[i] are that literal (our own numbers or NULL: aip__db_insert_fixed)
 * and are not bound row by row.  0 on success. */
static int begin_fixed(dev_writer *w, const aip__db_table *t, const char *const *fixed)
{
    if (aip__db_create(w->d, t) || aip__db_insert_fixed(w->d, t, fixed, &w->ins)) {
        aip__db_insert_end(&w->ins);
        return -1;
    }
    return 0;
}

static int64_t global_tid(int64_t pid, uint64_t tid)
{
    return (int64_t)(((uint64_t)pid << 32) | (tid & 0xffffffffu));
}

static void cann_api(dev_writer *w)
{
    static const char *const fixed[6] = {NULL, NULL, "5000", NULL, NULL, NULL}; /* runtime */
    if (begin_fixed(w, &tbl_cann_api, fixed))
        return;
    for (size_t pi = 0; pi < w->m->n_procs; pi++) {
        const aip__process *p = &w->m->procs[pi];
        int64_t base = aip__dev_connection_base(w->m, p);
        for (size_t i = 0; i < p->dev_api.n; i++) {
            const aip__device_call *c = &p->dev_api.v[i];
            aip__db_i64(&w->ins, 0, c->start);
            aip__db_i64(&w->ins, 1, c->end);
            aip__db_i64(&w->ins, 3, global_tid(p->pid, p->threads[c->thread].tid));
            aip__db_i64(&w->ins, 4, base + (int64_t)i);
            opt_i64(&w->ins, 5, aip__dbs_raw(w->str, pi, c->name));
            aip__db_row(&w->ins);
        }
    }
    aip__db_insert_end(&w->ins);
}

static void task_rows(dev_writer *w)
{
    /* contextId and modelId: NULL */
    static const char *const fixed[11] = {NULL, NULL, NULL, NULL, NULL, NULL,
                                          NULL, "NULL", NULL, NULL, "NULL"};
    if (begin_fixed(w, &tbl_task, fixed))
        return;
    int64_t gid = 0;
    for (size_t pi = 0; pi < w->m->n_procs && !w->d->status; pi++) {
        const aip__process *p = &w->m->procs[pi];
        aip__dev_tracks t = {0};
        if (p->dev_tasks.n && aip__dev_tracks_of(w->m, p, &t)) {
            w->d->status = AIP_ERR_NOMEM;
            break;
        }
        int64_t base = aip__dev_connection_base(w->m, p);
        for (size_t i = 0; i < p->dev_tasks.n; i++, gid++) {
            const aip__device_task *k = &p->dev_tasks.v[i];
            aip__db_i64(&w->ins, 0, k->start);
            aip__db_i64(&w->ins, 1, k->end);
            aip__db_i64(&w->ins, 2, k->device);
            opt_i64(&w->ins, 3, k->api >= 0 && (size_t)k->api < p->dev_api.n ? base + k->api : -1);
            aip__db_i64(&w->ins, 4, gid);
            aip__db_i64(&w->ins, 5, p->pid);
            opt_i64(&w->ins, 6, type_id(w, aip__task_type_name(p, k)));
            opt_i64(&w->ins, 8, k->queue < AIP_RAW_MAX_QUEUES
                                    ? (int64_t)aip__queue_stream_id(p, k->queue) : -1);
            aip__db_i64(&w->ins, 9, t.task_id[i]);
            aip__db_row(&w->ins);
        }
        aip__dev_tracks_free(&t);
    }
    aip__db_insert_end(&w->ins);
}

/* "a,b,c" of three numbers into STRING_IDS; `slot` 0 grid, 1 block. */
static int64_t dims_id(dev_writer *w, int slot, const uint32_t v[3])
{
    if (w->dims_id[slot] != -2 && !memcmp(w->dims[slot], v, sizeof w->dims[slot]))
        return w->dims_id[slot];
    char buf[48];
    int n = snprintf(buf, sizeof buf, "%u,%u,%u", v[0], v[1], v[2]);
    memcpy(w->dims[slot], v, sizeof w->dims[slot]);
    return w->dims_id[slot] = aip__dbs_text(w->str, buf, (size_t)n);
}

static void compute_rows(dev_writer *w)
{
    /* mixBlockNum NULL; opState "static" (csv_kernel_details.c says why);
     * the other CANN-only columns the id of "N/A" */
    char na[24], st[24];
    int64_t static_id = text_id(w, "static");
    snprintf(na, sizeof na, w->na >= 0 ? "%lld" : "NULL", (long long)w->na);
    snprintf(st, sizeof st, static_id >= 0 ? "%lld" : "NULL", (long long)static_id);
    const char *const fixed[17] = {NULL, NULL, NULL, "NULL", NULL, NULL, na, na, na,
                                   na,   na,   na,   na,     st,   na,   NULL, NULL};
    if (begin_fixed(w, &tbl_compute, fixed))
        return;
    int64_t gid = 0;
    for (size_t pi = 0; pi < w->m->n_procs; pi++) {
        const aip__process *p = &w->m->procs[pi];
        for (size_t i = 0; i < p->dev_tasks.n; i++, gid++) {
            const aip__device_task *k = &p->dev_tasks.v[i];
            if (k->kind != AIP_TASK_KERNEL)
                continue;
            int64_t name = aip__dbs_raw(w->str, pi, k->name);
            opt_i64(&w->ins, 0, name);
            aip__db_i64(&w->ins, 1, gid);
            /* work-groups per dimension: known with the local size only */
            uint32_t g[3];
            uint64_t blocks = aip__task_groups(k, g);
            int groups = blocks != 0;
            opt_i64(&w->ins, 2, groups ? (int64_t)blocks : -1);
            opt_i64(&w->ins, 4, type_id(w, aip__task_type_name(p, k)));
            opt_i64(&w->ins, 5, name);
            opt_i64(&w->ins, 15, groups ? dims_id(w, 0, g) : -1);
            opt_i64(&w->ins, 16, groups ? dims_id(w, 1, k->local) : -1);
            aip__db_row(&w->ins);
        }
    }
    aip__db_insert_end(&w->ins);
}

static void memcpy_rows(dev_writer *w)
{
    if (aip__db_insert_begin(w->d, &tbl_memcpy, &w->ins)) {
        aip__db_insert_end(&w->ins);
        return;
    }
    int64_t gid = 0;
    for (size_t pi = 0; pi < w->m->n_procs; pi++) {
        const aip__process *p = &w->m->procs[pi];
        for (size_t i = 0; i < p->dev_tasks.n; i++, gid++) {
            const aip__device_task *k = &p->dev_tasks.v[i];
            if (k->kind != AIP_TASK_MEMCPY)
                continue;
            aip__db_i64(&w->ins, 0, gid);
            aip__db_i64(&w->ins, 1, (int64_t)(k->bytes > INT64_MAX ? INT64_MAX : k->bytes));
            aip__db_i64(&w->ins, 2, aip__memcpy_operation(k->direction));
            aip__db_row(&w->ins);
        }
    }
    aip__db_insert_end(&w->ins);
}

static void overlap_rows(dev_writer *w)
{
    if (aip__db_insert_begin(w->d, &tbl_overlap, &w->ins)) {
        aip__db_insert_end(&w->ins);
        return;
    }
    int64_t id = 0;
    for (size_t pi = 0; pi < w->m->n_procs && !w->d->status; pi++) {
        const aip__process *p = &w->m->procs[pi];
        uint64_t with_tasks = 0;
        for (size_t i = 0; i < p->dev_tasks.n; i++)
            with_tasks |= (uint64_t)1 << (p->dev_tasks.v[i].device & 63);
        for (uint32_t dv = 0; dv < AIP_RAW_MAX_DEVICES; dv++) {
            if (!(with_tasks >> dv & 1))
                continue;
            aip__overlap_section *sec;
            size_t n;
            if (aip__device_overlap(w->m, dv, &sec, &n)) {
                w->d->status = AIP_ERR_NOMEM;
                break;
            }
            for (size_t i = 0; i < n; i++) {
                aip__db_i64(&w->ins, 0, id++);
                aip__db_i64(&w->ins, 1, dv);
                aip__db_i64(&w->ins, 2, sec[i].start);
                aip__db_i64(&w->ins, 3, sec[i].end);
                aip__db_i64(&w->ins, 4, sec[i].type);
                aip__db_row(&w->ins);
            }
            free(sec);
        }
    }
    aip__db_insert_end(&w->ins);
}

typedef struct enum_row {
    int id;
    const char *name;
} enum_row;

static void enum_rows(dev_writer *w, const aip__db_table *t, const enum_row *rows, size_t n,
                      int exists)
{
    static const char *const bound[2] = {NULL, NULL};
    if (exists ? aip__db_insert_fixed(w->d, t, bound, &w->ins)
               : aip__db_insert_begin(w->d, t, &w->ins)) {
        aip__db_insert_end(&w->ins);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        aip__db_i64(&w->ins, 0, rows[i].id);
        aip__db_text(&w->ins, 1, rows[i].name, strlen(rows[i].name));
        aip__db_row(&w->ins);
    }
    aip__db_insert_end(&w->ins);
}

static void small_tables(dev_writer *w)
{
    static const enum_row api_types[] = {{20000, "acl"}, {15000, "model"}, {10000, "node"},
                                         {5500, "communication"}, {5000, "runtime"}};
    static const enum_row memcpy_ops[] = {
        {0, "host to host"}, {1, "host to device"}, {2, "device to host"},
        {3, "device to device"}, {4, "managed memory"}, {5, "addr device to device"},
        {6, "host to device ex"}, {7, "device to host ex"}, {65535, "other"}};
    static const enum_row overlap_types[] = {
        {0, "COMPUTE"}, {1, "COMMUNICATION"}, {2, "COMM_NOT_OVERLAP_COMP"}, {3, "FREE"}};
    /* ENUM_API_TYPE exists: db_pytorch_api.c wrote torch_npu's rows */
    enum_rows(w, &aip__tbl_enum_api_type, api_types, 5, 1);
    enum_rows(w, &tbl_enum_memcpy, memcpy_ops, 9, 0);
    enum_rows(w, &tbl_enum_overlap, overlap_types, 4, 0);
    if (aip__db_insert_begin(w->d, &tbl_npu_info, &w->ins)) {
        aip__db_insert_end(&w->ins);
        return;
    }
    uint64_t listed = 0; /* a device id once, even if several processes used it */
    for (size_t pi = 0; pi < w->m->n_procs; pi++) {
        const aip__process *p = &w->m->procs[pi];
        for (uint32_t dv = 0; dv < p->devices.n && dv < 64; dv++) {
            const aip__device *d = aip__model_device(p, dv);
            if (!d || (listed >> dv & 1))
                continue;
            listed |= (uint64_t)1 << dv;
            size_t n;
            const char *name = aip__model_str(p, d->name, &n);
            aip__db_i64(&w->ins, 0, dv);
            char *clean = malloc(3 * n + 1);
            if (clean) {
                aip__db_text(&w->ins, 1, clean, aip__utf8_clean(name, n, clean));
                free(clean);
            } else {
                aip__db_null(&w->ins, 1);
            }
            aip__db_row(&w->ins);
        }
    }
    aip__db_insert_end(&w->ins);
}

int aip__db_has_device(const aip__model *m)
{
    for (size_t pi = 0; pi < m->n_procs; pi++)
        if (m->procs[pi].dev_api.n || m->procs[pi].dev_tasks.n)
            return 1;
    return 0;
}

aip_status aip__db_write_device(aip__db *d, const aip__model *m, aip__db_strings *str)
{
    if (!aip__db_has_device(m)) { /* the three tables, empty: see the header */
        aip_status s = aip__db_create(d, &tbl_cann_api);
        if (!s)
            s = aip__db_create(d, &tbl_task);
        if (!s)
            s = aip__db_create(d, &tbl_compute);
        return s;
    }
    dev_writer *w = calloc(1, sizeof *w); /* an insert holds a batch: not for the stack */
    if (!w)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device tables");
    w->d = d;
    w->m = m;
    w->str = str;
    w->na = text_id(w, "N/A");
    w->dims_id[0] = w->dims_id[1] = -2;
    cann_api(w);
    if (!d->status)
        task_rows(w);
    if (!d->status)
        compute_rows(w);
    if (!d->status)
        memcpy_rows(w);
    if (!d->status)
        overlap_rows(w);
    if (!d->status)
        small_tables(w);
    free(w);
    return d->status ? d->status : str->status;
}
