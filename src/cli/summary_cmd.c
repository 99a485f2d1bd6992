/*
 * summary_cmd.c — `aiprof summary DIR [--html FILE] [-q]`: a result
 * directory at a glance in the terminal (top ops by self time, step times,
 * memory peaks, dropped events, what was not collected and why), and
 * optionally the same as one self-contained HTML page.
 *
 * Uses only the public API (aip_summarise()).
 */
#include "cli.h"

#include "aiprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void summary_usage(FILE *f)
{
    fputs("Usage: aiprof summary DIR [--html FILE] [-q]\n"
          "\n"
          "Summarise a result directory from its raw data: top ops by self time, step\n"
          "times (min/median/max), memory peaks, dropped events, and what was not\n"
          "collected and why.\n"
          "\n"
          "Options:\n"
          "  --html FILE     also write the summary as one self-contained HTML page\n"
          "                  (tables, step-time and memory charts; no network needed)\n"
          "  --no-text       do not print the text summary (with --html)\n"
          "  -q, --quiet     no warnings about damaged raw data\n"
          "  -h, --help      show this help\n"
          "\n"
          "Exit status: 0 done, 1 failed, 2 usage error.\n",
          f);
}

int cli_summary(int argc, char **argv)
{
    const char *dir = NULL, *html = NULL;
    int quiet = 0, text = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            summary_usage(stdout);
            return AIP_EXIT_OK;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--no-text")) {
            text = 0;
        } else if (!strcmp(a, "--html")) {
            if (i + 1 >= argc)
                return cli_usage_error("summary", "option needs a value: %s", a);
            html = argv[++i];
        } else if (!strncmp(a, "--html=", 7)) {
            html = a + 7;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("summary", "unknown option %s", a);
        } else if (!dir) {
            dir = a;
        } else {
            return cli_usage_error("summary", "more than one DIR: %s", a);
        }
    }
    if (!dir)
        return cli_usage_error("summary", "no result directory given");
    fflush(stdout);
    if (quiet)
        setenv("AIPROF_QUIET", "1", 1); /* the library's warnings */
    aip_status s = aip_summarise(dir, text ? STDOUT_FILENO : -1, html);
    if (s) {
        fprintf(stderr, "aiprof summary: %s: %s\n", dir, aip_last_error());
        return AIP_EXIT_FAILED;
    }
    if (html)
        fprintf(stderr, "aiprof summary: wrote %s\n", html);
    return AIP_EXIT_OK;
}
