/*
 * analyse_cmd.c — `aiprof analyse PATH... [-j N] [--export-type text|db]
 * [--trace-format torch_npu|kineto|perfetto]`.
 *
 * Mirrors torch_npu.profiler.profiler.analyse(): PATH is a result directory
 * (it holds FRAMEWORK/) or a folder whose immediate subdirectories are
 * result directories.  The library's aip_analyse_dirs() analyses each in
 * its own forked child (like the seed's ProcessPoolExecutor with fork), at
 * most -j at a time: a crash or a memory blow-up in one directory cannot
 * take the others down.  -j follows max_process_number: default half the
 * CPUs, invalid or ≤ 0 → default, above the CPU count → the CPU count.
 */
#include "cli.h"
#include "fs.h"

#include "aiprof.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct opts {
    long jobs;                /* 0 = default (aip_analyse_dirs': half the CPUs) */
    unsigned export_type;     /* 0 = as recorded */
    unsigned trace_format;    /* aip_trace_format */
    int quiet;
    char **paths;
    int n_paths;
} opts;

typedef struct list {
    char **v;
    size_t n, cap;
    aip_dir_result *results;  /* while analysed: how each went */
    int bar;                  /* a progress bar on stderr */
} list;

static void analyse_usage(FILE *f)
{
    fputs("Usage: aiprof analyse PATH... [-j N] [--export-type text|db]\n"
          "                      [--trace-format torch_npu|kineto|perfetto] [-q]\n"
          "\n"
          "Analyse profiling results offline.  PATH is a result directory\n"
          "({worker}_{timestamp}_ascend_pt, holding FRAMEWORK/) or a directory whose\n"
          "immediate subdirectories are result directories.  Each result directory\n"
          "gets ASCEND_PROFILER_OUTPUT/ (trace_view.json, the CSV summaries,\n"
          "ascend_pytorch_profiler.db, analysis.db) and logs/analyse.log.  Paths may\n"
          "only contain letters, digits and _ - . / and no symbolic links.\n"
          "\n"
          "Options:\n"
          "  -j, --jobs N           directories analysed in parallel (default: half the\n"
          "                         CPUs; above the CPU count: the CPU count; invalid: default)\n"
          "  --export-type TYPE     text (JSON, CSV and the databases), db (the databases\n"
          "                         only) or text,db; default: the export type in\n"
          "                         profiler_info.json, else text\n"
          "  --trace-format FORM    trace_view.json as torch_npu writes it (torch_npu,\n"
          "                         the default: a JSON array with string ts of absolute\n"
          "                         epoch us; for msprof-analyze, MindStudio Insight)\n"
          "                         or as torch.profiler/Kineto does (kineto: an object\n"
          "                         with numeric ts relative to baseTimeNanoseconds; for\n"
          "                         HTA, TensorBoard, speedscope, chrome://tracing)\n"
          "                         or perfetto: torch_npu's trace_view.json and\n"
          "                         trace.perfetto-trace, Perfetto's own protobuf form\n"
          "                         (exact ns, far smaller; for ui.perfetto.dev)\n"
          "  -q, --quiet            no warnings and no progress display\n"
          "  -h, --help             show this help\n"
          "\n"
          "Exit status: 0 all directories analysed, 1 some failed, 2 usage error.\n",
          f);
}

static long cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* max_process_number rules; a bad value is not fatal, as in the seed. */
static long parse_jobs(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    long cpus = cpu_count(), def = cpus / 2 > 1 ? cpus / 2 : 1;
    if (errno || end == s || *end || v <= 0) {
        fprintf(stderr, "aiprof analyse: warning: invalid -j value '%s'; using %ld\n", s, def);
        return def;
    }
    return v > cpus ? cpus : v;
}

/* "text", "db", "text,db"; ExportType.Text spellings too. */
static unsigned parse_export_type(const char *s)
{
    unsigned bits = 0;
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return 0;
    strcpy(buf, s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        const char *dot = strrchr(tok, '.');
        const char *w = dot ? dot + 1 : tok;
        char low[16];
        size_t i = 0;
        for (; w[i] && i < sizeof low - 1; i++)
            low[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
        low[i] = 0;
        if (!strcmp(low, "text"))
            bits |= AIP_EXPORT_TEXT;
        else if (!strcmp(low, "db"))
            bits |= AIP_EXPORT_DB;
        else
            return 0;
    }
    return bits;
}

/* @return -1 to continue, else an exit code. */
static int parse_args(int argc, char **argv, opts *o)
{
    o->paths = calloc((size_t)argc + 1, sizeof *o->paths);
    if (!o->paths)
        return AIP_EXIT_FAILED;
    int only_paths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (only_paths || a[0] != '-' || !a[1]) {
            o->paths[o->n_paths++] = argv[i];
            continue;
        }
        if (!strcmp(a, "--")) {
            only_paths = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            analyse_usage(stdout);
            return AIP_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs") || !strncmp(a, "--jobs=", 7) ||
                   (a[1] == 'j' && a[2])) {
            if (!strncmp(a, "--jobs=", 7))
                val = a + 7;
            else if (a[1] == 'j' && a[2])
                val = a + 2;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return cli_usage_error("analyse", "option '%s' needs a number", a);
            o->jobs = parse_jobs(val);
        } else if (!strcmp(a, "--export-type") || !strncmp(a, "--export-type=", 14)) {
            if (a[13] == '=')
                val = a + 14;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return cli_usage_error("analyse", "option '%s' needs text or db", a);
            unsigned t = parse_export_type(val);
            if (!t) /* the seed: an invalid value falls back to profiler_info.json */
                fprintf(stderr, "aiprof analyse: warning: unknown export type '%s'; using the "
                        "one recorded in profiler_info.json\n", val);
            o->export_type |= t;
        } else if (!strcmp(a, "--trace-format") || !strncmp(a, "--trace-format=", 15)) {
            if (a[14] == '=')
                val = a + 15;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return cli_usage_error("analyse", "option '%s' needs torch_npu, kineto or perfetto",
                                       a);
            if (!strcmp(val, "torch_npu"))
                o->trace_format = AIP_TRACE_TORCH_NPU;
            else if (!strcmp(val, "kineto"))
                o->trace_format = AIP_TRACE_KINETO;
            else if (!strcmp(val, "perfetto"))
                o->trace_format = AIP_TRACE_PERFETTO;
            else /* a form asked for by name must not be replaced silently */
                return cli_usage_error("analyse", "unknown trace format '%s' (torch_npu, "
                                       "kineto or perfetto)", val);
        } else {
            return cli_usage_error("analyse", "unknown option '%s'", a);
        }
    }
    if (!o->n_paths)
        return cli_usage_error("analyse", "no PATH given");
    return -1;
}

