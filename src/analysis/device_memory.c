/*
 * device_memory.c — pairs, running totals and op names of the device
 * memory records (device_memory.h says what each means).
 *
 * The records of a process are in time order after derive
 * (device_derive.c).  Pairs: the records sorted by (device, address,
 * time), each free taking the latest open allocation of its group.
 * Totals: one pass in time order, per device, starting from the sizes of
 * the blocks the trace saw freed without their allocation.  Names: one
 * sweep per thread over its sorted spans, as device_derive.c links calls
 * to ops.
 */
#include "device_memory.h"
#include "analysis_int.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

static int cmp_key(const void *a, const void *b, void *ctx)
{
    const aip__device_mem *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (v[x].device != v[y].device)
        return v[x].device < v[y].device ? -1 : 1;
    if (v[x].address != v[y].address)
        return v[x].address < v[y].address ? -1 : 1;
    return (x > y) - (x < y); /* time order: the records are sorted by time */
}

static aip_status pair_records(const aip__process *p, aip__devmem_row *rows, size_t *idx)
{
    size_t n = p->dev_memory.n;
    const aip__device_mem *v = p->dev_memory.v;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, cmp_key, (void *)v);
    size_t *open = malloc(n * sizeof *open); /* allocations of the group not yet freed */
    if (!open)
        return aip__fail(AIP_ERR_NOMEM, "no memory to pair device memory records");
    size_t depth = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = idx[k];
        if (k && (v[i].device != v[idx[k - 1]].device || v[i].address != v[idx[k - 1]].address))
            depth = 0;
        if (v[i].bytes > 0) {
            open[depth++] = i;
        } else if (v[i].bytes < 0 && depth) {
            size_t a = open[--depth];
            rows[i].pair = (int64_t)a;
            rows[a].pair = (int64_t)i;
        }
    }
    free(open);
    return AIP_OK;
}

/* The size a free released: -bytes, held at INT64_MAX for a forged
 * INT64_MIN (its negation does not exist). */
static int64_t freed_size(int64_t bytes) { return bytes == INT64_MIN ? INT64_MAX : -bytes; }

static void totals(const aip__process *p, aip__devmem_row *rows)
{
    int64_t live[AIP_RAW_MAX_DEVICES] = {0};
    const aip__device_mem *v = p->dev_memory.v;
    for (size_t i = 0; i < p->dev_memory.n; i++)
        if (v[i].bytes < 0 && rows[i].pair < 0 && v[i].device < AIP_RAW_MAX_DEVICES)
            live[v[i].device] = aip__sat_add(live[v[i].device], freed_size(v[i].bytes));
    for (size_t i = 0; i < p->dev_memory.n; i++) {
        if (v[i].device >= AIP_RAW_MAX_DEVICES)
            continue;
        int64_t *t = &live[v[i].device];
        if (v[i].bytes > 0)
            *t = aip__sat_add(*t, v[i].bytes);
        else if (v[i].bytes < 0 && rows[i].pair >= 0) /* the allocated size, counted before */
            *t = aip__sat_add(*t, -v[rows[i].pair].bytes);
        else if (v[i].bytes < 0)
            *t = aip__sat_add(*t, -freed_size(v[i].bytes));
        rows[i].total = *t;
    }
}

static int cmp_thread(const void *a, const void *b, void *ctx)
{
    const aip__device_mem *v = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (v[x].thread != v[y].thread)
        return v[x].thread < v[y].thread ? -1 : 1;
    return (x > y) - (x < y);
}

/* Names of the records idx[first, last) of thread ti, in time order. */
static aip_status names_of_thread(const aip__process *p, uint32_t ti, const size_t *idx,
                                  size_t first, size_t last, aip__devmem_row *rows)
{
    const aip__thread *t = &p->threads[ti];
    aip__open_spans open;
    aip_status s = aip__open_spans_init(&open, t, ~(1u << AIP_SPAN_PYFUNC));
    if (s)
        return s;
    for (size_t k = first; k < last; k++) {
        int64_t ts = p->dev_memory.v[idx[k]].ts;
        aip__open_spans_at(&open, ts);
        int64_t in = aip__open_spans_innermost(&open, ts);
        rows[idx[k]].name = in >= 0 ? t->spans[in].name : 0;
    }
    aip__open_spans_free(&open);
    return AIP_OK;
}

static aip_status names(const aip__process *p, aip__devmem_row *rows, size_t *idx)
{
    size_t n = p->dev_memory.n;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, cmp_thread, (void *)p->dev_memory.v);
    aip_status s = AIP_OK;
    for (size_t i = 0; i < n && !s;) {
        uint32_t ti = p->dev_memory.v[idx[i]].thread;
        size_t j = i;
        while (j < n && p->dev_memory.v[idx[j]].thread == ti)
            j++;
        if (ti < p->n_threads)
            s = names_of_thread(p, ti, idx, i, j, rows);
        i = j;
    }
    return s;
}

aip_status aip__devmem_derive(const aip__model *m, aip__devmem *d)
{
    memset(d, 0, sizeof *d);
    d->rows = calloc(m->n_procs ? m->n_procs : 1, sizeof *d->rows);
    if (!d->rows)
        return aip__fail(AIP_ERR_NOMEM, "no memory for device memory");
    d->n_procs = m->n_procs;
    aip_status s = AIP_OK;
    for (size_t pi = 0; pi < m->n_procs && !s; pi++) {
        const aip__process *p = &m->procs[pi];
        size_t n = p->dev_memory.n;
        if (!n)
            continue;
        d->n_records += n;
        aip__devmem_row *rows = malloc(n * sizeof *rows);
        size_t *idx = malloc(n * sizeof *idx);
        if (!rows || !idx) {
            free(rows);
            free(idx);
            s = aip__fail(AIP_ERR_NOMEM, "no memory for device memory");
            break;
        }
        for (size_t i = 0; i < n; i++)
            rows[i] = (aip__devmem_row){-1, 0, 0};
        d->rows[pi] = rows;
        s = pair_records(p, rows, idx);
        if (!s) {
            totals(p, rows);
            s = names(p, rows, idx);
        }
        free(idx);
    }
    if (s)
        aip__devmem_free(d);
    return s;
}

void aip__devmem_free(aip__devmem *d)
{
    for (size_t i = 0; d->rows && i < d->n_procs; i++)
        free(d->rows[i]);
    free(d->rows);
    memset(d, 0, sizeof *d);
}

aip_status aip__devmem_iter_init(aip__devmem_iter *it, const aip__model *m)
{
    it->m = m;
    it->pos = calloc(m->n_procs ? m->n_procs : 1, sizeof *it->pos);
    return it->pos ? AIP_OK : aip__fail(AIP_ERR_NOMEM, "no memory");
}

int aip__devmem_iter_next(aip__devmem_iter *it, size_t *proc, size_t *idx)
{
    size_t best = SIZE_MAX;
    int64_t best_ts = 0;
    for (size_t pi = 0; pi < it->m->n_procs; pi++) {
        const aip__process *p = &it->m->procs[pi];
        if (it->pos[pi] >= p->dev_memory.n)
            continue;
        int64_t ts = p->dev_memory.v[it->pos[pi]].ts;
        if (best == SIZE_MAX || ts < best_ts) {
            best = pi;
            best_ts = ts;
        }
    }
    if (best == SIZE_MAX)
        return 0;
    *proc = best;
    *idx = it->pos[best]++;
    return 1;
}

void aip__devmem_iter_free(aip__devmem_iter *it)
{
    free(it->pos);
    it->pos = NULL;
}
