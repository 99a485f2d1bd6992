/*
 * json_scan.c — see json_scan.h.
 */
#include "json_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fail(js *s, const char *why)
{
    if (!s->error)
        s->error = why;
    return -1;
}

char js_peek(js *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
    return s->p < s->end ? *s->p : 0;
}

int js_eat(js *s, char c)
{
    if (js_peek(s) != c)
        return 0;
    s->p++;
    return 1;
}

static int buf_put(js_buf *b, const char *src, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static int put_utf8(js_buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    return buf_put(b, u, n);
}

int js_string(js *s, js_buf *out)
{
    out->len = 0;
    if (!js_eat(s, '"'))
        return fail(s, "string expected");
    if (buf_put(out, "", 0))
        return fail(s, "out of memory");
    for (;;) {
        const char *q = s->p;
        while (q < s->end && *q != '"' && *q != '\\')
            q++;
        if (q >= s->end)
            return fail(s, "unterminated string");
        if (buf_put(out, s->p, (size_t)(q - s->p)))
            return fail(s, "out of memory");
        s->p = q + 1;
        if (*q == '"')
            return 0;
        if (s->p >= s->end)
            return fail(s, "unterminated escape");
        char e = *s->p++;
        const char *lit = NULL;
        switch (e) {
        case '"': lit = "\""; break;
        case '\\': lit = "\\"; break;
        case '/': lit = "/"; break;
        case 'b': lit = "\b"; break;
        case 'f': lit = "\f"; break;
        case 'n': lit = "\n"; break;
        case 'r': lit = "\r"; break;
        case 't': lit = "\t"; break;
        case 'u': {
            unsigned cp, lo;
            if (s->end - s->p < 4 || hex4(s->p, &cp))
                return fail(s, "bad \\u escape");
            s->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && s->end - s->p >= 6 && s->p[0] == '\\' &&
                s->p[1] == 'u' && !hex4(s->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s->p += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD; /* a lone surrogate */
            }
            if (put_utf8(out, cp))
                return fail(s, "out of memory");
            continue;
        }
        default:
            return fail(s, "bad escape");
        }
        if (buf_put(out, lit, 1))
            return fail(s, "out of memory");
    }
}

static int number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

int js_number(js *s, double *out)
{
    js_peek(s);
    const char *q = s->p;
    while (q < s->end && number_char(*q))
        q++;
    size_t n = (size_t)(q - s->p);
    if (!n)
        return fail(s, "number expected");
    /* strtod needs a NUL: a copy, on the heap for the rare long number (a
     * real may be written with any number of digits; cutting it would read
     * another number) */
    char small[64], *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        return fail(s, "out of memory");
    memcpy(tmp, s->p, n);
    tmp[n] = '\0';
    char *endp;
    *out = strtod(tmp, &endp);
    int bad = endp != tmp + n;
    if (tmp != small)
        free(tmp);
    if (bad)
        return fail(s, "bad number");
    s->p = q;
    return 0;
}

static int skip_lit(js *s, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n))
        return fail(s, "bad literal");
    s->p += n;
    return 0;
}

static int skip_key(js *s)
{
    js_buf k = {0};
    int r = js_string(s, &k);
    js_buf_free(&k);
    if (r || !js_eat(s, ':'))
        return fail(s, "object key expected");
    return 0;
}

int js_skip(js *s)
{
    /* Iterative, with the open containers on a small stack: a deeply
     * nested file cannot overflow the C stack. */
    char stack[256];
    int depth = 0;
    for (;;) {
        char c = js_peek(s);
        if (c == '{' || c == '[') {
            if (depth == (int)sizeof stack)
                return fail(s, "nesting too deep");
            s->p++;
            stack[depth++] = c;
            if (js_eat(s, c == '{' ? '}' : ']'))
                depth--;
            else if (c == '{' && skip_key(s))
                return -1;
            else
                continue; /* read the first member */
        } else if (c == '"') {
            const char *q = s->p + 1;
            while (q < s->end && *q != '"')
                q += *q == '\\' ? 2 : 1;
            if (q >= s->end)
                return fail(s, "unterminated string");
            s->p = q + 1;
        } else if (c == 't' || c == 'f' || c == 'n') {
            if (skip_lit(s, c == 't' ? "true" : c == 'f' ? "false" : "null"))
                return -1;
        } else {
            double d;
            if (js_number(s, &d))
                return -1;
        }
        /* After a value: the next member, or closing brackets. */
        for (;;) {
            if (depth == 0)
                return 0;
            if (js_eat(s, ',')) {
                if (stack[depth - 1] == '{' && skip_key(s))
                    return -1;
                break;
            }
            if (!js_eat(s, stack[depth - 1] == '{' ? '}' : ']'))
                return fail(s, "',' or closing bracket expected");
            depth--;
        }
    }
}

int js_next_key(js *s, js_buf *key, int first)
{
    char c = js_peek(s);
    if (c == '}') {
        s->p++;
        return 0;
    }
    if (!first) {
        if (c != ',')
            return fail(s, "',' expected between object members");
        s->p++;
    }
    if (js_string(s, key) || !js_eat(s, ':'))
        return fail(s, "object key expected");
    return 1;
}

int js_next_elem(js *s, int first)
{
    char c = js_peek(s);
    if (c == ']') {
        s->p++;
        return 0;
    }
    if (!first) {
        if (c != ',')
            return fail(s, "',' expected between array elements");
        s->p++;
    }
    return js_peek(s) ? 1 : fail(s, "unexpected end in array");
}

void js_buf_free(js_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
