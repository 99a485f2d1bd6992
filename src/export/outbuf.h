/*
 * outbuf.h — the buffered output stream every exporter writes through.
 *
 * Output goes to a temporary file beside the target (created through
 * src/common/fs.h: 0640, no symlinks) in 256 KiB write(2)s and is renamed
 * into place only when complete, so a failed or interrupted analysis never
 * leaves half a file under the real name.  For files, a background thread
 * does the write(2)s while the caller formats the next buffer: copying into
 * the page cache costs as much CPU as formatting, and the two overlap.
 * Errors are sticky: writers keep appending without checking, and
 * aip__out_close() reports the first error.  Number formatting is
 * hand-written (hot path: millions of timestamps); AIP_OUT_LIT and
 * aip__out_printf are the one copy every writer uses for literals and the
 * rare formatted line.  A database exporter is given an aip__out that only
 * names its file (aip__out_target): SQLite builds it, the same way.
 */
#ifndef AIP_OUTBUF_H
#define AIP_OUTBUF_H

#include "aiprof.h"
#include "error.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AIP_OUT_CAP (256u * 1024u)

struct aip__out_writer; /* outbuf.c */

typedef struct aip__out {
    int fd;
    struct aip__out_writer *writer; /* background writer, NULL = write inline */
    int writer_due;           /* start the writer when a full buffer is first handed on */
    int to_file;              /* opened by aip__out_open (temp + rename) */
    aip_status status;        /* first error, sticky */
    char *buf;
    size_t len;
    uint64_t total;           /* bytes produced */
    char path[PATH_MAX];
    char tmp[PATH_MAX];
} aip__out;

/* aip__out_open() : start writing `path` (via a temporary name). */
aip_status aip__out_open(aip__out *o, const char *path);
/* aip__out_init_fd() : write to an already open fd (tests, fuzzing); the
 * fd is not closed. */
aip_status aip__out_init_fd(aip__out *o, int fd);
/* aip__out_target() : an aip__out that only names the file `path`, for a
 * writer that builds its file itself (SQLite, db.c: also via a temporary
 * name).  Nothing may be put into it and it needs no close; o->status is
 * set if the path is too long. */
aip_status aip__out_target(aip__out *o, const char *path);
/* aip__out_close() : flush; for a file, fsync-free close and rename into
 * place.  On any error the temporary file is removed.  @return status. */
aip_status aip__out_close(aip__out *o);
/* aip__out_abort() : discard everything (removes the temporary file). */
void aip__out_abort(aip__out *o);
/* aip__out_finish() : close `o` if `written` (what writing it returned) is
 * AIP_OK, else abort it and return `written`: a failed writer leaves no
 * half file behind. */
aip_status aip__out_finish(aip__out *o, aip_status written);
/* aip__out_flush_buffer() : write the buffer out (used by the inlines). */
void aip__out_flush_buffer(aip__out *o);
/* aip__out_write_big() : write `n` bytes that may exceed the buffer. */
void aip__out_write_big(aip__out *o, const void *p, size_t n);

/* Room for `n` more bytes at the returned pointer (n <= AIP_OUT_CAP);
 * follow with aip__out_commit() of what was used. */
static inline char *aip__out_reserve(aip__out *o, size_t n)
{
    if (o->len + n > AIP_OUT_CAP)
        aip__out_flush_buffer(o);
    return o->buf + o->len;
}

static inline void aip__out_commit(aip__out *o, char *end) { o->len = (size_t)(end - o->buf); }

static inline void aip__out_put(aip__out *o, const void *p, size_t n)
{
    if (n > AIP_OUT_CAP / 2) {
        aip__out_write_big(o, p, n);
        return;
    }
    char *d = aip__out_reserve(o, n);
    memcpy(d, p, n);
    o->len += n;
}

static inline void aip__out_str(aip__out *o, const char *s) { aip__out_put(o, s, strlen(s)); }

/* A string literal, its length known at compile time. */
#define AIP_OUT_LIT(o, lit) aip__out_put((o), (lit), sizeof(lit) - 1)

/* aip__out_printf() : printf into the stream (not for the hot paths:
 * the number formatters below are several times faster). */
void aip__out_printf(aip__out *o, const char *fmt, ...) AIP_PRINTF(2, 3);

/* ---- number formatting into a buffer; each returns the end pointer ---- */

extern const char aip__digit_pairs[200];

extern const uint64_t aip__pow10[20];

/* Decimal digits of v (1..20), without division. */
static inline unsigned aip__digits_u64(uint64_t v)
{
    v |= 1; /* 0 has one digit; setting bit 0 never crosses a power of ten */
    unsigned bits = 64u - (unsigned)__builtin_clzll(v);
    unsigned d = (bits * 1233u) >> 12; /* floor(log10(v)) or one less */
    return d + (v >= aip__pow10[d]);
}

/* At most 20 bytes.  Digits are written in place from the end, two at a
 * time, so no variable-length copy is needed. */
static inline char *aip__fmt_u64(char *p, uint64_t v)
{
    unsigned n = aip__digits_u64(v);
    char *e = p + n, *q = e;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, aip__digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, aip__digit_pairs + 2 * v, 2);
    } else {
        q[-1] = (char)('0' + v);
    }
    return e;
}

/* At most 20 bytes. */
static inline char *aip__fmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return aip__fmt_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return aip__fmt_u64(p, (uint64_t)v);
}

