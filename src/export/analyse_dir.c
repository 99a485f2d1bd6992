/*
 * analyse_dir.c — aip_analyse_dir(): one result directory, load → derive →
 * export, with logs/analyse.log telling what was read and what was wrong.
 *
 * Damaged raw data is the normal case after a crash, so problems found in
 * a raw file (torn tail, corrupt chunks, dropped events, unpaired ranges)
 * are warnings: everything recoverable is exported and the status is
 * AIP_OK.  Only "nothing to analyse" (no FRAMEWORK, no readable raw file)
 * and failures to write the outputs are errors.  Outputs appear under their
 * real names only when complete (outbuf.c).
 */
#include "export.h"
#include "error.h"
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define OUTPUT_DIR "ASCEND_PROFILER_OUTPUT"

typedef struct run {
    const char *dir;
    struct timespec mark;     /* start of the current phase */
    int quiet;
    char *log;
    size_t log_len, log_cap;
} run;

static void logf_(run *r, const char *fmt, ...) AIP_PRINTF(2, 3);
static void logf_(run *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (aip__model_grow((void **)&r->log, &r->log_cap, r->log_len + len + 2, 1))
        return;
    memcpy(r->log + r->log_len, line, len);
    r->log_len += len;
    r->log[r->log_len++] = '\n';
}

/* Seconds since the last call (phase timings for the log). */
static double lap(run *r)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double d = (double)(now.tv_sec - r->mark.tv_sec) + (double)(now.tv_nsec - r->mark.tv_nsec) / 1e9;
    r->mark = now;
    return d;
}

/* A warning goes to the log and, unless quiet, to stderr. */
static void warn(run *r, const char *fmt, ...) AIP_PRINTF(2, 3);
static void warn(run *r, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    logf_(r, "warning: %s", msg);
    if (!r->quiet && !getenv("AIPROF_QUIET"))
        fprintf(stderr, "aiprof: warning: %s: %s\n", r->dir, msg);
}

