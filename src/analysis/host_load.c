/*
 * host_load.c — host system samples into the model (raw format 1.5
 * HOST_SAMPLE) and the series the outputs print (model_host.h).
 *
 * Loading keeps the records as they are (model_load.c calls
 * aip__host_decode once the size was checked; tick_convert.c converts the
 * times).  aip__host_derive() turns pairs of consecutive samples of one
 * source into rates: the process's CPU (precise CPU time from
 * CLOCK_PROCESS_CPUTIME_ID, split into user / system in the ratio the
 * kernel's tick counts give), each core's share used by the process's
 * threads, memory gauges, disk and network rates.  Records of an unknown
 * `what` are counted in host_bad_records and left out; so is an interval
 * whose time does not advance.
 */
#include "analysis_int.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

aip_status aip__host_decode(aip__process *p, const uint8_t *r, const aip__rec_header *h)
{
    aip__rec_host_sample s;
    memcpy(&s, r, sizeof s);
    if (s.what < AIP_HOST_PROC_CPU || s.what > AIP_HOST_STATUS) {
        p->host_bad_records++; /* a newer writer's kind, or damage */
        return AIP_OK;
    }
    aip__host_sample v = {.ts = (int64_t)s.ts, .name = h->name <= AIP_NAME_ID_MAX ? h->name : 0,
                          .index = s.index, .what = s.what, .flags = h->flags};
    memcpy(v.v, s.v, sizeof v.v);
    AIP_VEC_PUSH(p->host, v);
    return AIP_OK;
}

void aip__host_series_free(aip__host_series *s)
{
    free(s->cpu);
    free(s->core);
    free(s->mem);
    free(s->disk);
    free(s->net);
    free(s->net_if);
    free(s->nic);
    free(s->roce);
    free(s->threads);
    memset(s, 0, sizeof *s);
}

static int cmp_ts(const void *a, const void *b)
{
    const aip__host_sample *x = *(const aip__host_sample *const *)a,
                           *y = *(const aip__host_sample *const *)b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The samples of one kind, by time (the sampler writes them in order, but
 * a file may hold several traces' worth or be damaged). */
static const aip__host_sample **of_kind(const aip__process *p, uint8_t what, uint8_t flag,
                                        size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < p->host.n; i++)
        k += p->host.v[i].what == what && (!flag || (p->host.v[i].flags & flag));
    *n = k;
    const aip__host_sample **v = malloc((k ? k : 1) * sizeof *v);
    if (!v)
        return NULL;
    k = 0;
    for (size_t i = 0; i < p->host.n; i++)
        if (p->host.v[i].what == what && (!flag || (p->host.v[i].flags & flag)))
            v[k++] = &p->host.v[i];
    qsort(v, k, sizeof *v, cmp_ts);
    return v;
}

static uint64_t d(uint64_t b, uint64_t a) { return b >= a ? b - a : 0; }

static void derive_cpu(aip__host_series *s, const aip__host_sample **v, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        const aip__host_sample *a = v[i], *b = v[i + 1];
        int64_t dt = b->ts - a->ts;
        if (dt <= 0)
            continue;
        uint64_t du = d(b->v[0], a->v[0]), ds = d(b->v[1], a->v[1]);
        uint64_t total = a->flags & b->flags & AIP_HOSTF_PRECISE ? d(b->v[2], a->v[2]) : du + ds;
        double user_share = du + ds ? (double)du / (double)(du + ds) : 1.0;
        double pct = 100.0 * (double)total / (double)dt;
        uint64_t cpus = b->v[4] ? b->v[4] : 1;
        s->cpu[s->n_cpu++] = (aip__host_cpu){a->ts, dt, pct * user_share, pct * (1 - user_share),
                                             pct / (double)cpus, total};
        s->cpu_ns += total;
        double user = (double)total * user_share; /* < 2^64 but for rounding: clamp */
        s->cpu_user_ns += user >= 1.8e19 ? total : (uint64_t)user;
    }
    s->cpu_sys_ns = s->cpu_ns - s->cpu_user_ns;
}

/* A thread's CPU time between two of its samples: the scheduler's run time
 * when both have it, else the tick counts. */
static uint64_t thread_delta(const aip__host_sample *a, const aip__host_sample *b)
{
    if (a->flags & b->flags & AIP_HOSTF_PRECISE)
        return d(b->v[3], a->v[3]);
    return d(b->v[0], a->v[0]) + d(b->v[1], a->v[1]);
}

