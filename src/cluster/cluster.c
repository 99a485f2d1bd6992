/*
 * cluster.c — aip_cluster_run(): `aiprof cluster DIR`, the cross-rank
 * pass over a job's rank result directories, as msprof-analyze's
 * cluster_analyse does it in text mode.  It finds the `*ascend_pt`
 * directories under DIR (any depth up to 10, no symbolic links; the rank
 * is N of the profiler_info_N.json in the directory), analyses those that
 * have no ASCEND_PROFILER_OUTPUT/step_trace_time.csv yet, then reads ONLY
 * each rank's per-rank summaries (step_trace_time.csv, communication.json:
 * cluster_read.c; analysis.db for a rank exported as databases only:
 * cluster_rank_db.c) — never the raw data — so the cross-rank work grows
 * with ranks × steps,
 * not with events.  It writes DIR/cluster_analysis_output/
 * cluster_step_trace_time.csv and communication_group.json and reports the
 * slow rank(s).  A directory that cannot be used (no rank, analysis failed,
 * truncated CSV, a duplicate rank, a run that does not overlap the others
 * in time) is named with the reason, and the rest is analysed; ranks the
 * job should have and does not are named by cluster_complete.c.
 * The per-rank tables are kept in memory: a few rows per rank and step.
 */
#include "cluster.h"
#include "cluster_comm.h"
#include "cluster_links.h"
#include "error.h"
#include "fs.h"
#include "progress_bar.h"
#include "text_escape.h"

#include "aiprof.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 10 /* msprof-analyze's text-mode search depth */
#define OUT_DIR "cluster_analysis_output"

/* The verdict goes to a terminal, and what it names (directory names,
 * problems quoting a rank's files, hosts, groups) is anybody's bytes: all
 * of it is cleaned (aip__term_clean: control bytes and invalid UTF-8 as
 * '?'), the line break that ends `fmt` excepted, so no name can move the
 * cursor, recolour the terminal or forge a line of the verdict. */
void aip__cluster_say(const aip__cluster *c, const char *fmt, ...)
{
    if (c->fd < 0)
        return;
    char small[1024], *text = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof small) {
        if (!(text = malloc((size_t)n + 1)))
            return;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    size_t len = (size_t)n, fl = strlen(fmt);
    int nl = len && text[len - 1] == '\n' && fl && fmt[fl - 1] == '\n';
    char clean_small[1024], *clean = len <= sizeof clean_small ? clean_small : malloc(len);
    if (clean) {
        size_t m = aip__term_clean(text, len - (size_t)nl, clean);
        if (nl)
            clean[m++] = '\n';
        for (size_t off = 0; off < m;) { /* errors ignored, as vdprintf's were */
            ssize_t w = write(c->fd, clean + off, m - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    if (clean != clean_small)
        free(clean);
    if (text != small)
        free(text);
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* {worker}_{ts}_ascend_pt → ts; msprof-analyze keeps the largest for a
 * rank found twice. */
static long long dir_ts(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len < 11 || strcmp(base + len - 10, "_ascend_pt"))
        return -1;
    const char *end = base + len - 10, *p = end;
    while (p > base && p[-1] >= '0' && p[-1] <= '9')
        p--;
    if (p == end || p == base || p[-1] != '_')
        return -1;
    return strtoll(p, NULL, 10);
}

/* N of the first profiler_info_N.json by name; -1 if none, -2 when the
 * directory cannot be listed (errno says why). */
static long find_rank(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -2;
    long best = -1;
    char best_name[NAME_MAX + 1] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, "profiler_info_", 14) || !ends_with(n, ".json"))
            continue;
        char *end;
        errno = 0;
        long v = strtol(n + 14, &end, 10);
        if (errno || end == n + 14 || strcmp(end, ".json") || v < 0)
            continue;
        if (!best_name[0] || strcmp(n, best_name) < 0) {
            snprintf(best_name, sizeof best_name, "%s", n);
            best = v;
        }
    }
    closedir(d);
    return best;
}

