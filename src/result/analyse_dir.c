/*
 * analyse_dir.c — aip_analyse_dir(): one result directory, load → derive →
 * export, with logs/analyse.log telling what was read, what was wrong and
 * what was written.
 *
 * Which files appear follows the seed (docs/ANALYSIS.md): export type
 * `text` writes trace_view.json and the CSV summaries and also the
 * databases (the seed: text 包括 ascend_pytorch_profiler_{Rank_ID}.db、
 * analysis.db); `db` writes only the databases.  api_statistic.csv needs
 * profiler_level Level1/Level2, the memory CSVs profile_memory;
 * kernel_details.csv and the device CSVs need a device and never appear.
 * Afterwards ASCEND_PROFILER_OUTPUT holds only this analysis's files, and
 * data_simplification / record_op_args are applied.  Outputs appear under
 * their real names only when complete (outbuf.c, db.c).
 */
#include "export.h"
#include "db_pytorch.h"
#include "result.h"
#include "error.h"
#include "fs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_OUTPUTS 16

typedef struct outputs {
    const char *names[MAX_OUTPUTS + 1]; /* written so far, NULL-terminated */
    size_t n;
    char db_name[64];
} outputs;

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
static aip_status op_stat_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    (void)i;
    return aip__export_op_statistic(m, o);
}
static aip_status api_stat_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    (void)i;
    return aip__export_api_statistic(m, o);
}
static aip_status mem_record_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    (void)i;
    return aip__export_memory_record(m, o);
}
static aip_status op_mem_fn(const aip_model *m, const aip_profiler_info *i, aip_out *o)
{
    (void)i;
    return aip__export_operator_memory(m, o);
}

static void wrote(aip_run_log *r, outputs *w, const char *name, const char *path)
{
    struct stat st;
    long long size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    aip__runlog_line(r, "wrote %s/%s (%lld bytes) in %.3f s", AIP_OUTPUT_DIR, name, size,
                     aip__runlog_lap(r));
    if (w->n < MAX_OUTPUTS)
        w->names[w->n++] = name;
}

static aip_status export_one(aip_run_log *r, outputs *w, const char *outdir, const char *name,
                             export_fn fn, const aip_model *m, const aip_profiler_info *info)
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
        wrote(r, w, name, path);
    return s;
}

static int has_memory(const aip_model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].memory.n)
            return 1;
    return 0;
}

static aip_status export_text(aip_run_log *r, outputs *w, const char *outdir, const aip_model *m,
                              const aip_profiler_info *info)
{
    aip_status s = export_one(r, w, outdir, "trace_view.json", trace_fn, m, info);
    if (!s)
        s = export_one(r, w, outdir, "operator_details.csv", details_fn, m, info);
    if (!s)
        s = export_one(r, w, outdir, "step_trace_time.csv", steps_fn, m, info);
    if (!s)
        s = export_one(r, w, outdir, "op_statistic.csv", op_stat_fn, m, info);
    if (!s && info->profiler_level >= AIP_LEVEL1)
        s = export_one(r, w, outdir, "api_statistic.csv", api_stat_fn, m, info);
    /* The switch decides; a profile that lost its profiler_info.json still
     * shows the memory records it has. */
    if (!s && (info->has_config ? info->profile_memory : has_memory(m))) {
        s = export_one(r, w, outdir, "memory_record.csv", mem_record_fn, m, info);
        if (!s)
            s = export_one(r, w, outdir, "operator_memory.csv", op_mem_fn, m, info);
    }
    return s;
}

/* The databases are written on their own thread while this one writes
 * the text outputs: SQLite inserts and JSON formatting each keep a core
 * busy, and the model is read-only by now.  The job keeps its results for
 * the log (the run log is not shared between threads). */
typedef struct db_job {
    const char *dir, *outdir;
    const aip_model *m;
    const aip_profiler_info *info;
    aip_status status;
    char error[512];
    char note[200];
    char db_name[64];
    char paths[2][PATH_MAX];
    double secs[2];
} db_job;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *db_work(void *arg)
{
    db_job *j = arg;
    aip_metadata md;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    aip_status s = aip__metadata_read(j->dir, &md);
    if (!s && !md.found)
        snprintf(j->note, sizeof j->note, "note: %s; META_DATA has no rows from it", md.problem);
    aip__db_name(j->info->rank, j->db_name, sizeof j->db_name);
    aip_db_inputs in = {j->m, j->info, &md};
    if (!s)
        s = aip__join(j->paths[0], sizeof j->paths[0], j->outdir, j->db_name);
    if (!s)
        s = aip__export_pytorch_db(&in, j->paths[0]);
    j->secs[0] = seconds_since(&t0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!s)
        s = aip__join(j->paths[1], sizeof j->paths[1], j->outdir, "analysis.db");
    if (!s)
        s = aip__export_analysis_db(j->m, j->paths[1]);
    j->secs[1] = seconds_since(&t0);
    if (md.found)
        aip__metadata_free(&md);
    if (s)
        snprintf(j->error, sizeof j->error, "%s", aip_last_error());
    j->status = s;
    return NULL;
}

