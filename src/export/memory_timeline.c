/*
 * memory_timeline.c — the memory timeline's events, their coalesced form,
 * and the JSON files (see memory_timeline.h).
 *
 * Events come from the raw MEMORY records of the chosen device, every
 * process merged by time (memory.c pairs them):
 *   a free without an allocation in the trace → PREEXISTING at t = -1 (its
 *     size, as torch does for tensors that existed before profiling) and
 *     DESTROY at the free; a framework label of a block from before the
 *     trace that is never freed → PREEXISTING of the label's size;
 *   an allocation → CREATE; its free → DESTROY of the allocated size.
 * The raw records say nothing of tensor versions, so INCREMENT_VERSION
 * (torch: an in-place write that changes a tensor's category) never
 * appears.  A device back end's memory records (device_memory.h) are
 * events of device "npu:<id>" ("cuda:<id>" for CUDA's) the same way, of
 * category UNKNOWN (a runtime buffer says nothing of the tensor it holds),
 * merged with the framework's records of that device by time.  The coalesced form follows torch's _coalesce_timeline exactly:
 * times truncated to µs, one point per distinct time in event order,
 * PREEXISTING's -1 replaced by the earliest time.  Numbers are written as
 * Python's json.dump writes them (", " separators), gzip without a time
 * stamp, so the same profile gives the same bytes.
 */
#include "memory_timeline.h"
#include "device_memory.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

aip_status aip__device_parse(const char *device, uint8_t *type, int *index)
{
    char low[32];
    size_t n = device ? strlen(device) : 0;
    if (!device || !n || n >= sizeof low)
        return aip__fail(AIP_ERR_INVALID_ARG, "device must look like cpu, npu:0 or cuda:0");
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)(device[i] >= 'A' && device[i] <= 'Z' ? device[i] + 32 : device[i]);
    char *colon = strchr(low, ':');
    if (colon)
        *colon = 0;
    if (!strcmp(low, "cpu"))
        *type = AIP_DEVICE_CPU;
    else if (!strcmp(low, "npu"))
        *type = AIP_DEVICE_NPU;
    else if (!strcmp(low, "cuda"))
        *type = AIP_DEVICE_CUDA;
    else
        return aip__fail(AIP_ERR_INVALID_ARG, "device '%s': must look like cpu, npu:0 or cuda:0",
                         device);
    *index = -1;
    if (colon) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || v < 0 || v > 127)
            return aip__fail(AIP_ERR_INVALID_ARG, "device '%s': bad index", device);
        *index = (int)v;
    }
    return AIP_OK;
}

static int same_device(uint8_t dtype, int8_t dindex, uint8_t type, int index)
{
    /* a CPU has one memory, whatever index the allocator reported */
    return dtype == type && (index < 0 || type == AIP_DEVICE_CPU || dindex == index);
}

static int device_match(const aip__mem_ev *e, uint8_t type, int index)
{
    return same_device(e->device_type, e->device_index, type, index);
}

static aip_status push(aip__mem_timeline *t, size_t *cap, aip__mt_event ev)
{
    if (aip__model_grow((void **)&t->ev, cap, t->n + 1, sizeof *t->ev))
        return AIP_ERR_NOMEM;
    t->ev[t->n++] = ev;
    return AIP_OK;
}

static aip_status coalesce(aip__mem_timeline *t)
{
    t->times_us = malloc((t->n ? t->n : 1) * sizeof *t->times_us);
    t->sizes = malloc((t->n ? t->n : 1) * sizeof *t->sizes);
    if (!t->times_us || !t->sizes)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the memory timeline");
    int64_t t_min = -1;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const aip__mt_event *e = &t->ev[i];
        int64_t us = e->t != -1 ? e->t / 1000 : -1;
        if (t_min == -1 || (us < t_min && us > 0))
            t_min = us;
        if (!n || us != t->times_us[n - 1]) {
            if (n)
                memcpy(t->sizes[n], t->sizes[n - 1], sizeof *t->sizes);
            else
                memset(t->sizes[0], 0, sizeof *t->sizes);
            t->times_us[n++] = us;
        }
        int64_t *slot = &t->sizes[n - 1][e->category + 1];
        *slot = aip__sat_add(*slot, e->bytes); /* forged sizes must not overflow */
    }
    for (size_t i = 0; i < n; i++)
        if (t->times_us[i] < 0)
            t->times_us[i] = t_min;
    t->n_points = n;
    return AIP_OK;
}

