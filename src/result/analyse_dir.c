/*
 * analyse_dir.c — aip_analyse_dir(): one result directory, load → derive →
 * export, with logs/analyse.log telling what was read, what was wrong and
 * what was written.
 *
 * Which files appear follows the seed (docs/ANALYSIS.md): export type
 * `text` writes trace_view.json and the CSV summaries and also the
 * databases (the seed: text 包括 ascend_pytorch_profiler_{Rank_ID}.db、
 * analysis.db); `db` writes only the databases.  api_statistic.csv needs
 * profiler_level Level1/Level2, the memory CSVs profile_memory,
 * kernel_details.csv device tasks (the seed: written when NPU activity is
 * collected).
 * Afterwards ASCEND_PROFILER_OUTPUT holds only this analysis's files, and
 * data_simplification / record_op_args are applied.  Outputs appear under
 * their real names only when complete (outbuf.c, db.c).
 *
 * The outputs are one table (file name, when it is written, exporter):
 * every exporter has the shape of export.h, reading only the model.
 */
#include "export.h"
#include "result.h"
#include "error.h"
#include "fs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* When an exporter runs (exporter.when). */
enum {
    W_TEXT = AIP_EXPORT_TEXT,  /* export type text */
    W_DB = AIP_EXPORT_DB,      /* export type db */
    W_LEVEL1 = 1u << 8,        /* profiler_level Level1 or Level2 */
    W_MEMORY = 1u << 9,        /* profile_memory (no profiler_info.json: memory recorded) */
    W_TRACE_VIEW = 1u << 10,   /* also when only the trace is asked for */
    W_DATABASE = 1u << 11,     /* built by SQLite at the aip__out's path (aip__out_target) */
    W_DEVICE = 1u << 12,       /* device tasks were recorded */
    W_COMM = 1u << 13          /* communication ops were recorded */
};

typedef struct exporter {
    const char *name;          /* in ASCEND_PROFILER_OUTPUT; NULL: the rank's database */
    unsigned when;             /* W_* */
    aip__export_fn fn;
} exporter;

/* Every output, in the order written (the databases on their own thread,
 * beside the others).  The databases come with both export types (the
 * seed: text 包括 ascend_pytorch_profiler_{Rank_ID}.db、analysis.db). */
static const exporter exporters[] = {
    {"trace_view.json", W_TEXT | W_TRACE_VIEW, aip__export_trace_json},
    {"kernel_details.csv", W_TEXT | W_DEVICE, aip__export_kernel_details},
    {"operator_details.csv", W_TEXT, aip__export_operator_details},
    {"step_trace_time.csv", W_TEXT, aip__export_step_trace},
    {"communication.json", W_TEXT | W_COMM, aip__export_communication},
    {"communication_matrix.json", W_TEXT | W_COMM, aip__export_communication_matrix},
    {"op_statistic.csv", W_TEXT, aip__export_op_statistic},
    {"api_statistic.csv", W_TEXT | W_LEVEL1, aip__export_api_statistic},
    {"memory_record.csv", W_TEXT | W_MEMORY, aip__export_memory_record},
    {"operator_memory.csv", W_TEXT | W_MEMORY, aip__export_operator_memory},
    {NULL, W_TEXT | W_DB | W_DATABASE, aip__export_pytorch_db},
    {"analysis.db", W_TEXT | W_DB | W_DATABASE, aip__export_analysis_db},
};
#define N_EXPORTERS (sizeof exporters / sizeof exporters[0])

static int has_memory(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].memory.n || m->procs[i].dev_memory.n)
            return 1;
    return 0;
}

static int has_device_tasks(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].dev_tasks.n)
            return 1;
    return 0;
}

static int has_comm_ops(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].comm_ops.n)
            return 1;
    return 0;
}

static int enabled(const exporter *e, const aip__model *m, unsigned export_type, unsigned which)
{
    if (which == AIP_OUTPUTS_TRACE_VIEW)
        return !!(e->when & W_TRACE_VIEW);
    if (!(e->when & export_type))
        return 0;
    if ((e->when & W_LEVEL1) && m->info.profiler_level < AIP_LEVEL1)
        return 0;
    if ((e->when & W_DEVICE) && !has_device_tasks(m))
        return 0;
    if ((e->when & W_COMM) && !has_comm_ops(m))
        return 0;
    /* The switch decides; a profile that lost its profiler_info.json still
     * shows the memory records it has. */
    if ((e->when & W_MEMORY) && !(m->info.has_config ? m->info.profile_memory : has_memory(m)))
        return 0;
    return 1;
}

/* One group of exporters run in table order, stopping at the first error:
 * the databases, or the streamed files.  The databases are written on
 * their own thread while this one writes the streamed files: SQLite
 * inserts and JSON formatting each keep a core busy, and the model is
 * read-only by now.  A group keeps its results for the log (the run log is
 * not shared between threads). */
typedef struct group {
    const aip__model *m;
    const char *outdir;
    unsigned export_type, which;
    int databases;             /* the W_DATABASE exporters, or the others */
    size_t n;                  /* outputs written */
    char names[N_EXPORTERS][64];
    long long bytes[N_EXPORTERS];
    double secs[N_EXPORTERS];
    aip_status status;
    char error[512];
} group;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int in_group(const group *g, const exporter *e)
{
    return !(e->when & W_DATABASE) == !g->databases &&
           enabled(e, g->m, g->export_type, g->which);
}

