/*
 * model_load.c — one raw file → one aip__process of the model.
 *
 * Chunks are decoded as the reader yields them (one chunk in memory at a
 * time).  Every length in a CRC-valid chunk is still checked: an EVENTS
 * chunk is validated record by record before any of it is used, so a chunk
 * that is internally inconsistent is skipped whole, never half-applied.
 * Timestamps stay in ticks until the file is done, because the conversion
 * uses the file's last clock sync point (tick_convert.c).
 */
#include "analysis_int.h"
#include "error.h"
#include "hash_table.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct loader {
    aip__process *p;
    aip__ht tids;               /* thread id → index of p->threads */
    aip__span_loader *spans_to; /* NULL: the spans are decoded here */
} loader;

/* Below this a second thread costs more than it saves. */
#define SPAN_LOADER_FROM (8u << 20)

static void load_problem(aip__process *p, const char *fmt, unsigned long long off)
{
    if (!p->load_problem[0])
        snprintf(p->load_problem, sizeof p->load_problem, fmt, off);
}

static uint64_t thread_hash(const void *ctx, uint32_t i)
{
    return aip__hash_u64(((const aip__process *)ctx)->threads[i].tid);
}

/* Index of thread `tid`, created on first sight. */
static aip_status thread_index(loader *L, uint64_t tid, uint32_t *out)
{
    aip__process *p = L->p;
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&L->tids, aip__hash_u64(tid), &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&L->tids, &pr)) {
        if (p->threads[i].tid == tid) {
            *out = i;
            return AIP_OK;
        }
    }
    if (p->n_threads >= UINT32_MAX - 1)
        return aip__fail(AIP_ERR_LIMIT, "too many threads in %s", p->source);
    aip_status s = aip__model_grow((void **)&p->threads, &p->cap_threads, p->n_threads + 1,
                                   sizeof *p->threads);
    if (s)
        return s;
    if (aip__ht_add(&L->tids, &pr, thread_hash, p))
        return aip__fail(AIP_ERR_NOMEM, "no memory for the thread table");
    aip__thread *t = &p->threads[p->n_threads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    *out = (uint32_t)p->n_threads++;
    return AIP_OK;
}

static void decode_info(aip__process *p, const aip__raw_chunk *c)
{
    aip__raw_info in;
    if (aip__raw_info_parse(c->payload, c->size, &in)) {
        p->bad_other_chunks++;
        load_problem(p, "INFO chunk at offset %llu is not a JSON object", c->offset);
        return;
    }
    if (in.has_pid)
        p->pid = in.pid;
    /* A later INFO replaces the strings of an earlier one. */
    free(p->hostname);
    free(p->program);
    free(p->clock_name);
    free(p->writer_version);
    free(p->host_uid);
    p->hostname = in.hostname;
    p->program = in.program;
    p->clock_name = in.clock;
    p->writer_version = in.version;
    p->host_uid = in.host_uid;
    if (in.has_ticks_per_second)
        p->ticks_per_second = in.ticks_per_second;
    p->has_info = 1;
}

