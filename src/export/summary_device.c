/*
 * summary_device.c — the device section of `aiprof summary`: kernels by
 * total device time (name, count, total, mean, max), copies / fills / maps
 * by name and direction (count, bytes, time, bandwidth), and per device its
 * busy time — the union of its tasks' intervals, since tasks of several
 * queues may overlap — against the window from its first task's start to
 * its last task's end.  Names are grouped across processes by their text
 * (each process has its own string table).  Written only when the profile
 * has device tasks; without them the summary is what it was (a note says
 * why there is no device data when device activity was asked for).
 */
#include "summary.h"
#include "device_memory.h"
#include "svg_chart.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_copy(uint8_t kind)
{
    return kind == AIP_TASK_MEMCPY || kind == AIP_TASK_MEMSET || kind == AIP_TASK_MAP;
}

static int cmp_name(const void *a, const void *b)
{
    const aip__sum_tasks *x = a, *y = b;
    int c = aip__text_cmp(x->name, x->len, y->name, y->len);
    return c ? c : (x->direction > y->direction) - (x->direction < y->direction);
}

static int cmp_total(const void *a, const void *b)
{
    const aip__sum_tasks *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return cmp_name(a, b);
}

/* One entry per task of the kinds wanted (kernels, or copies), then
 * sorted by name and merged, then sorted by total time. */
static aip_status group(const aip__model *m, int copies, aip__sum_tasks **out, size_t *n_out)
{
    size_t n = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        for (size_t i = 0; i < m->procs[pi].dev_tasks.n; i++) {
            uint8_t k = m->procs[pi].dev_tasks.v[i].kind;
            n += copies ? is_copy(k) : k == AIP_TASK_KERNEL;
        }
    *out = NULL;
    *n_out = 0;
    if (!n)
        return AIP_OK;
    aip__sum_tasks *v = malloc(n * sizeof *v);
    if (!v)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device summary");
    size_t k = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        for (size_t i = 0; i < p->dev_tasks.n; i++) {
            const aip__device_task *t = &p->dev_tasks.v[i];
            if (copies ? !is_copy(t->kind) : t->kind != AIP_TASK_KERNEL)
                continue;
            aip__sum_tasks *e = &v[k++];
            e->name = aip__model_str(p, t->name, &e->len);
            e->kind = t->kind;
            e->direction = copies ? t->direction : 0;
            e->count = 1;
            e->bytes = t->bytes;
            e->total_ns = e->max_ns = t->end - t->start;
        }
    }
    qsort(v, n, sizeof *v, cmp_name);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && !cmp_name(&v[w - 1], &v[i])) {
            aip__sum_tasks *g = &v[w - 1];
            g->count++;
            g->bytes += v[i].bytes;
            g->total_ns = aip__sat_add(g->total_ns, v[i].total_ns);
            if (v[i].max_ns > g->max_ns)
                g->max_ns = v[i].max_ns;
        } else {
            v[w++] = v[i];
        }
    }
    qsort(v, w, sizeof *v, cmp_total);
    *out = v;
    *n_out = w;
    return AIP_OK;
}

/* The devices of each process that ran tasks, with their busy time. */
static aip_status devices(aip__summary_data *s)
{
    const aip__model *m = s->m;
    size_t n = 0;
    for (size_t pi = 0; pi < m->n_procs; pi++)
        for (size_t d = 0; d < m->procs[pi].devices.n; d++)
            n += m->procs[pi].devices.v[d].present && m->procs[pi].devices.v[d].tasks;
    if (!n)
        return AIP_OK;
    s->devices = calloc(n, sizeof *s->devices);
    if (!s->devices)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device summary");
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        size_t first = s->n_devices;
        for (uint32_t d = 0; d < p->devices.n; d++) {
            const aip__device *dv = &p->devices.v[d];
            if (!dv->present || !dv->tasks)
                continue;
            aip__sum_device *o = &s->devices[s->n_devices++];
            o->pid = p->pid;
            o->id = d;
            o->tag_type = aip__devmem_tag_type(p, d);
            o->name = aip__model_str(p, dv->name, &o->len);
            o->error_ns = dv->error_ns;
            o->first_ns = INT64_MAX;
            o->last_ns = INT64_MIN;
            for (size_t q = 0; q < p->queues.n; q++)
                o->queues += p->queues.v[q].present && p->queues.v[q].device == d &&
                             p->queues.v[q].tasks;
        }
        /* tasks are in start order (device_derive.c): one sweep per
         * device, extending the current busy run or starting a new one */
        for (size_t i = 0; i < p->dev_tasks.n; i++) {
            const aip__device_task *t = &p->dev_tasks.v[i];
            aip__sum_device *o = NULL;
            for (size_t k = first; k < s->n_devices && !o; k++)
                o = s->devices[k].id == t->device ? &s->devices[k] : NULL;
            if (!o)
                continue;
            o->tasks++;
            o->kernels += t->kind == AIP_TASK_KERNEL;
            o->copies += is_copy(t->kind);
            if (t->start >= o->last_ns) {
                o->busy_ns = aip__sat_add(o->busy_ns, t->end - t->start);
                o->last_ns = t->end;
            } else if (t->end > o->last_ns) {
                o->busy_ns = aip__sat_add(o->busy_ns, t->end - o->last_ns);
                o->last_ns = t->end;
            }
            if (t->start < o->first_ns)
                o->first_ns = t->start;
        }
    }
    return AIP_OK;
}

