/*
 * compare_cmd.c — `aiprof compare BASE NEW [--csv FILE] [--html FILE] [--threshold X]`:
 * what changed between two runs (aip_compare(), docs/ADVISE.md
 * "compare").
 *
 * Uses only the public API.
 */
#include "cli.h"

#include "aiprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void compare_usage(FILE *f)
{
    fputs("Usage: aiprof compare BASE NEW [--csv FILE] [--html FILE] [--threshold PERCENT]\n"
          "                      [-q]\n"
          "\n"
          "Set two result directories (*_ascend_pt) side by side: the step-time\n"
          "breakdown (step trace columns), then ops (name + input shapes), device\n"
          "kernels and copies, runtime API calls, communication ops and the memory\n"
          "peak, each with counts and time per step, ranked by the change per step.\n"
          "Times are per step, so runs with different numbers of steps compare.\n"
          "BASE and NEW may be two jobs (folders holding rank directories, as\n"
          "`aiprof cluster` finds them): ranks matched by global rank, the step\n"
          "breakdown per rank and each rank's top 5 changes.\n"
          "\n"
          "Options:\n"
          "  --threshold PERCENT  hide changes smaller than PERCENT of BASE's mean\n"
          "                       step time (memory: of BASE's peak); default 1\n"
          "  --csv FILE           also write the rows shown as CSV (columns of\n"
          "                       msprof-analyze compare's OperatorStatistic sheet)\n"
          "  --html FILE          also write the same tables as one self-contained\n"
          "                       HTML page\n"
          "  --no-text            do not print the tables (with --csv / --html)\n"
          "  -q, --quiet          no warnings about damaged raw data\n"
          "  -h, --help           show this help\n"
          "\n"
          "Exit status: 0 done, 1 failed, 2 usage error.\n",
          f);
}

int cli_compare(int argc, char **argv)
{
    const char *dirs[2] = {NULL, NULL}, *csv = NULL, *html = NULL;
    double threshold = 1;
    int n = 0, text = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            compare_usage(stdout);
            return AIP_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            setenv("AIPROF_QUIET", "1", 1);
        } else if (!strcmp(a, "--no-text")) {
            text = 0;
        } else if (!strcmp(a, "--csv") || !strcmp(a, "--threshold") || !strcmp(a, "--html")) {
            if (i + 1 >= argc)
                return cli_usage_error("compare", "option needs a value: %s", a);
            const char *v = argv[++i];
            if (a[2] == 'c') {
                csv = v;
            } else if (a[2] == 'h') {
                html = v;
            } else {
                char *end;
                threshold = strtod(v, &end);
                if (end == v || *end || !(threshold >= 0) || threshold > 1e6)
                    return cli_usage_error("compare", "--threshold needs a percentage >= 0, "
                                           "not %s", v);
            }
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("compare", "unknown option %s", a);
        } else if (n < 2) {
            dirs[n++] = a;
        } else {
            return cli_usage_error("compare", "more than two directories: %s", a);
        }
    }
    if (n < 2)
        return cli_usage_error("compare", "needs two result directories, BASE and NEW");
    fflush(stdout);
    if (aip_compare(dirs[0], dirs[1], text ? STDOUT_FILENO : -1, csv, html,
                    threshold / 100)) {
        fprintf(stderr, "aiprof compare: %s\n", aip_last_error());
        return AIP_EXIT_FAILED;
    }
    if (csv)
        fprintf(stderr, "aiprof compare: wrote %s\n", csv);
    if (html)
        fprintf(stderr, "aiprof compare: wrote %s\n", html);
    return AIP_EXIT_OK;
}
