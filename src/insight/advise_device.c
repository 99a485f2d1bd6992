/*
 * advise_device.c — the rules of `aiprof advise` over device activity,
 * communication and memory (docs/ADVISE.md): many small kernels, device
 * idle time in steps (host-bound steps), communication not overlapped with
 * computation (the step trace's columns), and the memory peak with what
 * holds it (categories and the ops that allocated the live blocks), with
 * growth from step to step.
 */
#include "insight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Per-launch overhead dominates when kernels are short and many: at least
 * 20 per step with a median under 20 us (docs/ADVISE.md "small_kernels");
 * what is at stake is the host time spent launching them. */
aip_status aip__rule_small_kernels(aip__advise_ctx *c)
{
    uint64_t n = 0;
    int64_t launch = 0, busy = 0;
    size_t cap = 0, k = 0;
    int64_t *d = NULL;
    for (size_t pi = 0; pi < c->m->n_procs; pi++) {
        const aip__process *p = &c->m->procs[pi];
        for (size_t i = 0; i < p->dev_tasks.n; i++) {
            const aip__device_task *t = &p->dev_tasks.v[i];
            if (t->kind != AIP_TASK_KERNEL || aip__in_steps(c, t->start, t->end + 1) <= 0)
                continue;
            if (aip__model_grow((void **)&d, &cap, k + 1, sizeof *d)) {
                free(d);
                return AIP_ERR_NOMEM;
            }
            d[k++] = t->end - t->start;
            n++;
            busy = aip__sat_add(busy, t->end - t->start);
            if (t->api >= 0 && (size_t)t->api < p->dev_api.n) {
                const aip__device_call *a = &p->dev_api.v[t->api];
                launch = aip__sat_add(launch, a->end - a->start);
            }
        }
    }
    if (!k) {
        free(d);
        return AIP_OK;
    }
    qsort(d, k, sizeof *d, cmp_i64);
    int64_t med = d[k / 2];
    free(d);
    double per_step = (double)n / (double)c->n_steps;
    if (per_step < 20 || med >= 20000)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "small_kernels");
    if (!f)
        return AIP_ERR_NOMEM;
    aip__advise_stake(c, f, launch);
    for (size_t i = 0; i < c->n_steps; i++) /* the longest steps show the overhead */
        aip__where_keep(f, c->steps[i].start, c->steps[i].end - c->steps[i].start);
    snprintf(f->title, sizeof f->title,
             "Many small kernels (%.0f per step, median %.1f us): per-launch overhead dominates",
             (double)n / (double)c->n_steps, med / 1e3);
    aip__evidence_add(f, "%llu kernels inside %zu steps (%.0f per step), median %.3f us, "
                      "%.3f ms of kernel time per step against %.3f ms per step in the "
                      "launching calls", (unsigned long long)n, c->n_steps, per_step,
                      med / 1e3, busy / (double)c->n_steps / 1e6, f->ns_per_step / 1e6);
    f->advice = "Fuse small kernels (bigger work-groups, batched / fused ops, torch.compile, "
                "CUDA graphs), and enqueue without waiting between launches.";
    return AIP_OK;
}

/* Device rows of the step trace (device_steps.c): Free is the step's time
 * with no kernel on the device, Preparing the part of it before the first
 * kernel (the device waiting for the host to start). */
