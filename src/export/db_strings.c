/*
 * db_strings.c — STRING_IDS ranges (see db_strings.h).
 */
#include "db_strings.h"
#include "text_escape.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

aip_status aip__dbs_init(aip_db_strings *t, int64_t base, const aip_model *m)
{
    memset(t, 0, sizeof *t);
    t->base = base;
    t->m = m;
    t->map = calloc(m->n_procs ? m->n_procs : 1, sizeof *t->map);
    if (!t->map)
        return t->status = aip__fail(AIP_ERR_NOMEM, "no memory for the string table");
    return AIP_OK;
}

void aip__dbs_free(aip_db_strings *t)
{
    if (t->map)
        for (size_t i = 0; i < t->m->n_procs; i++)
            free(t->map[i]);
    free(t->map);
    free(t->blob);
    free(t->ent);
    free(t->hash);
    memset(t, 0, sizeof *t);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a: strings are hashed once each */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static aip_status rehash(aip_db_strings *t, size_t cap)
{
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the string table");
    for (size_t i = 0; i < t->n; i++) {
        size_t j = (size_t)t->ent[i].hash & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = (uint32_t)i + 1;
    }
    free(t->hash);
    t->hash = h;
    t->hash_cap = cap;
    return AIP_OK;
}

/* Index of the (clean) text, added if new; -1 on error. */
static int64_t intern(aip_db_strings *t, const char *s, size_t n)
{
    uint64_t h = hash_bytes(s, n);
    if (t->hash_cap) {
        for (size_t j = (size_t)h & (t->hash_cap - 1); t->hash[j]; j = (j + 1) & (t->hash_cap - 1)) {
            const aip_dbs_ent *e = &t->ent[t->hash[j] - 1];
            if (e->hash == h && e->len == n && !memcmp(t->blob + e->off, s, n))
                return t->hash[j] - 1;
        }
    }
    if (t->n >= UINT32_MAX - 1 || n > UINT32_MAX)
        return -1;
    if (aip__model_grow((void **)&t->ent, &t->cap, t->n + 1, sizeof *t->ent) ||
        aip__model_grow((void **)&t->blob, &t->blob_cap, t->blob_len + n + 1, 1))
        return -1;
    memcpy(t->blob + t->blob_len, s, n);
    t->ent[t->n] = (aip_dbs_ent){h, t->blob_len, (uint32_t)n};
    t->blob_len += n;
    size_t idx = t->n++;
    if (t->n * 2 > t->hash_cap) {
        if (rehash(t, t->hash_cap ? t->hash_cap * 2 : 256))
            return -1;
    } else {
        size_t j = (size_t)h & (t->hash_cap - 1);
        while (t->hash[j])
            j = (j + 1) & (t->hash_cap - 1);
        t->hash[j] = (uint32_t)idx + 1;
    }
    return (int64_t)idx;
}

int64_t aip__dbs_text(aip_db_strings *t, const char *s, size_t n)
{
    if (!n || t->status)
        return -1;
    char small[512];
    char *buf = 3 * n <= sizeof small ? small : malloc(3 * n);
    if (!buf) {
        t->status = aip__fail(AIP_ERR_NOMEM, "no memory for a string");
        return -1;
    }
    int64_t idx = intern(t, buf, aip__utf8_clean(s, n, buf));
    if (buf != small)
        free(buf);
    if (idx < 0) {
        t->status = aip__fail(AIP_ERR_NOMEM, "no memory for the string table");
        return -1;
    }
    return t->base + idx;
}

int64_t aip__dbs_raw(aip_db_strings *t, size_t proc, uint32_t id)
{
    const aip_process *p = &t->m->procs[proc];
    if (id == 0 || id >= p->strings.n_ent || !p->strings.ent[id].defined || t->status)
        return -1;
    uint32_t *map = t->map[proc];
    if (!map) {
        map = t->map[proc] = calloc(p->strings.n_ent, sizeof *map);
        if (!map) {
            t->status = aip__fail(AIP_ERR_NOMEM, "no memory for the string map");
            return -1;
        }
    }
    if (map[id])
        return map[id] == UINT32_MAX ? -1 : t->base + map[id] - 1;
    size_t n;
    const char *s = aip__model_str(p, id, &n);
    int64_t v = aip__dbs_text(t, s, n);
    map[id] = v < 0 ? UINT32_MAX : (uint32_t)(v - t->base) + 1;
    return v;
}

void aip__dbs_write(const aip_db_strings *t, aip_db_insert *ins)
{
    for (size_t i = 0; i < t->n; i++) {
        aip__db_i64(ins, 0, t->base + (int64_t)i);
        aip__db_text(ins, 1, t->blob + t->ent[i].off, t->ent[i].len);
        aip__db_row(ins);
    }
}
