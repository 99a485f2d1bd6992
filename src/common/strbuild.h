/*
 * strbuild.h — strings built piece by piece into a fixed buffer, without
 * printf.
 *
 * A trace's start names its directory, its raw file and its first log
 * line; done with snprintf, those few lines were a fifth of what start()
 * cost in C (glibc's printf machinery, cold in a program that has just
 * run its training step).  These appenders copy and write decimal digits
 * only.  An overflow is sticky: aip__sb_ok() says whether everything fit;
 * the buffer is always NUL-terminated (cut short on overflow).
 */
#ifndef AIP_STRBUILD_H
#define AIP_STRBUILD_H

#include <stddef.h>
#include <string.h>

typedef struct aip__sb {
    char *buf;
    size_t cap, len;
    int over;
} aip__sb;

static inline aip__sb aip__sb_init(char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    return (aip__sb){buf, cap, 0, cap == 0};
}

static inline void aip__sb_mem(aip__sb *b, const char *s, size_t n)
{
    if (b->over)
        return;
    if (b->len + n >= b->cap) {
        b->over = 1;
        n = b->cap - 1 - b->len; /* what fits, for a readable cut */
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static inline void aip__sb_str(aip__sb *b, const char *s) { aip__sb_mem(b, s, strlen(s)); }

/* `v` in decimal, at least `width` digits (zero-padded). */
static inline void aip__sb_uint(aip__sb *b, unsigned long long v, int width)
{
    char d[24];
    int n = 0;
    do {
        d[sizeof d - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < (int)sizeof d);
    while (n < width && n < (int)sizeof d)
        d[sizeof d - 1 - n++] = '0';
    aip__sb_mem(b, d + sizeof d - n, (size_t)n);
}

static inline void aip__sb_int(aip__sb *b, long long v)
{
    if (v < 0) {
        aip__sb_mem(b, "-", 1);
        aip__sb_uint(b, 0ULL - (unsigned long long)v, 0);
    } else {
        aip__sb_uint(b, (unsigned long long)v, 0);
    }
}

static inline int aip__sb_ok(const aip__sb *b) { return !b->over; }

#endif
