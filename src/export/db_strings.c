/*
 * db_strings.c — STRING_IDS ranges (see db_strings.h).
 */
#include "db_strings.h"
#include "text_escape.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

aip_status aip__dbs_init(aip__db_strings *t, int64_t base, const aip__model *m)
{
    memset(t, 0, sizeof *t);
    t->base = base;
    t->m = m;
    t->map = calloc(m->n_procs ? m->n_procs : 1, sizeof *t->map);
    if (!t->map)
        return t->status = aip__fail(AIP_ERR_NOMEM, "no memory for the string table");
    return AIP_OK;
}

void aip__dbs_free(aip__db_strings *t)
{
    if (t->map)
        for (size_t i = 0; i < t->m->n_procs; i++)
            free(t->map[i]);
    free(t->map);
    free(t->blob);
    free(t->ent);
    aip__ht_free(&t->index);
    memset(t, 0, sizeof *t);
}

static uint64_t ent_hash(const void *ctx, uint32_t i)
{
    return ((const aip__db_strings *)ctx)->ent[i].hash;
}

/* Index of the (clean) text, added if new; -1 on error. */
static int64_t intern(aip__db_strings *t, const char *s, size_t n)
{
    uint64_t h = aip__fnv1a(s, n);
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&t->index, h, &pr); i != AIP__HT_NONE;
         i = aip__ht_next(&t->index, &pr)) {
        const aip__dbs_ent *e = &t->ent[i];
        if (e->hash == h && e->len == n && !memcmp(t->blob + e->off, s, n))
            return i;
    }
    if (t->n >= UINT32_MAX - 1 || n > UINT32_MAX)
        return -1;
    if (aip__model_grow((void **)&t->ent, &t->cap, t->n + 1, sizeof *t->ent) ||
        aip__model_grow((void **)&t->blob, &t->blob_cap, t->blob_len + n + 1, 1) ||
        aip__ht_add(&t->index, &pr, ent_hash, t))
        return -1;
    memcpy(t->blob + t->blob_len, s, n);
    t->ent[t->n] = (aip__dbs_ent){h, t->blob_len, (uint32_t)n};
    t->blob_len += n;
    return (int64_t)t->n++;
}

int64_t aip__dbs_text(aip__db_strings *t, const char *s, size_t n)
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

int64_t aip__dbs_empty(aip__db_strings *t)
{
    if (t->status)
        return -1;
    int64_t idx = intern(t, "", 0);
    if (idx < 0) {
        t->status = aip__fail(AIP_ERR_NOMEM, "no memory for the string table");
        return -1;
    }
    return t->base + idx;
}

int64_t aip__dbs_raw(aip__db_strings *t, size_t proc, uint32_t id)
{
    const aip__process *p = &t->m->procs[proc];
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

void aip__dbs_write(const aip__db_strings *t, aip__db_insert *ins)
{
    for (size_t i = 0; i < t->n; i++) {
        aip__db_i64(ins, 0, t->base + (int64_t)i);
        aip__db_text(ins, 1, t->blob + t->ent[i].off, t->ent[i].len);
        aip__db_row(ins);
    }
}
