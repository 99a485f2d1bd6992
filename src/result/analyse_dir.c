/*
 * analyse_dir.c — aip_analyse_dir(): one result directory, load → derive →
 * export, with logs/analyse.log telling what was read, what was wrong and
 * what was written.
 *
 * Which files appear follows the seed (docs/ANALYSIS.md): export type
 * `text` writes trace_view.json and the CSV summaries and also the
 * databases (the seed: text 包括 ascend_pytorch_profiler_{Rank_ID}.db、
 * analysis.db); `db` writes only the databases.  api_statistic.csv needs
 * profiler_level Level1/Level2, and so do communication.json and
 * communication_matrix.json (with analysis.db's CommAnalyzer* tables: the
 * seed 生成通信算子的communication.json和communication_matrix.json at
 * Level1), the memory CSVs profile_memory,
 * kernel_details.csv device tasks (the seed: written when NPU activity is
 * collected).
 * Afterwards ASCEND_PROFILER_OUTPUT holds only this analysis's files, and
 * data_simplification / record_op_args are applied.  Outputs appear under
 * their real names only when complete (outbuf.c, db.c).
 *
 * The outputs are one table (file name, when it is written, exporter):
 * every exporter has the shape of export.h, reading only the model.
 */
#include "thread.h"
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
#include <unistd.h>

/* When an exporter runs (exporter.when). */
enum {
    W_TEXT = AIP_EXPORT_TEXT,  /* export type text */
    W_DB = AIP_EXPORT_DB,      /* export type db */
    W_LEVEL1 = 1u << 8,        /* profiler_level Level1 or Level2 */
    W_MEMORY = 1u << 9,        /* profile_memory (no profiler_info.json: memory recorded) */
    W_TRACE_VIEW = 1u << 10,   /* also when only the trace is asked for */
    W_DATABASE = 1u << 11,     /* built by SQLite at the aip__out's path (aip__out_target) */
    W_DEVICE = 1u << 12,       /* device tasks were recorded */
    W_COMM = 1u << 13,         /* communication ops were recorded, at Level1+ */
    W_NIC = 1u << 14,          /* sys_io interface samples were recorded */
    W_ROCE = 1u << 15,         /* sys_io RDMA port samples were recorded */
    W_PERFETTO = 1u << 16      /* trace format perfetto was asked for */
};

typedef struct exporter {
    const char *name;          /* in ASCEND_PROFILER_OUTPUT; NULL: the rank's database */
    unsigned when;             /* W_* */
    aip__export_fn fn;
} exporter;

/* Every output, in the order logged (they are written at the same time, on
 * a pool of threads: pool_export()).  The databases come with both export types (the
 * seed: text 包括 ascend_pytorch_profiler_{Rank_ID}.db、analysis.db). */
