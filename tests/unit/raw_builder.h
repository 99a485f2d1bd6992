/*
 * raw_builder.h — builds raw files byte by byte for tests, straight from
 * the format structs (docs/RAW_FORMAT.md), so analysis tests do not depend
 * on the recording core.  Everything is static inline: each test uses a
 * different subset.  Allocation failures abort (tests only).
 */
#ifndef AIP_RAW_BUILDER_H
#define AIP_RAW_BUILDER_H

#include "raw_format.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct rb_buf {
    uint8_t *data;
    size_t len, cap;
} rb_buf;

static inline void rb_put(rb_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void rb_free(rb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

/* ---- file level ------------------------------------------------------ */

static inline void rb_header(rb_buf *b, uint16_t major, uint16_t minor)
{
    uint8_t h[AIP_RAW_HEADER_SIZE] = {0};
    uint32_t hs = AIP_RAW_HEADER_SIZE;
    memcpy(h, AIP_RAW_MAGIC, AIP_RAW_MAGIC_LEN);
    memcpy(h + 8, &major, 2);
    memcpy(h + 10, &minor, 2);
    memcpy(h + 12, &hs, 4);
    rb_put(b, h, sizeof h);
}

/* Appends a chunk; @return its file offset. */
static inline size_t rb_chunk(rb_buf *b, uint16_t type, uint64_t tid, const void *payload,
                              uint32_t size)
{
    size_t off = b->len;
    aip__chunk_header h;
    aip__chunk_fill(&h, type, tid, payload, size);
    rb_put(b, &h, sizeof h);
    rb_put(b, payload, size);
    static const uint8_t zeros[8];
    rb_put(b, zeros, aip__chunk_pad(size));
    return off;
}

static inline size_t rb_info(rb_buf *b, int64_t pid, const char *program, double tps)
{
    char json[512];
    int n = snprintf(json, sizeof json,
                     "{\"pid\": %lld, \"hostname\": \"testhost\", \"host_uid\": \"9876543210\", "
                     "\"program\": \"%s\", "
                     "\"clock\": \"tsc\", \"ticks_per_second\": %.1f, \"aiprof_version\": \"0.1.0\"}",
                     (long long)pid, program, tps);
    return rb_chunk(b, AIP_CHUNK_INFO, 0, json, (uint32_t)n);
}

static inline size_t rb_clock(rb_buf *b, uint64_t ticks, uint64_t mono, uint64_t real)
{
    aip__clock_pair c = {ticks, mono, real};
    return rb_chunk(b, AIP_CHUNK_CLOCK, 0, &c, sizeof c);
}

/* Strings first_id .. first_id+n-1; texts may hold any bytes (lens given,
 * or NULL lens for C strings). */
static inline size_t rb_strings(rb_buf *b, uint32_t first, const char *const *texts,
                                const uint32_t *lens, uint32_t n)
{
    rb_buf p = {0};
    rb_put(&p, &first, 4);
    rb_put(&p, &n, 4);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = lens ? lens[i] : (uint32_t)strlen(texts[i]);
        rb_put(&p, &len, 4);
        rb_put(&p, texts[i], len);
    }
    size_t off = rb_chunk(b, AIP_CHUNK_STRINGS, 0, p.data, (uint32_t)p.len);
    rb_free(&p);
    return off;
}

static inline size_t rb_stats1(rb_buf *b, uint64_t tid, uint64_t recorded, uint64_t dropped)
{
    uint8_t p[8 + sizeof(aip__stats_entry)] = {1};
    aip__stats_entry e = {tid, recorded, dropped};
    memcpy(p + 8, &e, sizeof e);
    return rb_chunk(b, AIP_CHUNK_STATS, 0, p, sizeof p);
}

static inline size_t rb_end(rb_buf *b) { return rb_chunk(b, AIP_CHUNK_END, 0, NULL, 0); }

static inline size_t rb_events(rb_buf *b, uint64_t tid, const rb_buf *ev)
{
    return rb_chunk(b, AIP_CHUNK_EVENTS, tid, ev->data, (uint32_t)ev->len);
}

/* ---- event records ---------------------------------------------------- */

static inline void ev_span(rb_buf *e, uint8_t kind, uint32_t name, uint64_t start, uint64_t end)
{
    aip__rec_span r = {{kind, 0, sizeof r, name}, start, end};
    rb_put(e, &r, sizeof r);
}

static inline void ev_annotation(rb_buf *e, uint32_t name, uint64_t s, uint64_t t)
{
    ev_span(e, AIP_REC_ANNOTATION, name, s, t);
}

static inline void ev_gc(rb_buf *e, uint64_t s, uint64_t t) { ev_span(e, AIP_REC_GC, 0, s, t); }

/* An op; optional fields according to `flags` (AIP_OPF_*). */
static inline void ev_op_full(rb_buf *e, uint32_t name, uint64_t start, uint64_t end,
                              uint8_t flags, int64_t seq, uint64_t fwd, uint32_t shapes,
                              uint32_t dtypes, uint32_t stack, uint32_t module)
{
    uint8_t r[AIP_REC_OP_MAX_SIZE];
    size_t n = 24;
    if (flags & AIP_OPF_SEQ) {
        memcpy(r + n, &seq, 8);
        n += 8;
    }
    if (flags & AIP_OPF_FWD) {
        memcpy(r + n, &fwd, 8);
        n += 8;
    }
    if (flags & AIP_OPF_SHAPES) {
        memcpy(r + n, &shapes, 4);
        memcpy(r + n + 4, &dtypes, 4);
        n += 8;
    }
    if (flags & AIP_OPF_STACK) {
        memcpy(r + n, &stack, 4);
        memcpy(r + n + 4, &module, 4);
        n += 8;
    }
    aip__rec_span h = {{AIP_REC_OP, flags, (uint16_t)n, name}, start, end};
    memcpy(r, &h, sizeof h);
    rb_put(e, r, n);
}

static inline void ev_op(rb_buf *e, uint32_t name, uint64_t start, uint64_t end)
{
    ev_op_full(e, name, start, end, 0, 0, 0, 0, 0, 0, 0);
}

static inline void ev_range(rb_buf *e, uint32_t name, uint32_t domain, uint64_t s, uint64_t t)
{
    aip__rec_range r = {{AIP_REC_RANGE, 0, sizeof r, name}, s, t, domain, 0};
    rb_put(e, &r, sizeof r);
}

static inline void ev_range_start(rb_buf *e, uint32_t name, uint32_t domain, uint64_t ts,
                                  uint64_t id)
{
    aip__rec_range_start r = {{AIP_REC_RANGE_START, 0, sizeof r, name}, ts, id, domain, 0};
    rb_put(e, &r, sizeof r);
}

static inline void ev_range_end(rb_buf *e, uint64_t ts, uint64_t id)
{
    aip__rec_range_end r = {{AIP_REC_RANGE_END, 0, sizeof r, 0}, ts, id};
    rb_put(e, &r, sizeof r);
}

static inline void ev_mark(rb_buf *e, uint32_t name, uint32_t domain, uint64_t ts)
{
    aip__rec_mark r = {{AIP_REC_MARK, 0, sizeof r, name}, ts, domain, 0};
    rb_put(e, &r, sizeof r);
}

static inline void ev_memory(rb_buf *e, uint64_t ts, uint64_t addr, int64_t bytes,
                             int64_t alloc, int64_t reserved, uint8_t dtype, int8_t didx)
{
    aip__rec_memory r = {{AIP_REC_MEMORY, 0, sizeof r, 0}, ts, addr, bytes, alloc, reserved,
                        dtype, didx, {0}};
    rb_put(e, &r, sizeof r);
}

static inline void ev_thread_name(rb_buf *e, uint32_t name, uint64_t ts)
{
    aip__rec_thread_name r = {{AIP_REC_THREAD_NAME, 0, sizeof r, name}, ts};
    rb_put(e, &r, sizeof r);
}

/* ---- files and directories ------------------------------------------- */

static inline int rb_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    if (fd < 0)
        return -1;
    ssize_t w = len ? write(fd, data, len) : 0;
    close(fd);
    return w == (ssize_t)len ? 0 : -1;
}