static int add_dir(aip__cluster *c, const char *path)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        aip__rank_dir *r = realloc(c->r, cap * sizeof *r);
        if (!r)
            return -1;
        c->r = r;
        c->cap = cap;
    }
    aip__rank_dir *r = &c->r[c->n];
    memset(r, 0, sizeof *r);
    if (!(r->path = strdup(path)))
        return -1;
    r->rank = find_rank(path);
    if (r->rank == -2) { /* not "no profiler_info": we could not look */
        aip__cluster_problem(r, "cannot read the directory: %s", strerror(errno));
        r->unreadable = 1;
        r->rank = -1;
    }
    r->ts = dir_ts(path);
    r->first_us = r->last_us = r->clock_offset_us = NAN;
    r->level = -1;
    c->n++;
    return 0;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder the search could not list, "PATH: reason"; -1 no memory. */
static int note_unreadable(aip__cluster *c, const char *path, int err)
{
    char **v = realloc(c->unreadable, (c->n_unreadable + 1) * sizeof *v);
    if (!v)
        return -1;
    c->unreadable = v;
    size_t n = strlen(path) + strlen(strerror(err)) + 3;
    if (!(v[c->n_unreadable] = malloc(n)))
        return -1;
    snprintf(v[c->n_unreadable++], n, "%s: %s", path, strerror(err));
    return 0;
}

/* Depth-first; a rank directory's insides are not searched again. */
static int walk(aip__cluster *c, const char *path, int depth)
{
    DIR *d = opendir(path);
    if (!d) /* it may hold ranks of the job: named in the verdict */
        return note_unreadable(c, path, errno);
    char **subs = NULL;
    size_t n = 0, cap = 0;
    int err = 0;
    struct dirent *e;
    while (!err && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, OUT_DIR))
            continue;
        char sub[PATH_MAX];
        struct stat st;
        if (aip__join(sub, sizeof sub, path, e->d_name) || lstat(sub, &st) || !S_ISDIR(st.st_mode))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **v = realloc(subs, cap * sizeof *v);
            if (!v) {
                err = -1;
                break;
            }
            subs = v;
        }
        if (!(subs[n] = strdup(sub)))
            err = -1;
        else
            n++;
    }
    closedir(d);
    /* Sorted, so the order (and every output) does not depend on readdir;
     * qsort: a job's thousands of rank directories may share one folder. */
    if (n)
        qsort(subs, n, sizeof *subs, by_text);
    for (size_t i = 0; i < n; i++) {
        if (!err) {
            if (ends_with(subs[i], "ascend_pt"))
                err = add_dir(c, subs[i]);
            else if (depth < MAX_DEPTH)
                err = walk(c, subs[i], depth + 1);
        }
        free(subs[i]);
    }
    free(subs);
    return err;
}

void aip__cluster_problem(aip__rank_dir *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->problem, sizeof r->problem, fmt, ap);
    va_end(ap);
}

static void rank_paths(const aip__rank_dir *r, char *csv, char *comm)
{
    char out[PATH_MAX];
    if (aip__join(out, PATH_MAX, r->path, "ASCEND_PROFILER_OUTPUT") ||
        aip__join(csv, PATH_MAX, out, "step_trace_time.csv") ||
        aip__join(comm, PATH_MAX, out, "communication.json"))
        csv[0] = comm[0] = 0;
}

/* A rank exported as databases only (export type db): no
 * step_trace_time.csv, an analysis.db (a regular file, not a link) in its
 * place; its path in `db`. */
static int db_only(const aip__rank_dir *r, char *db)
{
    char out[PATH_MAX], csv[PATH_MAX];
    struct stat st;
    return !aip__join(out, PATH_MAX, r->path, "ASCEND_PROFILER_OUTPUT") &&
           !aip__join(csv, PATH_MAX, out, "step_trace_time.csv") &&
           !aip__join(db, PATH_MAX, out, "analysis.db") && lstat(csv, &st) &&
           !lstat(db, &st) && S_ISREG(st.st_mode);
}