/* Per core: each thread's CPU time in an interval goes to the core it ran
 * on at the interval's end.  Samples of one instant share a ts. */
static aip_status derive_cores(aip__host_series *s, const aip__host_sample **v, size_t n)
{
    size_t cap = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && v[j]->ts == v[i]->ts)
            j++;
        size_t k = j; /* the next instant: [j, k) */
        while (k < n && v[k]->ts == v[j]->ts)
            k++;
        if (j == n)
            break;
        int64_t dt = v[j]->ts - v[i]->ts;
        double busy[1024] = {0};
        uint32_t top = 0;
        for (size_t b = j; b < k; b++) {
            /* The task directory lists threads in the same order each time:
             * try the same place in the previous instant first (linear in
             * the threads rather than quadratic). */
            const aip__host_sample *a = NULL;
            size_t same = i + (b - j);
            if (same < j && v[same]->index == v[b]->index)
                a = v[same];
            for (size_t x = i; x < j && !a; x++)
                if (v[x]->index == v[b]->index)
                    a = v[x];
            uint64_t core = v[b]->v[2];
            if (!a || core >= 1024)
                continue;
            busy[core] += (double)thread_delta(a, v[b]);
            if (core + 1 > top)
                top = (uint32_t)core + 1;
        }
        for (uint32_t c = 0; c < top; c++) {
            if (busy[c] <= 0)
                continue;
            if (s->n_core == cap) {
                cap = cap ? cap * 2 : 64;
                aip__host_core *g = realloc(s->core, cap * sizeof *g);
                if (!g)
                    return aip__fail(AIP_ERR_NOMEM, "no memory for the per-core CPU series");
                s->core = g;
            }
            double pct = 100.0 * busy[c] / (double)dt;
            s->core[s->n_core++] = (aip__host_core){v[i]->ts, c, pct > 100 ? 100 : pct};
        }
        i = j;
    }
    /* Per thread: its CPU time from its first sample to its last. */
    for (size_t i = 0; i < n; i++) {
        size_t t = 0;
        while (t < s->n_threads && s->threads[t].tid != v[i]->index)
            t++;
        if (t < s->n_threads)
            continue;
        const aip__host_sample *last = v[i];
        for (size_t j = i + 1; j < n; j++)
            if (v[j]->index == v[i]->index)
                last = v[j];
        void *g = realloc(s->threads, (t + 1) * sizeof *s->threads);
        if (!g)
            return aip__fail(AIP_ERR_NOMEM, "no memory for the per-thread CPU totals");
        s->threads = g;
        s->threads[t] = (struct aip__host_thread){v[i]->index, thread_delta(v[i], last)};
        s->n_threads++;
    }
    for (size_t a = 1; a < s->n_threads; a++) /* few threads: insertion sort, most first */
        for (size_t b = a; b > 0 && s->threads[b].cpu_ns > s->threads[b - 1].cpu_ns; b--) {
            struct aip__host_thread t = s->threads[b];
            s->threads[b] = s->threads[b - 1];
            s->threads[b - 1] = t;
        }
    return AIP_OK;
}

static void derive_mem(aip__host_series *s, const aip__host_sample **v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t *x = v[i]->v;
        s->mem[s->n_mem++] = (aip__host_mem){v[i]->ts, x[0], x[1], x[2], x[3], x[4], x[5],
                                             x[5] ? 100.0 * (double)x[0] / (double)x[5] : -1};
        s->rss_peak = x[0] > s->rss_peak ? x[0] : s->rss_peak;
        s->vms_peak = x[1] > s->vms_peak ? x[1] : s->vms_peak;
    }
    if (n > 1) {
        s->minflt = d(v[n - 1]->v[3], v[0]->v[3]);
        s->majflt = d(v[n - 1]->v[4], v[0]->v[4]);
    }
}

