/*
 * db_osrt.c — the OSRT_API table of ascend_pytorch_profiler.db: one row
 * per recorded OS runtime call (host_sys OSRT, docs/OSRT.md).
 *
 * Columns as msprof writes them (msprof_db.cpp's OSRT_API, all NUMERIC):
 * name (an id into STRING_IDS), globalTid (pid in the high 32 bits, tid in
 * the low ones, as GC_RECORD and msprof's Contact(pid, tid)), startNs,
 * endNs.  The table exists when a call was recorded or host_sys named OSRT
 * (then empty: no call passed the threshold).
 */
#include "osrt_export.h"

static const aip__db_col osrt_cols[] = {{"name", "NUMERIC"}, {"globalTid", "NUMERIC"},
                                        {"startNs", "NUMERIC"}, {"endNs", "NUMERIC"}};
static const aip__db_table tbl_osrt_api = {"OSRT_API", osrt_cols, 4, -1};

aip_status aip__db_write_osrt(aip__db *d, const aip__model *m, aip__db_strings *strs)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        n += m->procs[i].osrt.n;
    if (!n && !(m->info.host_sys & AIP_HOST_SYS_OSRT))
        return AIP_OK;
    aip__db_insert ins;
    if (aip__db_insert_begin(d, &tbl_osrt_api, &ins))
        return AIP_OK; /* d->status says why, and the caller reports it */
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->osrt.n; i++) {
            const aip__osrt_call *c = &p->osrt.v[i];
            int64_t name = aip__dbs_raw(strs, pi, c->name);
            if (name < 0)
                aip__db_null(&ins, 0);
            else
                aip__db_i64(&ins, 0, name);
            uint64_t tid = p->threads[c->thread].tid;
            aip__db_i64(&ins, 1, (int64_t)(((uint64_t)p->pid << 32) | (tid & 0xffffffffu)));
            aip__db_i64(&ins, 2, c->start);
            aip__db_i64(&ins, 3, c->end);
            aip__db_row(&ins);
        }
    }
    aip__db_insert_end(&ins);
    return strs->status;
}