static void write_log(run *r)
{
    char dir[PATH_MAX], path[PATH_MAX];
    if (aip__join(dir, sizeof dir, r->dir, "logs") || aip__join(path, sizeof path, dir, "analyse.log"))
        return;
    if (aip__mkdirs(dir) == AIP_OK)
        aip__write_file(path, r->log ? r->log : "", r->log_len);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The FRAMEWORK/ raw files, sorted by name so that the output is reproducible. */
static aip_status list_raw(run *r, char ***out, size_t *count)
{
    char fw[PATH_MAX];
    *out = NULL;
    *count = 0;
    aip_status s = aip__join(fw, sizeof fw, r->dir, "FRAMEWORK");
    if (s)
        return s;
    DIR *d = opendir(fw);
    if (!d)
        return aip__fail(errno == ENOENT ? AIP_ERR_NOT_FOUND : AIP_ERR_IO,
                         "%s has no readable FRAMEWORK directory (%s): nothing to analyse",
                         r->dir, strerror(errno));
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while (!s && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".raw") != 0)
            continue;
        char path[PATH_MAX];
        struct stat st;
        if (aip__join(path, sizeof path, fw, e->d_name) || lstat(path, &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            warn(r, "skipping FRAMEWORK/%s: it is a symbolic link", e->d_name);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        s = aip__model_grow((void **)&v, &cap, n + 1, sizeof *v);
        if (!s && !(v[n++] = strdup(path)))
            s = aip__fail(AIP_ERR_NOMEM, "no memory");
    }
    closedir(d);
    if (s) {
        free_list(v, n);
        return s;
    }
    if (!n) {
        free(v);
        return aip__fail(AIP_ERR_NOT_FOUND, "%s/FRAMEWORK holds no .raw file: nothing to analyse",
                         r->dir);
    }
    qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    *count = n;
    return AIP_OK;
}

static void describe_process(run *r, const aip_process *p)
{
    const char *base = strrchr(p->source, '/');
    base = base ? base + 1 : p->source;
    size_t spans = 0;
    for (size_t i = 0; i < p->n_threads; i++)
        spans += p->threads[i].n_spans;
    logf_(r, "read FRAMEWORK/%s: %llu bytes, %llu chunks, %llu events (%zu spans), %zu threads, "
          "pid %lld%s", base, (unsigned long long)p->file_bytes, (unsigned long long)p->chunks,
          (unsigned long long)p->events, spans, p->n_threads, (long long)p->pid,
          p->raw.clean_end ? ", closed cleanly" : "");
    if (p->raw.truncated_bytes)
        warn(r, "FRAMEWORK/%s: %llu bytes at the end do not form a complete chunk (the program "
             "probably stopped while writing); everything before them was recovered [%s]",
             base, (unsigned long long)p->raw.truncated_bytes, p->raw.first_message);
    else if (!p->raw.clean_end)
        warn(r, "FRAMEWORK/%s has no END chunk: the recording did not stop cleanly", base);
    if (p->raw.corrupt_chunks)
        warn(r, "FRAMEWORK/%s: %llu corrupt chunk(s) skipped [%s]", base,
             (unsigned long long)p->raw.corrupt_chunks, p->raw.first_message);
    if (p->bad_event_chunks || p->bad_other_chunks)
        warn(r, "FRAMEWORK/%s: %llu chunk(s) with inconsistent contents skipped [%s]", base,
             (unsigned long long)(p->bad_event_chunks + p->bad_other_chunks), p->load_problem);
    else if (p->load_problem[0])
        warn(r, "FRAMEWORK/%s: %s", base, p->load_problem);
    if (!p->has_info)
        warn(r, "FRAMEWORK/%s: no INFO chunk; pid taken from the file name", base);
    if (p->clock_fallback)
        warn(r, "FRAMEWORK/%s: no usable CLOCK sync points; times are approximate", base);
    if (p->dropped)
        warn(r, "FRAMEWORK/%s: %llu events were dropped while recording (buffer cap reached)",
             base, (unsigned long long)p->dropped);
    /* Normal at trace edges (a range started before or ended after the
     * trace): logged, not warned; the starts appear as instant events. */
    if (p->unmatched_range_starts || p->unmatched_range_ends)
        logf_(r, "FRAMEWORK/%s: %llu mstx range start(s) without end, %llu end(s) without start "
              "(ranges crossing the trace's edges)",
             base, (unsigned long long)p->unmatched_range_starts,
             (unsigned long long)p->unmatched_range_ends);
}

typedef aip_status (*export_fn)(const aip_model *, const aip_profiler_info *, aip_out *);

static aip_status trace_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    return aip__export_trace_json(m, i, o);
}
static aip_status details_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    (void)i;
    return aip__export_operator_details(m, o);
}
static aip_status steps_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    (void)i;
    return aip__export_step_trace(m, o);
}

static aip_status export_one(run *r, const char *outdir, const char *name, export_fn fn,
                             const aip_model *m, const aip_profiler_info *info)
{
    char path[PATH_MAX];
    aip_out o;
    aip_status s = aip__join(path, sizeof path, outdir, name);
    if (!s)
        s = aip__out_open(&o, path);
    if (s)
        return s;
    s = fn(m, info, &o);
    if (s) {
        aip__out_abort(&o);
        return s;
    }
    s = aip__out_close(&o);
    if (!s)
        logf_(r, "wrote %s/%s (%llu bytes) in %.3f s", OUTPUT_DIR, name,
              (unsigned long long)o.total, lap(r));
    return s;
}

