/*
 * advise_host.c — the rules of `aiprof advise` that the host-only model
 * supports (docs/ADVISE.md): garbage collection, data loading, host waits
 * on the device (synchronisation points), blocking OS calls on the
 * training thread, and the first / last step inflated by the profiler's
 * own start and stop.  Each adds at most one finding.
 */
#include "insight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_training_thread(const aip__process *p, const aip__thread *t, const uint8_t *is_step)
{
    for (size_t i = 0; i < t->n_spans; i++)
        if (t->spans[i].kind == AIP_SPAN_ANNOTATION && t->spans[i].name < p->strings.n_ent &&
            is_step[t->spans[i].name])
            return 1;
    return 0;
}

/* The training threads of p, as flags per thread: those that hold the
 * ProfilerStep#N annotations; without steps, the thread with the most
 * top-level op time.  NULL on no memory. */
static uint8_t *training_threads(const aip__process *p)
{
    uint8_t *flag = calloc(p->n_threads + 1, 1);
    uint8_t *is_step = aip__step_name_flags(p);
    if (!flag || !is_step) {
        free(flag);
        free(is_step);
        return NULL;
    }
    int any = 0;
    for (size_t ti = 0; ti < p->n_threads; ti++)
        any |= flag[ti] = (uint8_t)is_training_thread(p, &p->threads[ti], is_step);
    free(is_step);
    if (!any) {
        int64_t best = -1;
        size_t bi = 0;
        for (size_t ti = 0; ti < p->n_threads; ti++) {
            int64_t busy = 0;
            const aip__thread *t = &p->threads[ti];
            for (size_t i = 0; i < t->n_spans; i++)
                if (t->spans[i].top_op)
                    busy = aip__sat_add(busy, t->spans[i].end - t->spans[i].start);
            if (busy > best) {
                best = busy;
                bi = ti;
            }
        }
        if (p->n_threads)
            flag[bi] = 1;
    }
    return flag;
}

aip_status aip__rule_gc(aip__advise_ctx *c)
{
    int64_t total = 0, worst = 0;
    uint64_t n = 0;
    aip__finding tmp;
    memset(&tmp, 0, sizeof tmp);
    for (size_t pi = 0; pi < c->m->n_procs; pi++) {
        const aip__process *p = &c->m->procs[pi];
        for (size_t i = 0; i < p->gc.n; i++) {
            int64_t in = aip__in_steps(c, p->gc.v[i].start, p->gc.v[i].end);
            if (in <= 0)
                continue;
            n++;
            total = aip__sat_add(total, in);
            int64_t d = p->gc.v[i].end - p->gc.v[i].start;
            worst = d > worst ? d : worst;
            aip__where_keep(&tmp, p->gc.v[i].start, d);
        }
    }
    if (!n)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "gc");
    if (!f)
        return AIP_ERR_NOMEM;
    memcpy(f->where_ns, tmp.where_ns, sizeof f->where_ns);
    memcpy(f->where_dur, tmp.where_dur, sizeof f->where_dur);
    f->n_where = tmp.n_where;
    aip__advise_stake(c, f, total);
    snprintf(f->title, sizeof f->title, "Python garbage collection takes %.1f%% of the step",
             100 * f->share);
    aip__evidence_add(f, "%llu GC passes inside %zu steps, %.3f ms in all (%.3f ms per step); "
                      "worst pause %.3f ms", (unsigned long long)n, c->n_steps, total / 1e6,
                      f->ns_per_step / 1e6, worst / 1e6);
    f->advice = "Call gc.freeze() after building the model and data, raise gc.set_threshold(), "
                "or disable GC in the loop and run gc.collect() between steps; avoid creating "
                "many short-lived Python objects per step.";
    return AIP_OK;
}

/* Spans of the chosen kinds whose name passes `match`, counting only the
 * outermost of nested matches (aten::item encloses _local_scalar_dense)
 * and only their part inside the steps; the names that took most time go
 * into the evidence. */
typedef int (*name_match_fn)(const char *s, size_t n);

