/*
 * summary_host.c — the host system section of `aiprof summary` (host_sys,
 * sys_io; docs/HOST_SYS.md): per process its CPU time (user / system, the
 * busiest threads), its average and peak CPU use, its memory (RSS at the
 * start, peak and end, page faults), its I/O (bytes from / to storage and
 * through read()/write()), the network rate, and what the sampler itself
 * cost; in the HTML report a CPU curve and an RSS curve.  Problems the
 * sampler met (unreadable /proc files, missed periods, a vanished
 * interface) become notes.
 */
#include "summary.h"
#include "svg_chart.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_POINTS 1500

static void notes(aip__summary_data *s)
{
    const aip__profiler_info_data *in = s->info;
    int any = 0;
    for (size_t i = 0; i < s->n_host; i++) {
        const aip__host_series *h = &s->host[i];
        long long pid = (long long)s->m->procs[i].pid;
        any |= s->m->procs[i].host.n > 0;
        if (h->missed)
            aip__summary_note(s, "pid %lld: the host sampler missed %llu of its %.0f ms periods (largest "
                    "lag %.1f ms); those rates span longer intervals", pid,
                 (unsigned long long)h->missed, (double)h->period_ns / 1e6,
                 (double)h->max_lag_ns / 1e6);
        static const struct { unsigned bit; const char *what; } src[] = {
            {AIP_HOSTSRC_STAT, "/proc/self/stat (CPU)"},
            {AIP_HOSTSRC_TASK, "/proc/self/task (per-thread CPU)"},
            {AIP_HOSTSRC_STATM, "/proc/self/statm (memory)"},
            {AIP_HOSTSRC_IO, "/proc/self/io (disk)"},
            {AIP_HOSTSRC_NETDEV, "/proc/net/dev (network)"},
            {AIP_HOSTSRC_MEMINFO, "MemTotal of /proc/meminfo (memory %)"}};
        for (size_t k = 0; k < sizeof src / sizeof src[0]; k++)
            if (h->sources_bad & src[k].bit)
                aip__summary_note(s, "pid %lld: host_sys could not read %s; those figures are missing", pid,
                     src[k].what);
        if (h->sources_bad & AIP_HOSTSRC_IFACE_GONE)
            aip__summary_note(s, "pid %lld: a network interface disappeared while sampling; its figures end "
                    "there", pid);
        if (h->sources_bad & AIP_HOSTSRC_THREADS_CUT)
            aip__summary_note(s, "pid %lld: more threads than the host sampler follows one by one: per-core "
                    "CPU figures leave the rest out", pid);
        if ((h->sources_bad & AIP_HOSTSRC_NO_RDMA) && in->sys_io)
            aip__summary_note(s, "sys_io: no RDMA device here (no /sys/class/infiniband): no RoCE figures");
        if (h->n_disk && !h->disk_has_usage)
            aip__summary_note(s, "Disk Usage(%%) is N/A: the kernel's delay accounting is off "
                    "(kernel.task_delayacct); read/write rates are recorded");
    }
    unsigned sampled = in->host_sys & (AIP_HOST_SYS_CPU | AIP_HOST_SYS_MEM | AIP_HOST_SYS_DISK |
                                       AIP_HOST_SYS_NETWORK);
    if ((sampled || in->sys_io) && !any)
        aip__summary_note(s, "host_sys / sys_io requested, but no host samples were recorded (the trace "
                "ended before the first one, or the sampler could not start: see the log)");
}

aip_status aip__summary_host_build(aip__summary_data *s)
{
    const aip__model *m = s->m;
    s->host = calloc(m->n_procs ? m->n_procs : 1, sizeof *s->host);
    if (!s->host)
        return AIP_ERR_NOMEM;
    s->n_host = m->n_procs;
    for (size_t i = 0; i < m->n_procs; i++) {
        aip_status st = aip__host_derive(&m->procs[i], &s->host[i]);
        if (st)
            return st;
    }
    notes(s);
    return AIP_OK;
}

void aip__summary_host_free(aip__summary_data *s)
{
    for (size_t i = 0; i < s->n_host; i++)
        aip__host_series_free(&s->host[i]);
    free(s->host);
    s->host = NULL;
    s->n_host = 0;
}

/* Figures from a hostile file can be anything: byte counts for
 * aip__summary_put_bytes, clamped instead of overflowing. */
static int64_t bytes_d(double v)
{
    if (!(v > 0))
        return 0;
    return v >= 9.2e18 ? INT64_MAX : (int64_t)v;
}

static int64_t bytes_u(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (int64_t)v; }

static double peak_cpu(const aip__host_series *h)
{
    double p = 0;
    for (size_t i = 0; i < h->n_cpu; i++)
        if (h->cpu[i].user_pct + h->cpu[i].sys_pct > p)
            p = h->cpu[i].user_pct + h->cpu[i].sys_pct;
    return p;
}