static const exporter exporters[] = {
    {"trace_view.json", W_TEXT | W_TRACE_VIEW, aip__export_trace_json},
    {"trace.perfetto-trace", W_TEXT | W_TRACE_VIEW | W_PERFETTO, aip__export_trace_perfetto},
    {"kernel_details.csv", W_TEXT | W_DEVICE, aip__export_kernel_details},
    {"operator_details.csv", W_TEXT, aip__export_operator_details},
    {"step_trace_time.csv", W_TEXT, aip__export_step_trace},
    {"communication.json", W_TEXT | W_COMM, aip__export_communication},
    {"communication_matrix.json", W_TEXT | W_COMM, aip__export_communication_matrix},
    {"nic.csv", W_TEXT | W_NIC, aip__export_nic_csv},
    {"roce.csv", W_TEXT | W_ROCE, aip__export_roce_csv},
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

static int has_device_memory(const aip__model *m)
{
    for (size_t i = 0; i < m->n_procs; i++)
        if (m->procs[i].dev_memory.n)
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

/* Host samples of `what` with `flag` (any flag when 0), e.g. sys_io's. */
static int has_host(const aip__model *m, uint8_t what, uint8_t flag)
{
    for (size_t i = 0; i < m->n_procs; i++)
        for (size_t k = 0; k < m->procs[i].host.n; k++) {
            const aip__host_sample *h = &m->procs[i].host.v[k];
            if (h->what == what && (!flag || (h->flags & flag)))
                return 1;
        }
    return 0;
}

static int enabled(const exporter *e, const aip__model *m, unsigned export_type, unsigned which)
{
    if ((e->when & W_PERFETTO) && m->trace_format != AIP_TRACE_PERFETTO)
        return 0;
    if (which == AIP_OUTPUTS_TRACE_VIEW)
        return !!(e->when & W_TRACE_VIEW);
    if (!(e->when & export_type))
        return 0;
    if ((e->when & W_LEVEL1) && m->info.profiler_level < AIP_LEVEL1)
        return 0;
    if ((e->when & W_DEVICE) && !aip__model_has_device_tasks(m))
        return 0;
    if ((e->when & W_COMM) && (!has_comm_ops(m) || !aip__info_comm_summaries(&m->info)))
        return 0;
    if ((e->when & W_NIC) && !has_host(m, AIP_HOST_NET, AIP_HOSTF_NIC))
        return 0;
    if ((e->when & W_ROCE) && !has_host(m, AIP_HOST_ROCE, 0))
        return 0;
    /* The switch decides for the framework's records; a device back end's
     * buffers are recorded whatever it says and are in the database, so
     * the CSVs show them too (text and db agree); a profile that lost its
     * profiler_info.json shows the memory records it has. */
    if ((e->when & W_MEMORY) &&
        !(m->info.has_config ? m->info.profile_memory || has_device_memory(m) : has_memory(m)))
        return 0;
    return 1;
}

/* The exporters of one analysis run on a pool of threads, one per CPU (at
 * most one per output): each thread takes the next output not yet started
 * until none is left or one failed.  Outputs are independent writers of a
 * model that is read-only by now, and a big profile's database, trace JSON
 * and operator CSV each keep a core busy for about as long; the main
 * database starts first and the trace second (the longest first, so that
 * the short ones fill in after them), the rest in table order.  Each output
 * keeps its result for the log (the run log is not shared between threads),
 * which is written in table order afterwards, whatever the threads did. */
#define MAX_THREADS 8

typedef struct job {
    const exporter *e;
    char name[64];
    long long bytes;
    double secs;
    aip_status status;
    char error[512];          /* aip_last_error() is per thread */
} job;

typedef struct pool {
    const aip__model *m;
    const char *outdir;
    job jobs[N_EXPORTERS];    /* in table order */
    size_t n;
    size_t order[N_EXPORTERS]; /* the order to start them in */
    pthread_mutex_t lock;
    size_t next;              /* in `order`, under lock */
    int failed;               /* under lock: start nothing more */
} pool;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static aip_status export_one(pool *p, job *j)
{
    const exporter *e = j->e;
    char path[PATH_MAX];
    if (e->name)
        snprintf(j->name, sizeof j->name, "%s", e->name);
    else
        aip__db_name(p->m->info.rank, j->name, sizeof j->name);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    aip__out o;
    aip_status s = aip__join(path, sizeof path, p->outdir, j->name);
    if (!s)
        s = e->when & W_DATABASE ? aip__out_target(&o, path) : aip__out_open(&o, path);
    if (s)
        return s;
    s = e->fn(p->m, &o);
    if (!(e->when & W_DATABASE)) /* a database is renamed into place by its exporter */
        s = aip__out_finish(&o, s);
    if (s)
        return s;
    struct stat st;
    j->bytes = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    j->secs = seconds_since(&t0);
    return AIP_OK;
}

static void *pool_run(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        job *j = !p->failed && p->next < p->n ? &p->jobs[p->order[p->next++]] : NULL;
        pthread_mutex_unlock(&p->lock);
        if (!j)
            return NULL;
        j->status = export_one(p, j);
        if (j->status) {
            snprintf(j->error, sizeof j->error, "%s", aip_last_error());
            pthread_mutex_lock(&p->lock);
            p->failed = 1;
            pthread_mutex_unlock(&p->lock);
        }
    }
}

/* Run every enabled exporter; 0 if none is. */
static size_t pool_export(pool *p, unsigned export_type, unsigned which)
{
    for (size_t i = 0; i < N_EXPORTERS; i++)
        if (enabled(&exporters[i], p->m, export_type, which))
            p->jobs[p->n++].e = &exporters[i];
    size_t k = 0;
    for (int pass = 0; pass < 3; pass++) /* the main database, the trace, the rest */
        for (size_t i = 0; i < p->n; i++) {
            const exporter *e = p->jobs[i].e;
            int rank = !e->name ? 0
                     : e->fn == aip__export_trace_json || e->fn == aip__export_trace_perfetto ? 1
                     : 2;
            if (rank == pass)
                p->order[k++] = i;
        }
    int cpus = aip__cpus_usable();
    size_t n_threads = cpus > MAX_THREADS ? MAX_THREADS : (size_t)cpus;
    if (n_threads > p->n)
        n_threads = p->n;
    pthread_mutex_init(&p->lock, NULL);
    pthread_t th[MAX_THREADS];
    size_t started = 0;
    while (started + 1 < n_threads && aip__thread_create(&th[started], NULL, pool_run, p) == 0)
        started++; /* no thread to be had: fewer, this one at least */
    pool_run(p);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p->lock);
    return p->n;
}

