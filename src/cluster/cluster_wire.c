/*
 * cluster_wire.c — one rank directory's results (aip__rank_dir, cluster.h)
 * as bytes and back, for `aiprof cluster --mpi` (cluster_mpi.c): each MPI
 * process analyses and reads its share of the ranks, packs them, and
 * process 0 unpacks them into its cluster before the cross-rank pass, whose
 * outputs must be byte for byte those of a single process.  So every field
 * travels, exactly: numbers as their bits, texts as their bytes, the JSON
 * summaries as trees of tagged values (w_json).
 *
 * One function, wire_rank(), lists the fields and serves both directions:
 * a field added to aip__rank_dir is one line there.
 * Layout: little-endian integers; a text is its length + 1 (0: NULL) and
 * its bytes.  The sender and the receiver are the same aiprof build.
 */
#include "cluster.h"
#include "error.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What wire_rank() fills or reads; `err` sticks: after a failure every
 * call does nothing, and the caller looks once at the end. */
typedef struct wire {
    int unpack;
    unsigned char *buf;
    size_t len, cap, at;
    int err; /* AIP_ERR_NOMEM, or AIP_ERR_CORRUPT for a short or damaged message */
} wire;

static void w_raw(wire *w, void *p, size_t n)
{
    if (w->err || !n)
        return;
    if (w->unpack) {
        if (n > w->len - w->at) {
            w->err = AIP_ERR_CORRUPT;
            return;
        }
        memcpy(p, w->buf + w->at, n);
        w->at += n;
        return;
    }
    if (n > w->cap - w->len) {
        size_t cap = w->cap ? w->cap : 4096;
        while (n > cap - w->len)
            cap *= 2;
        unsigned char *b = realloc(w->buf, cap);
        if (!b) {
            w->err = AIP_ERR_NOMEM;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void w_u64(wire *w, uint64_t *v)
{
    unsigned char b[8];
    for (int i = 0; i < 8 && !w->unpack; i++)
        b[i] = (unsigned char)(*v >> (8 * i));
    w_raw(w, b, 8);
    if (w->unpack && !w->err) {
        *v = 0;
        for (int i = 0; i < 8; i++)
            *v |= (uint64_t)b[i] << (8 * i);
    }
}

static void w_ll(wire *w, long long *v)
{
    uint64_t u = (uint64_t)*v;
    w_u64(w, &u);
    *v = (long long)u;
}

static void w_long(wire *w, long *v)
{
    long long x = *v;
    w_ll(w, &x);
    *v = (long)x;
}

static void w_int(wire *w, int *v)
{
    long long x = *v;
    w_ll(w, &x);
    *v = (int)x;
}

static void w_size(wire *w, size_t *v)
{
    uint64_t u = *v;
    w_u64(w, &u);
    *v = (size_t)u;
}

static void w_double(wire *w, double *v)
{
    uint64_t u;
    memcpy(&u, v, sizeof u);
    w_u64(w, &u);
    memcpy(v, &u, sizeof u);
}

/* A malloc'd text, NULL-able (unpack: a new copy). */
static void w_str(wire *w, char **s)
{
    uint64_t n = *s ? strlen(*s) + 1 : 0;
    w_u64(w, &n);
    if (!w->unpack) {
        w_raw(w, *s, n);
        return;
    }
    *s = NULL;
    if (w->err || !n)
        return;
    if (n > w->len - w->at || memchr(w->buf + w->at, 0, n) != w->buf + w->at + n - 1) {
        w->err = AIP_ERR_CORRUPT;
        return;
    }
    if (!(*s = malloc(n))) {
        w->err = AIP_ERR_NOMEM;
        return;
    }
    w_raw(w, *s, n);
}

/* A text in a fixed array (char x[N]). */
static void w_chars(wire *w, char *a, size_t cap)
{
    char *s = a;
    w_str(w, &s);
    if (w->unpack && s) {
        snprintf(a, cap, "%s", s);
        free(s);
    }
}

/* A JSON value, NULL-able, as a tree of tagged values: an object's members
 * in their order, a real as its bits, texts with their lengths.  Unpacking
 * builds the tree without parsing text (json_loads of the same data took
 * as long as reading the files: process 0 would gain nothing). */
enum { J_NONE, J_OBJECT, J_ARRAY, J_STRING, J_INTEGER, J_REAL, J_TRUE, J_FALSE, J_NULL };

/* Unpack: `n` bytes of the message in place, or NULL when short. */
static const char *w_take(wire *w, uint64_t n)
{
    if (w->err || n > w->len - w->at) {
        w->err = w->err ? w->err : AIP_ERR_CORRUPT;
        return NULL;
    }
    const char *p = (const char *)w->buf + w->at;
    w->at += n;
    return p;
}

static void w_json_at(wire *w, json_t **j, int depth);

static void w_json(wire *w, json_t **j)
{
    w_json_at(w, j, 0);
}

static void w_json_pack(wire *w, json_t *j, int depth)
{
    unsigned char tag = !j                  ? J_NONE
                        : json_is_object(j) ? J_OBJECT
                        : json_is_array(j)  ? J_ARRAY
                        : json_is_string(j) ? J_STRING
                        : json_is_integer(j) ? J_INTEGER
                        : json_is_real(j)    ? J_REAL
                        : json_is_true(j)    ? J_TRUE
                        : json_is_false(j)   ? J_FALSE
                                             : J_NULL;
    w_raw(w, &tag, 1);
    if (tag == J_OBJECT) {
        uint64_t n = json_object_size(j);
        w_u64(w, &n);
        const char *key;
        size_t klen;
        json_t *v;
        json_object_keylen_foreach(j, key, klen, v) {
            uint64_t kn = klen;
            w_u64(w, &kn);
            w_raw(w, (void *)key, klen);
            w_json_pack(w, v, depth + 1);
        }
    } else if (tag == J_ARRAY) {
        uint64_t n = json_array_size(j);
        w_u64(w, &n);
        for (size_t i = 0; i < n; i++)
            w_json_pack(w, json_array_get(j, i), depth + 1);
    } else if (tag == J_STRING) {
        uint64_t n = json_string_length(j);
        w_u64(w, &n);
        w_raw(w, (void *)json_string_value(j), n);
    } else if (tag == J_INTEGER) {
        long long v = json_integer_value(j);
        w_ll(w, &v);
    } else if (tag == J_REAL) {
        double v = json_real_value(j);
        w_double(w, &v);
    }
}

static void w_json_at(wire *w, json_t **j, int depth)
{
    if (!w->unpack) {
        w_json_pack(w, *j, depth);
        return;
    }
    *j = NULL;
    const char *tagp = w_take(w, 1);
    if (!tagp)
        return;
    unsigned char tag = (unsigned char)*tagp;
    uint64_t n = 0;
    if (depth > 2048) { /* deeper than jansson reads a file */
        w->err = AIP_ERR_CORRUPT;
        return;
    }
    switch (tag) {
    case J_NONE:
        return;
    case J_OBJECT:
        w_u64(w, &n);
        *j = json_object();
        for (uint64_t i = 0; i < n && *j && !w->err; i++) {
            uint64_t kn = 0;
            w_u64(w, &kn);
            const char *key = w_take(w, kn);
            json_t *v = NULL;
            w_json_at(w, &v, depth + 1);
            if (key && v && json_object_setn_new_nocheck(*j, key, kn, v))
                w->err = AIP_ERR_NOMEM;
            else if (!w->err && !v)
                w->err = AIP_ERR_CORRUPT;
        }
        break;
    case J_ARRAY:
        w_u64(w, &n);
        *j = json_array();
        for (uint64_t i = 0; i < n && *j && !w->err; i++) {
            json_t *v = NULL;
            w_json_at(w, &v, depth + 1);
            if (v && json_array_append_new(*j, v))
                w->err = AIP_ERR_NOMEM;
            else if (!w->err && !v)
                w->err = AIP_ERR_CORRUPT;
        }
        break;
    case J_STRING: {
        w_u64(w, &n);
        const char *p = w_take(w, n);
        if (p)
            *j = json_stringn_nocheck(p, n);
        break;
    }
    case J_INTEGER: {
        long long v = 0;
        w_ll(w, &v);
        *j = json_integer(v);
        break;
    }
    case J_REAL: {
        double v = 0;
        w_double(w, &v);
        /* jansson holds no NaN or infinity (json_real() refuses them): a
         * sender never packs one, so the message is damaged, not memory short */
        if (!w->err && !isfinite(v))
            w->err = AIP_ERR_CORRUPT;
        else
            *j = json_real(v);
        break;
    }
    case J_TRUE:
        *j = json_true();
        return;
    case J_FALSE:
        *j = json_false();
        return;
    case J_NULL:
        *j = json_null();
        return;
    default:
        w->err = AIP_ERR_CORRUPT;
        return;
    }
    if (!w->err && !*j)
        w->err = AIP_ERR_NOMEM;
    if (w->err) {
        json_decref(*j);
        *j = NULL;
    }
}

/* An array of n malloc'd texts. */
static void w_texts(wire *w, char ***v, size_t *n)
{
    w_size(w, n);
    if (w->unpack) {
        *v = NULL;
        if (w->err || *n > w->len - w->at) { /* each text takes 8 bytes at least */
            w->err = w->err ? w->err : AIP_ERR_CORRUPT;
            *n = 0;
            return;
        }
        if (*n && !(*v = calloc(*n, sizeof **v))) {
            w->err = AIP_ERR_NOMEM;
            *n = 0;
            return;
        }
    }
    for (size_t i = 0; i < *n; i++)
        w_str(w, &(*v)[i]);
}

/* An array of n numbers, NULL when n is 0. */
static void w_lls(wire *w, long long **v, size_t *n)
{
    w_size(w, n);
    if (w->unpack) {
        *v = NULL;
        if (w->err || *n > (w->len - w->at) / 8) {
            w->err = w->err ? w->err : AIP_ERR_CORRUPT;
            *n = 0;
            return;
        }
        if (*n && !(*v = calloc(*n, sizeof **v))) {
            w->err = AIP_ERR_NOMEM;
            *n = 0;
            return;
        }
    }
    for (size_t i = 0; i < *n && !w->err; i++)
        w_ll(w, &(*v)[i]);
}

/* step_trace_time.csv's rows: each its Step cell and n_cols numbers. */
static void w_rows(wire *w, aip__step_trace_row **rows, size_t *n, size_t n_cols)
{
    w_size(w, n);
    if (w->unpack) {
        *rows = NULL;
        if (w->err || *n > w->len - w->at) {
            w->err = w->err ? w->err : AIP_ERR_CORRUPT;
            *n = 0;
            return;
        }
        if (*n && !(*rows = calloc(*n, sizeof **rows))) {
            w->err = AIP_ERR_NOMEM;
            *n = 0;
            return;
        }
    }
    for (size_t i = 0; i < *n; i++) {
        aip__step_trace_row *row = &(*rows)[i];
        w_str(w, &row->step);
        if (w->unpack && !w->err && !(row->v = calloc(n_cols ? n_cols : 1, sizeof *row->v)))
            w->err = AIP_ERR_NOMEM;
        for (size_t k = 0; k < n_cols && !w->err; k++)
            w_double(w, &row->v[k]);
    }
}

/* Every field of aip__rank_dir, one line each, both directions.  A field
 * added to the struct (cluster.h) gets its line here, with the w_* of its
 * type; the size check below fails until it has. */
static void wire_rank(wire *w, aip__rank_dir *r)
{
    w_str(w, &r->path);
    w_long(w, &r->rank);
    w_ll(w, &r->ts);
    w_chars(w, r->problem, sizeof r->problem);
    w_texts(w, &r->cols, &r->n_cols);
    w_rows(w, &r->rows, &r->n_rows, r->n_cols);
    w_json(w, &r->comm);
    w_json(w, &r->matrix);
    w_double(w, &r->first_us);
    w_double(w, &r->last_us);
    w_int(w, &r->analyse);
    w_str(w, &r->host);
    w_double(w, &r->clock_offset_us);
    w_long(w, &r->clock_samples);
    w_json(w, &r->meta);
    w_str(w, &r->host_uid);
    w_str(w, &r->host_name);
    w_lls(w, &r->devices, &r->n_devices);
    w_int(w, &r->unreadable);
    w_int(w, &r->level);
}
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(aip__rank_dir) == 552,
               "aip__rank_dir changed: serialise the new field in wire_rank() "
               "(cluster_wire.c), then update this size");
#endif

aip_status aip__rank_dir_pack(aip__rank_dir *r, unsigned char **buf, size_t *len)
{
    wire w = {0};
    wire_rank(&w, r);
    if (w.err) {
        free(w.buf);
        return aip__fail(AIP_ERR_NOMEM, "out of memory packing %s", r->path);
    }
    *buf = w.buf;
    *len = w.len;
    return AIP_OK;
}

aip_status aip__rank_dir_unpack(const unsigned char *buf, size_t len, size_t *used,
                                aip__rank_dir *r)
{
    wire w = {.unpack = 1, .buf = (unsigned char *)buf, .len = len};
    memset(r, 0, sizeof *r);
    wire_rank(&w, r);
    if (w.err) {
        aip__rank_dir_free(r);
        return w.err == AIP_ERR_NOMEM
                   ? aip__fail(AIP_ERR_NOMEM, "out of memory unpacking a rank directory")
                   : aip__fail(AIP_ERR_CORRUPT, "a rank directory's packed results are damaged "
                                               "(%zu bytes, stopped at %zu)",
                               len, w.at);
    }
    *used = w.at;
    return AIP_OK;
}

void aip__rank_dir_free(aip__rank_dir *r)
{
    for (size_t k = 0; r->cols && k < r->n_cols; k++)
        free(r->cols[k]);
    free(r->cols);
    for (size_t j = 0; r->rows && j < r->n_rows; j++) {
        free(r->rows[j].step);
        free(r->rows[j].v);
    }
    free(r->rows);
    json_decref(r->comm);
    json_decref(r->matrix);
    free(r->path);
    free(r->host);
    aip__cluster_free_meta(r);
    memset(r, 0, sizeof *r);
}

/* A process's share (--mpi): status, the number of directories it found
 * (the same tree for every process), then each of its directories' index
 * and results; or, when it failed, its error text. */
aip_status aip__cluster_pack_share(aip__cluster *c, aip_status status, unsigned char **buf,
                                   size_t *len)
{
    wire w = {0};
    uint64_t st = (uint64_t)status, n = c->n, mine = 0;
    for (size_t i = 0; i < c->n; i++)
        mine += i % (size_t)c->parts == (size_t)c->part;
    w_u64(&w, &st);
    w_u64(&w, &n);
    if (status) {
        char *m = (char *)aip_last_error();
        w_str(&w, &m);
    } else {
        w_u64(&w, &mine);
        for (size_t i = 0; i < c->n; i++)
            if (i % (size_t)c->parts == (size_t)c->part) {
                uint64_t at = i;
                w_u64(&w, &at);
                wire_rank(&w, &c->r[i]);
            }
    }
    if (w.err) {
        free(w.buf);
        return aip__fail(AIP_ERR_NOMEM, "out of memory packing the rank directories");
    }
    *buf = w.buf;
    *len = w.len;
    return AIP_OK;
}

aip_status aip__cluster_unpack_share(aip__cluster *c, int from, const unsigned char *buf,
                                     size_t len)
{
    wire w = {.unpack = 1, .buf = (unsigned char *)buf, .len = len};
    uint64_t st = 0, n = 0, count = 0;
    w_u64(&w, &st);
    w_u64(&w, &n);
    if (!w.err && st) {
        char *m = NULL;
        w_str(&w, &m);
        aip_status s = aip__fail(st < 100 ? (aip_status)st : AIP_ERR_CORRUPT, "process %d: %s",
                                 from, m ? m : "failed");
        free(m);
        return s;
    }
    if (!w.err && n != c->n)
        return aip__fail(AIP_ERR_STATE,
                         "process %d found %llu rank directories, process 0 %zu: did %s change "
                         "while it was read?",
                         from, (unsigned long long)n, c->n, c->dir);
    w_u64(&w, &count);
    for (uint64_t k = 0; k < count && !w.err; k++) {
        uint64_t at = 0;
        aip__rank_dir r;
        memset(&r, 0, sizeof r);
        w_u64(&w, &at);
        if (!w.err)
            wire_rank(&w, &r);
        if (w.err) {
            aip__rank_dir_free(&r);
            break;
        }
        if (at >= c->n || at % (uint64_t)c->parts != (uint64_t)from || !r.path ||
            strcmp(r.path, c->r[at].path)) {
            aip_status s = aip__fail(AIP_ERR_STATE,
                                     "process %d sent directory %llu as %s, process 0 has "
                                     "another there: did %s change while it was read?",
                                     from, (unsigned long long)at, r.path ? r.path : "?", c->dir);
            aip__rank_dir_free(&r);
            return s;
        }
        aip__rank_dir_free(&c->r[at]);
        c->r[at] = r;
        if (aip__cluster_rank_share(c, &c->r[at])) /* as if read here */
            w.err = AIP_ERR_NOMEM;
    }
    if (w.err == AIP_ERR_NOMEM)
        return aip__fail(AIP_ERR_NOMEM, "out of memory unpacking process %d's ranks", from);
    if (w.err || w.at != w.len)
        return aip__fail(AIP_ERR_CORRUPT,
                         "process %d's message is damaged (%zu bytes, stopped at %zu)", from, len,
                         w.at);
    return AIP_OK;
}
