/*
 * db_pytorch_api.c — the framework API tables of ascend_pytorch_profiler.db:
 * PYTORCH_API, CONNECTION_IDS, PYTORCH_CALLCHAINS and ENUM_API_TYPE
 * (seed 表2–4, reference §2.4), the way torch_npu's FwkApiDbParser fills them:
 *
 * - one PYTORCH_API row per framework op and per record_function scope
 *   (ProfilerStep#N included: torch records all of them as RecordFunction
 *   ops), type 50001 `op`; mstx push/pop ranges, paired start/end ranges and
 *   marks (startNs = endNs) are type 50004 `mstx` (a mark and a start/end
 *   range connected to its MSTX_EVENTS row: db_mstx.c); Python calls (with_stack
 *   python_function events) are type 50003 `trace`.  globalTid is
 *   (pid << 32) | tid.  Ops without a recorded sequence number get -1 and
 *   fwdThreadId 0, as torch_npu's op records always carry both.
 * - each fwdbwd flow is connection id (5 << 28) + k, k from 0 in flow order;
 *   an op with connections gets the next PYTORCH_API.connectionId and one
 *   CONNECTION_IDS row per connection; an op that launched device work
 *   (a runtime call with a correlation made while it was the innermost
 *   open span) is also connected to each such call's CANN_API.connectionId
 *   (torch_npu's torch-cann-task relation, db_device.c).  No task queue
 *   exists here.  CONNECTION_IDS exists, empty, when nothing is connected
 *   (torch_npu's always has rows; msprof-analyze joins it unconditionally).
 * - call stacks (with_stack) are split into frames at ";\n" (or ";\r\n");
 *   identical stacks of a process share one callchain id (torch_npu makes
 *   one per op; sharing keeps the table small and the join the same).
 */
#include "db_pytorch.h"
#include "sort_keys.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API_TYPE_OP 50001
#define API_TYPE_TRACE 50003
#define API_TYPE_MSTX 50004
#define CONNECTION_BASE ((int64_t)5 << 28)