typedef struct span_sum {
    int64_t total;
    uint64_t count;
    const char *top_name;
    size_t top_len;
    int64_t top_ns;
    aip__finding where;
} span_sum;

static void sum_spans(const aip__advise_ctx *c, unsigned kinds, name_match_fn match, span_sum *r,
                      int training_only)
{
    memset(r, 0, sizeof *r);
    for (size_t pi = 0; pi < c->m->n_procs; pi++) {
        const aip__process *p = &c->m->procs[pi];
        uint8_t *train = training_only ? training_threads(p) : NULL;
        for (size_t ti = 0; ti < p->n_threads; ti++) {
            if (train && !train[ti])
                continue;
            const aip__thread *t = &p->threads[ti];
            int64_t covered = INT64_MIN;
            for (size_t i = 0; i < t->n_spans; i++) {
                const aip__span *s = &t->spans[i];
                if (!(kinds & (1u << s->kind)) || s->start < covered)
                    continue;
                size_t len;
                const char *name = aip__model_str(p, s->name, &len);
                if (!match(name, len))
                    continue;
                covered = s->end;
                int64_t in = aip__in_steps(c, s->start, s->end);
                if (in <= 0)
                    continue;
                r->count++;
                r->total = aip__sat_add(r->total, in);
                aip__where_keep(&r->where, s->start, s->end - s->start);
                if (in > r->top_ns) {
                    r->top_ns = in;
                    r->top_name = name;
                    r->top_len = len;
                }
            }
        }
        free(train);
    }
}

static void copy_where(aip__finding *f, const aip__finding *w)
{
    memcpy(f->where_ns, w->where_ns, sizeof f->where_ns);
    memcpy(f->where_dur, w->where_dur, sizeof f->where_dur);
    f->n_where = w->n_where;
}

static int has_ci(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!strncasecmp(s + i, needle, k))
            return 1;
    return 0;
}

static int is_dataloader(const char *s, size_t n) { return has_ci(s, n, "dataloader"); }

aip_status aip__rule_dataloader(aip__advise_ctx *c)
{
    span_sum r;
    sum_spans(c, 1u << AIP_SPAN_OP | 1u << AIP_SPAN_ANNOTATION | 1u << AIP_SPAN_RANGE,
              is_dataloader, &r, 0);
    if (!r.count)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "dataloader");
    if (!f)
        return AIP_ERR_NOMEM;
    copy_where(f, &r.where);
    aip__advise_stake(c, f, r.total);
    snprintf(f->title, sizeof f->title, "Data loading takes %.1f%% of the step", 100 * f->share);
    aip__evidence_add(f, "%llu data-loading ranges inside %zu steps, %.3f ms per step "
                      "(mean step %.3f ms); most time in \"%.*s\"",
                      (unsigned long long)r.count, c->n_steps, f->ns_per_step / 1e6,
                      c->mean_step_ns / 1e6, (int)(r.top_len > 200 ? 200 : r.top_len),
                      r.top_name ? r.top_name : "");
    f->advice = "Load in background workers (DataLoader num_workers > 0, persistent_workers, "
                "prefetch_factor), pin_memory for device copies, and move decoding / "
                "augmentation out of the training loop.";
    return AIP_OK;
}

/* Calls where the host waits for the device (docs/ADVISE.md "sync"). */
static const char *const sync_names[] = {
    "aten::item", "aten::_local_scalar_dense", "aten::nonzero", "cudaStreamSynchronize",
    "cudaDeviceSynchronize", "cudaEventSynchronize", "clFinish", "clWaitForEvents", NULL};

static int is_sync(const char *s, size_t n)
{
    for (const char *const *k = sync_names; *k; k++)
        if (strlen(*k) == n && !memcmp(*k, s, n))
            return 1;
    return 0;
}