/* What a rank directory lacks: a rank, or anything to read or analyse;
 * sets r->analyse when only the analysis is missing. */
static void check_rank(aip__rank_dir *r)
{
    char csv[PATH_MAX], comm[PATH_MAX], fw[PATH_MAX], out[PATH_MAX], db[PATH_MAX];
    struct stat st;
    if (r->problem[0])
        return;
    if (r->rank < 0) {
        aip__cluster_problem(r, "no profiler_info_{rank}.json: not a rank's result directory, "
                                "or its program ended before writing it");
        return;
    }
    rank_paths(r, csv, comm);
    if (!csv[0] || aip__join(fw, sizeof fw, r->path, "FRAMEWORK") ||
        aip__join(out, sizeof out, r->path, "ASCEND_PROFILER_OUTPUT")) {
        aip__cluster_problem(r, "path too long");
        return;
    }
    /* A link there could make a shared job directory's owner feed this
     * pass (often run as root) any file: refused, as for outputs. */
    if (!lstat(out, &st) && S_ISLNK(st.st_mode)) {
        aip__cluster_problem(r, "ASCEND_PROFILER_OUTPUT is a symbolic link: not followed");
        return;
    }
    if (!lstat(csv, &st) || db_only(r, db))
        return;
    if (stat(fw, &st) || !S_ISDIR(st.st_mode))
        aip__cluster_problem(r, "neither ASCEND_PROFILER_OUTPUT/step_trace_time.csv nor "
                                "FRAMEWORK/ (raw data) to analyse");
    else
        r->analyse = 1;
}

typedef struct rank_batch {
    aip__cluster *c;
    aip__rank_dir **ranks;    /* those analysed, in the order of c->r */
    const aip_dir_result *results;
} rank_batch;

/* Without a terminal's bar, a line as each rank starts; a failed one is
 * not used, with the reason. */
static int rank_event(void *arg, unsigned event, size_t index, size_t done, size_t total)
{
    rank_batch *b = arg;
    aip__rank_dir *r = index < total ? b->ranks[index] : NULL;
    (void)done;
    if (event == AIP_DIRS_STARTED && !b->c->quiet && b->c->progress_fd < 0)
        aip__cluster_say(b->c, "analysing %s (rank %ld)\n", r->path, r->rank);
    else if (event == AIP_DIRS_DONE && b->results[index].status)
        aip__cluster_problem(r, "analysis failed: %s", b->results[index].message);
    return 0;
}

/* The ranks not analysed yet, through aip_analyse_dirs(): each in its own
 * forked process, at most `jobs` at a time (as `aiprof analyse -j`), so
 * that one directory's crash or memory blow-up cannot take the cluster
 * pass down; jobs <= 0: one at a time in this process. */
static void analyse_ranks(aip__cluster *c, long jobs)
{
    size_t total = 0;
    for (size_t i = 0; i < c->n; i++)
        total += c->r[i].analyse && !c->r[i].problem[0];
    if (!total)
        return;
    rank_batch b = {.c = c, .ranks = calloc(total, sizeof *b.ranks)};
    const char **paths = calloc(total, sizeof *paths);
    aip_dir_result *res = calloc(total, sizeof *res);
    if (!b.ranks || !paths || !res) {
        for (size_t i = 0; i < c->n; i++)
            if (c->r[i].analyse && !c->r[i].problem[0])
                aip__cluster_problem(&c->r[i], "analysis failed: out of memory");
    } else {
        for (size_t i = 0, k = 0; i < c->n; i++)
            if (c->r[i].analyse && !c->r[i].problem[0]) {
                b.ranks[k] = &c->r[i];
                paths[k++] = c->r[i].path;
            }
        aip_analyse_options ao;
        aip_analyse_options_init(&ao);
        ao.quiet = 1;
        aip_analyse_dirs_options o;
        aip_analyse_dirs_options_init(&o);
        o.analyse = &ao;
        o.workers = jobs > 0 ? jobs : 1;
        o.processes = jobs > 0;
        o.progress_fd = c->progress_fd;
        o.progress_label = "rank directories analysed";
        o.progress = rank_event;
        o.progress_arg = &b;
        b.results = res;
        aip_analyse_dirs(paths, total, &o, res);
    }
    free(b.ranks);
    free(paths);
    free(res);
}