static int64_t span_ns(const aip__host_series *h)
{
    int64_t t = 0;
    for (size_t i = 0; i < h->n_cpu; i++)
        t += h->cpu[i].dt;
    return t;
}

/* Per interface: bytes received and sent over the trace (its intervals). */
static void if_lines(const aip__summary_data *s, const aip__host_series *h, size_t pi,
                     aip__out *o, const char *li, const char *eli)
{
    const aip__process *p = &s->m->procs[pi];
    for (size_t i = 0; i < h->n_net_if; i++) {
        uint32_t name = h->net_if[i].name;
        int first = 1;
        for (size_t k = 0; k < i && first; k++)
            first = h->net_if[k].name != name;
        if (!first)
            continue;
        double rx = 0, tx = 0;
        for (size_t k = i; k < h->n_net_if; k++)
            if (h->net_if[k].name == name) {
                rx += h->net_if[k].rx_byte_rate * (double)h->net_if[k].dt / 1e9;
                tx += h->net_if[k].tx_byte_rate * (double)h->net_if[k].dt / 1e9;
            }
        size_t len;
        const char *t = aip__model_str(p, name, &len);
        aip__out_printf(o, "%s  ", li);
        if (*li == '<')
            aip__out_html(o, t, len);
        else
            aip__summary_put_term(o, t, len, 32);
        AIP_OUT_LIT(o, ": received ");
        aip__summary_put_bytes(o, bytes_d(rx));
        AIP_OUT_LIT(o, ", sent ");
        aip__summary_put_bytes(o, bytes_d(tx));
        aip__out_printf(o, "%s", eli);
    }
}

static void host_lines(const aip__summary_data *s, const aip__host_series *h, size_t pi,
                       aip__out *o, int html)
{
    const char *li = html ? "<li>" : "  ", *eli = html ? "</li>\n" : "\n";
    if (h->n_cpu) {
        int64_t span = span_ns(h);
        aip__out_printf(o, "%sCPU: %.3f ms (user %.3f ms, system %.3f ms) in %.3f s: average "
                           "%.1f%%, peak %.1f%% of one core%s",
                        li, (double)h->cpu_ns / 1e6, (double)h->cpu_user_ns / 1e6,
                        (double)h->cpu_sys_ns / 1e6, (double)span / 1e9,
                        span ? 100.0 * (double)h->cpu_ns / (double)span : 0.0, peak_cpu(h), eli);
        for (size_t i = 0; i < h->n_threads && i < 5; i++)
            aip__out_printf(o, "%s  thread %llu: %.0f ms%s", li,
                            (unsigned long long)h->threads[i].tid,
                            (double)h->threads[i].cpu_ns / 1e6, eli);
    }
    if (h->n_mem) {
        aip__out_printf(o, "%sMemory: RSS ", li);
        aip__summary_put_bytes(o, bytes_u(h->mem[0].rss));
        AIP_OUT_LIT(o, " at start, peak ");
        aip__summary_put_bytes(o, bytes_u(h->rss_peak));
        AIP_OUT_LIT(o, ", ");
        aip__summary_put_bytes(o, bytes_u(h->mem[h->n_mem - 1].rss));
        AIP_OUT_LIT(o, " at end; VMS peak ");
        aip__summary_put_bytes(o, bytes_u(h->vms_peak));
        aip__out_printf(o, "; page faults: %llu minor, %llu major%s",
                        (unsigned long long)h->minflt, (unsigned long long)h->majflt, eli);
    }
    if (h->n_disk) {
        aip__out_printf(o, "%sDisk: storage read ", li);
        aip__summary_put_bytes(o, bytes_u(h->read_bytes));
        AIP_OUT_LIT(o, ", written ");
        aip__summary_put_bytes(o, bytes_u(h->write_bytes));
        AIP_OUT_LIT(o, "; read() ");
        aip__summary_put_bytes(o, bytes_u(h->rchar));
        aip__out_printf(o, " in %llu calls, write() ", (unsigned long long)h->syscr);
        aip__summary_put_bytes(o, bytes_u(h->wchar));
        aip__out_printf(o, " in %llu calls%s", (unsigned long long)h->syscw, eli);
    }
    if (h->n_net) {
        double sum = 0, peak = 0;
        int64_t t = 0;
        for (size_t i = 0; i < h->n_net; i++) {
            sum += h->net[i].speed * (double)h->net[i].dt / 1e9;
            t += h->net[i].dt;
            peak = h->net[i].speed > peak ? h->net[i].speed : peak;
        }
        aip__out_printf(o, "%sNetwork (all interfaces but lo): ", li);
        aip__summary_put_bytes(o, bytes_d(sum));
        AIP_OUT_LIT(o, " received and sent, average ");
        aip__summary_put_bytes(o, t ? bytes_d(sum / ((double)t / 1e9)) : 0);
        AIP_OUT_LIT(o, "/s, peak ");
        aip__summary_put_bytes(o, bytes_d(peak));
        aip__out_printf(o, "/s%s", eli);
        if_lines(s, h, pi, o, li, eli);
    }
    if (h->n_nic)
        aip__out_printf(o, "%sNIC (sys_io): %zu interval(s) of the interfaces, nic.csv%s", li,
                        h->n_nic, eli);
    if (h->has_status)
        aip__out_printf(o, "%sSampler: %llu samples every %.0f ms, its own CPU %.3f ms (%.2f%% "
                           "of the process's)%s",
                        li, (unsigned long long)h->samples, (double)h->period_ns / 1e6,
                        (double)h->sampler_cpu_ns / 1e6,
                        h->cpu_ns ? 100.0 * (double)h->sampler_cpu_ns / (double)h->cpu_ns : 0.0,
                        eli);
    (void)s;
}

