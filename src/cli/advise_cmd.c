/*
 * advise_cmd.c — `aiprof advise DIR... [--json] [--fail-on SEVERITY]`:
 * what to fix first in a result directory, from the rules of
 * docs/ADVISE.md (aip_advise()).  With --fail-on the exit status gates a
 * CI job: 3 when a finding at or above that severity was found.
 *
 * Uses only the public API.
 */
#include "cli.h"

#include "aiprof.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AIP_EXIT_FINDINGS 3 /* --fail-on: a finding at or above the severity */

static void advise_usage(FILE *f)
{
    fputs("Usage: aiprof advise DIR... [--json] [--fail-on SEVERITY] [-q]\n"
          "\n"
          "Read a result directory (*_ascend_pt) and say what to fix first: findings\n"
          "ranked by severity, then by the time at stake per step, each with its\n"
          "evidence (steps, ops, kernels, numbers), where to look in the trace\n"
          "(trace_view.json timestamps, us) and what to try.  A DIR that holds\n"
          "result directories (a cluster's ranks, a trace handler's folder) stands\n"
          "for the *ascend_pt ones one or two levels below it, each advised in turn.\n"
          "Rules (docs/ADVISE.md):\n"
          "  gc                   Python garbage collection inside steps\n"
          "  dataloader           data-loading ranges (DataLoader, mstx \"dataloader\")\n"
          "  sync                 host waits on the device (.item(), clFinish,\n"
          "                       cudaStreamSynchronize, ...)\n"
          "  osrt                 blocking OS calls on the training thread (host_sys osrt)\n"
          "  profiler_steps       first / last step inflated by the profiler's start/stop\n"
          "  small_kernels        many short kernels: launch overhead dominates\n"
          "  device_idle          device idle within steps (host-bound steps)\n"
          "  comm_not_overlapped  communication with no computation beside it\n"
          "  memory_growth / memory_peak   the peak and what holds it, growth per step\n"
          "\n"
          "Severity: high >= 20% of the mean step at stake, medium >= 5%, low >= 1%,\n"
          "info below (memory: growth against the peak).\n"
          "\n"
          "Options:\n"
          "  --json              JSON on stdout instead of text (one object per DIR,\n"
          "                      one per line of a JSON array when several)\n"
          "  --fail-on SEVERITY  exit 3 when a finding is at or above SEVERITY\n"
          "                      (info, low, medium, high): a CI gate\n"
          "  -q, --quiet         no warnings about damaged raw data\n"
          "  -h, --help          show this help\n"
          "\n"
          "Exit status: 0 done, 1 failed, 2 usage error, 3 a finding at or above\n"
          "--fail-on.\n",
          f);
}

/* A DIR that is not a result directory itself (no FRAMEWORK/) but holds
 * some (a cluster's rank directories, a tensorboard_trace_handler
 * folder): its *ascend_pt entries, one or two levels down, sorted. */
typedef struct dir_list {
    char **v;
    size_t n, cap;
} dir_list;

static int push(dir_list *l, const char *a, const char *b)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    size_t n = strlen(a) + strlen(b) + 2;
    if (!(l->v[l->n] = malloc(n)))
        return -1;
    snprintf(l->v[l->n++], n, "%s/%s", a, b);
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *t)
{
    size_t a = strlen(s), b = strlen(t);
    return a >= b && !strcmp(s + a - b, t);
}

static int collect(dir_list *l, const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        size_t before = l->n;
        if (push(l, dir, e->d_name)) {
            rc = -1;
            break;
        }
        char *p = l->v[before];
        if (!is_dir(p) || (!ends_with(p, "ascend_pt") && depth > 1)) {
            free(l->v[--l->n]);
            continue;
        }
        if (!ends_with(p, "ascend_pt")) { /* one level further */
            l->n--;
            rc = collect(l, p, depth + 1);
            free(p);
        }
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int severity_parse(const char *s)
{
    static const char *const names[] = {"info", "low", "medium", "high"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

int cli_advise(int argc, char **argv)
{
    const char **dirs = calloc((size_t)argc, sizeof *dirs);
    size_t n = 0;
    int json = 0, fail_on = -1;
    if (!dirs) {
        fprintf(stderr, "aiprof advise: no memory\n");
        return AIP_EXIT_FAILED;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            advise_usage(stdout);
            free(dirs);
            return AIP_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            setenv("AIPROF_QUIET", "1", 1);
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--fail-on") || !strncmp(a, "--fail-on=", 10)) {
            if (a[9] == '=')
                v = a + 10;
            else if (i + 1 < argc)
                v = argv[++i];
            if (!v || (fail_on = severity_parse(v)) < 0) {
                free(dirs);
                return cli_usage_error("advise", "--fail-on needs info, low, medium or high%s%s",
                                       v ? ", not " : "", v ? v : "");
            }
        } else if (a[0] == '-' && a[1]) {
            free(dirs);
            return cli_usage_error("advise", "unknown option %s", a);
        } else {
            dirs[n++] = a;
        }
    }
    if (!n) {
        free(dirs);
        return cli_usage_error("advise", "no result directory given");
    }
    dir_list found = {0};
    for (size_t i = 0; i < n; i++) {
        char fw[4096];
        snprintf(fw, sizeof fw, "%s/FRAMEWORK", dirs[i]);
        size_t before = found.n;
        if (is_dir(dirs[i]) && !is_dir(fw) && !ends_with(dirs[i], "ascend_pt") &&
            collect(&found, dirs[i], 1) == 0 && found.n > before) {
            qsort(found.v + before, found.n - before, sizeof *found.v, cmp_str);
            continue;
        }
        if (push(&found, dirs[i], "") == 0)
            found.v[found.n - 1][strlen(dirs[i])] = 0; /* as given */
    }
    free(dirs);
    dirs = (const char **)found.v;
    n = found.n;
    int rc = AIP_EXIT_OK, worst_all = -1;
    fflush(stdout);
    if (json && n > 1 && write(STDOUT_FILENO, "[\n", 2) != 2)
        rc = AIP_EXIT_FAILED;
    for (size_t i = 0; i < n; i++) {
        int worst = -1;
        if (json && n > 1 && i && write(STDOUT_FILENO, ",\n", 2) != 2)
            rc = AIP_EXIT_FAILED;
        if (!json && i)
            (void)!write(STDOUT_FILENO, "\n", 1);
        if (aip_advise(dirs[i], STDOUT_FILENO, json, &worst)) {
            fprintf(stderr, "aiprof advise: %s: %s\n", dirs[i], aip_last_error());
            rc = AIP_EXIT_FAILED;
            if (json && n > 1)
                (void)!write(STDOUT_FILENO, "null", 4);
        }
        worst_all = worst > worst_all ? worst : worst_all;
    }
    if (json && n > 1 && write(STDOUT_FILENO, "]\n", 2) != 2)
        rc = AIP_EXIT_FAILED;
    for (size_t i = 0; i < found.n; i++)
        free(found.v[i]);
    free(found.v);
    if (rc == AIP_EXIT_OK && fail_on >= 0 && worst_all >= fail_on)
        rc = AIP_EXIT_FINDINGS;
    return rc;
}