static int cmp_event(const void *a, const void *b, void *ctx)
{
    const aip__mt_event *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (v[x].t != v[y].t)
        return v[x].t < v[y].t ? -1 : 1; /* PREEXISTING's -1 first */
    return (x > y) - (x < y);
}

/* Events [0, n_host) are in order, and so are [n_host, t->n): put the
 * two runs together by time, the framework's first on equal times. */
static aip_status merge_runs(aip__mem_timeline *t, size_t n_host)
{
    if (!n_host || n_host == t->n)
        return AIP_OK;
    size_t *idx = malloc(t->n * sizeof *idx);
    aip__mt_event *out = malloc(t->n * sizeof *out);
    if (!idx || !out) {
        free(idx);
        free(out);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the memory timeline");
    }
    for (size_t i = 0; i < t->n; i++)
        idx[i] = i;
    qsort_r(idx, t->n, sizeof *idx, cmp_event, t->ev);
    for (size_t i = 0; i < t->n; i++)
        out[i] = t->ev[idx[i]];
    memcpy(t->ev, out, t->n * sizeof *out);
    free(idx);
    free(out);
    return AIP_OK;
}

/* The device back ends' memory records of the chosen device. */
static aip_status add_device_memory(const aip__model *m, uint8_t type, int index,
                                    aip__mem_timeline *t, size_t *cap)
{
    aip__devmem dm;
    aip_status s = aip__devmem_derive(m, &dm);
    if (s || !dm.n_records) {
        if (!s)
            aip__devmem_free(&dm);
        return s;
    }
    size_t n_host = t->n;
    const uint8_t unknown = AIP_MEMCAT_UNKNOWN;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) { /* blocks from before the trace */
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->dev_memory.n && !s; i++) {
            const aip__device_mem *r = &p->dev_memory.v[i];
            if (r->bytes < 0 && dm.rows[pi][i].pair < 0 &&
                same_device(aip__devmem_tag_type(p, r->device), (int8_t)r->device, type, index))
                s = push(t, cap, (aip__mt_event){-1, r->bytes == INT64_MIN ? INT64_MAX : -r->bytes,
                                                 AIP_MT_PREEXISTING, unknown});
        }
    }
    aip__devmem_iter it;
    if (!s)
        s = aip__devmem_iter_init(&it, m);
    else
        it.pos = NULL;
    size_t pi, i;
    while (!s && aip__devmem_iter_next(&it, &pi, &i)) {
        const aip__process *p = &m->procs[pi];
        const aip__device_mem *r = &p->dev_memory.v[i];
        if (!r->bytes ||
            !same_device(aip__devmem_tag_type(p, r->device), (int8_t)r->device, type, index))
            continue;
        t->records++;
        if (dm.rows[pi][i].total > t->max_allocated)
            t->max_allocated = dm.rows[pi][i].total;
        if (dm.rows[pi][i].total > t->max_reserved)
            t->max_reserved = dm.rows[pi][i].total; /* no pool: reserved = allocated */
        int64_t pair = dm.rows[pi][i].pair;
        int64_t bytes = r->bytes < 0 && pair >= 0 ? -p->dev_memory.v[pair].bytes : r->bytes;
        s = push(t, cap, (aip__mt_event){r->ts, bytes,
                                         r->bytes > 0 ? AIP_MT_CREATE : AIP_MT_DESTROY, unknown});
    }
    aip__devmem_iter_free(&it);
    aip__devmem_free(&dm);
    if (!s)
        s = merge_runs(t, n_host);
    return s;
}

/* "auto": the CPU when the framework recorded CPU memory, else the device
 * of the first record there is (a framework record of another device, then
 * a device back end's buffer), else the CPU: a profile with only device
 * memory (profile_memory off, a device back end on) shows that device. */