void aip__summary_host_text(const aip__summary_data *s, aip__out *o)
{
    for (size_t i = 0; i < s->n_host; i++) {
        if (!s->m->procs[i].host.n)
            continue;
        aip__out_printf(o, "\nHost system, pid %lld (host_sys / sys_io):\n",
                        (long long)s->m->procs[i].pid);
        host_lines(s, &s->host[i], i, o, 0);
    }
}

/* At most CHART_POINTS points: the largest value of each run of samples
 * (a peak must not vanish from the curve). */
static void chart(aip__out *o, const char *id, const char *y_label, const int64_t *ts,
                  const double *const *vals, const char *const *names,
                  const char *const *colors, size_t layers, size_t n)
{
    size_t step = n / CHART_POINTS + 1, k = 0;
    double *x = malloc((n / step + 2) * sizeof *x);
    double *top = malloc((n / step + 2) * layers * sizeof *top);
    const double *tops[4];
    if (!x || !top || layers > 4) {
        free(x);
        free(top);
        return;
    }
    for (size_t i = 0; i < n; i += step, k++) {
        x[k] = (double)(ts[i] - ts[0]) / 1e6;
        double cum = 0;
        for (size_t l = 0; l < layers; l++) {
            double mx = 0;
            for (size_t j = i; j < i + step && j < n; j++)
                mx = vals[l][j] > mx ? vals[l][j] : mx;
            cum += mx;
            top[l * (n / step + 2) + k] = cum;
        }
    }
    for (size_t l = 0; l < layers; l++)
        tops[l] = top + l * (n / step + 2);
    aip__svg_area c = {900, 260, id, "Time (ms)", y_label, x, k, tops, names, colors, layers};
    aip__svg_area_chart(o, &c);
    free(x);
    free(top);
}

static void curves(aip__out *o, const aip__host_series *h, size_t pi)
{
    char id[48];
    if (h->n_cpu > 1) {
        int64_t *ts = malloc(h->n_cpu * sizeof *ts);
        double *u = malloc(h->n_cpu * sizeof *u), *sy = malloc(h->n_cpu * sizeof *sy);
        if (ts && u && sy) {
            for (size_t i = 0; i < h->n_cpu; i++)
                ts[i] = h->cpu[i].ts, u[i] = h->cpu[i].user_pct, sy[i] = h->cpu[i].sys_pct;
            const double *v[2] = {u, sy};
            static const char *const names[2] = {"User", "System"}, *colors[2] = {"steelblue",
                                                                                 "indianred"};
            snprintf(id, sizeof id, "host-cpu-chart-%zu", pi);
            chart(o, id, "CPU (% of one core)", ts, v, names, colors, 2, h->n_cpu);
        }
        free(ts);
        free(u);
        free(sy);
    }
    if (h->n_mem > 1) {
        int64_t *ts = malloc(h->n_mem * sizeof *ts);
        double *r = malloc(h->n_mem * sizeof *r);
        if (ts && r) {
            for (size_t i = 0; i < h->n_mem; i++)
                ts[i] = h->mem[i].ts, r[i] = (double)h->mem[i].rss / 1048576.0;
            const double *v[1] = {r};
            static const char *const names[1] = {"RSS"}, *colors[1] = {"seagreen"};
            snprintf(id, sizeof id, "host-rss-chart-%zu", pi);
            chart(o, id, "RSS (MiB)", ts, v, names, colors, 1, h->n_mem);
        }
        free(ts);
        free(r);
    }
}

void aip__summary_host_html(const aip__summary_data *s, aip__out *o)
{
    for (size_t i = 0; i < s->n_host; i++) {
        if (!s->m->procs[i].host.n)
            continue;
        aip__out_printf(o, "<h2>Host system, pid %lld</h2>\n<ul id=\"host-%zu\">\n",
                        (long long)s->m->procs[i].pid, i);
        host_lines(s, &s->host[i], i, o, 1);
        AIP_OUT_LIT(o, "</ul>\n");
        curves(o, &s->host[i], i);
    }
}
