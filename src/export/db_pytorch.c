/*
 * db_pytorch.c — ascend_pytorch_profiler[_{rank}].db: opens the file, has
 * the API, memory and device tables written (db_pytorch_api.c,
 * db_pytorch_memory.c, db_device.c), adds the small per-profile tables RANK_DEVICE_MAP,
 * HOST_INFO, META_DATA, STEP_TIME, GC_RECORD, and last STRING_IDS (every
 * other table refers to it).
 *
 * When a table exists: STRING_IDS, PYTORCH_API, ENUM_API_TYPE,
 * RANK_DEVICE_MAP (a row per device used, else deviceId -1), HOST_INFO,
 * META_DATA, CANN_API, TASK, COMPUTE_TASK_INFO, COMMUNICATION_OP,
 * ENUM_HCCL_DATA_TYPE always (empty when nothing ran on a device or
 * communicated: db_device.c, db_comm.c); the other device tables with
 * device activity; CONNECTION_IDS when an op
 * has a connection; PYTORCH_CALLCHAINS with with_stack (or any stack);
 * MEMORY_RECORD/OP_MEMORY when there are memory records;
 * STEP_TIME always (empty without steps); GC_RECORD with a
 * gc_detect_threshold (or any GC record); MSTX_EVENTS and
 * ENUM_MSTX_EVENT_TYPE with mstx events (db_mstx.c).
 */
#include "db_pytorch.h"
#include "osrt_export.h"
#include "text_escape.h"
#include "error.h"
#include "host_uid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const aip__db_col strings_cols[] = {{"id", "INTEGER"}, {"value", "TEXT"}};
static const aip__db_table tbl_string_ids = {"STRING_IDS", strings_cols, 2, 0};
static const aip__db_col rank_cols[] = {{"rankId", "INTEGER"}, {"deviceId", "INTEGER"}};
static const aip__db_table tbl_rank_device_map = {"RANK_DEVICE_MAP", rank_cols, 2, -1};
static const aip__db_col host_cols[] = {{"hostUid", "TEXT"}, {"hostName", "TEXT"}};
static const aip__db_table tbl_host_info = {"HOST_INFO", host_cols, 2, -1};
static const aip__db_col meta_cols[] = {{"name", "TEXT"}, {"value", "TEXT"}};
static const aip__db_table tbl_meta_data = {"META_DATA", meta_cols, 2, -1};
static const aip__db_col step_cols[] = {{"id", "INTEGER"}, {"startNs", "INTEGER"}, {"endNs", "INTEGER"}};
static const aip__db_table tbl_step_time = {"STEP_TIME", step_cols, 3, -1};
static const aip__db_col gc_cols[] = {{"startNs", "INTEGER"}, {"endNs", "INTEGER"}, {"globalTid", "INTEGER"}};
static const aip__db_table tbl_gc_record = {"GC_RECORD", gc_cols, 3, -1};

void aip__db_name(int64_t rank, char *out, size_t cap)
{
    if (rank < 0)
        snprintf(out, cap, "ascend_pytorch_profiler.db");
    else
        snprintf(out, cap, "ascend_pytorch_profiler_%lld.db", (long long)rank);
}

static void put_text(aip__db_insert *ins, int col, const char *s)
{
    if (!s) {
        aip__db_null(ins, col);
        return;
    }
    size_t n = strlen(s);
    char small[512];
    char *buf = 3 * n <= sizeof small ? small : malloc(3 * n + 1);
    if (!buf) {
        aip__db_null(ins, col);
        return;
    }
    aip__db_text(ins, col, buf, aip__utf8_clean(s, n, buf));
    if (buf != small)
        free(buf);
}

static void host_info(aip__db *d, const aip__model *m)
{
    aip__db_insert ins;
    if (aip__db_insert_begin(d, &tbl_host_info, &ins))
        return;
    const aip__process *p = m->n_procs ? &m->procs[0] : NULL;
    const char *host = p && p->hostname ? p->hostname : NULL;
    char uid[32] = "", here[256] = "";
    /* The uid identifies the recording host, so it can only be computed
     * here when that is this host; otherwise it stays NULL. */
    if (p && p->host_uid)
        snprintf(uid, sizeof uid, "%s", p->host_uid);
    else if (host && gethostname(here, sizeof here - 1) == 0 && !strcmp(here, host))
        snprintf(uid, sizeof uid, "%llu", (unsigned long long)aip__host_uid());
    put_text(&ins, 0, uid[0] ? uid : NULL);
    put_text(&ins, 1, host);
    aip__db_row(&ins);
    aip__db_insert_end(&ins);
}