static int read_rank(aip__cluster *c, aip__rank_dir *r)
{
    char csv[PATH_MAX], comm[PATH_MAX];
    if (r->problem[0])
        return 0;
    char db[PATH_MAX];
    rank_paths(r, csv, comm);
    if (db_only(r, db)) { /* msprof-analyze reads such a rank from its db: so do we */
        if (aip__cluster_read_rank_db(r, db))
            return -1;
        aip__cluster_comm_span(r);
    } else if (aip__cluster_read_text(c, r, csv, comm)) {
        return -1;
    }
    if (r->problem[0])
        return 0;
    return aip__cluster_read_meta(c, r) || aip__cluster_rank_share(c, r) ? -1 : 0;
}

static int by_rank(const void *a, const void *b)
{
    const aip__rank_dir *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return strcmp(x->path, y->path);
}

static void free_cluster(aip__cluster *c)
{
    for (size_t i = 0; i < c->n; i++)
        aip__rank_dir_free(&c->r[i]);
    free(c->r);
    free(c->slow);
    for (size_t i = 0; i < c->n_unreadable; i++)
        free(c->unreadable[i]);
    free(c->unreadable);
    aip__cluster_gaps_free(c);
    aip__cluster_parallel_free(&c->par);
    aip__cluster_intern_free(&c->rank_lists);
    aip__cluster_intern_free(&c->leaves);
}

void aip_cluster_options_init(aip_cluster_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->report_fd = -1;
    o->progress_fd = -1;
}

/* --mpi: the directories this process reads (all, in a single process). */
static int mine(const aip__cluster *c, size_t i)
{
    return i % (size_t)c->parts == (size_t)c->part;
}

aip_status aip_cluster_run(const char *dir, const aip_cluster_options *opt, size_t *bad_dirs)
{
    return aip__cluster_run(dir, opt, bad_dirs, NULL);
}

static aip_status cluster_run(const char *dir, const aip_cluster_options *opt, size_t *bad_dirs,
                              aip__cluster_mpi *mpi);

/* A result directory whatever its name: it has FRAMEWORK/ (raw data). */
static int has_framework(const char *path)
{
    char fw[PATH_MAX];
    struct stat st;
    return !aip__join(fw, sizeof fw, path, "FRAMEWORK") && !lstat(fw, &st) && S_ISDIR(st.st_mode);
}

/* For `aiprof advise` (src/insight/advise_cluster.c): the ranks of the
 * given directories read as `aiprof cluster` reads them (a rank not
 * analysed yet is analysed first, in this process), the same drops, the
 * cross-rank split in memory; nothing written to cluster_analysis_output/
 * and nothing said.  Each path is a rank directory (`*ascend_pt`) or a
 * folder searched for them. */
aip_status aip__cluster_find(const char *const *paths, size_t n_paths, aip__cluster *c)
{
    memset(c, 0, sizeof *c);
    c->dir = n_paths ? paths[0] : NULL;
    c->fd = c->progress_fd = -1;
    c->parts = 1;
    aip_status s = AIP_OK;
    int err = 0;
    for (size_t i = 0; i < n_paths && !s && !err; i++) {
        s = aip__path_check(paths[i], "rank or cluster directory");
        if (!s)
            s = aip__existing_dir(paths[i], "rank or cluster directory");
        if (!s)
            err = ends_with(paths[i], "ascend_pt") || has_framework(paths[i])
                      ? add_dir(c, paths[i]) : walk(c, paths[i], 1);
    }
    if (!s && err)
        s = aip__fail(AIP_ERR_NOMEM, "out of memory searching for rank directories");
    if (s)
        aip__cluster_close(c);
    return s;
}