aip_status aip__rule_device_idle(aip__advise_ctx *c)
{
    int64_t free_ns = 0, prep = 0, span = 0, comm = 0;
    size_t rows = 0;
    for (size_t i = 0; i < c->m->n_step_rows; i++) {
        const aip__step_row *r = &c->m->step_rows[i];
        if (r->device < 0)
            continue;
        rows++;
        free_ns = aip__sat_add(free_ns, r->free);
        prep = aip__sat_add(prep, r->preparing);
        span = aip__sat_add(span, r->end - r->start);
        comm = aip__sat_add(comm, r->comm_not_overlapped);
    }
    if (!rows || span <= 0 || free_ns <= 0)
        return AIP_OK;
    int64_t per_row = free_ns / (int64_t)rows;
    /* Launch-bound: with many small kernels the idle time between them is
     * what their launches cost; one finding, not the same time twice. */
    for (size_t i = 0; i < c->n; i++) {
        aip__finding *k = &c->f[i];
        if (strcmp(k->rule, "small_kernels"))
            continue;
        if (per_row > k->ns_per_step)
            aip__advise_stake(c, k, per_row * (int64_t)c->n_steps);
        aip__evidence_add(k, "; the device is idle %.1f%% of the step between them (%.3f ms "
                          "per step)", 100.0 * (double)free_ns / (double)span, per_row / 1e6);
        return AIP_OK;
    }
    aip__finding *f = aip__advise_add(c, "device_idle");
    if (!f)
        return AIP_ERR_NOMEM;
    /* per device-step row, scaled to the steps so that the share reads
     * against the mean step like every other rule's */
    aip__advise_stake(c, f, per_row * (int64_t)c->n_steps);
    f->share = (double)free_ns / (double)span;
    snprintf(f->title, sizeof f->title, "The device is idle %.1f%% of the step (host-bound)",
             100 * f->share);
    aip__evidence_add(f, "%zu device-step rows: %.3f ms idle per row, of which %.3f ms before "
                      "the first kernel (waiting for the host to launch) and %.3f ms of "
                      "communication not overlapped", rows, per_row / 1e6,
                      prep / (double)rows / 1e6, comm / (double)rows / 1e6);
    f->advice = "Find what the host does between kernels in those steps (data loading, "
                "synchronisation, Python overhead); launch work earlier and asynchronously, "
                "or give the device bigger batches.";
    return AIP_OK;
}

/* Communication(Not Overlapped) of the step trace: time the step spends
 * communicating with no computation beside it. */
aip_status aip__rule_comm(aip__advise_ctx *c)
{
    int64_t not_ov = 0, total = 0, bubble = 0;
    size_t rows = 0;
    int want_dev = 0;
    for (size_t i = 0; i < c->m->n_step_rows; i++)
        want_dev |= c->m->step_rows[i].device >= 0;
    for (size_t i = 0; i < c->m->n_step_rows; i++) {
        const aip__step_row *r = &c->m->step_rows[i];
        if ((r->device >= 0) != want_dev)
            continue;
        rows++;
        not_ov = aip__sat_add(not_ov, r->comm_not_overlapped);
        total = aip__sat_add(total, r->communication);
        bubble = aip__sat_add(bubble, r->bubble);
    }
    if (!rows || not_ov <= 0)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "comm_not_overlapped");
    if (!f)
        return AIP_ERR_NOMEM;
    for (size_t pi = 0; pi < c->m->n_procs; pi++) {
        const aip__process *p = &c->m->procs[pi];
        for (size_t i = 0; i < p->comm_ops.n; i++)
            aip__where_keep(f, p->comm_ops.v[i].start, p->comm_ops.v[i].end - p->comm_ops.v[i].start);
    }
    aip__advise_stake(c, f, not_ov / (int64_t)rows * (int64_t)c->n_steps);
    snprintf(f->title, sizeof f->title,
             "Communication not overlapped with computation takes %.1f%% of the step",
             100 * f->share);
    aip__evidence_add(f, "per step row: communication %.3f ms, not overlapped %.3f ms, of "
                      "which waiting to receive (bubble) %.3f ms", total / (double)rows / 1e6,
                      not_ov / (double)rows / 1e6, bubble / (double)rows / 1e6);
    f->advice = "Overlap communication with computation (bucketed / asynchronous all-reduce, "
                "start sends early); if one rank is slow, look at `aiprof cluster`'s slow "
                "ranks and links.";
    return AIP_OK;
}