static aip_status db_finish(aip_run_log *r, outputs *w, db_job *j)
{
    if (j->note[0])
        aip__runlog_line(r, "%s", j->note);
    if (j->status)
        return aip__fail(j->status, "%s", j->error);
    snprintf(w->db_name, sizeof w->db_name, "%s", j->db_name);
    const char *names[2] = {w->db_name, "analysis.db"};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        aip__runlog_line(r, "wrote %s/%s (%lld bytes) in %.3f s", AIP_OUTPUT_DIR, names[i],
                         stat(j->paths[i], &st) == 0 ? (long long)st.st_size : -1LL, j->secs[i]);
        if (w->n < MAX_OUTPUTS)
            w->names[w->n++] = names[i];
    }
    return AIP_OK;
}

static aip_status analyse(aip_run_log *r, unsigned export_type, unsigned which,
                          const aip_profiler_info *info)
{
    aip_model m;
    aip_status s = aip__result_load(r, info, &m);
    if (s)
        return s;
    char outdir[PATH_MAX];
    outputs w = {.n = 0};
    s = aip__join(outdir, sizeof outdir, r->dir, AIP_OUTPUT_DIR);
    if (!s)
        s = aip__mkdirs(outdir);
    if (which == AIP_OUTPUTS_TRACE_VIEW) {
        /* Only the trace: other outputs of an earlier full run stay. */
        if (!s)
            s = export_one(r, &w, outdir, "trace_view.json", trace_fn, &m, info);
        aip__model_free(&m);
        return s;
    }
    db_job job = {.dir = r->dir, .outdir = outdir, .m = &m, .info = info};
    pthread_t th;
    int threaded = 0;
    if (!s && (export_type & AIP_EXPORT_TEXT)) {
        threaded = pthread_create(&th, NULL, db_work, &job) == 0;
        s = export_text(r, &w, outdir, &m, info);
    }
    if (threaded)
        pthread_join(th, NULL);
    else if (!s)
        db_work(&job);
    if (!s)
        s = db_finish(r, &w, &job);
    if (!s)
        s = aip__output_prune(r, w.names);
    if (!s && info->data_simplification)
        s = aip__simplify(r);
    if (!s && info->record_op_args)
        s = aip__write_op_args(r, &m);
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
    if ((s = aip__existing_dir(result_dir, "result directory")))
        return s;
    if (opt.export_type & ~(unsigned)(AIP_EXPORT_TEXT | AIP_EXPORT_DB))
        return aip__fail(AIP_ERR_INVALID_ARG, "export_type 0x%x has unknown bits", opt.export_type);
    if (opt.outputs > AIP_OUTPUTS_TRACE_VIEW)
        return aip__fail(AIP_ERR_INVALID_ARG, "outputs %u is not an aip_analyse_outputs value",
                         opt.outputs);

    aip_run_log r;
    aip__runlog_init(&r, result_dir, opt.quiet);
    struct timespec t0 = r.mark, t1;
    aip__runlog_line(&r, "aiprof %s analyse %s", aip_version(), result_dir);
    aip_profiler_info info;
    s = aip__profiler_info_read(result_dir, &info);
    if (s) {
        aip__runlog_free(&r);
        return s;
    }
    if (info.found)
        aip__runlog_line(&r, "read %s", info.file);
    else
        aip__runlog_line(&r, "note: %s", info.problem);
    unsigned export_type = opt.export_type ? opt.export_type
                         : info.export_type ? info.export_type : AIP_EXPORT_TEXT;
    aip__runlog_line(&r, "export type:%s%s; profiler_level %s; data_simplification %s; "
                     "record_op_args %s", export_type & AIP_EXPORT_TEXT ? " text" : "",
                     export_type & AIP_EXPORT_DB ? " db" : "",
                     aip_profiler_level_name(info.profiler_level),
                     info.data_simplification ? "on" : "off", info.record_op_args ? "on" : "off");
    s = analyse(&r, export_type, opt.outputs, &info);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", aip_last_error());
        aip__runlog_line(&r, "error: %s", msg);
        aip__runlog_write(&r);
        aip__fail(s, "%s", msg); /* the log write may have replaced the message */
    } else {
        aip__runlog_line(&r, "done in %.3f s", secs);
        aip__runlog_write(&r);
    }
    aip__runlog_free(&r);
    return s;
}
