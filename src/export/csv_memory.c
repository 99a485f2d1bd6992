/*
 * csv_memory.c — memory_record.csv and operator_memory.csv (profile_memory)
 * from the raw MEMORY records and their derived pairs (memory.c).
 *
 * Mapping to torch_npu's vocabulary (docs/ANALYSIS.md):
 * - Component: every raw record is a framework allocator report, torch_npu's
 *   `PTA`; like torch_npu, each PTA row is followed by a `PTA+GE` row (PTA
 *   plus the GE totals last seen on the device: no GE exists here, so it
 *   equals the PTA row).
 * - Device Type: `CPU`, `NPU:<index>`, `CUDA:<index>`.
 * - Total Active: not recorded.  A CPU allocator reuses no block across
 *   streams, so active equals allocated there and that is written; for
 *   other devices the cell is empty.  Stream Ptr: not recorded, empty.
 * - Times: absolute µs with 3 decimals and torch_npu's trailing tab (it
 *   keeps spreadsheets from turning them into floats); MB and KB are
 *   2^20 and 2^10 bytes, 6 and 3 decimals.
 * - operator_memory: one row per allocation in time order (torch_npu: NPU
 *   blocks only; here every device), Name = the op running on the
 *   allocating thread; release columns empty when the block outlived the
 *   trace; Active Release/Active Duration empty (no stream reuse recorded).
 *   Frees of blocks allocated before the trace have no row (as in torch_npu).
 * - Device memory (a device back end's DEVICE_MEMORY records: buffers the
 *   program asked the runtime for) follows the framework's rows: Component
 *   `APP` (torch_npu's process-level device memory), one row per record in
 *   time order, totals counted from the records (device_memory.h; reserved
 *   and active equal allocated: a runtime allocation has no pool), Device
 *   Type `NPU:<id>` (`CUDA:<id>` for CUDA's), and one operator_memory row
 *   per device allocation, named after the op open around it.  A profile
 *   without device memory gives the files it gave before, byte for byte.
 */
#include "export.h"
#include "device_memory.h"
#include "text_escape.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>

#define MB (1024 * 1024)

char *aip__fmt_device_tag(char *d, uint8_t type, int8_t index)
{
    int n;
    if (type == AIP_DEVICE_CPU)
        n = sprintf(d, "CPU");
    else if (type == AIP_DEVICE_NPU)
        n = sprintf(d, "NPU:%d", index);
    else if (type == AIP_DEVICE_CUDA)
        n = sprintf(d, "CUDA:%d", index);
    else
        n = sprintf(d, "DEVICE%u:%d", type, index);
    return d + n;
}

static char *put_time(char *d, int64_t ns)
{
    d = aip__fmt_us3(d, ns);
    *d++ = '\t';
    return d;
}

static char *put_mb(char *d, int64_t bytes) { return aip__fmt_fixed(d, bytes, MB, 6); }

/* Total Active: allocated on a CPU, unknown elsewhere. */
static char *put_active(char *d, const aip__mem_ev *e)
{
    return e->device_type == AIP_DEVICE_CPU ? put_mb(d, e->total_allocated) : d;
}

static void record_row(aip__out *o, const char *component, size_t clen, const aip__mem_ev *e)
{
    char *d = aip__out_reserve(o, 256);
    memcpy(d, component, clen);
    d += clen;
    *d++ = ',';
    d = put_time(d, e->ts);
    *d++ = ',';
    d = put_mb(d, e->total_allocated);
    *d++ = ',';
    d = put_mb(d, e->total_reserved);
    *d++ = ',';
    d = put_active(d, e);
    *d++ = ',';
    *d++ = ','; /* Stream Ptr */
    d = aip__fmt_device_tag(d, e->device_type, e->device_index);
    memcpy(d, "\r\n", 2);
    aip__out_commit(o, d + 2);
}

/* Device memory: one APP row per record. */
static aip_status device_records(const aip__model *m, aip__out *o)
{
    aip__devmem dm;
    aip_status s = aip__devmem_derive(m, &dm);
    if (s || !dm.n_records) {
        if (!s)
            aip__devmem_free(&dm);
        return s;
    }
    aip__devmem_iter it;
    s = aip__devmem_iter_init(&it, m);
    size_t pi, i;
    while (!s && aip__devmem_iter_next(&it, &pi, &i)) {
        const aip__process *p = &m->procs[pi];
        const aip__device_mem *r = &p->dev_memory.v[i];
        aip__mem_ev e = {.ts = r->ts, .total_allocated = dm.rows[pi][i].total,
                         .total_reserved = dm.rows[pi][i].total,
                         .device_type = aip__devmem_tag_type(p, r->device),
                         .device_index = (int8_t)r->device};
        char *d = aip__out_reserve(o, 256);
        memcpy(d, "APP,", 4);
        d = put_time(d + 4, e.ts);
        *d++ = ',';
        d = put_mb(d, e.total_allocated);
        *d++ = ',';
        d = put_mb(d, e.total_reserved);
        *d++ = ',';
        d = put_mb(d, e.total_allocated); /* active: no pool, no reuse */
        *d++ = ',';
        *d++ = ','; /* Stream Ptr */
        d = aip__fmt_device_tag(d, e.device_type, e.device_index);
        memcpy(d, "\r\n", 2);
        aip__out_commit(o, d + 2);
    }
    aip__devmem_iter_free(&it);
    aip__devmem_free(&dm);
    return s;
}