static void auto_device(const aip__model *m, char *out, size_t cap)
{
    int type = -1, index = -1;
    for (size_t pi = 0; pi < m->n_procs && type != AIP_DEVICE_CPU; pi++)
        for (size_t k = 0; k < m->procs[pi].memory.n; k++) {
            const aip__mem_ev *ev = &m->procs[pi].memory.v[k];
            if (type < 0 || ev->device_type == AIP_DEVICE_CPU) {
                type = ev->device_type;
                index = ev->device_index;
            }
            if (type == AIP_DEVICE_CPU)
                break;
        }
    for (size_t pi = 0; pi < m->n_procs && type < 0; pi++)
        if (m->procs[pi].dev_memory.n) {
            const aip__device_mem *r = &m->procs[pi].dev_memory.v[0];
            type = aip__devmem_tag_type(&m->procs[pi], r->device);
            index = (int)r->device;
        }
    if (type <= AIP_DEVICE_CPU)
        snprintf(out, cap, "cpu");
    else
        snprintf(out, cap, "%s:%d", type == AIP_DEVICE_CUDA ? "cuda" : "npu",
                 index < 0 ? 0 : index);
}

aip_status aip__mem_timeline_build(const aip__model *m, const char *device, aip__mem_timeline *t)
{
    memset(t, 0, sizeof *t);
    uint8_t type;
    int index;
    char chosen[32];
    if (device && !strcasecmp(device, "auto")) {
        auto_device(m, chosen, sizeof chosen);
        device = chosen;
    }
    aip_status s = aip__device_parse(device ? device : "cpu", &type, &index);
    if (s)
        return s;
    snprintf(t->device, sizeof t->device, "%s", device ? device : "cpu");
    size_t cap = 0;
    /* PREEXISTING first, then the records in time order */
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t k = 0; k < p->memory.n && !s; k++) {
            size_t e = p->mem_order[k];
            const aip__mem_ev *ev = &p->memory.v[e];
            if (ev->bytes < 0 && p->mem_info[e].pair < 0 && device_match(ev, type, index))
                s = push(t, &cap, (aip__mt_event){-1, -ev->bytes, AIP_MT_PREEXISTING,
                                                 p->mem_info[e].category});
        }
        /* blocks from before the trace that the framework labelled and that
         * were never freed in it (freed ones came with their free above) */
        for (size_t k = 0; k < p->mem_labels.n && !s; k++) {
            const aip__mem_label *b = &p->mem_labels.v[k];
            if (b->preexisting && b->free_idx < 0 && b->bytes > 0 &&
                same_device(b->device_type, b->device_index, type, index))
                s = push(t, &cap, (aip__mt_event){-1, b->bytes, AIP_MT_PREEXISTING, b->category});
        }
    }
    aip__mem_iter it;
    if (!s)
        s = aip__mem_iter_init(&it, m);
    else
        it.pos = NULL;
    size_t pi, e;
    while (!s && aip__mem_iter_next(&it, &pi, &e)) {
        const aip__process *p = &m->procs[pi];
        const aip__mem_ev *ev = &p->memory.v[e];
        const aip__mem_info *mi = &p->mem_info[e];
        if (!device_match(ev, type, index) || !ev->bytes)
            continue;
        t->records++;
        if (ev->total_allocated > t->max_allocated)
            t->max_allocated = ev->total_allocated;
        if (ev->total_reserved > t->max_reserved)
            t->max_reserved = ev->total_reserved;
        if (ev->bytes > 0)
            s = push(t, &cap, (aip__mt_event){ev->ts, ev->bytes, AIP_MT_CREATE, mi->category});
        else if (mi->pair >= 0) {
            const aip__mem_ev *a = &p->memory.v[mi->pair];
            s = push(t, &cap, (aip__mt_event){ev->ts, -a->bytes, AIP_MT_DESTROY,
                                             p->mem_info[mi->pair].category});
        } else {
            s = push(t, &cap, (aip__mt_event){ev->ts, ev->bytes, AIP_MT_DESTROY, mi->category});
        }
    }
    aip__mem_iter_free(&it);
    if (!s)
        s = add_device_memory(m, type, index, t, &cap);
    if (!s)
        s = coalesce(t);
    if (s)
        aip__mem_timeline_free(t);
    return s;
}

void aip__mem_timeline_free(aip__mem_timeline *t)
{
    free(t->ev);
    free(t->times_us);
    free(t->sizes);
    memset(t, 0, sizeof *t);
}

/* ---- output: plain or gzip-compressed through one sink ---------------- */

