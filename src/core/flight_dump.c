/*
 * flight_dump.c — a flight recorder dump: the ring's segments into one
 * raw file of a normal result directory (docs/FLIGHT_RECORDER.md).
 *
 * Each segment is a raw file of its own (flight_ring.c), so a dump is a
 * copy of their chunks, oldest segment first: the first INFO, every
 * STRINGS and CLOCK chunk, and the EVENTS records whose time is within
 * the window (descriptions always), re-chunked with their CRCs made anew.
 * Strings are defined in each segment before its events, so a string that
 * two segments define comes twice with the same text (a reader takes
 * either).  Then the threads' open ranges (the hang case), the FLIGHT
 * chunk with the ring's counts, STATS and END.  The same code serves the
 * live dump (on the writer thread) and a salvage after a SIGKILL (the
 * aiprof command, from the files alone).
 */
#include "flight.h"
#include "error.h"
#include "fs.h"
#include "raw.h"
#include "raw_writer.h"
#include "trace_strings.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tid_count {
    uint64_t tid, recorded, dropped;
} tid_count;

typedef struct dump {
    aip__raw_file f;
    const char *path;
    int error;                  /* errno of a failed write */
    tid_count *tids;
    size_t n_tids, cap_tids;
    uint8_t *scratch;           /* the kept records of one chunk */
    size_t cap_scratch;
    aip__flight_counts *counts;
    int info_written;
} dump;

static tid_count *tid_slot(dump *d, uint64_t tid)
{
    for (size_t i = 0; i < d->n_tids; i++)
        if (d->tids[i].tid == tid)
            return &d->tids[i];
    if (d->n_tids == d->cap_tids) {
        size_t cap = d->cap_tids ? 2 * d->cap_tids : 32;
        tid_count *v = realloc(d->tids, cap * sizeof *v);
        if (!v)
            return NULL;
        d->tids = v;
        d->cap_tids = cap;
    }
    d->tids[d->n_tids] = (tid_count){.tid = tid};
    return &d->tids[d->n_tids++];
}

static void put(dump *d, uint16_t type, uint64_t tid, const void *payload, uint32_t size)
{
    if (d->error)
        return;
    d->error = aip__raw_put_chunk(&d->f, type, tid, payload, size);
}

/* The segments' drops at the buffer cap: each segment's STATS slot holds
 * every thread's drops since arming as of its last flush, so the newest
 * segment's holds. */
static void take_drops(dump *d, const aip__raw_chunk *c)
{
    uint32_t n = 0;
    if (c->size >= 8)
        memcpy(&n, c->payload, 4);
    if (c->size < 8 || n > (c->size - 8) / sizeof(aip__stats_entry))
        return;
    if (!n)
        return; /* a slot not yet written (a segment begun just before a kill) */
    for (size_t i = 0; i < d->n_tids; i++)
        d->tids[i].dropped = 0;
    for (uint32_t i = 0; i < n; i++) {
        aip__stats_entry e;
        memcpy(&e, c->payload + 8 + (size_t)i * sizeof e, sizeof e);
        tid_count *t = tid_slot(d, e.tid);
        if (t)
            t->dropped = e.dropped;
    }
}

/* The records of an EVENTS chunk within the window (`clock`: the last
 * sync point, the time of records whose own time is not in ticks). */
static void copy_events(dump *d, const aip__raw_chunk *c, uint64_t cutoff, uint64_t clock)
{
    if (d->cap_scratch < c->size) {
        uint8_t *p = realloc(d->scratch, c->size);
        if (!p) {
            d->error = ENOMEM;
            return;
        }
        d->scratch = p;
        d->cap_scratch = c->size;
    }
    uint32_t n = 0;
    uint64_t events = 0;
    for (uint32_t off = 0; off + sizeof(aip__rec_header) <= c->size;) {
        aip__rec_header h;
        memcpy(&h, c->payload + off, sizeof h);
        if (h.size < sizeof h || off + h.size > c->size)
            break; /* the reader checked the CRC: a writer's bug, not a torn file */
        uint64_t t = aip__flight_event_time(c->payload + off);
        if (t == UINT64_MAX)
            t = clock;
        if (t && t < cutoff) {
            d->counts->outside_window++;
        } else {
            memcpy(d->scratch + n, c->payload + off, h.size);
            n += h.size;
            events += t != 0;
        }
        off += h.size;
    }
    if (!n || d->error)
        return;
    uint32_t done = aip__raw_put_events(&d->f, c->tid, d->scratch, n, &d->error);
    if (done == n) {
        d->counts->recorded += events;
        tid_count *t = tid_slot(d, c->tid);
        if (t)
            t->recorded += aip__raw_count_records(d->scratch, n);
    }
}