static const aip__db_col api_cols[] = {
    {"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"globalTid", "INTEGER"},
    {"connectionId", "INTEGER"}, {"name", "INTEGER"}, {"sequenceNumber", "INTEGER"},
    {"fwdThreadId", "INTEGER"}, {"inputDtypes", "INTEGER"}, {"inputShapes", "INTEGER"},
    {"callchainId", "INTEGER"}, {"type", "INTEGER"}};
const aip__db_table aip__tbl_pytorch_api = {"PYTORCH_API", api_cols, 11, -1};

static const aip__db_col conn_cols[] = {{"id", "INTEGER"}, {"connectionId", "INTEGER"}};
const aip__db_table aip__tbl_connection_ids = {"CONNECTION_IDS", conn_cols, 2, -1};

static const aip__db_col chain_cols[] = {
    {"id", "INTEGER"}, {"stack", "INTEGER"}, {"stackDepth", "INTEGER"}};
const aip__db_table aip__tbl_callchains = {"PYTORCH_CALLCHAINS", chain_cols, 3, -1};

static const aip__db_col enum_cols[] = {{"id", "INTEGER"}, {"name", "TEXT"}};
const aip__db_table aip__tbl_enum_api_type = {"ENUM_API_TYPE", enum_cols, 2, 0};

/* A span's fwdbwd connection, sorted by (process, thread, span). */
typedef struct conn {
    uint32_t proc, thread;
    size_t span;
    int64_t id;
} conn;

static int cmp_conn(const void *a, const void *b)
{
    const conn *x = a, *y = b;
    if (x->proc != y->proc)
        return x->proc < y->proc ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->span != y->span)
        return x->span < y->span ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

typedef struct api_writer {
    const aip__model *m;
    aip__db_strings *str;
    aip__db_insert api, conn_ins, chain_ins;
    aip__db_insert plain;         /* this thread's rows without optional columns */
    int with_chains;
    conn *conns;
    size_t n_conns, next_conn;
    int64_t next_connection_id;  /* PYTORCH_API.connectionId counter */
    int64_t next_mstx;           /* linked mstx events so far (AIP__MSTX_CONN_START + it) */
    int64_t next_chain;
    uint32_t *chain_map;         /* current process: raw stack id -> 1 + callchain id */
    size_t chain_map_n;
    aip_status status;
} api_writer;

static void bind_opt_id(aip__db_insert *ins, int col, int64_t id)
{
    if (id >= 0)
        aip__db_i64(ins, col, id);
    else
        aip__db_null(ins, col);
}

/* The callchain of raw stack string `sid`: frames into STRING_IDS, rows
 * into PYTORCH_CALLCHAINS the first time.  -1 when empty. */
static int64_t callchain(api_writer *w, size_t proc, uint32_t sid)
{
    const aip__process *p = &w->m->procs[proc];
    if (!sid || sid >= p->strings.n_ent)
        return -1;
    if (!w->chain_map) {
        w->chain_map = calloc(p->strings.n_ent, sizeof *w->chain_map);
        w->chain_map_n = p->strings.n_ent;
        if (!w->chain_map) {
            w->status = aip__fail(AIP_ERR_NOMEM, "no memory for call chains");
            return -1;
        }
    }
    if (w->chain_map[sid])
        return w->chain_map[sid] == UINT32_MAX ? -1 : (int64_t)w->chain_map[sid] - 1;
    size_t n;
    const char *s = aip__model_str(p, sid, &n);
    if (!n || w->next_chain >= UINT32_MAX - 1) {
        w->chain_map[sid] = UINT32_MAX;
        return -1;
    }
    if (!w->with_chains) {
        if (aip__db_insert_begin(w->api.d, &aip__tbl_callchains, &w->chain_ins))
            return -1;
        w->with_chains = 1;
    }
    int64_t id = w->next_chain++;
    int64_t depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        /* frame separator ";\n" or ";\r\n"; the end closes the last frame */
        size_t sep = 0;
        if (i < n && s[i] == ';') {
            if (i + 1 < n && s[i + 1] == '\n')
                sep = 2;
            else if (i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n')
                sep = 3;
        }
        if (i < n && !sep)
            continue;
        if (i > start) {
            aip__db_i64(&w->chain_ins, 0, id);
            bind_opt_id(&w->chain_ins, 1, aip__dbs_text(w->str, s + start, i - start));
            aip__db_i64(&w->chain_ins, 2, depth++);
            aip__db_row(&w->chain_ins);
        }
        i += sep ? sep - 1 : 0;
        start = i + 1;
    }
    w->chain_map[sid] = (uint32_t)id + 1;
    return id;
}

/* Skip connections of spans before `si`; 1 if `si` has one. */
static int has_connection(api_writer *w, uint32_t pi, uint32_t ti, size_t si)
{
    while (w->next_conn < w->n_conns && cmp_conn(&w->conns[w->next_conn],
                                                  &(conn){pi, ti, si, INT64_MIN}) < 0)
        w->next_conn++;
    const conn *c = w->next_conn < w->n_conns ? &w->conns[w->next_conn] : NULL;
    return c && c->proc == pi && c->thread == ti && c->span == si;
}

/* connectionId column of span `si`: a new id with its CONNECTION_IDS rows,
 * or NULL when the span has no connection. */
static void bind_connections(api_writer *w, uint32_t pi, uint32_t ti, size_t si)
{
    if (!has_connection(w, pi, ti, si)) {
        aip__db_null(&w->api, 3);
        return;
    }
    int64_t id = w->next_connection_id++;
    for (; w->next_conn < w->n_conns && w->conns[w->next_conn].proc == pi &&
           w->conns[w->next_conn].thread == ti && w->conns[w->next_conn].span == si;
         w->next_conn++) {
        aip__db_i64(&w->conn_ins, 0, id);
        aip__db_i64(&w->conn_ins, 1, w->conns[w->next_conn].id);
        aip__db_row(&w->conn_ins);
    }
    aip__db_i64(&w->api, 3, id);
}

static int64_t global_tid(int64_t pid, uint64_t tid)
{
    return (int64_t)(((uint64_t)pid << 32) | (tid & 0xffffffffu));
}

/* Most rows of a big profile are ops with nothing but times, a name and
 * maybe a sequence number: they go through `plain`, whose statement has
 * this thread's globalTid, the type and the NULL columns as literals.  Row
 * order in the table is therefore not span order; nothing depends on it,
 * and it is still a function of the data. */
static void thread_rows(api_writer *w, uint32_t pi, uint32_t ti)
{
    const aip__process *p = &w->m->procs[pi];
    const aip__thread *t = &p->threads[ti];
    aip__db_insert *ins = &w->api;
    int64_t gtid = global_tid(p->pid, t->tid);
    char gt[24];
    snprintf(gt, sizeof gt, "%lld", (long long)gtid);
    const char *fixed[11] = {NULL, NULL, gt, "NULL", NULL, NULL, NULL, "NULL", "NULL", "NULL",
                             "50001"};
    if (aip__db_insert_fixed(ins->d, &aip__tbl_pytorch_api, fixed, &w->plain))
        return;
    for (size_t i = 0; i < t->n_spans && !ins->d->status; i++) {
        const aip__span *sp = &t->spans[i];
        int64_t name = aip__dbs_raw(w->str, pi, sp->name);
        if (sp->kind == AIP_SPAN_RANGE || sp->kind == AIP_SPAN_PYFUNC) {
            /* Times, thread and name only: an mstx range, or a Python
             * call (with_stack), torch_npu's `trace` rows. */
            aip__db_i64(ins, 0, sp->start);
            aip__db_i64(ins, 1, sp->end);
            aip__db_i64(ins, 2, gtid);
            bind_opt_id(ins, 4, name);
            aip__db_null(ins, 3);
            for (int c = 5; c <= 9; c++)
                aip__db_null(ins, c);
            aip__db_i64(ins, 10, sp->kind == AIP_SPAN_RANGE ? API_TYPE_MSTX : API_TYPE_TRACE);
            aip__db_row(ins);
            continue;
        }
        aip__op_fields f;
        if ((sp->kind == AIP_SPAN_OP || sp->kind == AIP_SPAN_ANNOTATION) && sp->aux) {
            aip__model_op_fields(t, sp, &f);
        } else {
            memset(&f, 0, sizeof f);
            f.sequence_number = -1;
        }
        aip__db_insert *to = ins;
        if (!f.has_shapes && !f.has_stack && !has_connection(w, pi, ti, i))
            to = &w->plain;
        else
            bind_connections(w, pi, ti, i);
        aip__db_i64(to, 0, sp->start);
        aip__db_i64(to, 1, sp->end);
        aip__db_i64(to, 2, gtid);
        bind_opt_id(to, 4, name);
        aip__db_i64(to, 5, f.has_seq ? f.sequence_number : -1);
        aip__db_i64(to, 6, (int64_t)f.fwd_thread_id);
        bind_opt_id(to, 7, f.has_shapes ? aip__dbs_raw(w->str, pi, f.input_dtypes) : -1);
        bind_opt_id(to, 8, f.has_shapes ? aip__dbs_raw(w->str, pi, f.input_shapes) : -1);
        bind_opt_id(to, 9, f.has_stack ? callchain(w, pi, f.call_stack) : -1);
        aip__db_i64(to, 10, API_TYPE_OP);
        aip__db_row(to);
    }
    aip__db_insert_end(&w->plain);
}

/* The columns an mstx row does not have: NULL, and its type. */
static void mstx_columns(aip__db_insert *ins)
{
    for (int c = 3; c <= 9; c++)
        aip__db_null(ins, c);
    aip__db_i64(ins, 10, API_TYPE_MSTX);
}

/* connectionId of the next linked mstx row (a mark, a start/end range):
 * a new PYTORCH_API connection id whose CONNECTION_IDS row holds its
 * MSTX_EVENTS.connectionId (db_mstx.c counts the events the same way). */
static void mstx_link(api_writer *w)
{
    int64_t id = w->next_connection_id++;
    aip__db_i64(&w->conn_ins, 0, id);
    aip__db_i64(&w->conn_ins, 1, AIP__MSTX_CONN_START + w->next_mstx++);
    aip__db_row(&w->conn_ins);
    aip__db_i64(&w->api, 3, id);
}

/* mstx marks and cross-thread start/end ranges of one process. */
static void mstx_rows(api_writer *w, uint32_t pi)
{
    const aip__process *p = &w->m->procs[pi];
    aip__db_insert *ins = &w->api;
    for (size_t i = 0; i < p->marks.n; i++) {
        const aip__mark_ev *mk = &p->marks.v[i];
        mstx_columns(ins);
        mstx_link(w);
        aip__db_i64(ins, 0, mk->ts);
        aip__db_i64(ins, 1, mk->ts);
        aip__db_i64(ins, 2, global_tid(p->pid, p->threads[mk->thread].tid));
        bind_opt_id(ins, 4, aip__dbs_raw(w->str, pi, mk->name));
        aip__db_row(ins);
    }
    for (size_t i = 0; i < p->range_starts.n; i++) {
        const aip__range_point *r = &p->range_starts.v[i];
        if (r->match < 0)
            continue; /* no end inside the trace: no duration to store */
        mstx_columns(ins);
        mstx_link(w);
        aip__db_i64(ins, 0, r->ts);
        aip__db_i64(ins, 1, p->range_ends.v[r->match].ts);
        aip__db_i64(ins, 2, global_tid(p->pid, p->threads[r->thread].tid));
        bind_opt_id(ins, 4, aip__dbs_raw(w->str, pi, r->name));
        aip__db_row(ins);
    }
}

/* conns in cmp_conn's order: stable integer sorts from the minor key to
 * the major one (sort_keys.h); each is one check where the order already
 * holds (a profile's launches come by thread and time). */
static aip_status sort_conns(api_writer *w)
{
    size_t n = w->n_conns;
    if (n < 2)
        return AIP_OK;
    aip__sort_key *k = malloc(n * sizeof *k);
    if (!k)
        return aip__fail(AIP_ERR_NOMEM, "no memory for connection ids");
    const conn *c = w->conns;
    for (size_t i = 0; i < n; i++)
        k[i] = (aip__sort_key){aip__sort_key_i64(c[i].id), i};
    aip_status s = aip__sort_keys(k, n);
    for (int pass = 0; pass < 3 && !s; pass++) {
        for (size_t i = 0; i < n; i++) {
            const conn *x = &c[k[i].idx];
            k[i].key = pass == 0 ? (uint64_t)x->span : pass == 1 ? x->thread : x->proc;
        }
        s = aip__sort_keys(k, n);
    }
    if (!s)
        s = aip__permute(w->conns, n, sizeof *w->conns, k);
    free(k);
    return s;
}

static aip_status collect_conns(api_writer *w)
{
    const aip__model *m = w->m;
    size_t n_launch = 0; /* runtime calls that launched a task inside an op */
    for (size_t pi = 0; pi < m->n_procs; pi++)
        for (size_t i = 0; i < m->procs[pi].dev_api.n; i++)
            n_launch += m->procs[pi].dev_api.v[i].correlation &&
                        m->procs[pi].dev_api.v[i].parent_span >= 0;
    if (!m->n_flows && !n_launch)
        return AIP_OK;
    w->conns = malloc((2 * m->n_flows + n_launch) * sizeof *w->conns);
    if (!w->conns)
        return aip__fail(AIP_ERR_NOMEM, "no memory for connection ids");
    for (size_t k = 0; k < m->n_flows; k++) {
        const aip__flow *f = &m->flows[k];
        int64_t id = CONNECTION_BASE + (int64_t)k;
        w->conns[w->n_conns++] = (conn){f->process, f->fwd_thread, f->fwd_span, id};
        w->conns[w->n_conns++] = (conn){f->process, f->bwd_thread, f->bwd_span, id};
    }
    /* torch -> CANN: the op open around a launching call gets the call's
     * CANN_API.connectionId (db_device.c numbers calls from
     * aip__dev_connection_base, as here), and TASK rows carry it too. */
    int64_t base = 0;
    for (uint32_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->dev_api.n; i++) {
            const aip__device_call *c = &p->dev_api.v[i];
            if (c->correlation && c->parent_span >= 0)
                w->conns[w->n_conns++] = (conn){pi, c->parent_thread, (size_t)c->parent_span,
                                                base + (int64_t)i};
        }
        base += (int64_t)p->dev_api.n;
    }
    return sort_conns(w);
}