/* ns as microseconds with exactly 3 decimals ("12.345"); at most 25 bytes. */
static inline char *aip__fmt_us3(char *p, int64_t ns)
{
    if (ns < 0) {
        *p++ = '-';
        ns = ns == INT64_MIN ? INT64_MAX : -ns;
    }
    uint64_t us = (uint64_t)ns / 1000u;
    unsigned frac = (unsigned)((uint64_t)ns % 1000u);
    p = aip__fmt_u64(p, us);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    memcpy(p + 2, aip__digit_pairs + 2 * (frac % 100), 2);
    return p + 4;
}

/* aip__fmt_us3()'s output for a stream of nearby times: the µs above the
 * last four digits are formatted once while they stay the same (a trace's
 * epoch timestamps share their first 12 of 16 digits for seconds at a
 * time), the rest from the digit pairs.  Same bytes as aip__fmt_us3, and
 * like it at most 25 bytes written at p (some of them whole-word copies
 * past the end). */
typedef struct aip__us3_cache {
    uint64_t hi;              /* µs / 10^4 formatted in text; 0 = none */
    char text[24];
    unsigned len;
} aip__us3_cache;

static inline char *aip__fmt_us3_cached(aip__us3_cache *c, char *p, int64_t ns)
{
    uint64_t us = (uint64_t)ns / 1000u, hi = us / 10000u;
    if (ns < 0 || !hi)
        return aip__fmt_us3(p, ns); /* no leading part to keep (or a sign) */
    unsigned lo = (unsigned)(us % 10000u), frac = (unsigned)((uint64_t)ns % 1000u);
    if (hi != c->hi) {
        c->hi = hi;
        c->len = (unsigned)(aip__fmt_u64(c->text, hi) - c->text);
    }
    memcpy(p, c->text, 24); /* hi < 2^63 / 10^7: at most 12 digits */
    p += c->len;
    memcpy(p, aip__digit_pairs + 2 * (lo / 100), 2);
    memcpy(p + 2, aip__digit_pairs + 2 * (lo % 100), 2);
    p[4] = '.';
    p[5] = (char)('0' + frac / 100);
    memcpy(p + 6, aip__digit_pairs + 2 * (frac % 100), 2);
    return p + 8;
}

/* For float64 readers that compute with the numbers (speedscope turns an X
 * event into begin ts and end ts + dur, after subtracting the smallest ts):
 * times as multiples of 2^-10 µs are exact doubles, and so are their sums
 * and differences (below 2^43 µs), so slices that touch or end together in
 * ns still do after that arithmetic; 3-decimal µs are not, and then a child
 * can end after its parent.  aip__us_bin(): ns → the nearest multiple of
 * 2^-10 µs (0.977 ns), counted in those units; strictly increasing, so
 * distinct ns stay distinct and order is kept.  A duration is the
 * difference of its two ends' units, never a rounded duration. */
static inline int64_t aip__us_bin(int64_t ns)
{
    int neg = ns < 0;
    unsigned __int128 m = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    int64_t q = (int64_t)((m * 256u + 125u) / 250u); /* ns * 1024/1000, rounded */
    return neg ? -q : q;
}

/* Units of aip__us_bin() as µs, exactly (at most 10 decimals, trailing
 * zeros dropped, at least 3): "12.500", "854.0556640625"; at most 34 bytes. */
static inline char *aip__fmt_us_bin(char *p, int64_t units)
{
    if (units < 0) {
        *p++ = '-';
        units = units == INT64_MIN ? INT64_MAX : -units;
    }
    p = aip__fmt_u64(p, (uint64_t)units >> 10);
    uint64_t frac = ((uint64_t)units & 1023u) * 9765625u; /* / 1024 = * 5^10 / 10^10 */
    char d[10];
    for (int i = 10; i-- > 0;) {
        d[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    int n = 10;
    while (n > 3 && d[n - 1] == '0')
        n--;
    *p++ = '.';
    memcpy(p, d, (size_t)n);
    return p + n;
}

/* num/den rounded half away from zero to `decimals` (<= 9) digits, exact
 * (bytes as MB, KB): at most 32 bytes. */
static inline char *aip__fmt_fixed(char *p, int64_t num, int64_t den, unsigned decimals)
{
    int neg = num < 0;
    uint64_t mag = neg ? (uint64_t)0 - (uint64_t)num : (uint64_t)num;
    uint64_t scale = aip__pow10[decimals];
    unsigned __int128 q = ((unsigned __int128)mag * scale + (uint64_t)den / 2) / (uint64_t)den;
    if (neg && q)
        *p++ = '-';
    p = aip__fmt_u64(p, (uint64_t)(q / scale));
    if (decimals) {
        uint64_t frac = (uint64_t)(q % scale);
        *p++ = '.';
        for (unsigned i = decimals; i-- > 0;) {
            p[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        p += decimals;
    }
    return p;
}

static inline void aip__out_u64(aip__out *o, uint64_t v)
{
    aip__out_commit(o, aip__fmt_u64(aip__out_reserve(o, 24), v));
}

static inline void aip__out_i64(aip__out *o, int64_t v)
{
    aip__out_commit(o, aip__fmt_i64(aip__out_reserve(o, 24), v));
}

static inline void aip__out_us3(aip__out *o, int64_t ns)
{
    aip__out_commit(o, aip__fmt_us3(aip__out_reserve(o, 28), ns));
}

#endif