static aip_status analyse(run *r, unsigned export_type, const aip_profiler_info *info)
{
    char **raws;
    size_t n_raws;
    aip_status s = list_raw(r, &raws, &n_raws);
    if (s)
        return s;
    aip_model m;
    aip__model_init(&m);
    if (info->has_start_sync) {
        m.fallback_sync = info->start_sync;
        m.has_fallback_sync = 1;
    }
    aip_status first_error = AIP_OK;
    char first_msg[512] = "";
    for (size_t i = 0; i < n_raws && s != AIP_ERR_NOMEM; i++) {
        s = aip__model_load_raw(&m, raws[i]);
        if (s) {
            warn(r, "skipping a raw file: %s", aip_last_error());
            if (!first_error) {
                first_error = s;
                snprintf(first_msg, sizeof first_msg, "%s", aip_last_error());
            }
        }
    }
    free_list(raws, n_raws);
    double load_secs = lap(r);
    if (s == AIP_ERR_NOMEM || !m.n_procs) {
        aip__model_free(&m);
        return aip__fail(first_error, "no raw data could be read: %s", first_msg);
    }
    s = aip__model_derive(&m);
    double derive_secs = lap(r);
    for (size_t i = 0; i < m.n_procs; i++)
        describe_process(r, &m.procs[i]);
    logf_(r, "loaded in %.3f s, derived in %.3f s", load_secs, derive_secs);
    logf_(r, "events: %llu, steps: %zu, fwdbwd flows: %zu, dropped events: %llu",
          (unsigned long long)m.n_events, m.n_steps, m.n_flows,
          (unsigned long long)m.dropped_events);
    char outdir[PATH_MAX];
    if (!s)
        s = aip__join(outdir, sizeof outdir, r->dir, OUTPUT_DIR);
    if (!s)
        s = aip__mkdirs(outdir);
    if (!s && (export_type & AIP_EXPORT_TEXT)) {
        s = export_one(r, outdir, "trace_view.json", trace_fn, &m, info);
        if (!s)
            s = export_one(r, outdir, "operator_details.csv", details_fn, &m, info);
        if (!s)
            s = export_one(r, outdir, "step_trace_time.csv", steps_fn, &m, info);
    }
    aip__model_free(&m);
    return s;
}

void aip_analyse_options_init(aip_analyse_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
}

aip_status aip_analyse_dir(const char *result_dir, const aip_analyse_options *options)
{
    aip_analyse_options opt;
    aip_analyse_options_init(&opt);
    if (options) {
        /* An older caller's smaller struct: take the fields it has. */
        size_t n = options->struct_size < sizeof opt ? options->struct_size : sizeof opt;
        if (n < sizeof(size_t))
            return aip__fail(AIP_ERR_INVALID_ARG, "aip_analyse_options.struct_size is not set "
                             "(call aip_analyse_options_init)");
        memcpy(&opt, options, n);
    }
    if (!result_dir)
        return aip__fail(AIP_ERR_INVALID_ARG, "result_dir is NULL");
    aip_status s = aip__path_check(result_dir, "result directory");
    if (!s)
        s = aip__path_no_symlink(result_dir);
    if (s)
        return s;
    struct stat st;
    if (stat(result_dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return aip__fail(AIP_ERR_NOT_FOUND, "result directory %s does not exist", result_dir);
    if (opt.export_type & ~(unsigned)(AIP_EXPORT_TEXT | AIP_EXPORT_DB))
        return aip__fail(AIP_ERR_INVALID_ARG, "export_type 0x%x has unknown bits", opt.export_type);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run r = {.dir = result_dir, .quiet = opt.quiet, .mark = t0};
    logf_(&r, "aiprof %s analyse %s", aip_version(), result_dir);
    aip_profiler_info info;
    s = aip__profiler_info_read(result_dir, &info);
    if (s) {
        free(r.log);
        return s;
    }
    if (info.found)
        logf_(&r, "read %s", info.file);
    else
        logf_(&r, "note: %s", info.problem);
    unsigned export_type = opt.export_type ? opt.export_type
                         : info.export_type ? info.export_type : AIP_EXPORT_TEXT;
    logf_(&r, "export type:%s%s", export_type & AIP_EXPORT_TEXT ? " text" : "",
          export_type & AIP_EXPORT_DB ? " db" : "");
    if (!(export_type & AIP_EXPORT_TEXT)) {
        s = aip__fail(AIP_ERR_UNSUPPORTED, "%s: db export not available yet (this aiprof writes "
                      "text output only; use export type text)", result_dir);
        logf_(&r, "error: %s", aip_last_error());
        if (!opt.quiet && !getenv("AIPROF_QUIET"))
            fprintf(stderr, "aiprof: %s\n", aip_last_error());
        write_log(&r);
        free(r.log);
        return s;
    }
    if (export_type & AIP_EXPORT_DB)
        warn(&r, "db export not available yet; writing the text output only");
    s = analyse(&r, export_type, &info);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", aip_last_error());
        logf_(&r, "error: %s", msg);
        write_log(&r);
        aip__fail(s, "%s", msg); /* the log write may have replaced the message */
    } else {
        logf_(&r, "done in %.3f s", secs);
        write_log(&r);
    }
    free(r.log);
    return s;
}