aip_status aip__db_write_api(aip__db *d, const aip__model *m, aip__db_strings *str)
{
    /* inserts hold a batch of values each: too big for a thread's stack */
    api_writer *w = calloc(1, sizeof *w);
    if (!w)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the API tables");
    w->m = m;
    w->str = str;
    aip_status s = collect_conns(w);
    if (!s)
        s = aip__db_insert_begin(d, &aip__tbl_pytorch_api, &w->api);
    size_t n_mstx = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        n_mstx += aip__mstx_linked(&m->procs[pi]);
    if (!s && (w->n_conns || n_mstx))
        s = aip__db_insert_begin(d, &aip__tbl_connection_ids, &w->conn_ins);
    else if (!s) /* empty: msprof-analyze's exports join it unconditionally */
        s = aip__db_create(d, &aip__tbl_connection_ids);
    /* with_stack on: the table exists even if no op carried a stack */
    if (!s && m->info.with_stack) {
        s = aip__db_insert_begin(d, &aip__tbl_callchains, &w->chain_ins);
        w->with_chains = !s;
    }
    for (uint32_t pi = 0; pi < m->n_procs && !s; pi++) {
        for (uint32_t ti = 0; ti < m->procs[pi].n_threads && !d->status && !w->status; ti++)
            thread_rows(w, pi, ti);
        mstx_rows(w, pi);
        free(w->chain_map);
        w->chain_map = NULL;
        s = d->status ? d->status : w->status ? w->status : str->status;
    }
    aip__db_insert_end(&w->api);
    aip__db_insert_end(&w->conn_ins);
    aip__db_insert_end(&w->chain_ins);
    aip__db_insert_end(&w->plain);
    free(w->conns);
    free(w->chain_map);
    free(w);
    if (s)
        return s;
    aip__db_insert *e = malloc(sizeof *e);
    if (!e)
        return aip__fail(AIP_ERR_NOMEM, "no memory");
    if (!aip__db_insert_begin(d, &aip__tbl_enum_api_type, e)) {
        static const struct { int id; const char *name; } types[] = {
            {50001, "op"}, {50002, "queue"}, {50003, "trace"}, {50004, "mstx"}};
        for (size_t i = 0; i < 4; i++) {
            aip__db_i64(e, 0, types[i].id);
            aip__db_text(e, 1, types[i].name, strlen(types[i].name));
            aip__db_row(e);
        }
    }
    aip__db_insert_end(e);
    free(e);
    return d->status;
}