/* A result directory `dir` as the recorder leaves it: FRAMEWORK/ holding the
 * raw file of process `pid` (raw NULL: none), and profiler_info.json (info
 * NULL: none).  Existing directories are reused. */
static inline void rb_result_dir(const char *dir, long long pid, const rb_buf *raw,
                                 const char *info)
{
    char p[600];
    mkdir(dir, 0750);
    snprintf(p, sizeof p, "%s/FRAMEWORK", dir);
    mkdir(p, 0750);
    if (raw) {
        snprintf(p, sizeof p, "%s/FRAMEWORK/aiprof_%lld.raw", dir, pid);
        rb_write_file(p, raw->data, raw->len);
    }
    if (info) {
        snprintf(p, sizeof p, "%s/profiler_info.json", dir);
        rb_write_file(p, info, strlen(info));
    }
}

/* A fresh directory under /tmp (letters/digits only, as aiprof requires). */
static inline void rb_tempdir(char *out, size_t cap, const char *tag)
{
    snprintf(out, cap, "/tmp/aip_%s_XXXXXX", tag);
    if (!mkdtemp(out))
        abort();
}

static inline void rb_rmtree(const char *dir)
{
    char cmd[4200];
    if (strncmp(dir, "/tmp/aip_", 9) != 0)
        return; /* never remove anything else */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
}

#endif