/* Peak live bytes per (process, device) from the device memory records. */
static aip_status device_memory(aip__summary_data *s)
{
    const aip__model *m = s->m;
    aip__devmem dm;
    aip_status st = aip__devmem_derive(m, &dm);
    if (st || !dm.n_records) {
        if (!st)
            aip__devmem_free(&dm);
        return st;
    }
    s->dev_mem = calloc(m->n_procs * AIP_RAW_MAX_DEVICES, sizeof *s->dev_mem);
    if (!s->dev_mem) {
        aip__devmem_free(&dm);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device summary");
    }
    for (size_t pi = 0; pi < m->n_procs; pi++) {
        const aip__process *p = &m->procs[pi];
        size_t first = s->n_dev_mem;
        for (size_t i = 0; i < p->dev_memory.n; i++) {
            const aip__device_mem *r = &p->dev_memory.v[i];
            aip__sum_devmem *e = NULL;
            for (size_t k = first; k < s->n_dev_mem && !e; k++)
                e = s->dev_mem[k].id == r->device ? &s->dev_mem[k] : NULL;
            if (!e) {
                e = &s->dev_mem[s->n_dev_mem++];
                e->pid = p->pid;
                e->process = (uint32_t)pi;
                e->id = r->device;
                e->tag_type = aip__devmem_tag_type(p, r->device);
            }
            e->records++;
            e->allocations += r->bytes > 0;
            if (dm.rows[pi][i].total > e->peak)
                e->peak = dm.rows[pi][i].total;
        }
    }
    aip__devmem_free(&dm);
    return AIP_OK;
}

aip_status aip__summary_device_build(aip__summary_data *s)
{
    aip_status st = group(s->m, 0, &s->kernels, &s->n_kernels);
    if (!st)
        st = device_memory(s);
    if (!st)
        st = group(s->m, 1, &s->copies, &s->n_copies);
    if (!st)
        st = devices(s);
    for (size_t i = 0; i < s->n_kernels; i++)
        s->kernels_total_ns = aip__sat_add(s->kernels_total_ns, s->kernels[i].total_ns);
    return st;
}

void aip__summary_device_free(aip__summary_data *s)
{
    free(s->kernels);
    free(s->copies);
    free(s->devices);
    free(s->dev_mem);
    s->kernels = s->copies = NULL;
    s->devices = NULL;
    s->dev_mem = NULL;
    s->n_kernels = s->n_copies = s->n_devices = s->n_dev_mem = 0;
}

static const char *direction_name(uint8_t kind, uint8_t dir)
{
    if (kind == AIP_TASK_MEMSET)
        return "fill";
    if (kind == AIP_TASK_MAP)
        return "map";
    switch (dir) {
    case AIP_COPY_H2D: return "HtoD";
    case AIP_COPY_D2H: return "DtoH";
    case AIP_COPY_D2D: return "DtoD";
    case AIP_COPY_H2H: return "HtoH";
    default: return "copy";
    }
}

/* GB/s (10^9 bytes per second), 0 when the time is 0. */
static double bandwidth(const aip__sum_tasks *c)
{
    return c->total_ns > 0 ? (double)c->bytes / (double)c->total_ns : 0.0;
}

static double busy_pct(const aip__sum_device *d)
{
    int64_t window = d->last_ns - d->first_ns;
    return window > 0 ? 100.0 * (double)d->busy_ns / (double)window : 0.0;
}

static const char *tag_name(uint8_t type) { return type == AIP_DEVICE_CUDA ? "CUDA" : "NPU"; }

