/*
 * text_escape.c — JSON and CSV escaping of untrusted strings (see .h).
 */
#include "text_escape.h"
#include "error.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static const char hex[] = "0123456789abcdef";

static char *put_fffd(char *o)
{
    o[0] = (char)0xEF;
    o[1] = (char)0xBF;
    o[2] = (char)0xBD;
    return o + 3;
}

/* One valid UTF-8 sequence from s (left bytes), copied; an invalid byte
 * becomes U+FFFD.  Advances *pos by what was consumed. */
static char *put_utf8(char *o, const unsigned char *s, size_t left, size_t *pos)
{
    size_t k = aip__utf8_seq(s, left);
    if (!k) {
        (*pos)++;
        return put_fffd(o);
    }
    memcpy(o, s, k);
    *pos += k;
    return o + k;
}

static char *put_u00(char *o, unsigned c)
{
    memcpy(o, "\\u00", 4);
    o[4] = hex[(c >> 4) & 15];
    o[5] = hex[c & 15];
    return o + 6;
}

size_t aip__json_quote(const char *str, size_t n, char *out)
{
    const unsigned char *s = (const unsigned char *)str;
    char *o = out;
    *o++ = '"';
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c >= 0x20 && c < 0x80) {
            switch (c) {
            case '"': *o++ = '\\'; *o++ = '"'; break;
            case '\\': *o++ = '\\'; *o++ = '\\'; break;
            case '<': case '>': case '&': o = put_u00(o, c); break;
            default: *o++ = (char)c;
            }
            i++;
            continue;
        }
        if (c < 0x20) {
            switch (c) {
            case '\n': *o++ = '\\'; *o++ = 'n'; break;
            case '\r': *o++ = '\\'; *o++ = 'r'; break;
            case '\t': *o++ = '\\'; *o++ = 't'; break;
            case '\b': *o++ = '\\'; *o++ = 'b'; break;
            case '\f': *o++ = '\\'; *o++ = 'f'; break;
            default: o = put_u00(o, c);
            }
            i++;
            continue;
        }
        size_t k = aip__utf8_seq(s + i, n - i);
        if (!k) {
            o = put_fffd(o);
            i++;
        } else if (k == 3 && c == 0xE2 && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
            /* U+2028/U+2029 end a line in JavaScript source. */
            memcpy(o, s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
            o += 6;
            i += 3;
        } else {
            memcpy(o, s + i, k);
            o += k;
            i += k;
        }
    }
    *o++ = '"';
    return (size_t)(o - out);
}

/* A plain decimal number: [+-]digits[.digits][(e|E)[+-]digits]. */
static int is_number(const unsigned char *s, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t exp = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, exp++;
        if (!exp)
            return 0;
    }
    return i == n;
}

size_t aip__csv_cell(const char *str, size_t n, char *out)
{
    const unsigned char *s = (const unsigned char *)str;
    int quote = 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    int guard = n && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') &&
                !is_number(s, n);
    char *o = out;
    if (quote)
        *o++ = '"';
    if (guard)
        *o++ = '\'';
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c == '"') {
            *o++ = '"';
            *o++ = '"';
            i++;
        } else if (c == 0) {
            o = put_fffd(o);
            i++;
        } else if (c < 0x80) {
            *o++ = (char)c;
            i++;
        } else {
            o = put_utf8(o, s + i, n - i, &i);
        }
    }
    if (quote)
        *o++ = '"';
    return (size_t)(o - out);
}

size_t aip__utf8_clean(const char *str, size_t n, char *out)
{
    const unsigned char *s = (const unsigned char *)str;
    char *o = out;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c && c < 0x80) {
            *o++ = (char)c;
            i++;
            continue;
        }
        if (c)
            o = put_utf8(o, s + i, n - i, &i);
        else {
            o = put_fffd(o);
            i++;
        }
    }
    return (size_t)(o - out);
}

size_t aip__html_escape(const char *str, size_t n, char *out)
{
    const unsigned char *s = (const unsigned char *)str;
    char *o = out;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        const char *ent = NULL;
        switch (c) {
        case '&': ent = "&amp;"; break;
        case '<': ent = "&lt;"; break;
        case '>': ent = "&gt;"; break;
        case '"': ent = "&quot;"; break;
        case '\'': ent = "&#39;"; break;
        default: break;
        }
        if (ent) {
            size_t k = strlen(ent);
            memcpy(o, ent, k);
            o += k;
            i++;
        } else if (c < 0x20 && c != '\n' && c != '\t') {
            o = put_fffd(o); /* NUL and control characters: not text */
            i++;
        } else if (c < 0x80) {
            *o++ = (char)c;
            i++;
        } else {
            o = put_utf8(o, s + i, n - i, &i);
        }
    }
    return (size_t)(o - out);
}

size_t aip__term_clean(const char *s, size_t n, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, o = 0;
    while (i < n) {
        size_t k = u[i] >= 0x80 ? aip__utf8_seq(u + i, n - i) : 1;
        if (!k || u[i] < 0x20 || u[i] == 0x7f) {
            out[o++] = '?';
            i++;
        } else {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        }
    }
    return o;
}

aip_status aip__esc_init(aip__esc_cache *c, const aip__process *p, int kind)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    c->kind = kind;
    c->n = p->strings.n_ent;
    c->off = calloc(c->n ? c->n : 1, sizeof *c->off);
    c->len = calloc(c->n ? c->n : 1, sizeof *c->len);
    if (!c->off || !c->len) {
        aip__esc_free(c);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the string cache");
    }
    return AIP_OK;
}

void aip__esc_free(aip__esc_cache *c)
{
    free(c->off);
    free(c->len);
    free(c->blob);
    memset(c, 0, sizeof *c);
}

const char *aip__esc_get(aip__esc_cache *c, uint32_t id, size_t *len)
{
    if (id == 0 || id >= c->n || !c->p->strings.ent[id].defined) {
        *len = c->kind == AIP_ESC_JSON ? 2 : 0;
        return c->kind == AIP_ESC_JSON ? "\"\"" : "";
    }
    if (c->off[id]) {
        *len = c->len[id];
        return c->blob + c->off[id] - 1;
    }
    size_t n;
    const char *s = aip__model_str(c->p, id, &n);
    size_t max = c->kind == AIP_ESC_JSON ? AIP_JSON_ESC_MAX(n) : AIP_CSV_ESC_MAX(n);
    if (aip__model_grow((void **)&c->blob, &c->blob_cap, c->blob_len + max, 1))
        return NULL;
    char *dst = c->blob + c->blob_len;
    size_t k = c->kind == AIP_ESC_JSON ? aip__json_quote(s, n, dst) : aip__csv_cell(s, n, dst);
    if (k > UINT32_MAX) { /* cannot happen: raw strings are < 64 MiB */
        *len = 0;
        return "";
    }
    c->off[id] = c->blob_len + 1;
    c->len[id] = (uint32_t)k;
    c->blob_len += k;
    *len = k;
    return dst;
}

aip_status aip__esc_put(aip__out *o, aip__esc_cache *c, uint32_t id)
{
    size_t n;
    const char *s = aip__esc_get(c, id, &n);
    if (!s)
        return aip__fail(AIP_ERR_NOMEM, "no memory for CSV strings");
    aip__out_put(o, s, n);
    return AIP_OK;
}
