/*
 * cluster_intern.c — equal JSON values of the ranks' files held once.
 *
 * `aiprof cluster` holds every rank's communication.json and
 * communication_matrix.json as jansson trees for the whole pass
 * (docs/CLUSTER.md "Memory"), and most of their leaves repeat: the zeros
 * of the split fields, transport names, sizes, and the op names of the
 * matrix, the same in every rank of a group; likewise the `global_ranks`
 * list of a group in every rank's profiler_metadata.json (the world group
 * alone made the metadata grow with ranks^2).  jansson values are
 * reference counted, and the pass only ever replaces a value in its parent
 * (json_object_set_new and friends), never changes one in place, so one
 * instance can stand in every tree that holds an equal value.
 *
 * Equal means the same bytes: a real by its bits (0.0 and -0.0 print
 * differently), an integer by value, a string by its bytes, a list of
 * integers element by element; so what is written is unchanged.  A tree
 * is walked to a bounded depth (deeper parts keep their own values).
 */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32 /* the shapes read are 6 levels deep */

static uint64_t hash_of(const void *ctx, uint32_t i)
{
    return ((const aip__cluster_intern *)ctx)->hash[i];
}

static int same(const json_t *a, const json_t *b)
{
    if (json_typeof(a) != json_typeof(b))
        return 0;
    switch (json_typeof(a)) {
    case JSON_REAL: {
        double x = json_real_value(a), y = json_real_value(b);
        return !memcmp(&x, &y, sizeof x);
    }
    case JSON_INTEGER:
        return json_integer_value(a) == json_integer_value(b);
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               !memcmp(json_string_value(a), json_string_value(b), json_string_length(a));
    case JSON_ARRAY: { /* lists of integers only (value_hash) */
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (json_integer_value(json_array_get(a, i)) != json_integer_value(json_array_get(b, i)))
                return 0;
        return 1;
    }
    default:
        return 0;
    }
}

/* A hash of `v` when it can be shared (a number, a string, a non-empty
 * list of integers); 0 otherwise. */
static int value_hash(const json_t *v, uint64_t *h)
{
    *h = aip__fnv1a_more(AIP__FNV_OFFSET, &(int){json_typeof(v)}, sizeof(int));
    switch (json_typeof(v)) {
    case JSON_REAL: {
        double x = json_real_value(v);
        *h = aip__fnv1a_more(*h, &x, sizeof x);
        return 1;
    }
    case JSON_INTEGER: {
        json_int_t x = json_integer_value(v);
        *h = aip__fnv1a_more(*h, &x, sizeof x);
        return 1;
    }
    case JSON_STRING:
        *h = aip__fnv1a_more(*h, json_string_value(v), json_string_length(v));
        return 1;
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        if (!json_array_size(v))
            return 0;
        json_array_foreach(v, i, x) {
            if (!json_is_integer(x))
                return 0;
            json_int_t k = json_integer_value(x);
            *h = aip__fnv1a_more(*h, &k, sizeof k);
        }
        return 1;
    }
    default:
        return 0;
    }
}

/* The value held equal to `v` (`v` itself, now held, when it is the
 * first), borrowed; `v` when it cannot be shared; NULL: no memory. */
static json_t *held(aip__cluster_intern *t, json_t *v)
{
    uint64_t h;
    if (!value_hash(v, &h))
        return v;
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&t->ht, h, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&t->ht, &pr))
        if (t->hash[i] == h && same(t->v[i], v))
            return t->v[i];
    if (t->ht.n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        json_t **nv = realloc(t->v, cap * sizeof *nv);
        if (nv)
            t->v = nv;
        uint64_t *nh = nv ? realloc(t->hash, cap * sizeof *nh) : NULL;
        if (!nh)
            return NULL;
        t->hash = nh;
        t->cap = cap;
    }
    t->v[t->ht.n] = v;
    t->hash[t->ht.n] = h;
    if (aip__ht_add(&t->ht, &pr, hash_of, t))
        return NULL;
    json_incref(v);
    return v;
}

static int is_leaf(const json_t *v)
{
    return json_is_number(v) || json_is_string(v);
}

/* Every number and string under `v` replaced by the held equal one. */
static int share_leaves(aip__cluster_intern *t, json_t *v, int depth)
{
    if (depth > MAX_DEPTH)
        return 0;
    if (json_is_object(v)) {
        for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
            json_t *x = json_object_iter_value(it), *h;
            if (!is_leaf(x)) {
                if (share_leaves(t, x, depth + 1))
                    return -1;
            } else if (!(h = held(t, x)) || (h != x && json_object_iter_set(v, it, h))) {
                return -1;
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x, *h;
        json_array_foreach(v, i, x) {
            if (!is_leaf(x)) {
                if (share_leaves(t, x, depth + 1))
                    return -1;
            } else if (!(h = held(t, x)) || (h != x && json_array_set(v, i, h))) {
                return -1;
            }
        }
    }
    return 0;
}

int aip__cluster_rank_share(aip__cluster *c, aip__rank_dir *r)
{
    const char *gid;
    json_t *gv;
    json_object_foreach(json_object_get(r->meta, "parallel_group_info"), gid, gv) {
        json_t *list = json_object_get(gv, "global_ranks"), *h;
        if (!json_is_array(list))
            continue;
        if (!(h = held(&c->rank_lists, list)) ||
            (h != list && json_object_set(gv, "global_ranks", h)))
            return -1;
    }
    if (share_leaves(&c->leaves, r->comm, 0) || share_leaves(&c->leaves, r->matrix, 0))
        return -1;
    return 0;
}

void aip__cluster_intern_free(aip__cluster_intern *t)
{
    for (size_t i = 0; i < t->ht.n; i++)
        json_decref(t->v[i]);
    free(t->v);
    free(t->hash);
    aip__ht_free(&t->ht);
    memset(t, 0, sizeof *t);
}