static aip_status decode_strings(aip__process *p, const aip__raw_chunk *c)
{
    aip__strings *st = &p->strings;
    if (c->size < 8) {
        p->bad_other_chunks++;
        load_problem(p, "STRINGS chunk at offset %llu is too short", c->offset);
        return AIP_OK;
    }
    uint32_t first, count;
    memcpy(&first, c->payload, 4);
    memcpy(&count, c->payload + 4, 4);
    size_t off = 8;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t len;
        if (c->size - off < 4 || (memcpy(&len, c->payload + off, 4), c->size - off - 4 < len)) {
            p->bad_other_chunks++;
            load_problem(p, "STRINGS chunk at offset %llu has an entry past its end", c->offset);
            return AIP_OK;
        }
        const char *text = (const char *)c->payload + off + 4;
        off += 4 + (size_t)len;
        uint64_t id = (uint64_t)first + i;
        if (id == 0)
            continue; /* id 0 means "none" and is never defined */
        if (id > AIP_NAME_ID_MAX || id >= st->max_ent) {
            p->bad_other_chunks++;
            load_problem(p, "STRINGS chunk at offset %llu defines ids beyond what the file "
                            "can hold; ignored", c->offset);
            return AIP_OK;
        }
        aip_status s = aip__array_grow((void **)&st->ent, &st->cap_ent, id + 1, sizeof *st->ent);
        if (!s)
            s = aip__array_grow((void **)&st->blob, &st->blob_cap, st->blob_len + len + 1, 1);
        if (s)
            return s;
        if (id >= st->n_ent) {
            memset(st->ent + st->n_ent, 0, (id + 1 - st->n_ent) * sizeof *st->ent);
            st->n_ent = id + 1;
        }
        /* Counted once per string (an id defined again is not a second
         * text): the exporters replace its bad bytes, which must not go
         * unreported. */
        if (!st->ent[id].defined && !aip__utf8_valid(text, len))
            p->invalid_utf8_strings++;
        memcpy(st->blob + st->blob_len, text, len);
        st->blob[st->blob_len + len] = '\0';
        st->ent[id] = (aip__str_entry){st->blob_len, len, 1};
        st->blob_len += (size_t)len + 1;
    }
    return AIP_OK;
}

static size_t record_min_size(uint8_t kind, uint8_t flags)
{
    switch (kind) {
    case AIP_REC_ANNOTATION: case AIP_REC_RANGE_END: case AIP_REC_MARK: case AIP_REC_GC:
        return 24;
    case AIP_REC_RANGE: case AIP_REC_RANGE_START:
        return 32;
    case AIP_REC_OP:
        return 24 + 8 * (size_t)aip__op_words(flags);
    case AIP_REC_MEMORY:
        return 56;
    case AIP_REC_THREAD_NAME:
        return 16;
    case AIP_REC_MEMORY_CATEGORY_PROPOSED: case AIP_REC_PYFUNC:
        return 40;
    case AIP_REC_HOST_SAMPLE:
        return sizeof(aip__rec_host_sample);
    default: {
        size_t dev = aip__device_min_size(kind), comm = aip__comm_min_size(kind);
        size_t osrt = aip__osrt_min_size(kind);
        return dev ? dev : comm ? comm : osrt ? osrt : 8; /* unknown kinds: skipped by size */
    }
    }
}

/* Validate every record of an EVENTS payload and count what it will add;
 * @return the record count, or -1 if a size is inconsistent (the chunk is
 * then skipped whole). */
static int64_t events_check(const uint8_t *p, uint32_t size, size_t *spans, size_t *aux)
{
    int64_t n = 0;
    uint32_t off = 0;
    *spans = *aux = 0;
    while (off < size) {
        if (size - off < sizeof(aip__rec_header))
            return -1;
        aip__rec_header h;
        memcpy(&h, p + off, sizeof h);
        if (h.size < sizeof h || (h.size & 7) || h.size > size - off ||
            h.size < record_min_size(h.kind, h.flags))
            return -1;
        if (h.kind == AIP_REC_ANNOTATION || h.kind == AIP_REC_RANGE || h.kind == AIP_REC_OP ||
            h.kind == AIP_REC_PYFUNC)
            ++*spans;
        if (h.kind == AIP_REC_RANGE)
            ++*aux;
        else if (h.kind == AIP_REC_PYFUNC)
            *aux += 2;
        else if (h.kind == AIP_REC_OP)
            *aux += (size_t)aip__op_words(h.flags);
        off += h.size;
        n++;
    }
    return n;
}

static uint32_t name_id(uint32_t id) { return id <= AIP_NAME_ID_MAX ? id : 0; }