aip_status aip__rule_sync(aip__advise_ctx *c)
{
    span_sum r;
    sum_spans(c, 1u << AIP_SPAN_OP | 1u << AIP_SPAN_ANNOTATION, is_sync, &r, 0);
    /* the device runtime's own calls (clFinish as recorded by the OpenCL
     * back end), not nested in an op already counted */
    const char *api_top = NULL;
    size_t api_len = 0;
    int64_t api_top_ns = 0;
    for (size_t pi = 0; pi < c->m->n_procs; pi++) {
        const aip__process *p = &c->m->procs[pi];
        for (size_t i = 0; i < p->dev_api.n; i++) {
            const aip__device_call *d = &p->dev_api.v[i];
            size_t len;
            const char *name = aip__model_str(p, d->name, &len);
            if (!is_sync(name, len))
                continue;
            if (d->parent_span >= 0 && d->parent_thread < p->n_threads) {
                const aip__span *ps = &p->threads[d->parent_thread].spans[d->parent_span];
                size_t pl;
                const char *pn = aip__model_str(p, ps->name, &pl);
                if (is_sync(pn, pl))
                    continue; /* counted with its op */
            }
            int64_t in = aip__in_steps(c, d->start, d->end);
            if (in <= 0)
                continue;
            r.count++;
            r.total = aip__sat_add(r.total, in);
            aip__where_keep(&r.where, d->start, d->end - d->start);
            if (in > api_top_ns) {
                api_top_ns = in;
                api_top = name;
                api_len = len;
            }
        }
    }
    if (api_top_ns > r.top_ns) {
        r.top_name = api_top;
        r.top_len = api_len;
    }
    if (!r.count)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "sync");
    if (!f)
        return AIP_ERR_NOMEM;
    copy_where(f, &r.where);
    aip__advise_stake(c, f, r.total);
    snprintf(f->title, sizeof f->title,
             "The host waits for the device (synchronisation) %.1f%% of the step", 100 * f->share);
    aip__evidence_add(f, "%llu synchronising calls inside %zu steps (%.1f per step), %.3f ms "
                      "per step; most time in \"%.*s\"", (unsigned long long)r.count,
                      c->n_steps, (double)r.count / (double)c->n_steps, f->ns_per_step / 1e6,
                      (int)(r.top_len > 200 ? 200 : r.top_len), r.top_name ? r.top_name : "");
    f->advice = "Avoid .item(), .cpu(), .tolist(), printing tensors or data-dependent shapes "
                "(nonzero) inside the step; accumulate metrics on the device and read them "
                "every N steps; replace clFinish / stream synchronisation with events.";
    return AIP_OK;
}

/* OSRT calls summed per function (the recorded functions are a fixed list
 * of a few dozen: a linear search is enough). */
typedef struct osrt_fn {
    const char *name;
    size_t len;
    uint64_t count;
    int64_t total;
} osrt_fn;

static void osrt_fn_add(osrt_fn *fn, size_t *n, size_t cap, const char *name, size_t len,
                        int64_t in)
{
    size_t i = 0;
    while (i < *n && !(fn[i].len == len && !memcmp(fn[i].name, name, len)))
        i++;
    if (i == *n) {
        if (*n == cap)
            return; /* more functions than OSRT records: cannot happen, count nothing */
        fn[(*n)++] = (osrt_fn){name, len, 0, 0};
    }
    fn[i].count++;
    fn[i].total = aip__sat_add(fn[i].total, in);
}