/* The seed's path rule, checked here too so that a bad PATH is reported
 * before any directory is scanned. */
static int is_result_dir(const char *p)
{
    char fw[PATH_MAX + 16];
    struct stat st;
    if (strlen(p) >= PATH_MAX)
        return 0;
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", p);
    return lstat(fw, &st) == 0 && S_ISDIR(st.st_mode);
}

static int push(list *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s))
            return 0; /* given twice */
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    return (l->v[l->n] = strdup(s)) ? (int)(++l->n, 0) : -1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add PATH or its result subdirectories; @return 0, or 1 if PATH fails. */
static int discover(const char *path, list *out)
{
    /* The library's own rules for paths (fs.h), with its messages. */
    if (aip__path_check(path, "path") || aip__path_no_symlink(path) ||
        aip__existing_dir(path, "path")) {
        fprintf(stderr, "aiprof analyse: %s\n", aip_last_error());
        return 1;
    }
    if (is_result_dir(path))
        return push(out, path) < 0;
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "aiprof analyse: %s: cannot list: %s\n", path, strerror(errno));
        return 1;
    }
    list found = {0};
    struct dirent *e;
    struct stat st;
    int err = 0;
    while (!err && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub)
            continue;
        if (lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode) || !is_result_dir(sub))
            continue; /* symlinks are not followed */
        err = push(&found, sub) < 0;
    }
    closedir(d);
    if (found.n)
        qsort(found.v, found.n, sizeof *found.v, cmp_str);
    for (size_t i = 0; i < found.n; i++) {
        if (!err && push(out, found.v[i]) < 0)
            err = 1;
        free(found.v[i]);
    }
    free(found.v);
    if (!err && !found.n) {
        fprintf(stderr, "aiprof analyse: %s: no result directory (a directory holding FRAMEWORK/) "
                "found here or in its subdirectories\n", path);
        return 1;
    }
    return err;
}

/* Errors are shown even with -q; on a terminal, over the progress bar. */
static int tell_failure(void *arg, unsigned event, size_t index, size_t done, size_t total)
{
    const list *dirs = arg;
    (void)done;
    (void)total;
    const aip_dir_result *res = dirs->results ? &dirs->results[index] : NULL;
    if (event == AIP_DIRS_DONE && res && res->status) {
        fprintf(stderr, "%saiprof analyse: %s: %s\n", dirs->bar ? "\r\033[K" : "",
                dirs->v[index], res->message);
        fflush(stderr);
    }
    return 0;
}

/* Each directory in its own forked process (aip_analyse_dirs), at most
 * -j at a time.  On a terminal: a progress bar redrawn in place, and a
 * line for each failure (which stays above the bar).  Elsewhere (logs,
 * pipes): nothing but the errors and the final line, so the output stays
 * parseable.  @return the directories not analysed. */
static size_t run_all(list *dirs, const opts *o)
{
    if (!dirs->n)
        return 0;
    aip_analyse_options ao;
    aip_analyse_options_init(&ao);
    ao.export_type = o->export_type;
    ao.trace_format = o->trace_format;
    ao.quiet = o->quiet;
    aip_analyse_dirs_options d;
    aip_analyse_dirs_options_init(&d);
    d.analyse = &ao;
    d.workers = o->jobs;
    d.processes = 1;
    dirs->bar = isatty(STDERR_FILENO) && !o->quiet;
    d.progress_fd = dirs->bar ? STDERR_FILENO : -1;
    d.progress = tell_failure;
    d.progress_arg = dirs;
    dirs->results = calloc(dirs->n, sizeof *dirs->results);
    if (!dirs->results) {
        fprintf(stderr, "aiprof analyse: out of memory\n");
        return dirs->n;
    }
    aip_analyse_dirs((const char *const *)dirs->v, dirs->n, &d, dirs->results);
    size_t failed = 0;
    for (size_t i = 0; i < dirs->n; i++)
        failed += dirs->results[i].status != AIP_OK;
    free(dirs->results);
    dirs->results = NULL;
    return failed;
}

int cli_analyse(int argc, char **argv)
{
    opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.paths);
        return rc;
    }
    list dirs = {0};
    size_t bad_paths = 0;
    for (int i = 0; i < o.n_paths; i++)
        bad_paths += (size_t)discover(o.paths[i], &dirs);
    /* A PATH that could not be used counts as one failed directory. */
    size_t failed = run_all(&dirs, &o) + bad_paths;
    printf("analysed %zu directories, %zu failed\n", dirs.n + bad_paths, failed);
    for (size_t i = 0; i < dirs.n; i++)
        free(dirs.v[i]);
    free(dirs.v);
    free(o.paths);
    return failed ? AIP_EXIT_FAILED : AIP_EXIT_OK;
}
