/*
 * op_args.c — record_op_args: the `{worker}_{timestamp}_ascend_pt_op_args`
 * directory beside the result directory (the name torch_npu's ProfilerMgr
 * gives ACL's op-argument dump for the AOE tuning tool).
 *
 * ACL dumps the arguments of the AI Core ops a device ran; a host-only
 * profile has none.  What the raw data does hold is each framework op's
 * name and (with record_shapes) input shapes and dtypes, which are the
 * host-side arguments of the calls that would become device ops.  So the
 * directory gets one file, op_args.csv: one row per distinct
 * (Name, Input Shapes, Input Data Types) with its call Count, sorted by
 * those texts (docs/ANALYSIS.md).  It is written at analysis time, from the
 * raw data, like every other output.
 */
#include "result.h"
#include "export.h"
#include "text_escape.h"
#include "error.h"
#include "hash_table.h"
#include "fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct arg_key {      /* per process: raw string ids */
    uint32_t name, shapes, dtypes;
    uint32_t proc;
    uint64_t count;
} arg_key;

typedef struct keyset {
    arg_key *v;
    size_t n, cap;
    aip__ht index;            /* key → index of v past `first` */
    size_t first;             /* first entry of the current process */
} keyset;

static uint64_t key_hash(uint32_t name, uint32_t shapes, uint32_t dtypes)
{
    return aip__hash_u64_pair((uint64_t)name << 32 | shapes, dtypes);
}

static uint64_t entry_hash(const void *ctx, uint32_t i)
{
    const keyset *k = ctx;
    const arg_key *e = &k->v[k->first + i];
    return key_hash(e->name, e->shapes, e->dtypes);
}

static aip_status add_key(keyset *k, uint32_t proc, uint32_t name, uint32_t shapes, uint32_t dtypes)
{
    aip__ht_probe pr;
    for (uint32_t i = aip__ht_first(&k->index, key_hash(name, shapes, dtypes), &pr);
         i != AIP__HT_NONE; i = aip__ht_next(&k->index, &pr)) {
        arg_key *e = &k->v[k->first + i];
        if (e->name == name && e->shapes == shapes && e->dtypes == dtypes) {
            e->count++;
            return AIP_OK;
        }
    }
    if (aip__model_grow((void **)&k->v, &k->cap, k->n + 1, sizeof *k->v))
        return AIP_ERR_NOMEM;
    if (aip__ht_add(&k->index, &pr, entry_hash, k))
        return aip__fail(AIP_ERR_NOMEM, "no memory for op arguments");
    k->v[k->n++] = (arg_key){name, shapes, dtypes, proc, 1};
    return AIP_OK;
}

static int cmp_text(const aip__process *p, uint32_t a, const aip__process *q, uint32_t b)
{
    size_t na, nb;
    const char *sa = aip__model_str(p, a, &na), *sb = aip__model_str(q, b, &nb);
    return aip__text_cmp(sa, na, sb, nb);
}

static int cmp_key(const void *x, const void *y, void *ctx)
{
    const aip__model *m = ctx;
    const arg_key *a = x, *b = y;
    const aip__process *p = &m->procs[a->proc], *q = &m->procs[b->proc];
    int c = cmp_text(p, a->name, q, b->name);
    if (!c)
        c = cmp_text(p, a->shapes, q, b->shapes);
    return c ? c : cmp_text(p, a->dtypes, q, b->dtypes);
}

static void put_cell(aip__out *o, const aip__process *p, uint32_t id)
{
    size_t n;
    const char *s = aip__model_str(p, id, &n);
    char *buf = malloc(AIP_CSV_ESC_MAX(n));
    if (buf) {
        aip__out_put(o, buf, aip__csv_cell(s, n, buf));
        free(buf);
    }
}

static aip_status write_csv(const aip__model *m, keyset *k, const char *path)
{
    if (k->n > 1)
        qsort_r(k->v, k->n, sizeof *k->v, cmp_key, (void *)m);
    aip__out o;
    aip_status s = aip__out_open(&o, path);
    if (s)
        return s;
    AIP_OUT_LIT(&o, "Name,Input Shapes,Input Data Types,Count\r\n");
    for (size_t i = 0; i < k->n;) {
        /* equal texts from several processes: one row */
        size_t j = i + 1;
        uint64_t count = k->v[i].count;
        while (j < k->n && !cmp_key(&k->v[i], &k->v[j], (void *)m))
            count += k->v[j++].count;
        const aip__process *p = &m->procs[k->v[i].proc];
        put_cell(&o, p, k->v[i].name);
        AIP_OUT_LIT(&o, ",");
        put_cell(&o, p, k->v[i].shapes);
        AIP_OUT_LIT(&o, ",");
        put_cell(&o, p, k->v[i].dtypes);
        AIP_OUT_LIT(&o, ",");
        aip__out_u64(&o, count);
        AIP_OUT_LIT(&o, "\r\n");
        i = j;
    }
    return aip__out_close(&o);
}

aip_status aip__write_op_args(aip__run_log *r, const aip__model *m)
{
    char dir[PATH_MAX], path[PATH_MAX];
    size_t n = strlen(r->dir);
    while (n > 1 && r->dir[n - 1] == '/')
        n--;
    if (snprintf(dir, sizeof dir, "%.*s_op_args", (int)n, r->dir) >= (int)sizeof dir)
        return aip__fail(AIP_ERR_PATH, "path too long: %s_op_args", r->dir);
    aip_status s = aip__path_usable(dir, "op_args directory");
    if (!s)
        s = aip__mkdirs(dir);
    if (!s)
        s = aip__join(path, sizeof path, dir, "op_args.csv");
    if (s)
        return s;
    keyset k = {0};
    for (uint32_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        k.first = k.n;
        aip__ht_clear(&k.index); /* raw string ids are per process */
        for (size_t ti = 0; ti < p->n_threads && !s; ti++) {
            const aip__thread *t = &p->threads[ti];
            for (size_t i = 0; i < t->n_spans && !s; i++) {
                if (t->spans[i].kind != AIP_SPAN_OP)
                    continue;
                aip__op_fields f;
                aip__model_op_fields(t, &t->spans[i], &f);
                s = add_key(&k, pi, t->spans[i].name, f.has_shapes ? f.input_shapes : 0,
                            f.has_shapes ? f.input_dtypes : 0);
            }
        }
    }
    aip__ht_free(&k.index);
    if (!s)
        s = write_csv(m, &k, path);
    if (!s)
        aip__runlog_line(r, "wrote %s (%zu distinct op calls)", path, k.n);
    free(k.v);
    return s;
}