aip_status aip__rule_osrt(aip__advise_ctx *c)
{
    int64_t total = 0;
    uint64_t n = 0;
    osrt_fn fn[64];
    size_t nfn = 0;
    aip__finding w;
    memset(&w, 0, sizeof w);
    for (size_t pi = 0; pi < c->m->n_procs; pi++) {
        const aip__process *p = &c->m->procs[pi];
        if (!p->osrt.n)
            continue;
        uint8_t *train = training_threads(p);
        if (!train)
            return AIP_ERR_NOMEM;
        for (size_t i = 0; i < p->osrt.n; i++) {
            const aip__osrt_call *o = &p->osrt.v[i];
            if (o->thread >= p->n_threads || !train[o->thread])
                continue;
            int64_t in = aip__in_steps(c, o->start, o->end);
            if (in <= 0)
                continue;
            n++;
            total = aip__sat_add(total, in);
            aip__where_keep(&w, o->start, o->end - o->start);
            size_t len;
            const char *name = aip__model_str(p, o->name, &len);
            osrt_fn_add(fn, &nfn, sizeof fn / sizeof *fn, name, len, in);
        }
        free(train);
    }
    if (!n)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "osrt");
    if (!f)
        return AIP_ERR_NOMEM;
    copy_where(f, &w);
    aip__advise_stake(c, f, total);
    snprintf(f->title, sizeof f->title,
             "Blocking OS calls on the training thread take %.1f%% of the step", 100 * f->share);
    aip__evidence_add(f, "%llu blocking calls (OSRT, at or above its recording threshold) on "
                      "the training thread inside %zu steps, %.3f ms per step; by function:",
                      (unsigned long long)n, c->n_steps, f->ns_per_step / 1e6);
    for (int k = 0; k < 3 && nfn; k++) { /* the three functions with most time */
        size_t b = 0;
        for (size_t i = 1; i < nfn; i++)
            if (fn[i].total > fn[b].total)
                b = i;
        aip__evidence_add(f, "%s \"%.*s\" %llu calls %.3f ms", k ? "," : "",
                          (int)(fn[b].len > 100 ? 100 : fn[b].len), fn[b].name,
                          (unsigned long long)fn[b].count, fn[b].total / 1e6);
        fn[b] = fn[--nfn];
    }
    f->advice = "Move file and network I/O, sleeps and lock waits off the training thread "
                "(a loader thread or process, asynchronous checkpointing); check which "
                "lock the thread waits for.";
    return AIP_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The seed's FAQ: the first step of a trace pays for the profiler's start
 * (warm caches, first-time interning), the last for its stop.  Only with
 * at least 4 steps, so that the median of the middle steps means something;
 * a step counts as inflated past 1.5 times that median. */
aip_status aip__rule_profiler_steps(aip__advise_ctx *c)
{
    if (c->n_steps < 4 || c->steps != c->m->steps)
        return AIP_OK;
    size_t k = c->n_steps - 2;
    int64_t *mid = malloc(k * sizeof *mid);
    if (!mid)
        return AIP_ERR_NOMEM;
    for (size_t i = 0; i < k; i++)
        mid[i] = c->steps[i + 1].end - c->steps[i + 1].start;
    qsort(mid, k, sizeof *mid, cmp_i64);
    int64_t med = mid[k / 2];
    free(mid);
    int64_t excess = 0;
    aip__finding w;
    memset(&w, 0, sizeof w);
    const aip__step *ends[2] = {&c->steps[0], &c->steps[c->n_steps - 1]};
    int64_t over[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        int64_t d = ends[i]->end - ends[i]->start;
        if (d * 2 > med * 3) {
            over[i] = d - med;
            excess += over[i];
            aip__where_keep(&w, ends[i]->start, d);
        }
    }
    if (!excess)
        return AIP_OK;
    aip__finding *f = aip__advise_add(c, "profiler_steps");
    if (!f)
        return AIP_ERR_NOMEM;
    copy_where(f, &w);
    aip__advise_stake(c, f, excess);
    /* an artefact of measuring, not a problem of the program: always info */
    f->severity = AIP_SEVERITY_INFO;
    snprintf(f->title, sizeof f->title,
             "The first or last step is inflated by the profiler's start / stop");
    aip__evidence_add(f, "median of the middle steps %.3f ms; step %lld %+.3f ms, step %lld "
                      "%+.3f ms beyond it", med / 1e6, (long long)ends[0]->number,
                      over[0] / 1e6, (long long)ends[1]->number, over[1] / 1e6);
    f->advice = "Leave the first and last step of a trace out of step-time figures, or "
                "profile with a warmup step in the schedule (schedule(wait, warmup, active)).";
    return AIP_OK;
}
