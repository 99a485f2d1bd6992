/*
 * db_strings.h — the STRING_IDS table of ascend_pytorch_profiler.db.
 *
 * Columns holding text in the seed's tables are ids into STRING_IDS.
 * torch_npu numbers framework API strings from 1<<28 and memory strings
 * from 2<<28 (reference §2.4); each range is one aip__db_strings.  Texts are
 * deduplicated across processes (each raw file has its own string ids), and
 * a per-process array remembers the answer for every raw string id, so the
 * per-row cost on the hot path is one array load.  Texts are stored as
 * valid UTF-8 (invalid bytes and NUL become U+FFFD).
 */
#ifndef AIP_DB_STRINGS_H
#define AIP_DB_STRINGS_H

#include "db.h"
#include "model.h"
#include "hash_table.h"

#define AIP_DB_STR_BASE_DEVICE ((int64_t)0) /* msprof's own strings */
#define AIP_DB_STR_BASE_API ((int64_t)1 << 28)
#define AIP_DB_STR_BASE_MEMORY ((int64_t)2 << 28)

typedef struct aip__dbs_ent {
    uint64_t hash;            /* compared before the text; for growing */
    size_t off;
    uint32_t len;
} aip__dbs_ent;

typedef struct aip__db_strings {
    int64_t base;
    const aip__model *m;
    char *blob;
    size_t blob_len, blob_cap;
    aip__dbs_ent *ent;         /* id = base + index */
    size_t n, cap;
    aip__ht index;            /* text → entry index */
    uint32_t **map;           /* per process, per raw string id: 1 + entry index */
    aip_status status;        /* first error (no memory), sticky */
} aip__db_strings;

aip_status aip__dbs_init(aip__db_strings *t, int64_t base, const aip__model *m);
void aip__dbs_free(aip__db_strings *t);
/* aip__dbs_text() : the id of `s`; -1 for "" (written as NULL) or when out
 * of memory (sticky status). */
int64_t aip__dbs_text(aip__db_strings *t, const char *s, size_t n);
/* aip__dbs_empty() : the id of the empty text, where a column must name a
 * string and there is none (-1 when out of memory). */
int64_t aip__dbs_empty(aip__db_strings *t);
/* aip__dbs_raw() : the id of raw string `id` of process `proc`; -1 for
 * none/"" (NULL). */
int64_t aip__dbs_raw(aip__db_strings *t, size_t proc, uint32_t id);
/* aip__dbs_write() : rows (id, value) of every text, in id order. */
void aip__dbs_write(const aip__db_strings *t, aip__db_insert *ins);

#endif
