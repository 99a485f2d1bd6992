/*
 * fuzz_json_scan.c — libFuzzer target for python/_C/json_scan.c, the pull
 * scanner Python's trace reader (trace_reader.c) runs over trace_view.json
 * files, which may be anyone's (issue 28.5: "the parser not fuzzed").
 *
 * Each input is walked as the reader walks: objects key by key, arrays
 * element by element, strings decoded, numbers read, and below a depth
 * the rest skipped (js_skip); a walk must never read past the end.  The
 * same text parsed by jansson is the reference: what jansson accepts
 * (without duplicate keys or raw NUL bytes, nested less than the
 * scanner's limit) the scanner must accept too, with the same strings,
 * keys and numbers.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_json_scan
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_json_scan.py.
 */
#include "json_scan.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_json_scan: %s failed\n", #cond);                             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

enum { WALK_DEPTH = 24 };          /* deeper: js_skip, as the reader skips what it does not read */
enum { SKIP_DEPTH = 256 };         /* js_skip's own stack */

static int same_text(const js_buf *b, const json_t *j)
{
    return json_string_length(j) == b->len && !memcmp(json_string_value(j), b->data, b->len);
}

/* Walks one value; `ref` is jansson's reading of it (NULL: no reference). */
static int walk(js *s, js_buf *tmp, const json_t *ref, int depth)
{
    char c = js_peek(s);
    if (depth >= WALK_DEPTH)
        return js_skip(s);
    if (c == '{') {
        CHECK(!ref || json_is_object(ref));
        s->p++;
        js_buf key = {0};
        int k, first = 1;
        size_t members = 0;
        while ((k = js_next_key(s, &key, first)) == 1) {
            first = 0;
            members++;
            CHECK(key.data && key.data[key.len] == '\0');
            const json_t *v = ref ? json_object_getn(ref, key.data, key.len) : NULL;
            CHECK(!ref || v);
            if (walk(s, tmp, v, depth + 1)) {
                k = -1;
                break;
            }
        }
        js_buf_free(&key);
        CHECK(k < 0 || !ref || members == json_object_size(ref));
        return k < 0 ? -1 : 0;
    }
    if (c == '[') {
        CHECK(!ref || json_is_array(ref));
        s->p++;
        int k, first = 1;
        size_t i = 0;
        while ((k = js_next_elem(s, first)) == 1) {
            first = 0;
            const json_t *v = ref ? json_array_get(ref, i) : NULL;
            CHECK(!ref || v);
            i++;
            if (walk(s, tmp, v, depth + 1))
                return -1;
        }
        CHECK(k < 0 || !ref || i == json_array_size(ref));
        return k < 0 ? -1 : 0;
    }
    if (c == '"') {
        if (js_string(s, tmp))
            return -1;
        CHECK(tmp->data[tmp->len] == '\0');
        CHECK(!ref || (json_is_string(ref) && same_text(tmp, ref)));
        return 0;
    }
    if (c == 't' || c == 'f' || c == 'n') {
        CHECK(!ref || (c == 't' ? json_is_true(ref) : c == 'f' ? json_is_false(ref)
                                                               : json_is_null(ref)));
        return js_skip(s);
    }
    double d;
    if (js_number(s, &d))
        return -1;
    if (ref) {
        CHECK(json_is_number(ref));
        double want = json_number_value(ref);
        /* jansson reads an integer as long long, then converts: allow the
         * conversion's rounding, never another number */
        CHECK(d == want || (json_is_integer(ref) && fabs(d - want) <= fabs(want) * 1e-15));
    }
    return 0;
}

/* Nesting depth of a jansson tree (bounded: jansson's own limit). */
static int depth_of(const json_t *j)
{
    int best = 0;
    if (json_is_object(j)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)j, k, v) {
            int d = depth_of(v);
            best = d > best ? d : best;
        }
        return best + 1;
    }
    if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v) {
            int d = depth_of(v);
            best = d > best ? d : best;
        }
        return best + 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly `size` bytes: an over-read hits ASan's redzone. */
    char *text = malloc(size ? size : 1);
    CHECK(text != NULL);
    memcpy(text, data, size);
    json_error_t err;
    json_t *ref = json_loadb(text, size,
                             JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &err);
    /* jansson is no reference for a raw NUL byte (never valid JSON: text
     * holds it as \u0000): it reads "[567\0]" as [567]; the scanner
     * refuses it, rightly. */
    if (ref && (memchr(text, 0, size) || depth_of(ref) > WALK_DEPTH + SKIP_DEPTH - 8)) {
        json_decref(ref);
        ref = NULL;
    }
    js s = {.p = text, .end = text + size, .error = NULL};
    js_buf tmp = {0};
    int r = walk(&s, &tmp, ref, 0);
    if (!r && js_peek(&s))
        r = -1; /* text after the value */
    CHECK(s.p >= text && s.p <= s.end);
    CHECK(r == 0 || s.error || (!s.error && js_peek(&s)));
    if (ref && r) {
        fprintf(stderr, "fuzz_json_scan: jansson reads it, the scanner stops at byte %zu: %s\n",
                (size_t)(s.p - text), s.error ? s.error : "text after the value");
        abort();
    }
    js_buf_free(&tmp);
    json_decref(ref);
    free(text);
    return 0;
}