void aip__summary_device_text(const aip__summary_data *s, aip__out *o)
{
    if (!s->n_devices)
        return;
    AIP_OUT_LIT(o, "\nDevices:\n");
    aip__out_printf(o, "  %-8s %8s %8s %8s %7s %12s %12s %6s  %s\n", "Device", "pid", "Tasks",
                    "Kernels", "Queues", "Busy(ms)", "Window(ms)", "Busy%", "Name");
    for (size_t i = 0; i < s->n_devices; i++) {
        const aip__sum_device *d = &s->devices[i];
        char tag[24];
        snprintf(tag, sizeof tag, "%s:%u", tag_name(d->tag_type), d->id);
        aip__out_printf(o, "  %-8s %8lld %8llu %8llu %7zu %12.3f %12.3f %5.1f%%  ", tag,
                        (long long)d->pid, (unsigned long long)d->tasks,
                        (unsigned long long)d->kernels, d->queues, (double)d->busy_ns / 1e6,
                        (double)(d->last_ns - d->first_ns) / 1e6, busy_pct(d));
        aip__summary_put_term(o, d->name, d->len, 60);
        AIP_OUT_LIT(o, "\n");
    }
    size_t top = s->n_kernels < AIP_SUMMARY_TOP ? s->n_kernels : AIP_SUMMARY_TOP;
    aip__out_printf(o, "\nTop %zu of %zu kernels by total device time:\n", top, s->n_kernels);
    if (top)
        aip__out_printf(o, "  %12s %7s %8s %12s %12s  %s\n", "Total(ms)", "Total%", "Count",
                        "Mean(us)", "Max(us)", "Name");
    for (size_t i = 0; i < top; i++) {
        const aip__sum_tasks *k = &s->kernels[i];
        double pct = s->kernels_total_ns ? 100.0 * (double)k->total_ns /
                                               (double)s->kernels_total_ns : 0.0;
        aip__out_printf(o, "  %12.3f %6.2f%% %8llu %12.3f %12.3f  ", (double)k->total_ns / 1e6,
                        pct, (unsigned long long)k->count,
                        (double)k->total_ns / 1e3 / (double)k->count, (double)k->max_ns / 1e3);
        aip__summary_put_term(o, k->name, k->len, 70);
        AIP_OUT_LIT(o, "\n");
    }
    aip__out_printf(o, "\nCopies, fills and maps: %zu kinds\n", s->n_copies);
    if (s->n_copies)
        aip__out_printf(o, "  %-5s %8s %14s %12s %10s  %s\n", "Dir", "Count", "Bytes",
                        "Total(ms)", "GB/s", "Name");
    for (size_t i = 0; i < s->n_copies && i < AIP_SUMMARY_TOP; i++) {
        const aip__sum_tasks *c = &s->copies[i];
        aip__out_printf(o, "  %-5s %8llu %14llu %12.3f %10.3f  ",
                        direction_name(c->kind, c->direction), (unsigned long long)c->count,
                        (unsigned long long)c->bytes, (double)c->total_ns / 1e6, bandwidth(c));
        aip__summary_put_term(o, c->name, c->len, 70);
        AIP_OUT_LIT(o, "\n");
    }
}

/* The top kernels' total device time as bars (names cut to 40 bytes:
 * the page's labels are escaped by the chart). */
static void kernel_chart(const aip__summary_data *s, aip__out *o, size_t top)
{
    if (!top)
        return;
    double v[AIP_SUMMARY_TOP];
    char lab[AIP_SUMMARY_TOP][41];
    const char *labels[AIP_SUMMARY_TOP];
    for (size_t i = 0; i < top; i++) {
        size_t n = s->kernels[i].len < 40 ? s->kernels[i].len : 40;
        memcpy(lab[i], s->kernels[i].name, n);
        lab[i][n] = 0;
        labels[i] = lab[i];
        v[i] = (double)s->kernels[i].total_ns / 1e6;
    }
    aip__svg_bars chart = {900, 320, "kernel-chart", "Kernel", "Total device time (ms)", labels,
                          v, top, "darkorange"};
    aip__svg_bar_chart(o, &chart);
}