static size_t group_size(const group *g)
{
    size_t n = 0;
    for (size_t i = 0; i < N_EXPORTERS; i++)
        n += (size_t)in_group(g, &exporters[i]);
    return n;
}

static aip_status export_one(group *g, const exporter *e)
{
    char *name = g->names[g->n], path[PATH_MAX];
    if (e->name)
        snprintf(name, sizeof g->names[0], "%s", e->name);
    else
        aip__db_name(g->m->info.rank, name, sizeof g->names[0]);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    aip__out o;
    aip_status s = aip__join(path, sizeof path, g->outdir, name);
    if (!s)
        s = e->when & W_DATABASE ? aip__out_target(&o, path) : aip__out_open(&o, path);
    if (s)
        return s;
    s = e->fn(g->m, &o);
    if (!(e->when & W_DATABASE)) /* a database is renamed into place by its exporter */
        s = aip__out_finish(&o, s);
    if (s)
        return s;
    struct stat st;
    g->bytes[g->n] = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    g->secs[g->n++] = seconds_since(&t0);
    return AIP_OK;
}

static void *group_run(void *arg)
{
    group *g = arg;
    aip_status s = AIP_OK;
    for (size_t i = 0; i < N_EXPORTERS && !s; i++)
        if (in_group(g, &exporters[i]))
            s = export_one(g, &exporters[i]);
    if (s)
        snprintf(g->error, sizeof g->error, "%s", aip_last_error());
    g->status = s;
    return NULL;
}

/* Log what group `g` wrote and add the names to `keep`; its error, if any. */
static aip_status group_finish(aip__run_log *r, const group *g, const char **keep, size_t *n_keep)
{
    for (size_t i = 0; i < g->n; i++) {
        aip__runlog_line(r, "wrote %s/%s (%lld bytes) in %.3f s", AIP_OUTPUT_DIR, g->names[i],
                         g->bytes[i], g->secs[i]);
        keep[(*n_keep)++] = g->names[i];
    }
    return g->status ? aip__fail(g->status, "%s", g->error) : AIP_OK;
}

static aip_status analyse(aip__run_log *r, unsigned export_type, unsigned which,
                          unsigned trace_format, const aip__profiler_info_data *info)
{
    aip__model m;
    aip_status s = aip__result_load(r, info, &m);
    if (s)
        return s;
    m.trace_format = trace_format;
    char outdir[PATH_MAX];
    s = aip__join(outdir, sizeof outdir, r->dir, AIP_OUTPUT_DIR);
    if (!s)
        s = aip__mkdirs(outdir);
    group files = {.m = &m, .outdir = outdir, .export_type = export_type, .which = which};
    group dbs = files;
    dbs.databases = 1;
    pthread_t th;
    int threaded = 0;
    if (!s && group_size(&files)) {
        threaded = group_size(&dbs) && pthread_create(&th, NULL, group_run, &dbs) == 0;
        group_run(&files);
    }
    if (threaded)
        pthread_join(th, NULL);
    else if (!s && !files.status)
        group_run(&dbs);
    const char *keep[2 * N_EXPORTERS + 1] = {NULL};
    size_t n_keep = 0;
    if (!s)
        s = group_finish(r, &files, keep, &n_keep);
    if (!s && group_size(&dbs) && !m.meta.found)
        aip__runlog_line(r, "note: %s; META_DATA has no rows from it", m.meta.problem);
    if (!s)
        s = group_finish(r, &dbs, keep, &n_keep);
    /* Only the trace: other outputs of an earlier full run stay. */
    if (!s && which != AIP_OUTPUTS_TRACE_VIEW) {
        s = aip__output_prune(r, keep);
        if (!s && m.info.data_simplification)
            s = aip__simplify(r);
        if (!s && m.info.record_op_args)
            s = aip__write_op_args(r, &m);
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
    aip_status s = aip__path_usable(result_dir, "result directory");
    if (s)
        return s;
    if ((s = aip__existing_dir(result_dir, "result directory")))
        return s;
    if (opt.export_type & ~(unsigned)(AIP_EXPORT_TEXT | AIP_EXPORT_DB))
        return aip__fail(AIP_ERR_INVALID_ARG, "export_type 0x%x has unknown bits", opt.export_type);
    if (opt.outputs > AIP_OUTPUTS_TRACE_VIEW)
        return aip__fail(AIP_ERR_INVALID_ARG, "outputs %u is not an aip_analyse_outputs value",
                         opt.outputs);
    if (opt.trace_format > AIP_TRACE_KINETO)
        return aip__fail(AIP_ERR_INVALID_ARG, "trace_format %u is not an aip_trace_format value "
                         "(0 torch_npu, 1 kineto)", opt.trace_format);

    aip__run_log r;
    aip__runlog_init(&r, result_dir, opt.quiet);
    struct timespec t0 = r.mark, t1;
    aip__runlog_line(&r, "aiprof %s analyse %s", aip_version(), result_dir);
    aip__profiler_info_data info;
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
    if (opt.trace_format == AIP_TRACE_KINETO)
        aip__runlog_line(&r, "trace_view.json in Kineto's form (object, ts relative to "
                         "baseTimeNanoseconds)");
    s = analyse(&r, export_type, opt.outputs, opt.trace_format, &info);
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