static aip_status decode_record(aip__process *p, uint32_t ti, const uint8_t *r,
                                const aip__rec_header *h)
{
    aip__thread *t = &p->threads[ti];
    uint64_t a, b;
    uint32_t d;
    switch (h->kind) {
    case AIP_REC_RANGE_START:
        memcpy(&a, r + 8, 8);
        memcpy(&b, r + 16, 8);
        memcpy(&d, r + 24, 4);
        AIP_VEC_PUSH(p->range_starts, ((aip__range_point){(int64_t)a, b, name_id(h->name), name_id(d),
                                                 ti, -1}));
        return AIP_OK;
    case AIP_REC_RANGE_END:
        memcpy(&a, r + 8, 8);
        memcpy(&b, r + 16, 8);
        AIP_VEC_PUSH(p->range_ends, ((aip__range_point){(int64_t)a, b, 0, 0, ti, -1}));
        return AIP_OK;
    case AIP_REC_MARK:
        memcpy(&a, r + 8, 8);
        memcpy(&d, r + 16, 4);
        AIP_VEC_PUSH(p->marks, ((aip__mark_ev){(int64_t)a, name_id(h->name), name_id(d), ti, 0}));
        return AIP_OK;
    case AIP_REC_MEMORY: {
        aip__rec_memory m;
        memcpy(&m, r, sizeof m);
        AIP_VEC_PUSH(p->memory, ((aip__mem_ev){(int64_t)m.ts, m.address, m.bytes, m.total_allocated,
                                         m.total_reserved, ti, m.device_type, m.device_index}));
        return AIP_OK;
    }
    case AIP_REC_GC:
        memcpy(&a, r + 8, 8);
        memcpy(&b, r + 16, 8);
        AIP_VEC_PUSH(p->gc, ((aip__gc_ev){(int64_t)a, (int64_t)b, ti}));
        return AIP_OK;
    case AIP_REC_THREAD_NAME:
        t->name = name_id(h->name);
        return AIP_OK;
    case AIP_REC_MEMORY_CATEGORY_PROPOSED: {
        /* u64 ts, u64 address, i64 bytes, u8 device_type, i8 device_index,
         * u8 category, u8[5] reserved (docs/MEMORY.md) */
        int64_t bytes;
        memcpy(&a, r + 8, 8);
        memcpy(&b, r + 16, 8);
        memcpy(&bytes, r + 24, 8);
        if (r[34] >= AIP_MEMCAT_COUNT)
            return AIP_OK; /* a category this reader does not know: not a label */
        AIP_VEC_PUSH(p->mem_labels, ((aip__mem_label){(int64_t)a, b, bytes, ti, r[32], (int8_t)r[33],
                                              r[34], 0, -1}));
        return AIP_OK;
    }
    case AIP_REC_COMM_GROUP:
    case AIP_REC_COMM_OP:
        return aip__comm_decode(p, ti, r, h);
    case AIP_REC_HOST_SAMPLE:
        return aip__host_decode(p, r, h);
    case AIP_REC_OSRT:
        return aip__osrt_decode(p, ti, r, h);
    default: /* device activity, or a newer minor's record kind (skipped) */
        return aip__device_decode(p, ti, r, h);
    }
}

static aip_status decode_events(loader *L, const aip__raw_chunk *c)
{
    aip__process *p = L->p;
    size_t spans, aux;
    int64_t n = events_check(c->payload, c->size, &spans, &aux);
    if (n < 0) {
        p->bad_event_chunks++;
        load_problem(p, "EVENTS chunk at offset %llu has an inconsistent record; skipped",
                     c->offset);
        return AIP_OK;
    }
    uint32_t ti;
    aip_status s = thread_index(L, c->tid, &ti);
    if (s)
        return s;
    if (L->spans_to && spans)
        s = aip__span_loader_put(L->spans_to, ti, c->payload, c->size, spans, aux);
    else if (spans)
        s = aip__spans_decode_chunk(&p->threads[ti], c->payload, c->size, spans, aux);
    for (uint32_t off = 0; !s && (size_t)n > spans && off < c->size;) {
        aip__rec_header h;
        memcpy(&h, c->payload + off, sizeof h);
        if (!aip__span_kind(h.kind))
            s = decode_record(p, ti, c->payload + off, &h);
        off += h.size;
    }
    if (s)
        return s;
    p->events += (uint64_t)n;
    return AIP_OK;
}

