/*
 * trace_strings.c — which interned strings a trace's raw file needs.
 *
 * String ids are process-wide and live as long as the process, so a raw
 * file that carried every string interned so far would grow with each
 * trace of a long run (dynamic shapes keep making new texts), and every
 * analysis would load the whole history.  Instead the writer scans each
 * EVENTS chunk before writing it, notes the ids its records use that this
 * file has not defined yet, and writes those strings first (STRINGS chunks,
 * so a reader never meets an undefined id, even in a file cut short).
 *
 * The STRINGS chunk layout is unchanged (a run of consecutive ids): the
 * needed ids are sorted and cut into runs, and a gap of a few ids inside a
 * run is filled with the strings in between rather than starting a chunk.
 */
#include "trace_strings.h"
#include "intern.h"

#include <stdlib.h>
#include <string.h>

/* Fill gaps up to this many ids instead of starting another chunk (a chunk
 * costs 32 bytes of headers, a short string about as much). */
#define GAP_FILL 4

void aip__trace_strings_free(aip__trace_strings *u)
{
    free(u->bits);
    free(u->need);
    memset(u, 0, sizeof *u);
}

static inline int is_defined(const aip__trace_strings *u, uint32_t id)
{
    return id < u->cap_bits && (u->bits[id >> 6] >> (id & 63) & 1);
}

static void set_defined(aip__trace_strings *u, uint32_t id)
{
    u->bits[id >> 6] |= 1ull << (id & 63);
}

/* Note `id` as needed (not defined yet); 0 on allocation failure (the id
 * then goes out with the next chunk that uses it). */
static int note_new(aip__trace_strings *u, uint32_t id)
{
    if (id >= u->cap_bits) {
        uint32_t cap = u->cap_bits ? u->cap_bits : 4096;
        while (cap <= id)
            cap *= 2;
        uint64_t *bits = realloc(u->bits, cap / 8);
        if (!bits)
            return 0;
        memset(bits + u->cap_bits / 64, 0, (cap - u->cap_bits) / 8);
        u->bits = bits;
        u->cap_bits = cap;
    }
    if (u->n_need == u->cap_need) {
        size_t cap = u->cap_need ? u->cap_need * 2 : 256;
        uint32_t *need = realloc(u->need, cap * sizeof *need);
        if (!need)
            return 0;
        u->need = need;
        u->cap_need = cap;
    }
    set_defined(u, id);
    u->need[u->n_need++] = id;
    return 1;
}

/* The writer scans every record: the common case, an id already defined,
 * stays inline. */
static inline void note(aip__trace_strings *u, uint32_t id)
{
    if (id && !is_defined(u, id))
        note_new(u, id);
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* The scan, and with `t` the flight recorder's times in the same pass
 * (inlined twice: a normal trace's scan does not test `t` per record). */
static inline __attribute__((always_inline)) uint64_t
scan(aip__trace_strings *u, const uint8_t *p, uint32_t size, aip__flight_times *t)
{
    uint32_t off = 0;
    uint64_t n = 0, lo = UINT64_MAX, hi = 0, events = 0;
    int meta = 0;
    while (off + sizeof(aip__rec_header) <= size) {
        aip__rec_header h;
        memcpy(&h, p + off, sizeof h);
        if (h.size < sizeof h || h.size > size - off)
            break;
        const uint8_t *r = p + off;
        note(u, h.name);
        switch (h.kind) {
        case AIP_REC_RANGE:
        case AIP_REC_RANGE_START:
            if (h.size >= 28)
                note(u, u32_at(r + 24));
            break;
        case AIP_REC_MARK:
            if (h.size >= 20)
                note(u, u32_at(r + 16));
            break;
        case AIP_REC_DEVICE: /* its vendor */
            if (h.size >= 16)
                note(u, u32_at(r + 12));
            break;
        case AIP_REC_COMM_OP: /* its data type */
            if (h.size >= 64)
                note(u, u32_at(r + 60));
            break;
        case AIP_REC_PYFUNC:
            if (h.size >= 36)
                note(u, u32_at(r + 32));
            break;
        case AIP_REC_OP: { /* the optional fields in flag order */
            uint32_t q = 24 + (h.flags & AIP_OPF_SEQ ? 8 : 0) + (h.flags & AIP_OPF_FWD ? 8 : 0);
            if ((h.flags & AIP_OPF_SHAPES) && q + 8 <= h.size) {
                note(u, u32_at(r + q));
                note(u, u32_at(r + q + 4));
            }
            q += h.flags & AIP_OPF_SHAPES ? 8 : 0;
            if ((h.flags & AIP_OPF_STACK) && q + 8 <= h.size) {
                note(u, u32_at(r + q));
                note(u, u32_at(r + q + 4));
            }
            break;
        }
        default:
            break;
        }
        if (t) {
            uint64_t when = aip__flight_event_time(r);
            if (!when) {
                meta = 1;
            } else {
                when = when == UINT64_MAX ? t->now : when;
                lo = when < lo ? when : lo;
                hi = when > hi ? when : hi;
                events++;
            }
        }
        off += h.size;
        n++;
    }
    if (t) {
        t->lo = lo;
        t->hi = hi;
        t->events = events;
        t->has_meta = meta;
    }
    return n;
}

uint64_t aip__trace_strings_scan(aip__trace_strings *u, const uint8_t *p, uint32_t size)
{
    return scan(u, p, size, NULL);
}

uint64_t aip__trace_strings_scan_timed(aip__trace_strings *u, const uint8_t *p, uint32_t size,
                                       aip__flight_times *t)
{
    return scan(u, p, size, t);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* One STRINGS chunk for ids [first, last], as many as fit in `cap`
 * bytes; @return the last id written. */
static uint32_t write_run(uint32_t first, uint32_t last, uint8_t *buf, size_t cap,
                          aip__chunk_write_fn write, void *ctx)
{
    size_t off = 8;
    uint32_t id = first;
    for (; id <= last; id++) {
        uint32_t len = 0;
        const char *text = aip__string_text(id, &len);
        if (!text)
            len = 0;
        if (off + 4 + len > cap && id > first)
            break;
        if (off + 4 + len > cap) /* one string over the chunk size: cut */
            len = (uint32_t)(cap - off - 4);
        memcpy(buf + off, &len, 4);
        if (len)
            memcpy(buf + off + 4, text, len);
        off += 4 + len;
    }
    uint32_t count = id - first;
    memcpy(buf, &first, 4);
    memcpy(buf + 4, &count, 4);
    write(ctx, AIP_CHUNK_STRINGS, buf, (uint32_t)off);
    return id - 1;
}

void aip__trace_strings_flush(aip__trace_strings *u, size_t chunk_cap, aip__chunk_write_fn write,
                              void *ctx)
{
    if (!u->n_need)
        return;
    uint8_t *buf = malloc(chunk_cap);
    if (!buf)
        return; /* kept in need: retried at the next flush */
    qsort(u->need, u->n_need, sizeof *u->need, cmp_u32);
    size_t i = 0;
    while (i < u->n_need) {
        uint32_t first = u->need[i], last = first;
        while (i + 1 < u->n_need && u->need[i + 1] - last <= GAP_FILL + 1)
            last = u->need[++i];
        i++;
        for (uint32_t id = first; id <= last; id++) /* the gaps are defined too */
            if (!is_defined(u, id))
                set_defined(u, id);
        while (first <= last) {
            uint32_t done = write_run(first, last, buf, chunk_cap, write, ctx);
            if (done == UINT32_MAX)
                break;
            first = done + 1;
        }
    }
    u->n_need = 0;
    free(buf);
}
