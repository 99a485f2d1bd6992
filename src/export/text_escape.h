/*
 * text_escape.h — making recorded strings safe for JSON and CSV.
 *
 * Recorded names are untrusted bytes: they may hold quotes, control
 * characters, `</script>`, or invalid UTF-8.  JSON output escapes every
 * control character, `"` and `\`, escapes `<`, `>`, `&` and U+2028/U+2029
 * (so a trace embedded in HTML or JavaScript cannot break out), and replaces
 * each invalid UTF-8 sequence with U+FFFD.  CSV cells are RFC 4180 quoted
 * when needed, have invalid UTF-8 and NUL replaced, and get a leading `'`
 * when they start with = + - @ and are not a number (spreadsheet formula
 * injection).  Escaped forms are cached per string id, since the same few
 * names are printed millions of times.
 */
#ifndef AIP_TEXT_ESCAPE_H
#define AIP_TEXT_ESCAPE_H

#include "model.h"
#include "outbuf.h"

#include <stddef.h>

/* Worst-case output sizes for an input of n bytes. */
#define AIP_JSON_ESC_MAX(n) (6 * (size_t)(n) + 2)
#define AIP_CSV_ESC_MAX(n) (3 * (size_t)(n) + 3)

/* aip__json_quote() : `"escaped"` into out; @return bytes written. */
size_t aip__json_quote(const char *s, size_t n, char *out);
/* aip__csv_cell() : the CSV cell for s (quoted if needed); @return bytes. */
size_t aip__csv_cell(const char *s, size_t n, char *out);

/* aip__utf8_clean() : s as valid UTF-8 text (SQLite TEXT): each invalid
 * byte and NUL becomes U+FFFD.  At most 3n bytes.  @return bytes. */
size_t aip__utf8_clean(const char *s, size_t n, char *out);
/* aip__html_escape() : text for HTML element content or a quoted attribute:
 * & < > " ' as entities, control characters (but LF, TAB) and invalid
 * UTF-8 as U+FFFD.  At most AIP_HTML_ESC_MAX(n) bytes.  @return bytes. */
#define AIP_HTML_ESC_MAX(n) (6 * (size_t)(n))
size_t aip__html_escape(const char *s, size_t n, char *out);

/* aip__term_clean() : s for a terminal: every control byte (escape
 * sequences, line breaks: a name cannot start a line of its own), DEL and
 * each invalid UTF-8 byte becomes '?'.  At most n bytes.  @return bytes. */
size_t aip__term_clean(const char *s, size_t n, char *out);

enum aip__esc_kind { AIP_ESC_JSON, AIP_ESC_CSV };

typedef struct aip__esc_cache {
    const aip__process *p;
    int kind;
    uint64_t *off;            /* per id: 1 + offset in blob, 0 = not cached yet */
    uint32_t *len;
    char *blob;
    size_t blob_len, blob_cap;
    size_t n;
} aip__esc_cache;

aip_status aip__esc_init(aip__esc_cache *c, const aip__process *p, int kind);
void aip__esc_free(aip__esc_cache *c);
/* aip__esc_get() : escaped form of string `id` (JSON: with quotes; an
 * undefined id gives `""` / an empty cell).  The pointer is valid until the
 * next call.  NULL only when out of memory. */
const char *aip__esc_get(aip__esc_cache *c, uint32_t id, size_t *len);

/* aip__esc_put() : string `id` escaped into `o` (a CSV cell, a JSON
 * string); AIP_ERR_NOMEM (named) when out of memory. */
aip_status aip__esc_put(aip__out *o, aip__esc_cache *c, uint32_t id);

#endif