static aip_status decode_stats(loader *L, const aip__raw_chunk *c)
{
    aip__process *p = L->p;
    uint32_t count = 0;
    if (c->size >= 8)
        memcpy(&count, c->payload, 4);
    if (c->size < 8 || count > (c->size - 8) / sizeof(aip__stats_entry)) {
        p->bad_other_chunks++;
        load_problem(p, "STATS chunk at offset %llu is inconsistent", c->offset);
        return AIP_OK;
    }
    /* A second STATS chunk (not written today) supersedes the first. */
    p->recorded = p->dropped = 0;
    for (uint32_t i = 0; i < count; i++) {
        aip__stats_entry e;
        memcpy(&e, c->payload + 8 + (size_t)i * sizeof e, sizeof e);
        p->recorded += e.recorded;
        p->dropped += e.dropped;
        uint32_t ti;
        aip_status s = thread_index(L, e.tid, &ti);
        if (s)
            return s;
        p->threads[ti].recorded = e.recorded;
        p->threads[ti].dropped = e.dropped;
    }
    p->has_stats = 1;
    return AIP_OK;
}

static aip_status decode_chunk(loader *L, const aip__raw_chunk *c)
{
    aip__process *p = L->p;
    p->chunks++;
    switch (c->type) {
    case AIP_CHUNK_INFO:
        decode_info(p, c);
        return AIP_OK;
    case AIP_CHUNK_STRINGS:
        return decode_strings(p, c);
    case AIP_CHUNK_EVENTS:
        return decode_events(L, c);
    case AIP_CHUNK_CLOCK:
        if (c->size < sizeof(aip__clock_pair)) {
            p->bad_other_chunks++;
            load_problem(p, "CLOCK chunk at offset %llu is too short", c->offset);
            return AIP_OK;
        }
        memcpy(&p->last_sync, c->payload, sizeof p->last_sync);
        if (p->n_syncs++ == 0)
            p->first_sync = p->last_sync;
        return AIP_OK;
    case AIP_CHUNK_STATS:
        return decode_stats(L, c);
    case AIP_CHUNK_FLIGHT: /* format 1.8: a flight recorder dump's counts */
        if (c->size >= 32) {
            uint64_t v[4];
            memcpy(v, c->payload, sizeof v);
            p->flight_window_ns = v[0];
            p->flight_overwritten = v[2];
            p->flight_outside_window = v[3];
            if (c->size >= 56)
                memcpy(&p->flight_open_ranges, c->payload + 48, 8);
            p->has_flight = 1;
        }
        return AIP_OK;
    default:
        return AIP_OK; /* END, or a newer minor's chunk type */
    }
}

/* Threads are referred to by index in marks, ranges, memory and GC records;
 * sort the threads by tid and renumber those references. */