aip_status aip__cluster_open(const char *const *paths, size_t n_paths, int quiet, aip__cluster *c)
{
    aip_status s = aip__cluster_find(paths, n_paths, c);
    if (s)
        return s;
    c->quiet = quiet;
    int err = 0;
    for (size_t i = 0; !s && !err && i < c->n; i++)
        check_rank(&c->r[i]);
    if (!s && !err)
        analyse_ranks(c, 0);
    for (size_t i = 0; !s && !err && i < c->n; i++)
        err = read_rank(c, &c->r[i]);
    if (!s && err)
        s = aip__fail(AIP_ERR_NOMEM, "out of memory reading the rank directories");
    if (!s && c->n) {
        qsort(c->r, c->n, sizeof *c->r, by_rank);
        aip__cluster_drop_duplicates(c);
        aip__cluster_drop_other_jobs(c);
        aip__cluster_check_columns(c);
        s = aip__cluster_parallel_build(c);
    }
    if (!s && !(c->slow = calloc(c->n ? c->n : 1, 1)))
        s = aip__fail(AIP_ERR_NOMEM, "out of memory");
    if (!s && aip__cluster_first_used(c))
        s = aip__cluster_comm_split(c);
    if (s)
        aip__cluster_close(c);
    return s;
}

void aip__cluster_close(aip__cluster *c)
{
    free_cluster(c);
    memset(c, 0, sizeof *c);
}

/* Past `ulimit -f` the writers get EFBIG and an error, not SIGXFSZ
 * (aip_analyse_dir); the forked rank analysers inherit the mask.  Here, so
 * that the MPI job's processes (cluster_mpi.c) have it too. */
aip_status aip__cluster_run(const char *dir, const aip_cluster_options *opt, size_t *bad_dirs,
                            aip__cluster_mpi *mpi)
{
    sigset_t xfsz;
    aip__xfsz_block(&xfsz);
    aip_status s = cluster_run(dir, opt, bad_dirs, mpi);
    aip__xfsz_restore(&xfsz);
    return s;
}

aip_status aip__cluster_options(const aip_cluster_options *opt, aip_cluster_options *out)
{
    aip_cluster_options_init(out);
    if (!opt)
        return AIP_OK;
    if (opt->struct_size < offsetof(aip_cluster_options, jobs) + sizeof opt->jobs)
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_cluster_options.struct_size is %zu "
                         "(call aip_cluster_options_init)", opt->struct_size);
    memcpy(out, opt, opt->struct_size < sizeof *out ? opt->struct_size : sizeof *out);
    out->struct_size = sizeof *out;
    return AIP_OK;
}

