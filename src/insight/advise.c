/*
 * advise.c — `aiprof advise`: the rule runner.  It frames the profile in
 * steps (ProfilerStep#N, or the whole profile as one window when there
 * are none), runs each rule of docs/ADVISE.md over the derived model, and
 * ranks the findings by severity, then by the time at stake per step.
 * aip_advise() is the public entry: open the result directory
 * (src/result/), build, write text or JSON.
 */
#include "insight.h"
#include "result.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *aip__severity_name(unsigned s)
{
    static const char *const names[] = {"info", "low", "medium", "high"};
    return s < 4 ? names[s] : "?";
}

aip__finding *aip__advise_add(aip__advise_ctx *c, const char *rule)
{
    if (aip__model_grow((void **)&c->f, &c->cap, c->n + 1, sizeof *c->f))
        return NULL;
    aip__finding *f = &c->f[c->n++];
    memset(f, 0, sizeof *f);
    f->rule = rule;
    return f;
}

/* Severity from the share of the step at stake: the thresholds of
 * docs/ADVISE.md ("Severity"), one scale for every rule so that findings
 * of different rules rank against each other. */
void aip__advise_stake(const aip__advise_ctx *c, aip__finding *f, int64_t total_ns)
{
    f->ns_per_step = total_ns / (int64_t)c->n_steps;
    f->share = c->mean_step_ns > 0 ? (double)f->ns_per_step / (double)c->mean_step_ns : 0;
    f->severity = f->share >= 0.20 ? AIP_SEVERITY_HIGH : f->share >= 0.05 ? AIP_SEVERITY_MEDIUM
                : f->share >= 0.01 ? AIP_SEVERITY_LOW : AIP_SEVERITY_INFO;
}

int64_t aip__in_steps(const aip__advise_ctx *c, int64_t s, int64_t e)
{
    /* first step ending after s (steps are sorted and do not overlap) */
    size_t lo = 0, hi = c->n_steps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->steps[mid].end <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t in = 0;
    for (size_t i = lo; i < c->n_steps && c->steps[i].start < e; i++) {
        int64_t a = s > c->steps[i].start ? s : c->steps[i].start;
        int64_t b = e < c->steps[i].end ? e : c->steps[i].end;
        if (b > a)
            in = aip__sat_add(in, b - a);
    }
    return in;
}

void aip__evidence_add(aip__finding *f, const char *fmt, ...)
{
    size_t used = strlen(f->evidence);
    if (used + 1 >= sizeof f->evidence)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->evidence + used, sizeof f->evidence - used, fmt, ap);
    va_end(ap);
}

void aip__where_keep(aip__finding *f, int64_t start, int64_t dur)
{
    size_t i = f->n_where;
    if (i == AIP_FINDING_WHERE) {
        if (dur <= f->where_dur[i - 1])
            return;
        i--;
    } else {
        f->n_where++;
    }
    while (i > 0 && f->where_dur[i - 1] < dur) {
        f->where_ns[i] = f->where_ns[i - 1];
        f->where_dur[i] = f->where_dur[i - 1];
        i--;
    }
    f->where_ns[i] = start;
    f->where_dur[i] = dur;
}

static int finding_cmp(const void *a, const void *b)
{
    const aip__finding *x = a, *y = b;
    if (x->severity != y->severity)
        return x->severity > y->severity ? -1 : 1;
    if (x->ns_per_step != y->ns_per_step)
        return x->ns_per_step > y->ns_per_step ? -1 : 1;
    return strcmp(x->rule, y->rule);
}

aip_status aip__advise_build(const aip__model *m, aip__advise_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->m = m;
    if (m->n_steps) {
        c->steps = m->steps;
        c->n_steps = m->n_steps;
    } else {
        c->whole = (aip__step){.number = 0, .start = m->first_ns, .end = m->last_ns};
        c->steps = &c->whole;
        c->n_steps = 1;
    }
    for (size_t i = 0; i < c->n_steps; i++)
        c->steps_ns = aip__sat_add(c->steps_ns, c->steps[i].end - c->steps[i].start);
    c->mean_step_ns = c->steps_ns / (int64_t)c->n_steps;
    aip_status (*const rules[])(aip__advise_ctx *) = {
        aip__rule_gc, aip__rule_dataloader, aip__rule_sync, aip__rule_osrt,
        aip__rule_profiler_steps, aip__rule_small_kernels, aip__rule_device_idle,
        aip__rule_comm, aip__rule_memory};
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++) {
        aip_status s = rules[i](c);
        if (s) {
            aip__advise_free(c);
            return s;
        }
    }
    if (c->n)
        qsort(c->f, c->n, sizeof *c->f, finding_cmp);
    return AIP_OK;
}

void aip__advise_free(aip__advise_ctx *c)
{
    free(c->f);
    c->f = NULL;
    c->n = c->cap = 0;
}

aip_status aip_advise(const char *result_dir, int fd, int json, int *worst)
{
    if (!result_dir)
        return aip__fail(AIP_ERR_INVALID_ARG, "result directory is required");
    if (worst)
        *worst = -1;
    aip__run_log r;
    aip__model m;
    int quiet = getenv("AIPROF_QUIET") && *getenv("AIPROF_QUIET") == '1';
    aip_status st = aip__result_open(result_dir, quiet, &r, &m);
    aip__advise_ctx c;
    if (!st)
        st = aip__advise_build(&m, &c);
    if (!st) {
        if (worst)
            for (size_t i = 0; i < c.n; i++)
                if ((int)c.f[i].severity > *worst)
                    *worst = (int)c.f[i].severity;
        aip__out o;
        if (fd >= 0 && !(st = aip__out_init_fd(&o, fd))) {
            if (json)
                aip__advise_json(&c, result_dir, &o);
            else
                aip__advise_text(&c, result_dir, &o);
            st = aip__out_close(&o);
        }
        aip__advise_free(&c);
    }
    aip__model_free(&m);
    aip__runlog_free(&r);
    return st;
}