static void derive_disk(aip__host_series *s, const aip__host_sample **v, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        const aip__host_sample *a = v[i], *b = v[i + 1];
        int64_t dt = b->ts - a->ts;
        if (dt <= 0)
            continue;
        double sec = (double)dt / 1e9;
        int usage = (a->flags & b->flags & AIP_HOSTF_DELAYACCT) != 0;
        s->disk_has_usage |= usage;
        double u = usage ? 100.0 * (double)d(b->v[7], a->v[7]) / (double)dt : -1;
        s->disk[s->n_disk++] = (aip__host_disk){
            a->ts, dt, (double)d(b->v[0], a->v[0]) / sec, (double)d(b->v[1], a->v[1]) / sec,
            (double)d(b->v[2], a->v[2]) / sec, (double)d(b->v[3], a->v[3]) / sec,
            (double)d(b->v[4], a->v[4]) / sec, (double)d(b->v[5], a->v[5]) / sec,
            u > 100 ? 100 : u};
    }
    if (n > 1) {
        const uint64_t *a = v[0]->v, *b = v[n - 1]->v;
        s->read_bytes = d(b[0], a[0]), s->write_bytes = d(b[1], a[1]);
        s->rchar = d(b[2], a[2]), s->wchar = d(b[3], a[3]);
        s->syscr = d(b[4], a[4]), s->syscw = d(b[5], a[5]);
    }
}

static int is_loopback(const aip__process *p, uint32_t name)
{
    size_t len;
    const char *t = aip__model_str(p, name, &len);
    return len == 2 && !memcmp(t, "lo", 2);
}

/* The samples of interface `name` at instant index range [i, j). */
static const aip__host_sample *at(const aip__host_sample **v, size_t i, size_t j, uint32_t name)
{
    for (size_t x = i; x < j; x++)
        if (v[x]->name == name)
            return v[x];
    return NULL;
}

static void derive_net(const aip__process *p, aip__host_series *s, const aip__host_sample **v,
                       size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i, k;
        while (j < n && v[j]->ts == v[i]->ts)
            j++;
        if (j == n)
            break;
        for (k = j; k < n && v[k]->ts == v[j]->ts; k++)
            ;
        int64_t dt = v[j]->ts - v[i]->ts;
        double bytes = 0, cap = 0;
        int any = 0;
        for (size_t b = j; b < k; b++) {
            const aip__host_sample *a = at(v, i, j, v[b]->name);
            if (!a || is_loopback(p, v[b]->name) || v[b]->v[0] < a->v[0] || v[b]->v[4] < a->v[4])
                continue;
            any = 1;
            bytes += (double)(v[b]->v[0] - a->v[0] + v[b]->v[4] - a->v[4]);
            if (v[b]->index != UINT32_MAX)
                cap += (double)v[b]->index * 125000.0; /* Mb/s -> bytes/s */
        }
        if (any) {
            double speed = bytes / ((double)dt / 1e9);
            s->net[s->n_net++] = (aip__host_net){v[i]->ts, dt, speed,
                                                 cap > 0 ? 100.0 * speed / cap : -1};
        }
        i = j;
    }
}

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

/* NIC / RoCE rows: consecutive samples of each interface. */
static aip_status derive_ports(aip__host_series *s, const aip__host_sample **v, size_t n,
                               aip__host_nic **out, size_t *n_out)
{
    uint32_t names[256];
    size_t n_names = 0;
    aip__host_nic *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the NIC rows");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const aip__host_sample *a = v[i], *b = NULL;
        for (size_t j = i + 1; j < n && !b; j++)
            if (v[j]->name == a->name)
                b = v[j];
        uint32_t f = 0;
        while (f < n_names && names[f] != a->name)
            f++;
        if (f == n_names && n_names < 256)
            names[n_names++] = a->name;
        if (!b || b->ts <= a->ts)
            continue;
        const uint64_t *x = a->v, *y = b->v;
        int reset = 0;
        for (int q = 0; q < 8; q++)
            reset |= y[q] < x[q];
        if (reset)
            continue;
        double sec = (double)(b->ts - a->ts) / 1e9;
        uint64_t rxp = y[1] - x[1], txp = y[5] - x[5];
        rows[k++] = (aip__host_nic){
            a->ts, b->ts - a->ts, f, a->name,
            a->index == UINT32_MAX ? -1 : (int64_t)a->index * 125000,
            (double)rxp / sec, (double)(y[0] - x[0]) / sec, (double)txp / sec,
            (double)(y[4] - x[4]) / sec,
            pct(y[2] - x[2], rxp), pct(y[3] - x[3], rxp), pct(y[6] - x[6], txp),
            pct(y[7] - x[7], txp), x[1], x[0], x[2], x[3], x[5], x[4], x[6], x[7]};
    }
    (void)s;
    *out = rows;
    *n_out = k;
    return AIP_OK;
}