typedef struct sink {
    aip__out *o;
    z_stream z;
    int gz;
    aip_status status;
    char buf[64 * 1024];
    size_t len;
} sink;

static void sink_drain(sink *k, int flush)
{
    if (!k->gz) {
        aip__out_put(k->o, k->buf, k->len);
        k->len = 0;
        return;
    }
    unsigned char out[64 * 1024];
    k->z.next_in = (unsigned char *)k->buf;
    k->z.avail_in = (uInt)k->len;
    int rc;
    do {
        k->z.next_out = out;
        k->z.avail_out = sizeof out;
        rc = deflate(&k->z, flush);
        if (rc == Z_STREAM_ERROR) {
            if (!k->status)
                k->status = aip__fail(AIP_ERR_IO, "gzip compression failed");
            break;
        }
        aip__out_put(k->o, out, sizeof out - k->z.avail_out);
    } while (k->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    k->len = 0;
}

static void sink_put(sink *k, const char *s, size_t n)
{
    if (k->len + n > sizeof k->buf)
        sink_drain(k, Z_NO_FLUSH);
    memcpy(k->buf + k->len, s, n);
    k->len += n;
}

static void sink_i64(sink *k, int64_t v)
{
    char b[24];
    sink_put(k, b, (size_t)(aip__fmt_i64(b, v) - b));
}

#define SINK_LIT(k, lit) sink_put((k), (lit), sizeof(lit) - 1)

static void write_coalesced(sink *k, const aip__mem_timeline *t)
{
    SINK_LIT(k, "[[");
    for (size_t i = 0; i < t->n_points; i++) {
        if (i)
            SINK_LIT(k, ", ");
        sink_i64(k, t->times_us[i]);
    }
    SINK_LIT(k, "], [");
    for (size_t i = 0; i < t->n_points; i++) {
        if (i)
            SINK_LIT(k, ", ");
        SINK_LIT(k, "[");
        for (int c = 0; c <= AIP_MEMCAT_COUNT; c++) {
            if (c)
                SINK_LIT(k, ", ");
            sink_i64(k, t->sizes[i][c]);
        }
        SINK_LIT(k, "]");
    }
    SINK_LIT(k, "]]");
}

static void write_raw(sink *k, const aip__mem_timeline *t)
{
    SINK_LIT(k, "[");
    for (size_t i = 0; i < t->n; i++) {
        const aip__mt_event *e = &t->ev[i];
        if (i)
            SINK_LIT(k, ", ");
        SINK_LIT(k, "[");
        sink_i64(k, e->t);
        SINK_LIT(k, ", ");
        sink_i64(k, e->action);
        SINK_LIT(k, ", ");
        sink_i64(k, e->bytes);
        SINK_LIT(k, ", ");
        sink_i64(k, e->category);
        SINK_LIT(k, "]");
    }
    SINK_LIT(k, "]");
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

aip_status aip__mem_timeline_write(const aip__mem_timeline *t, const char *path)
{
    int html = ends_with(path, ".html"), gz = ends_with(path, ".gz");
    int raw = ends_with(path, "raw.json.gz");
    if (!html && !ends_with(path, ".json") && !ends_with(path, ".json.gz"))
        return aip__fail(AIP_ERR_INVALID_ARG, "memory timeline output %s must end in .html, "
                         ".json, .json.gz or .raw.json.gz", path);
    aip__out o;
    aip_status s = aip__out_open(&o, path);
    if (s)
        return s;
    if (html) {
        s = aip__mem_timeline_html(t, &o);
    } else {
        sink *k = calloc(1, sizeof *k);
        if (!k) {
            aip__out_abort(&o);
            return aip__fail(AIP_ERR_NOMEM, "no memory");
        }
        k->o = &o;
        k->gz = gz;
        /* gzip wrapper (15 + 16); no name, time 0: reproducible bytes */
        if (gz && deflateInit2(&k->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(k);
            aip__out_abort(&o);
            return aip__fail(AIP_ERR_NOMEM, "cannot start gzip compression");
        }
        if (raw)
            write_raw(k, t);
        else
            write_coalesced(k, t);
        sink_drain(k, Z_FINISH);
        if (gz)
            deflateEnd(&k->z);
        s = k->status;
        free(k);
    }
    return aip__out_finish(&o, s);
}
