/*
 * utf8.h — UTF-8 validation shared by the exporters (which replace each
 * invalid byte with U+FFFD) and the model loader (which counts the texts
 * that will be replaced, so that the replacement is reported, not silent).
 * Inline: the exporters call it on every non-ASCII byte they write.
 */
#ifndef AIP_UTF8_H
#define AIP_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1..4; n >= 1 bytes left), 0 if
 * invalid there.  Rejects overlong forms, surrogates and code points above
 * U+10FFFF. */
static inline size_t aip__utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2)
        return 0;
    if (c < 0xE0)
        return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0xF0) {
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
        if (n < 3 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
        if (n < 4 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

/* Whether s[0..n) is all valid UTF-8. */
static inline int aip__utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = aip__utf8_seq(s + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

#endif
