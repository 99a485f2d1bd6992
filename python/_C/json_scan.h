/*
 * json_scan.h — a small pull scanner over JSON text, for trace_reader.c.
 *
 * It walks one value at a time without building a tree: the reader asks
 * for the next key of an object, reads the values it wants and skips the
 * rest.  Strings are decoded (escapes, \u surrogate pairs) into a caller's
 * buffer.  Any JSON is accepted; malformed input stops the scan with an
 * error position, never reads past the end.
 */
#ifndef AIPROF_JSON_SCAN_H
#define AIPROF_JSON_SCAN_H

#include <stddef.h>

typedef struct js {
    const char *p, *end;
    const char *error; /* set on the first problem */
} js;

typedef struct js_buf {
    char *data;
    size_t len, cap;
} js_buf;

/* Skip whitespace; the next significant character, or 0 at the end. */
char js_peek(js *s);

/* Consume `c` (after whitespace); 0 if the next character is not `c`. */
int js_eat(js *s, char c);

/* Decode a string value into `out` (NUL-terminated); -1 on error. */
int js_string(js *s, js_buf *out);

/* A number value as double; -1 on error. */
int js_number(js *s, double *out);

/* Skip any value; -1 on error. */
int js_skip(js *s);

/* Inside an object after '{': read the next key into `key` and the ':'.
 * `first` is 1 before the first member.  Returns 1 with a key, 0 at the
 * closing '}', -1 on error. */
int js_next_key(js *s, js_buf *key, int first);

/* Inside an array after '[': 1 if an element follows (its comma eaten),
 * 0 at the closing ']', -1 on error.  `first` is 1 before the first element. */
int js_next_elem(js *s, int first);

void js_buf_free(js_buf *b);

#endif