/* One source's samples, by time, handed to its deriver. */
typedef aip_status (*deriver)(const aip__process *p, aip__host_series *s,
                              const aip__host_sample **v, size_t n);

static aip_status grow_for(void **arr, size_t n, size_t elem)
{
    *arr = malloc((n ? n : 1) * elem);
    return *arr ? AIP_OK : AIP_ERR_NOMEM;
}

static aip_status d_cpu(const aip__process *p, aip__host_series *s, const aip__host_sample **v,
                        size_t n)
{
    (void)p;
    aip_status st = grow_for((void **)&s->cpu, n, sizeof *s->cpu);
    if (!st)
        derive_cpu(s, v, n);
    return st;
}

static aip_status d_cores(const aip__process *p, aip__host_series *s,
                          const aip__host_sample **v, size_t n)
{
    (void)p;
    return derive_cores(s, v, n);
}

static aip_status d_mem(const aip__process *p, aip__host_series *s, const aip__host_sample **v,
                        size_t n)
{
    (void)p;
    aip_status st = grow_for((void **)&s->mem, n, sizeof *s->mem);
    if (!st)
        derive_mem(s, v, n);
    return st;
}

static aip_status d_disk(const aip__process *p, aip__host_series *s, const aip__host_sample **v,
                         size_t n)
{
    (void)p;
    aip_status st = grow_for((void **)&s->disk, n, sizeof *s->disk);
    if (!st)
        derive_disk(s, v, n);
    return st;
}

static aip_status d_net(const aip__process *p, aip__host_series *s, const aip__host_sample **v,
                        size_t n)
{
    aip_status st = grow_for((void **)&s->net, n, sizeof *s->net);
    if (!st)
        derive_net(p, s, v, n);
    return st;
}

static aip_status d_net_if(const aip__process *p, aip__host_series *s,
                           const aip__host_sample **v, size_t n)
{
    (void)p;
    return derive_ports(s, v, n, &s->net_if, &s->n_net_if);
}

static aip_status d_nic(const aip__process *p, aip__host_series *s, const aip__host_sample **v,
                        size_t n)
{
    (void)p;
    return derive_ports(s, v, n, &s->nic, &s->n_nic);
}

static aip_status d_roce(const aip__process *p, aip__host_series *s,
                         const aip__host_sample **v, size_t n)
{
    (void)p;
    return derive_ports(s, v, n, &s->roce, &s->n_roce);
}

aip_status aip__host_derive(const aip__process *p, aip__host_series *s)
{
    static const struct { uint8_t what, flag; deriver fn; } steps[] = {
        {AIP_HOST_PROC_CPU, 0, d_cpu},      {AIP_HOST_THREAD_CPU, 0, d_cores},
        {AIP_HOST_MEM, 0, d_mem},           {AIP_HOST_DISK, 0, d_disk},
        {AIP_HOST_NET, AIP_HOSTF_NETWORK, d_net}, {AIP_HOST_NET, AIP_HOSTF_NETWORK, d_net_if},
        {AIP_HOST_NET, AIP_HOSTF_NIC, d_nic},
        {AIP_HOST_ROCE, 0, d_roce}};
    memset(s, 0, sizeof *s);
    if (!p->host.n)
        return AIP_OK;
    aip_status st = AIP_OK;
    for (size_t k = 0; k < sizeof steps / sizeof steps[0] && !st; k++) {
        size_t n;
        const aip__host_sample **v = of_kind(p, steps[k].what, steps[k].flag, &n);
        st = v ? steps[k].fn(p, s, v, n) : AIP_ERR_NOMEM;
        free(v);
    }
    for (size_t i = 0; i < p->host.n; i++) { /* the last STATUS holds */
        const aip__host_sample *x = &p->host.v[i];
        if (x->what != AIP_HOST_STATUS)
            continue;
        s->has_status = 1;
        s->samples = x->v[0], s->missed = x->v[1], s->max_lag_ns = x->v[2];
        s->sampler_cpu_ns = x->v[3], s->sources_bad = x->v[4], s->period_ns = x->v[5];
    }
    if (st) {
        aip__host_series_free(s);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the host system series");
    }
    return AIP_OK;
}