aip_status aip__export_memory_record(const aip__model *m, aip__out *o)
{
    AIP_OUT_LIT(o, AIP_MEMORY_RECORD_HEADER "\r\n");
    aip__mem_iter it;
    aip_status s = aip__mem_iter_init(&it, m);
    if (s)
        return s;
    size_t pi, e;
    while (aip__mem_iter_next(&it, &pi, &e)) {
        const aip__mem_ev *ev = &m->procs[pi].memory.v[e];
        record_row(o, "PTA", 3, ev);
        record_row(o, "PTA+GE", 6, ev);
    }
    aip__mem_iter_free(&it);
    s = device_records(m, o);
    return s ? s : o->status;
}

/* An operator_memory row's first columns, Name to Active Duration: the
 * block of `bytes` allocated at `alloc` and freed at *freed (NULL: not
 * freed in the trace).  @return where the totals go (room reserved). */
static char *put_allocation(aip__out *o, const char *name, size_t n, int64_t bytes, int64_t alloc,
                            const int64_t *freed)
{
    aip__out_put(o, name, n);
    char *d = aip__out_reserve(o, 512);
    *d++ = ',';
    d = aip__fmt_fixed(d, bytes, 1024, 3);
    *d++ = ',';
    d = put_time(d, alloc);
    *d++ = ',';
    if (freed)
        d = put_time(d, *freed);
    *d++ = ',';
    *d++ = ','; /* Active Release Time */
    if (freed)
        d = put_time(d, *freed - alloc);
    *d++ = ',';
    *d++ = ','; /* Active Duration */
    return d;
}

/* Device memory: one row per allocation, in time order. */
static aip_status device_allocations(const aip__model *m, aip__out *o, aip__esc_cache *esc)
{
    aip__devmem dm;
    aip_status s = aip__devmem_derive(m, &dm);
    if (s || !dm.n_records) {
        if (!s)
            aip__devmem_free(&dm);
        return s;
    }
    aip__devmem_iter it;
    s = aip__devmem_iter_init(&it, m);
    size_t pi, i;
    while (!s && aip__devmem_iter_next(&it, &pi, &i)) {
        const aip__process *p = &m->procs[pi];
        const aip__device_mem *a = &p->dev_memory.v[i];
        const aip__devmem_row *ra = &dm.rows[pi][i];
        if (a->bytes <= 0)
            continue;
        const aip__device_mem *f = ra->pair >= 0 ? &p->dev_memory.v[ra->pair] : NULL;
        const aip__devmem_row *rf = f ? &dm.rows[pi][ra->pair] : NULL;
        size_t n;
        const char *name = aip__esc_get(&esc[pi], ra->name, &n);
        if (!name) {
            s = aip__fail(AIP_ERR_NOMEM, "no memory for CSV strings");
            break;
        }
        char *d = put_allocation(o, name, n, a->bytes, a->ts, f ? &f->ts : NULL);
        for (int k = 0; k < 3; k++) { /* allocated, reserved, active: the same (no pool) */
            d = put_mb(d, ra->total);
            *d++ = ',';
        }
        for (int k = 0; k < 3; k++) {
            if (f)
                d = put_mb(d, rf->total);
            *d++ = ',';
        }
        *d++ = ','; /* Stream Ptr */
        d = aip__fmt_device_tag(d, aip__devmem_tag_type(p, a->device), (int8_t)a->device);
        memcpy(d, "\r\n", 2);
        aip__out_commit(o, d + 2);
    }
    aip__devmem_iter_free(&it);
    aip__devmem_free(&dm);
    return s;
}

aip_status aip__export_operator_memory(const aip__model *m, aip__out *o)
{
    AIP_OUT_LIT(o, AIP_OPERATOR_MEMORY_HEADER "\r\n");
    aip__mem_iter it;
    aip_status s = aip__mem_iter_init(&it, m);
    if (s)
        return s;
    aip__esc_cache *esc = calloc(m->n_procs ? m->n_procs : 1, sizeof *esc);
    if (!esc) {
        aip__mem_iter_free(&it);
        return aip__fail(AIP_ERR_NOMEM, "no memory for CSV strings");
    }
    for (size_t i = 0; i < m->n_procs && !s; i++)
        s = aip__esc_init(&esc[i], &m->procs[i], AIP_ESC_CSV);
    size_t pi, e;
    while (!s && aip__mem_iter_next(&it, &pi, &e)) {
        const aip__process *p = &m->procs[pi];
        const aip__mem_ev *a = &p->memory.v[e];
        const aip__mem_info *mi = &p->mem_info[e];
        if (a->bytes <= 0)
            continue;
        const aip__mem_ev *f = mi->pair >= 0 ? &p->memory.v[mi->pair] : NULL;
        size_t n;
        const char *name = aip__esc_get(&esc[pi], mi->name, &n);
        if (!name) {
            s = aip__fail(AIP_ERR_NOMEM, "no memory for CSV strings");
            break;
        }
        char *d = put_allocation(o, name, n, a->bytes, a->ts, f ? &f->ts : NULL);
        d = put_mb(d, a->total_allocated);
        *d++ = ',';
        d = put_mb(d, a->total_reserved);
        *d++ = ',';
        d = put_active(d, a);
        *d++ = ',';
        if (f) {
            d = put_mb(d, f->total_allocated);
            *d++ = ',';
            d = put_mb(d, f->total_reserved);
            *d++ = ',';
            d = put_active(d, f);
            *d++ = ',';
        } else {
            memcpy(d, ",,,", 3);
            d += 3;
        }
        *d++ = ','; /* Stream Ptr */
        d = aip__fmt_device_tag(d, a->device_type, a->device_index);
        memcpy(d, "\r\n", 2);
        aip__out_commit(o, d + 2);
    }
    if (!s)
        s = device_allocations(m, o, esc);
    for (size_t i = 0; i < m->n_procs; i++)
        aip__esc_free(&esc[i]);
    free(esc);
    aip__mem_iter_free(&it);
    return s ? s : o->status;
}