static void meta_data(aip__db *d, const aip__metadata *md)
{
    aip__db_insert ins;
    if (aip__db_insert_begin(d, &tbl_meta_data, &ins))
        return;
    for (size_t i = 0; i < md->n; i++) {
        put_text(&ins, 0, md->keys[i]);
        put_text(&ins, 1, md->values[i]);
        aip__db_row(&ins);
    }
    aip__db_insert_end(&ins);
}

static void small_tables(aip__db *d, const aip__model *m)
{
    aip__db_insert ins;
    if (!aip__db_insert_begin(d, &tbl_rank_device_map, &ins)) {
        /* a row per device the profile used (once, whichever process);
         * none: the seed's "not collected" value -1 */
        uint64_t listed = 0;
        for (size_t pi = 0; pi < m->n_procs; pi++)
            for (uint32_t dv = 0; dv < m->procs[pi].devices.n && dv < 64; dv++)
                if (aip__model_device(&m->procs[pi], dv))
                    listed |= (uint64_t)1 << dv;
        for (uint32_t dv = 0; dv < 64; dv++) {
            if (!(listed >> dv & 1))
                continue;
            aip__db_i64(&ins, 0, m->info.rank);
            aip__db_i64(&ins, 1, dv);
            aip__db_row(&ins);
        }
        if (!listed) {
            aip__db_i64(&ins, 0, m->info.rank);
            aip__db_i64(&ins, 1, -1);
            aip__db_row(&ins);
        }
        aip__db_insert_end(&ins);
    }
    host_info(d, m);
    meta_data(d, &m->meta);
    /* always, as torch_npu's: empty when the profile had no steps (no
     * schedule, no step() calls) */
    if (!aip__db_insert_begin(d, &tbl_step_time, &ins)) {
        for (size_t i = 0; i < m->n_steps; i++) {
            aip__db_i64(&ins, 0, m->steps[i].number);
            aip__db_i64(&ins, 1, m->steps[i].start);
            aip__db_i64(&ins, 2, m->steps[i].end);
            aip__db_row(&ins);
        }
        aip__db_insert_end(&ins);
    }
    size_t n_gc = 0;
    for (size_t i = 0; i < m->n_procs; i++)
        n_gc += m->procs[i].gc.n;
    if ((n_gc || m->info.gc_detect) && !aip__db_insert_begin(d, &tbl_gc_record, &ins)) {
        for (size_t pi = 0; pi < m->n_procs; pi++) {
            const aip__process *p = &m->procs[pi];
            for (size_t i = 0; i < p->gc.n; i++) {
                aip__db_i64(&ins, 0, p->gc.v[i].start);
                aip__db_i64(&ins, 1, p->gc.v[i].end);
                uint64_t tid = p->threads[p->gc.v[i].thread].tid;
                aip__db_i64(&ins, 2, (int64_t)(((uint64_t)p->pid << 32) | (tid & 0xffffffffu)));
                aip__db_row(&ins);
            }
        }
        aip__db_insert_end(&ins);
    }
}

aip_status aip__export_pytorch_db(const aip__model *m, aip__out *o)
{
    aip__db d;
    aip_status s = o->status ? o->status : aip__db_open(&d, o->path);
    if (s)
        return s;
    aip__db_strings api, mem, dev;
    memset(&mem, 0, sizeof mem);
    memset(&dev, 0, sizeof dev);
    s = aip__dbs_init(&api, AIP_DB_STR_BASE_API, m);
    if (!s)
        s = aip__dbs_init(&mem, AIP_DB_STR_BASE_MEMORY, m);
    if (!s) /* the device and communication tables exist in every database */
        s = aip__dbs_init(&dev, AIP_DB_STR_BASE_DEVICE, m);
    if (!s)
        s = aip__db_write_api(&d, m, &api);
    if (!s)
        s = aip__db_write_mstx(&d, m, &api);
    if (!s)
        s = aip__db_write_memory(&d, m, &mem);
    if (!s && dev.map)
        s = aip__db_write_device(&d, m, &dev);
    if (!s && dev.map)
        s = aip__db_write_comm(&d, m, &dev);
    if (!s)
        s = aip__db_write_host(&d, m);
    if (!s)
        s = aip__db_write_osrt(&d, m, &api);
    if (!s)
        small_tables(&d, m);
    aip__db_insert ins;
    if (!s && !d.status && !aip__db_insert_begin(&d, &tbl_string_ids, &ins)) {
        if (dev.map)
            aip__dbs_write(&dev, &ins);
        aip__dbs_write(&api, &ins);
        aip__dbs_write(&mem, &ins);
        aip__db_insert_end(&ins);
    }
    if (dev.map)
        aip__dbs_free(&dev);
    if (mem.map)
        aip__dbs_free(&mem);
    if (api.map)
        aip__dbs_free(&api);
    if (s) {
        aip__db_abort(&d);
        return s;
    }
    return aip__db_close(&d);
}