static void copy_segment(dump *d, const char *path, uint64_t cutoff)
{
    aip__raw_reader *r;
    if (aip__raw_open(path, &r) != AIP_OK)
        return; /* a segment begun but empty when the process died */
    d->counts->segments++;
    aip__raw_chunk c;
    uint64_t clock = 0;
    while (!d->error && aip__raw_next(r, &c) == 1) {
        switch (c.type) {
        case AIP_CHUNK_INFO:
            if (!d->info_written)
                put(d, c.type, 0, c.payload, c.size);
            d->info_written = 1;
            break;
        case AIP_CHUNK_CLOCK:
            if (c.size >= 8)
                memcpy(&clock, c.payload, 8);
            put(d, c.type, 0, c.payload, c.size);
            break;
        case AIP_CHUNK_STRINGS:
            put(d, c.type, 0, c.payload, c.size);
            break;
        case AIP_CHUNK_EVENTS:
            copy_events(d, &c, cutoff, clock);
            break;
        case AIP_CHUNK_STATS:
            take_drops(d, &c);
            break;
        default: /* PAD, END: the dump has its own */
            break;
        }
    }
    aip__raw_close(r);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* seg_*.raw of `dir`, oldest first (their numbers are zero-padded). */
static aip_status list_segments(const char *dir, char ***out, size_t *count)
{
    *out = NULL;
    *count = 0;
    DIR *dp = opendir(dir);
    if (!dp)
        return aip__fail(errno == ENOENT ? AIP_ERR_NOT_FOUND : AIP_ERR_IO,
                         "cannot read the flight recorder ring %s: %s", dir, strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "seg_", 4) || len < 8 || strcmp(e->d_name + len - 4, ".raw"))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            char **w = realloc(v, cap * sizeof *w);
            if (!w)
                break;
            v = w;
        }
        v[n] = strdup(e->d_name);
        if (v[n])
            n++;
    }
    closedir(dp);
    qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    *count = n;
    return AIP_OK;
}

static void write_strings(void *ctx, uint16_t type, const void *payload, uint32_t size)
{
    put(ctx, type, 0, payload, size);
}

/* The open ranges, with their names: those may have been defined only in
 * segments the ring recycled. */
static void put_open(dump *d, const aip__flight_open *open, size_t n_open)
{
    aip__trace_strings ts = {0};
    for (size_t i = 0; i < n_open; i++)
        aip__trace_strings_scan(&ts, open[i].records, open[i].size);
    aip__trace_strings_flush(&ts, 4u << 20, write_strings, d);
    aip__trace_strings_free(&ts);
    for (size_t i = 0; i < n_open && !d->error; i++) {
        if (!open[i].size)
            continue;
        uint64_t n = aip__raw_count_records(open[i].records, open[i].size);
        uint32_t done = aip__raw_put_events(&d->f, open[i].tid, open[i].records, open[i].size,
                                            &d->error);
        if (done == open[i].size) {
            d->counts->open_ranges += n;
            tid_count *t = tid_slot(d, open[i].tid);
            if (t)
                t->recorded += n;
        }
    }
}

static void put_stats(dump *d)
{
    size_t size = 8 + d->n_tids * sizeof(aip__stats_entry);
    uint8_t *p = calloc(1, size);
    if (!p) {
        d->error = ENOMEM;
        return;
    }
    uint32_t n = (uint32_t)d->n_tids;
    memcpy(p, &n, 4);
    for (size_t i = 0; i < d->n_tids; i++) {
        aip__stats_entry e = {d->tids[i].tid, d->tids[i].recorded, d->tids[i].dropped};
        memcpy(p + 8 + i * sizeof e, &e, sizeof e);
    }
    put(d, AIP_CHUNK_STATS, 0, p, (uint32_t)size);
    free(p);
}

aip_status aip__flight_assemble(const char *ring_dir, uint64_t cutoff, const char *out_path,
                                const aip__flight_open *open, size_t n_open,
                                aip__flight_counts *counts)
{
    char **segs;
    size_t n_segs;
    aip_status s = list_segments(ring_dir, &segs, &n_segs);
    if (s)
        return s;
    if (!n_segs) {
        free(segs);
        return aip__fail(AIP_ERR_NOT_FOUND, "the flight recorder ring %s holds no segment",
                         ring_dir);
    }
    dump d = {.f.fd = -1, .path = out_path, .counts = counts};
    counts->recorded = counts->open_ranges = 0;
    counts->segments = 0;
    d.f.fd = aip__open_output(out_path);
    if (d.f.fd < 0 || aip__raw_put_header(&d.f, out_path))
        s = aip__fail(AIP_ERR_IO, "%s", aip_last_error());
    char path[PATH_MAX];
    for (size_t i = 0; !s && i < n_segs && !d.error; i++)
        if (!aip__join(path, sizeof path, ring_dir, segs[i]))
            copy_segment(&d, path, cutoff);
    if (!s) {
        put_open(&d, open, n_open);
        put(&d, AIP_CHUNK_FLIGHT, 0, counts, sizeof *counts);
        put_stats(&d);
        put(&d, AIP_CHUNK_END, 0, NULL, 0);
        if (d.error)
            s = aip__fail(AIP_ERR_IO, "writing the flight recorder dump %s failed: %s",
                          out_path, strerror(d.error));
    }
    if (d.f.fd >= 0 && close(d.f.fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed: %s", out_path, strerror(errno));
    for (size_t i = 0; i < n_segs; i++)
        free(segs[i]);
    free(segs);
    free(d.tids);
    free(d.scratch);
    return s;
}