void aip__summary_device_html(const aip__summary_data *s, aip__out *o)
{
    if (!s->n_devices)
        return;
    AIP_OUT_LIT(o, "<h2>Devices</h2>\n<table id=\"devices\"><tr><th>Device</th><th>Name</th>"
                   "<th>pid</th><th>Tasks</th><th>Kernels</th><th>Copies</th><th>Queues</th>"
                   "<th>Busy (ms)</th><th>Window (ms)</th><th>Busy %</th>"
                   "<th>Alignment error (&micro;s)</th></tr>\n");
    for (size_t i = 0; i < s->n_devices; i++) {
        const aip__sum_device *d = &s->devices[i];
        aip__out_printf(o, "<tr><td>%s:%u</td><td class=\"name\">", tag_name(d->tag_type), d->id);
        aip__out_html(o, d->name, d->len);
        aip__out_printf(o, "</td><td>%lld</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%zu</td>"
                        "<td>%.3f</td><td>%.3f</td><td>%.1f</td><td>", (long long)d->pid,
                        (unsigned long long)d->tasks, (unsigned long long)d->kernels,
                        (unsigned long long)d->copies, d->queues, (double)d->busy_ns / 1e6,
                        (double)(d->last_ns - d->first_ns) / 1e6, busy_pct(d));
        if (d->error_ns >= 0)
            aip__out_printf(o, "%.3f", (double)d->error_ns / 1e3);
        else
            AIP_OUT_LIT(o, "N/A");
        AIP_OUT_LIT(o, "</td></tr>\n");
    }
    size_t top = s->n_kernels < AIP_SUMMARY_TOP ? s->n_kernels : AIP_SUMMARY_TOP;
    aip__out_printf(o, "</table>\n<h3>Top %zu of %zu kernels by total device time</h3>\n"
                    "<table id=\"top-kernels\"><tr><th>Name</th><th>Count</th><th>Total (ms)"
                    "</th><th>Total %%</th><th>Mean (&micro;s)</th><th>Max (&micro;s)</th></tr>\n",
                    top, s->n_kernels);
    for (size_t i = 0; i < top; i++) {
        const aip__sum_tasks *k = &s->kernels[i];
        double pct = s->kernels_total_ns ? 100.0 * (double)k->total_ns /
                                               (double)s->kernels_total_ns : 0.0;
        AIP_OUT_LIT(o, "<tr><td class=\"name\">");
        aip__out_html(o, k->name, k->len);
        aip__out_printf(o, "</td><td>%llu</td><td>%.3f</td><td>%.2f</td><td>%.3f</td><td>%.3f"
                        "</td></tr>\n", (unsigned long long)k->count, (double)k->total_ns / 1e6,
                        pct, (double)k->total_ns / 1e3 / (double)k->count,
                        (double)k->max_ns / 1e3);
    }
    AIP_OUT_LIT(o, "</table>\n");
    kernel_chart(s, o, top);
    aip__out_printf(o, "<h3>Copies, fills and maps</h3>\n<table id=\"copies\"><tr>"
                    "<th>Name</th><th>Direction</th><th>Count</th><th>Bytes</th><th>Total (ms)"
                    "</th><th>GB/s</th></tr>\n");
    for (size_t i = 0; i < s->n_copies && i < AIP_SUMMARY_TOP; i++) {
        const aip__sum_tasks *c = &s->copies[i];
        AIP_OUT_LIT(o, "<tr><td class=\"name\">");
        aip__out_html(o, c->name, c->len);
        aip__out_printf(o, "</td><td>%s</td><td>%llu</td><td>%llu</td><td>%.3f</td><td>%.3f"
                        "</td></tr>\n", direction_name(c->kind, c->direction),
                        (unsigned long long)c->count, (unsigned long long)c->bytes,
                        (double)c->total_ns / 1e6, bandwidth(c));
    }
    AIP_OUT_LIT(o, "</table>\n");
}

void aip__summary_devmem_text(const aip__summary_data *s, aip__out *o)
{
    for (size_t i = 0; i < s->n_dev_mem; i++) {
        const aip__sum_devmem *d = &s->dev_mem[i];
        aip__out_printf(o, "  pid %lld %s:%u device buffers: peak allocated ", (long long)d->pid,
                        tag_name(d->tag_type), d->id);
        aip__summary_put_bytes(o, d->peak);
        aip__out_printf(o, " (%llu allocations, %llu records)\n",
                        (unsigned long long)d->allocations, (unsigned long long)d->records);
    }
}

void aip__summary_devmem_html(const aip__summary_data *s, aip__out *o)
{
    for (size_t i = 0; i < s->n_dev_mem; i++) {
        const aip__sum_devmem *d = &s->dev_mem[i];
        aip__out_printf(o, "<tr><td>%lld</td><td>%s:%u (device buffers)</td><td>%lld</td>"
                        "<td>%lld</td><td>%llu</td></tr>\n", (long long)d->pid,
                        d->tag_type == AIP_DEVICE_CUDA ? "cuda" : "npu", d->id,
                        (long long)d->peak, (long long)d->peak,
                        (unsigned long long)d->records);
    }
}
