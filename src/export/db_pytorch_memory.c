/*
 * db_pytorch_memory.c — MEMORY_RECORD and OP_MEMORY (seed 表5–6): the same
 * facts as memory_record.csv and operator_memory.csv (csv_memory.c, which
 * explains the mapping), in the database's units: bytes and ns, names and
 * components as STRING_IDS in torch_npu's memory range (2 << 28).  Values
 * that were not recorded (Total Active off the CPU, stream pointers, active
 * release times) are NULL.
 */
#include "db_pytorch.h"
#include "error.h"

static const aip__db_col record_cols[] = {
    {"component", "INTEGER"}, {"timestamp", "INTEGER"}, {"totalAllocated", "INTEGER"},
    {"totalReserved", "INTEGER"}, {"totalActive", "INTEGER"}, {"streamPtr", "INTEGER"},
    {"deviceId", "INTEGER"}};
static const aip__db_table tbl_memory_record = {"MEMORY_RECORD", record_cols, 7, -1};

static const aip__db_col op_cols[] = {
    {"name", "INTEGER"}, {"size", "INTEGER"}, {"allocationTime", "INTEGER"},
    {"releaseTime", "INTEGER"}, {"activeReleaseTime", "INTEGER"}, {"duration", "INTEGER"},
    {"activeDuration", "INTEGER"}, {"allocationTotalAllocated", "INTEGER"},
    {"allocationTotalReserved", "INTEGER"}, {"allocationTotalActive", "INTEGER"},
    {"releaseTotalAllocated", "INTEGER"}, {"releaseTotalReserved", "INTEGER"},
    {"releaseTotalActive", "INTEGER"}, {"streamPtr", "INTEGER"}, {"deviceId", "INTEGER"}};
static const aip__db_table tbl_op_memory = {"OP_MEMORY", op_cols, 15, -1};

static void bind_active(aip__db_insert *ins, int col, const aip__mem_ev *e)
{
    if (e && e->device_type == AIP_DEVICE_CPU)
        aip__db_i64(ins, col, e->total_allocated);
    else
        aip__db_null(ins, col);
}

static void record_row(aip__db_insert *ins, const aip__mem_ev *e, int64_t component)
{
    aip__db_i64(ins, 0, component);
    aip__db_i64(ins, 1, e->ts);
    aip__db_i64(ins, 2, e->total_allocated);
    aip__db_i64(ins, 3, e->total_reserved);
    bind_active(ins, 4, e);
    aip__db_null(ins, 5);
    aip__db_i64(ins, 6, e->device_index);
    aip__db_row(ins);
}

static void record_rows(aip__db_insert *ins, const aip__mem_ev *e, int64_t pta, int64_t pta_ge)
{
    record_row(ins, e, pta);
    record_row(ins, e, pta_ge); /* PTA plus GE's totals: no GE here */
}

static void op_row(aip__db_insert *ins, int64_t name, const aip__mem_ev *a, const aip__mem_ev *f)
{
    if (name >= 0)
        aip__db_i64(ins, 0, name);
    else
        aip__db_null(ins, 0);
    aip__db_i64(ins, 1, a->bytes);
    aip__db_i64(ins, 2, a->ts);
    aip__db_null(ins, 4);
    aip__db_null(ins, 6);
    aip__db_i64(ins, 7, a->total_allocated);
    aip__db_i64(ins, 8, a->total_reserved);
    bind_active(ins, 9, a);
    if (f) {
        aip__db_i64(ins, 3, f->ts);
        aip__db_i64(ins, 5, f->ts - a->ts);
        aip__db_i64(ins, 10, f->total_allocated);
        aip__db_i64(ins, 11, f->total_reserved);
        bind_active(ins, 12, f);
    } else {
        aip__db_null(ins, 3);
        aip__db_null(ins, 5);
        aip__db_null(ins, 10);
        aip__db_null(ins, 11);
        aip__db_null(ins, 12);
    }
    aip__db_null(ins, 13);
    aip__db_i64(ins, 14, a->device_index);
    aip__db_row(ins);
}

aip_status aip__db_write_memory(aip__db *d, const aip__model *m, aip__db_strings *str)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        n += m->procs[i].memory.n;
    /* No rows, no tables, even with profile_memory: msprof-analyze's
     * compare reads max(totalReserved) of MEMORY_RECORD and fails on the
     * NULL an empty table gives. */
    if (!n)
        return AIP_OK;
    aip__db_insert rec, op;
    if (aip__db_insert_begin(d, &tbl_memory_record, &rec))
        return d->status;
    if (aip__db_insert_begin(d, &tbl_op_memory, &op)) {
        aip__db_insert_end(&rec);
        return d->status;
    }
    int64_t pta = aip__dbs_text(str, "PTA", 3), pta_ge = aip__dbs_text(str, "PTA+GE", 6);
    aip__mem_iter it;
    aip_status s = aip__mem_iter_init(&it, m);
    size_t pi, e;
    while (!s && !d->status && aip__mem_iter_next(&it, &pi, &e)) {
        const aip__process *p = &m->procs[pi];
        const aip__mem_ev *ev = &p->memory.v[e];
        record_rows(&rec, ev, pta, pta_ge);
        if (ev->bytes > 0) {
            const aip__mem_info *mi = &p->mem_info[e];
            op_row(&op, aip__dbs_raw(str, pi, mi->name), ev,
                   mi->pair >= 0 ? &p->memory.v[mi->pair] : NULL);
        }
    }
    aip__mem_iter_free(&it);
    aip__db_insert_end(&rec);
    aip__db_insert_end(&op);
    return s ? s : d->status ? d->status : str->status;
}
