/*
 * advise_memory.c — the memory rule of `aiprof advise` (docs/ADVISE.md
 * "memory"): the highest peak of allocated memory (one process, one
 * device), what holds it — the blocks live at that moment summed by the
 * categories memory.c derived and by the op that allocated them — and
 * whether the allocated total grows from step to step (something kept
 * across steps: an activation, a loss tensor, a cache).  Growth sets the
 * severity by its size against the peak; a steady peak is info.
 */
#include "insight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct held {
    uint32_t name;
    int64_t bytes;
} held;

static int held_by_name(const void *a, const void *b)
{
    const held *x = a, *y = b;
    return (x->name > y->name) - (x->name < y->name);
}

static int held_by_bytes(const void *a, const void *b)
{
    const held *x = a, *y = b;
    return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

/* The top holders at the peak (position `peak` in mem_order) of device
 * (type, index) of p, into the evidence. */
static aip_status live_at_peak(const aip__process *p, size_t peak, uint8_t type, int8_t index,
                               aip__finding *f)
{
    size_t n = p->memory.n;
    size_t *pos = malloc(n * sizeof *pos);
    held *h = malloc((peak + 1) * sizeof *h);
    if (!pos || !h) {
        free(pos);
        free(h);
        return AIP_ERR_NOMEM;
    }
    for (size_t k = 0; k < n; k++)
        pos[p->mem_order[k]] = k;
    int64_t cat[AIP_MEMCAT_COUNT] = {0};
    size_t nh = 0;
    for (size_t k = 0; k <= peak; k++) {
        size_t e = p->mem_order[k];
        const aip__mem_ev *ev = &p->memory.v[e];
        const aip__mem_info *mi = &p->mem_info[e];
        if (ev->bytes <= 0 || ev->device_type != type || ev->device_index != index)
            continue;
        if (mi->pair >= 0 && (size_t)mi->pair < n && pos[mi->pair] <= peak)
            continue; /* freed by the peak */
        if (mi->category < AIP_MEMCAT_COUNT)
            cat[mi->category] += ev->bytes;
        h[nh++] = (held){mi->name, ev->bytes};
    }
    free(pos);
    aip__evidence_add(f, "; live at the peak by category:");
    for (unsigned k = 0; k < AIP_MEMCAT_COUNT; k++)
        if (cat[k])
            aip__evidence_add(f, " %s %.2f MiB", aip__mem_category_name(k), cat[k] / 1048576.0);
    /* sum by allocating op, largest first */
    qsort(h, nh, sizeof *h, held_by_name);
    size_t u = 0;
    for (size_t i = 0; i < nh; i++) {
        if (u && h[u - 1].name == h[i].name)
            h[u - 1].bytes += h[i].bytes;
        else
            h[u++] = h[i];
    }
    qsort(h, u, sizeof *h, held_by_bytes);
    aip__evidence_add(f, "; allocated by:");
    for (size_t i = 0; i < u && i < 3; i++) {
        size_t len;
        const char *name = h[i].name ? aip__model_str(p, h[i].name, &len) : "(no op)";
        if (!h[i].name)
            len = strlen(name);
        aip__evidence_add(f, "%s \"%.*s\" %.2f MiB", i ? "," : "", (int)(len > 120 ? 120 : len),
                          name, h[i].bytes / 1048576.0);
    }
    free(h);
    return AIP_OK;
}

/* Allocated total of the device at each step's end; the growth from the
 * first step's end to the last and how many steps rose. */
static void step_growth(const aip__advise_ctx *c, const aip__process *p, uint8_t type,
                        int8_t index, int64_t *growth, size_t *rising)
{
    *growth = 0;
    *rising = 0;
    if (c->steps != c->m->steps || c->n_steps < 3)
        return;
    size_t k = 0;
    int64_t last = 0, first = 0, prev = 0;
    for (size_t s = 0; s < c->n_steps; s++) {
        for (; k < p->memory.n; k++) {
            const aip__mem_ev *ev = &p->memory.v[p->mem_order[k]];
            if (ev->ts > c->steps[s].end)
                break;
            if (ev->device_type == type && ev->device_index == index)
                last = ev->total_allocated;
        }
        if (s == 0)
            first = last;
        else if (last > prev)
            (*rising)++;
        prev = last;
    }
    *growth = last - first;
}

aip_status aip__rule_memory(aip__advise_ctx *c)
{
    const aip__mem_peak *best = NULL;
    for (size_t i = 0; i < c->m->n_mem_peaks; i++)
        if (!best || c->m->mem_peaks[i].max_allocated > best->max_allocated)
            best = &c->m->mem_peaks[i];
    if (!best || best->max_allocated <= 0 || best->process >= c->m->n_procs)
        return AIP_OK;
    const aip__process *p = &c->m->procs[best->process];
    if (!p->mem_order || !p->mem_info)
        return AIP_OK;
    size_t peak = 0;
    int64_t peak_ts = 0, top = INT64_MIN;
    for (size_t k = 0; k < p->memory.n; k++) {
        const aip__mem_ev *ev = &p->memory.v[p->mem_order[k]];
        if (ev->device_type == best->device_type && ev->device_index == best->device_index &&
            ev->total_allocated > top) {
            top = ev->total_allocated;
            peak = k;
            peak_ts = ev->ts;
        }
    }
    int64_t growth;
    size_t rising;
    step_growth(c, p, best->device_type, best->device_index, &growth, &rising);
    /* growth in at least 3/4 of the step-to-step transitions and by at
     * least 10% of the peak: memory kept across steps */
    int grows = growth > 0 && rising * 4 >= (c->n_steps - 1) * 3 &&
                growth * 10 >= best->max_allocated;
    aip__finding *f = aip__advise_add(c, grows ? "memory_growth" : "memory_peak");
    if (!f)
        return AIP_ERR_NOMEM;
    aip__where_keep(f, peak_ts, 0);
    double frac = (double)growth / (double)best->max_allocated;
    f->severity = !grows ? AIP_SEVERITY_INFO : frac >= 0.5 ? AIP_SEVERITY_HIGH
                : frac >= 0.25 ? AIP_SEVERITY_MEDIUM : AIP_SEVERITY_LOW;
    if (grows)
        snprintf(f->title, sizeof f->title,
                 "Allocated memory grows step over step (+%.2f MiB over %zu steps)",
                 growth / 1048576.0, c->n_steps);
    else
        snprintf(f->title, sizeof f->title, "Memory peak %.2f MiB", best->max_allocated / 1048576.0);
    aip__evidence_add(f, "peak allocated %.2f MiB (reserved %.2f MiB) on device type %u index "
                      "%d; rose in %zu of %zu step transitions, %+.2f MiB from the first "
                      "step's end to the last", best->max_allocated / 1048576.0,
                      best->max_reserved / 1048576.0, best->device_type, best->device_index,
                      rising, c->n_steps > 1 ? c->n_steps - 1 : 0, growth / 1048576.0);
    aip_status s = live_at_peak(p, peak, best->device_type, best->device_index, f);
    f->advice = grows ? "Something outlives its step: a tensor kept in a list, a loss "
                        "accumulated without .detach() / .item(), a growing cache; release "
                        "it (del, detach) at the end of the step."
                      : "To lower the peak: smaller batches, activation checkpointing, "
                        "mixed precision, freeing what the forward pass no longer needs.";
    return s;
}