static aip_status cluster_run(const char *dir, const aip_cluster_options *opt, size_t *bad_dirs,
                              aip__cluster_mpi *mpi)
{
    if (bad_dirs)
        *bad_dirs = 0;
    aip_cluster_options given;
    aip_status s = aip__cluster_options(opt, &given);
    if (s)
        return s;
    opt = &given;
    long jobs = opt->jobs;
    if (!dir)
        return aip__fail(AIP_ERR_INVALID_ARG, "no directory given");
    s = aip__path_check(dir, "cluster directory");
    if (!s)
        s = aip__existing_dir(dir, "cluster directory");
    if (s)
        return s;
    aip__cluster c = {.dir = dir, .quiet = opt->quiet, .fd = opt->report_fd,
                      .progress_fd = opt->quiet ? -1 : opt->progress_fd, .parts = 1};
    if (mpi)
        aip__cluster_mpi_share(mpi, &c.part, &c.parts);
    int err = ends_with(dir, "ascend_pt") ? add_dir(&c, dir) : walk(&c, dir, 1);
    for (size_t i = 0; !err && i < c.n; i++)
        if (mine(&c, i))
            check_rank(&c.r[i]); /* the others' r->analyse stays 0: not analysed here */
    if (!err)
        analyse_ranks(&c, jobs);
    for (size_t i = 0; !err && i < c.n; i++)
        if (mine(&c, i)) {
            err = read_rank(&c, &c.r[i]);
            aip__progress_bar(c.progress_fd, "rank directories read", i + 1, c.n, 0, NULL);
        }
    s = err ? aip__fail(AIP_ERR_NOMEM, "out of memory reading the rank directories") : AIP_OK;
    if (mpi) /* the shares to process 0; the others are done */
        s = aip__cluster_gather(&c, mpi, s);
    if (s || c.part) {
        free_cluster(&c);
        return s;
    }
    if (c.n) /* qsort(NULL, 0, ...) is undefined */
        qsort(c.r, c.n, sizeof *c.r, by_rank);
    aip__cluster_drop_duplicates(&c);
    aip__cluster_drop_other_jobs(&c);
    aip__cluster_check_columns(&c);
    char out_dir[PATH_MAX];
    aip__cluster_links links = {0};
    s = aip__join(out_dir, sizeof out_dir, dir, OUT_DIR);
    if (!s)
        s = aip__cluster_parallel_build(&c);
    if (!s && !(c.slow = calloc(c.n ? c.n : 1, 1)))
        s = aip__fail(AIP_ERR_NOMEM, "out of memory");
    if (!s && aip__cluster_first_used(&c)) { /* no output folder for nothing */
        s = aip__mkdirs(out_dir);
        if (!s)
            s = aip__cluster_write_step_trace(&c, out_dir);
        if (!s)
            s = aip__cluster_write_groups(&c, out_dir);
        if (!s)
            s = aip__cluster_comm(&c, out_dir);
        if (!s)
            s = aip__cluster_write_db(&c, out_dir);
        if (!s)
            s = aip__cluster_links_build(&c, &links);
    }
    if (!s)
        s = aip__cluster_gaps_build(&c);
    size_t used = 0, bad = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (c.r[i].problem[0]) {
            bad++;
            if (c.r[i].rank >= 0)
                aip__cluster_say(&c, "not used: %s (rank %ld): %s\n", c.r[i].path, c.r[i].rank,
                                 c.r[i].problem);
            else
                aip__cluster_say(&c, "not used: %s: %s\n", c.r[i].path, c.r[i].problem);
        } else {
            used++;
        }
    }
    if (!s && !c.n)
        s = aip__fail(AIP_ERR_NOT_FOUND,
                      "%s: no rank result directory (*ascend_pt with "
                      "profiler_info_{rank}.json) found, to depth %d%s%s",
                      dir, MAX_DEPTH, c.n_unreadable ? "; not readable: " : "",
                      c.n_unreadable ? c.unreadable[0] : "");
    else if (!s && !used)
        s = aip__fail(AIP_ERR_NOT_FOUND, "%s: none of the %zu rank directories could be used", dir,
                      c.n);
    if (!s) {
        aip__cluster_say(&c, "%zu ranks analysed, %zu directories not used; %s/\n", used, bad,
                         out_dir);
        if (c.par.ptd_problem[0])
            aip__cluster_say(&c, "distributed_args not used (no DP/PP/TP Index): %s\n",
                             c.par.ptd_problem);
        aip__cluster_gaps_verdict(&c);
        aip__cluster_verdict(&c, used);
        aip__cluster_links_verdict(&c, &links);
        if (opt->html) {
            s = aip__cluster_write_html(&c, &links, c.slow, out_dir);
            if (!s)
                aip__cluster_say(&c, "report: %s/cluster_report.html\n", out_dir);
        }
    }
    aip__cluster_links_free(&links);
    if (bad_dirs)
        *bad_dirs = bad;
    if (opt->incomplete)
        *opt->incomplete = s ? 0 : aip__cluster_incomplete(&c);
    free_cluster(&c);
    return s;
}
