/*
 * db_mstx.c — MSTX_EVENTS and ENUM_MSTX_EVENT_TYPE of
 * ascend_pytorch_profiler.db (msprof's tables, which torch_npu inherits:
 * reference §2.4), one row per recorded mstx event, as msprof's
 * MsprofTxProcessor writes the mstx API's (MsprofTxEx) events:
 *
 * - a mark: eventType 3 (marker_ex, what mstxMarkA records), startNs =
 *   endNs; a start/end range that ended: eventType 2 (start/end), its
 *   start and end, endGlobalTid the thread that ended it; both linked:
 *   connectionId AIP__MSTX_CONN_START + k (msprof: the tool's mark id +
 *   4000000001), the id their PYTORCH_API row's CONNECTION_IDS entry holds,
 *   so msprof-analyze's mstx_sum finds a mark's framework time;
 * - a push/pop range (one thread's, nested): eventType 1 (push/pop), the
 *   old msprofTx API's kind, unlinked (4000000000, msprof's value for it);
 * - rangeId and category UINT32_MAX, domainId UINT16_MAX (msprof writes
 *   these for every mstx API event; the domain is not kept), message an id
 *   into STRING_IDS, globalTid (pid << 32) | tid.
 *
 * msprof-analyze's mstx_sum reads the marks (_start/_stop pairs) and the
 * linked start/end ranges; a range start without an end has no row (no
 * duration), as in PYTORCH_API.  No table without mstx events (msprof
 * creates it from msproftx data only).
 */
#include "db_pytorch.h"

#include <stdint.h>
#include <string.h>

enum { EV_PUSH_POP = 1, EV_START_END = 2, EV_MARKER_EX = 3 };

static const aip__db_col mstx_cols[] = {
    {"startNs", "INTEGER"}, {"endNs", "INTEGER"},    {"eventType", "INTEGER"},
    {"rangeId", "INTEGER"}, {"category", "INTEGER"}, {"message", "INTEGER"},
    {"globalTid", "INTEGER"}, {"endGlobalTid", "INTEGER"}, {"domainId", "INTEGER"},
    {"connectionId", "INTEGER"}};
static const aip__db_table tbl_mstx = {"MSTX_EVENTS", mstx_cols, 10, -1};
static const aip__db_col enum_cols[] = {{"id", "INTEGER"}, {"name", "TEXT"}};
static const aip__db_table tbl_enum_mstx = {"ENUM_MSTX_EVENT_TYPE", enum_cols, 2, 0};

size_t aip__mstx_linked(const aip__process *p)
{
    size_t n = p->marks.n;
    for (size_t i = 0; i < p->range_starts.n; i++)
        n += p->range_starts.v[i].match >= 0;
    return n;
}

static int64_t gtid(const aip__process *p, uint32_t thread)
{
    return (int64_t)(((uint64_t)p->pid << 32) | (p->threads[thread].tid & 0xffffffffu));
}

static void row(aip__db_insert *ins, int64_t start, int64_t end, int type, int64_t message,
                int64_t tid, int64_t end_tid, int64_t connection)
{
    aip__db_i64(ins, 0, start);
    aip__db_i64(ins, 1, end);
    aip__db_i64(ins, 2, type);
    aip__db_i64(ins, 3, UINT32_MAX);
    aip__db_i64(ins, 4, UINT32_MAX);
    if (message >= 0)
        aip__db_i64(ins, 5, message);
    else
        aip__db_null(ins, 5);
    aip__db_i64(ins, 6, tid);
    aip__db_i64(ins, 7, end_tid);
    aip__db_i64(ins, 8, UINT16_MAX);
    aip__db_i64(ins, 9, connection);
    aip__db_row(ins);
}

static int has_mstx(const aip__model *m)
{
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        if (aip__mstx_linked(p))
            return 1;
        for (size_t t = 0; t < p->n_threads; t++)
            for (size_t i = 0; i < p->threads[t].n_spans; i++)
                if (p->threads[t].spans[i].kind == AIP_SPAN_RANGE)
                    return 1;
    }
    return 0;
}

static void enum_rows(aip__db *d)
{
    static const char *const names[] = {"marker", "push/pop", "start/end", "marker_ex"};
    aip__db_insert ins;
    if (aip__db_insert_begin(d, &tbl_enum_mstx, &ins))
        return;
    for (int i = 0; i < 4; i++) {
        aip__db_i64(&ins, 0, i);
        aip__db_text(&ins, 1, names[i], strlen(names[i]));
        aip__db_row(&ins);
    }
    aip__db_insert_end(&ins);
}

aip_status aip__db_write_mstx(aip__db *d, const aip__model *m, aip__db_strings *str)
{
    if (!has_mstx(m))
        return AIP_OK;
    aip__db_insert ins;
    if (aip__db_insert_begin(d, &tbl_mstx, &ins))
        return AIP_OK; /* the database's status reports it */
    int64_t k = 0; /* linked events so far: as db_pytorch_api.c counts them */
    for (uint32_t pi = 0; pi < m->n_procs && !d->status; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->marks.n; i++) {
            const aip__mark_ev *mk = &p->marks.v[i];
            int64_t t = gtid(p, mk->thread);
            row(&ins, mk->ts, mk->ts, EV_MARKER_EX, aip__dbs_raw(str, pi, mk->name), t, t,
                AIP__MSTX_CONN_START + k++);
        }
        for (size_t i = 0; i < p->range_starts.n; i++) {
            const aip__range_point *r = &p->range_starts.v[i];
            if (r->match < 0)
                continue;
            const aip__range_point *e = &p->range_ends.v[r->match];
            row(&ins, r->ts, e->ts, EV_START_END, aip__dbs_raw(str, pi, r->name),
                gtid(p, r->thread), gtid(p, e->thread), AIP__MSTX_CONN_START + k++);
        }
        for (uint32_t ti = 0; ti < p->n_threads; ti++) {
            const aip__thread *t = &p->threads[ti];
            int64_t g = gtid(p, ti);
            for (size_t i = 0; i < t->n_spans; i++)
                if (t->spans[i].kind == AIP_SPAN_RANGE)
                    row(&ins, t->spans[i].start, t->spans[i].end, EV_PUSH_POP,
                        aip__dbs_raw(str, pi, t->spans[i].name), g, g, AIP__MSTX_CONN_DEFAULT);
        }
    }
    aip__db_insert_end(&ins);
    enum_rows(d);
    return str->status;
}