/* Log what the outputs with (databases) or without the W_DATABASE flag
 * wrote, in table order, adding their names to `keep`; the first error in
 * table order, if any (outputs after a failure may not have started). */
static aip_status pool_finish(aip__run_log *r, const pool *p, int databases, const char **keep,
                              size_t *n_keep)
{
    for (size_t i = 0; i < p->n; i++) {
        const job *j = &p->jobs[i];
        if (!(j->e->when & W_DATABASE) != !databases)
            continue;
        if (j->status)
            return aip__fail(j->status, "%s", j->error);
        if (!j->name[0])
            continue; /* not started: an earlier failure, reported below */
        aip__runlog_line(r, "wrote %s/%s (%lld bytes) in %.3f s", AIP_OUTPUT_DIR, j->name,
                         j->bytes, j->secs);
        keep[(*n_keep)++] = j->name;
    }
    for (size_t i = 0; i < p->n; i++)
        if (p->jobs[i].status)
            return aip__fail(p->jobs[i].status, "%s", p->jobs[i].error);
    return AIP_OK;
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
    pool *p = s ? NULL : calloc(1, sizeof *p);
    if (!s && !p)
        s = aip__fail(AIP_ERR_NOMEM, "no memory");
    int any_db = 0;
    if (!s) {
        p->m = &m;
        p->outdir = outdir;
        pool_export(p, export_type, which);
        for (size_t i = 0; i < p->n; i++)
            any_db |= !!(p->jobs[i].e->when & W_DATABASE);
    }
    const char *keep[2 * N_EXPORTERS + 1] = {NULL};
    size_t n_keep = 0;
    if (!s)
        s = pool_finish(r, p, 0, keep, &n_keep);
    if (!s && any_db && !m.meta.found)
        aip__runlog_line(r, "note: %s; META_DATA has no rows from it", m.meta.problem);
    if (!s && which != AIP_OUTPUTS_TRACE_VIEW && has_comm_ops(&m) &&
        !aip__info_comm_summaries(&m.info))
        aip__runlog_line(r, "note: %s", aip__comm_level_note(&m.info));
    if (!s)
        s = pool_finish(r, p, 1, keep, &n_keep);
    /* Only the trace: other outputs of an earlier full run stay. */
    if (!s && which != AIP_OUTPUTS_TRACE_VIEW) {
        s = aip__output_prune(r, keep);
        if (!s && m.info.data_simplification)
            s = aip__simplify(r);
        if (!s && m.info.record_op_args)
            s = aip__write_op_args(r, &m);
    }
    free(p);
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
    if (opt.trace_format > AIP_TRACE_PERFETTO)
        return aip__fail(AIP_ERR_INVALID_ARG, "trace_format %u is not an aip_trace_format value "
                         "(0 torch_npu, 1 kineto, 2 perfetto)", opt.trace_format);

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
    else if (opt.trace_format == AIP_TRACE_PERFETTO)
        aip__runlog_line(&r, "trace.perfetto-trace too (Perfetto's protobuf format)");
    /* Past `ulimit -f` every writer (the exporters, the pool's threads, which
     * inherit this mask, and SQLite's) gets EFBIG and fails the analysis
     * with a message, instead of SIGXFSZ killing the caller: `aiprof run`
     * would exit 153 for a program that exited 0, a C program calling this
     * would die.  A SIGXFSZ the writes leave pending is taken back. */
    sigset_t xfsz;
    aip__xfsz_block(&xfsz);
    s = analyse(&r, export_type, opt.outputs, opt.trace_format, &info);
    aip__xfsz_restore(&xfsz);
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