static int cmp_thread(const void *a, const void *b)
{
    const aip__thread *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static aip_status sort_threads(aip__process *p)
{
    size_t n = p->n_threads;
    if (n < 2)
        return AIP_OK;
    uint64_t *old_tid = malloc(n * sizeof *old_tid);
    uint32_t *map = malloc(n * sizeof *map);
    if (!old_tid || !map) {
        free(old_tid);
        free(map);
        return aip__fail(AIP_ERR_NOMEM, "no memory to sort threads");
    }
    for (size_t i = 0; i < n; i++)
        old_tid[i] = p->threads[i].tid;
    qsort(p->threads, n, sizeof *p->threads, cmp_thread);
    for (size_t i = 0; i < n; i++) {
        /* tids are unique in a process; find the new position by bisection */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (p->threads[mid].tid < old_tid[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        map[i] = (uint32_t)lo;
    }
    for (size_t i = 0; i < p->marks.n; i++)
        p->marks.v[i].thread = map[p->marks.v[i].thread];
    for (size_t i = 0; i < p->range_starts.n; i++)
        p->range_starts.v[i].thread = map[p->range_starts.v[i].thread];
    for (size_t i = 0; i < p->range_ends.n; i++)
        p->range_ends.v[i].thread = map[p->range_ends.v[i].thread];
    for (size_t i = 0; i < p->memory.n; i++)
        p->memory.v[i].thread = map[p->memory.v[i].thread];
    for (size_t i = 0; i < p->gc.n; i++)
        p->gc.v[i].thread = map[p->gc.v[i].thread];
    for (size_t i = 0; i < p->mem_labels.n; i++)
        p->mem_labels.v[i].thread = map[p->mem_labels.v[i].thread];
    for (size_t i = 0; i < p->dev_api.n; i++)
        p->dev_api.v[i].thread = map[p->dev_api.v[i].thread];
    for (size_t i = 0; i < p->dev_memory.n; i++)
        p->dev_memory.v[i].thread = map[p->dev_memory.v[i].thread];
    for (size_t i = 0; i < p->comm_ops.n; i++)
        p->comm_ops.v[i].thread = map[p->comm_ops.v[i].thread];
    for (size_t i = 0; i < p->osrt.n; i++)
        p->osrt.v[i].thread = map[p->osrt.v[i].thread];
    free(old_tid);
    free(map);
    return AIP_OK;
}

/* aiprof_{pid}.raw names the pid, which matters if INFO was lost. */
static int64_t pid_from_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    long long pid = 0;
    if (sscanf(base, "aiprof_%lld.raw", &pid) == 1 && pid > 0)
        return pid;
    return 0;
}

aip_status aip__model_load_raw(aip__model *m, const char *path)
{
    aip__raw_reader *r;
    aip_status s = aip__raw_open(path, &r);
    if (s)
        return s;
    s = aip__model_grow((void **)&m->procs, &m->cap_procs, m->n_procs + 1, sizeof *m->procs);
    if (s) {
        aip__raw_close(r);
        return s;
    }
    aip__process *p = &m->procs[m->n_procs];
    memset(p, 0, sizeof *p);
    loader L = {.p = p};
    p->source = strdup(path);
    p->pid = pid_from_name(path);
    struct stat st;
    p->file_bytes = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    p->strings.max_ent = (1u << 20) + p->file_bytes / 4;
    if (!p->source)
        s = aip__fail(AIP_ERR_NOMEM, "no memory");
    if (!s && p->file_bytes >= SPAN_LOADER_FROM)
        L.spans_to = aip__span_loader_start();
    aip__raw_chunk c;
    int rc = 0;
    while (!s && (rc = aip__raw_next(r, &c)) == 1)
        s = decode_chunk(&L, &c);
    char read_error[256] = "";
    if (rc < 0) /* the worker's failure would replace it */
        snprintf(read_error, sizeof read_error, "%s", aip_last_error());
    s = aip__span_loader_finish(L.spans_to, p, s);
    p->raw = *aip__raw_problems(r);
    if (!s && rc < 0) {
        /* Keep what was read before the error, like a truncated tail. */
        snprintf(p->load_problem, sizeof p->load_problem, "%s: read error: %s", path,
                 read_error);
    }
    aip__raw_close(r);
    aip__ht_free(&L.tids);
    if (!s)
        s = sort_threads(p);
    if (s) {
        m->n_procs++; /* let aip__model_free release the partial process */
        return s;
    }
    aip__ticks_convert(p, m);
    m->n_procs++;
    return AIP_OK;
}
