/*
 * raw_count.h — test helper: read a result directory's raw file with the
 * library's reader and count records by kind (and by name prefix), plus the
 * STATS totals, so tests can check "recorded + dropped == emitted".  Includes
 * tmp_dir.h, the temporary directories those tests record into.
 */
#ifndef AIP_RAW_COUNT_H
#define AIP_RAW_COUNT_H

#include "aiprof.h"
#include "raw.h"
#include "tmp_dir.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct raw_counts {
    uint64_t by_kind[32];        /* by record kind (raw_format.h: all are below 32) */
    uint64_t stats_recorded, stats_dropped;
    uint64_t chunks, event_chunks;
    uint64_t prefix_hits;        /* records whose name starts with `prefix` */
    uint64_t ops_with_shapes, ops_with_flops;
    uint64_t strings;
    int clean_end;
    uint64_t corrupt, truncated;
    int ok;
} raw_counts;

/* Find FRAMEWORK/aiprof_*.raw under result_dir. */
static inline int raw_find(const char *result_dir, char *out, size_t cap)
{
    char fw[PATH_MAX];
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", result_dir);
    DIR *d = opendir(fw);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".raw") == 0) {
            snprintf(out, cap, "%s/%s", fw, e->d_name);
            found = 1;
            break;
        }
    }
    closedir(d);
    return found;
}

/* The entries of a STRINGS chunk (id, text, length), in order, to `fn`;
 * stops at an entry that runs past the chunk. */
static inline void raw_strings_each(const aip__raw_chunk *ch,
                                    void (*fn)(void *arg, uint32_t id, const char *text,
                                               uint32_t len),
                                    void *arg)
{
    if (ch->size < 8)
        return;
    uint32_t first, count;
    memcpy(&first, ch->payload, 4);
    memcpy(&count, ch->payload + 4, 4);
    size_t off = 8;
    for (uint32_t i = 0; i < count && off + 4 <= ch->size; i++) {
        uint32_t len;
        memcpy(&len, ch->payload + off, 4);
        off += 4;
        if (off + len > ch->size)
            break;
        fn(arg, first + i, (const char *)ch->payload + off, len);
        off += len;
    }
}

/* raw_count_file()'s id → text table. */
typedef struct raw_texts {
    char **texts;
    size_t cap, n;
    uint64_t *strings;
} raw_texts;

static inline void raw_texts_put(void *arg, uint32_t id, const char *text, uint32_t len)
{
    raw_texts *t = arg;
    while (id >= t->cap) {
        t->texts = realloc(t->texts, t->cap * 2 * sizeof *t->texts);
        memset(t->texts + t->cap, 0, t->cap * sizeof *t->texts);
        t->cap *= 2;
    }
    free(t->texts[id]); /* a flight recorder dump may define an id twice */
    t->texts[id] = strndup(text, len);
    if (id >= t->n)
        t->n = id + 1;
    (*t->strings)++;
}

static inline raw_counts raw_count_file(const char *path, const char *prefix)
{
    raw_counts c;
    memset(&c, 0, sizeof c);
    aip__raw_reader *r;
    if (aip__raw_open(path, &r) != AIP_OK)
        return c;
    /* Strings first-come: keep a small id→text table for prefix matching. */
    raw_texts t = {calloc(1024, sizeof(char *)), 1024, 0, &c.strings};
    aip__raw_chunk ch;
    int rc;
    while ((rc = aip__raw_next(r, &ch)) == 1) {
        c.chunks++;
        if (ch.type == AIP_CHUNK_STRINGS) {
            raw_strings_each(&ch, raw_texts_put, &t);
        } else if (ch.type == AIP_CHUNK_EVENTS) {
            c.event_chunks++;
            for (uint32_t off = 0; off + 8 <= ch.size;) {
                aip__rec_header h;
                memcpy(&h, ch.payload + off, sizeof h);
                if (h.size < 8)
                    break;
                c.by_kind[h.kind & 31]++;
                if (h.kind == AIP_REC_OP) {
                    c.ops_with_shapes += (h.flags & AIP_OPF_SHAPES) != 0;
                    c.ops_with_flops += (h.flags & AIP_OPF_FLOPS) != 0;
                }
                if (prefix && h.name < t.n && t.texts[h.name] &&
                    strncmp(t.texts[h.name], prefix, strlen(prefix)) == 0)
                    c.prefix_hits++;
                off += h.size;
            }
        } else if (ch.type == AIP_CHUNK_STATS && ch.size >= 8) {
            uint32_t count;
            memcpy(&count, ch.payload, 4);
            /* the writer persists STATS with its flushes: the last one holds */
            c.stats_recorded = c.stats_dropped = 0;
            for (uint32_t i = 0; i < count && 8 + (i + 1) * sizeof(aip__stats_entry) <= ch.size; i++) {
                aip__stats_entry e;
                memcpy(&e, ch.payload + 8 + i * sizeof e, sizeof e);
                c.stats_recorded += e.recorded;
                c.stats_dropped += e.dropped;
            }
        }
    }
    const aip__raw_damage *p = aip__raw_problems(r);
    c.clean_end = p->clean_end;
    c.corrupt = p->corrupt_chunks;
    c.truncated = p->truncated_bytes;
    c.ok = rc == 0;
    aip__raw_close(r);
    for (size_t i = 0; i < t.n; i++)
        free(t.texts[i]);
    free(t.texts);
    return c;
}

static inline uint64_t raw_total_events(const raw_counts *c)
{
    uint64_t t = 0;
    for (int i = 0; i < 16; i++)
        t += c->by_kind[i];
    return t;
}

/* Count the records of a stopped session's raw file into *out (see
 * raw_count_file); 0 if the session left no raw file. */
static inline int raw_count_session(aip_session *s, const char *prefix, raw_counts *out)
{
    char raw[PATH_MAX];
    if (!raw_find(aip_session_result_dir(s), raw, sizeof raw))
        return 0;
    *out = raw_count_file(raw, prefix);
    return 1;
}

#endif
