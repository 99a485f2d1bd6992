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
          "(trace_view.json timestamps, us) and what to try.  Several DIRs, or a\n"
          "DIR that holds result directories (a cluster's ranks, a trace handler's\n"
          "folder: the *ascend_pt ones below it, as `aiprof cluster` finds them), are\n"
          "one job: each directory advised, the ranks judged across (slow rank, slow\n"
          "link) and every finding ranked in one list, saying whose it is.\n"
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
          "  slow_rank            (a job) a rank its peers wait for: aiprof cluster's rule\n"
          "  slow_link            (a job) links below their transport's median bandwidth\n"
          "\n"
          "Severity: high >= 20% of the mean step at stake, medium >= 5%, low >= 1%,\n"
          "info below (memory: growth against the peak).\n"
          "\n"
          "Options:\n"
          "  --json              JSON on stdout instead of text (one object; for a\n"
          "                      job, its directories and one list of findings)\n"
          "  --fail-on SEVERITY  exit 3 when a finding is at or above SEVERITY\n"
          "                      (info, low, medium, high): a CI gate\n"
          "  -q, --quiet         no warnings about damaged raw data\n"
          "  -h, --help          show this help\n"
          "\n"
          "Exit status: 0 done, 1 failed, 2 usage error, 3 a finding at or above\n"
          "--fail-on.\n",
          f);
}

static int is_dir(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISDIR(st.st_mode);
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
    /* One result directory: its findings alone.  Anything else (several,
     * a cluster's or a trace handler's folder): one job, its ranks judged
     * across and every finding ranked together. */
    char fw[4096];
    snprintf(fw, sizeof fw, "%s/FRAMEWORK", dirs[0]);
    int one = n == 1 && (is_dir(fw) || !is_dir(dirs[0]));
    int rc = AIP_EXIT_OK, worst_all = -1;
    fflush(stdout);
    aip_status st = one ? aip_advise(dirs[0], STDOUT_FILENO, json, &worst_all)
                        : aip_advise_dirs(dirs, n, STDOUT_FILENO, json, &worst_all);
    if (st) {
        fprintf(stderr, "aiprof advise: %s\n", aip_last_error());
        rc = AIP_EXIT_FAILED;
    }
    free(dirs);
    if (rc == AIP_EXIT_OK && fail_on >= 0 && worst_all >= fail_on)
        rc = AIP_EXIT_FINDINGS;
    return rc;
}
