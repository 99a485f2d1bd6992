/*
 * db_pytorch_memory.c — MEMORY_RECORD and OP_MEMORY (seed 表5–6): the same
 * facts as memory_record.csv and operator_memory.csv (csv_memory.c, which
 * explains the mapping), in the database's units: bytes and ns, names and
 * components as STRING_IDS in torch_npu's memory range (2 << 28).  Values
 * that were not recorded (Total Active off the CPU, stream pointers, active
 * release times) are NULL.
 *
 * Device memory (DEVICE_MEMORY records, device_memory.h) follows, as in
 * the CSVs: a MEMORY_RECORD row per record with component `APP` and the
 * bytes live on the device (allocated = reserved = active: a runtime's
 * buffers have no pool), and an OP_MEMORY row per allocation named after
 * the op open around it; deviceId the device's id.
 */
#include "db_pytorch.h"
#include "device_memory.h"
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
    aip__db_i64(ins, 0, name);
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

/* The device memory rows of every process, in time order. */
static aip_status device_rows(const aip__model *m, aip__db_strings *str, aip__db_insert *rec,
                              aip__db_insert *op, int64_t *unnamed)
{
    aip__devmem dm;
    aip_status s = aip__devmem_derive(m, &dm);
    if (s)
        return s;
    int64_t app = dm.n_records ? aip__dbs_text(str, "APP", 3) : -1;
    aip__devmem_iter it;
    s = dm.n_records ? aip__devmem_iter_init(&it, m) : AIP_OK;
    size_t pi, i;
    while (!s && dm.n_records && aip__devmem_iter_next(&it, &pi, &i)) {
        const aip__process *p = &m->procs[pi];
        const aip__device_mem *a = &p->dev_memory.v[i];
        const aip__devmem_row *ra = &dm.rows[pi][i];
        aip__db_i64(rec, 0, app);
        aip__db_i64(rec, 1, a->ts);
        for (int k = 2; k <= 4; k++) /* allocated, reserved, active */
            aip__db_i64(rec, k, ra->total);
        aip__db_null(rec, 5);
        aip__db_i64(rec, 6, a->device);
        aip__db_row(rec);
        if (a->bytes <= 0)
            continue;
        const aip__device_mem *f = ra->pair >= 0 ? &p->dev_memory.v[ra->pair] : NULL;
        int64_t name = aip__dbs_raw(str, pi, ra->name);
        if (name < 0 && *unnamed < 0)
            *unnamed = aip__dbs_empty(str);
        aip__db_i64(op, 0, name >= 0 ? name : *unnamed);
        aip__db_i64(op, 1, a->bytes);
        aip__db_i64(op, 2, a->ts);
        aip__db_null(op, 4);
        aip__db_null(op, 6);
        for (int k = 7; k <= 9; k++)
            aip__db_i64(op, k, ra->total);
        if (f) {
            aip__db_i64(op, 3, f->ts);
            aip__db_i64(op, 5, f->ts - a->ts);
            for (int k = 10; k <= 12; k++)
                aip__db_i64(op, k, dm.rows[pi][ra->pair].total);
        } else {
            static const int unreleased[] = {3, 5, 10, 11, 12};
            for (size_t k = 0; k < sizeof unreleased / sizeof *unreleased; k++)
                aip__db_null(op, unreleased[k]);
        }
        aip__db_null(op, 13);
        aip__db_i64(op, 14, a->device);
        aip__db_row(op);
    }
    if (dm.n_records)
        aip__devmem_iter_free(&it);
    aip__devmem_free(&dm);
    return s;
}

aip_status aip__db_write_memory(aip__db *d, const aip__model *m, aip__db_strings *str)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        n += m->procs[i].memory.n + m->procs[i].dev_memory.n;
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
    /* A block allocated outside every op: an empty name, never NULL
     * (msprof-analyze's compare tests `"cann::" in opName`); interned at
     * its first use. */
    int64_t unnamed = -1;
    aip__mem_iter it;
    aip_status s = aip__mem_iter_init(&it, m);
    size_t pi, e;
    while (!s && !d->status && aip__mem_iter_next(&it, &pi, &e)) {
        const aip__process *p = &m->procs[pi];
        const aip__mem_ev *ev = &p->memory.v[e];
        record_rows(&rec, ev, pta, pta_ge);
        if (ev->bytes > 0) {
            const aip__mem_info *mi = &p->mem_info[e];
            int64_t name = aip__dbs_raw(str, pi, mi->name);
            if (name < 0 && unnamed < 0)
                unnamed = aip__dbs_empty(str);
            op_row(&op, name >= 0 ? name : unnamed, ev,
                   mi->pair >= 0 ? &p->memory.v[mi->pair] : NULL);
        }
    }
    aip__mem_iter_free(&it);
    if (!s && !d->status)
        s = device_rows(m, str, &rec, &op, &unnamed);
    aip__db_insert_end(&rec);
    aip__db_insert_end(&op);
    return s ? s : d->status ? d->status : str->status;
}
