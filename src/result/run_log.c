/*
 * run_log.c — the analysis log (see run_log.h).
 */
#include "run_log.h"
#include "fs.h"
#include "model.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void aip__runlog_init(aip__run_log *r, const char *dir, int quiet)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->quiet = quiet || getenv("AIPROF_QUIET");
    clock_gettime(CLOCK_MONOTONIC, &r->mark);
}

void aip__runlog_free(aip__run_log *r)
{
    free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}

static void vline(aip__run_log *r, const char *prefix, const char *fmt, va_list ap)
{
    char line[1024];
    int n = vsnprintf(line, sizeof line, fmt, ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    size_t pl = strlen(prefix);
    if (aip__model_grow((void **)&r->buf, &r->cap, r->len + pl + len + 2, 1))
        return;
    memcpy(r->buf + r->len, prefix, pl);
    memcpy(r->buf + r->len + pl, line, len);
    r->len += pl + len;
    r->buf[r->len++] = '\n';
}

void aip__runlog_line(aip__run_log *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(r, "", fmt, ap);
    va_end(ap);
}

void aip__runlog_warn(aip__run_log *r, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aip__runlog_line(r, "warning: %s", msg);
    /* On a terminal, start by clearing the line: `aiprof analyse` may be
     * drawing its progress bar there. */
    if (!r->quiet)
        fprintf(stderr, "%saiprof: warning: %s: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "",
                r->dir, msg);
}

double aip__runlog_lap(aip__run_log *r)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double d = (double)(now.tv_sec - r->mark.tv_sec) + (double)(now.tv_nsec - r->mark.tv_nsec) / 1e9;
    r->mark = now;
    return d;
}

void aip__runlog_write(aip__run_log *r)
{
    char dir[PATH_MAX], path[PATH_MAX];
    if (aip__join(dir, sizeof dir, r->dir, "logs") || aip__join(path, sizeof path, dir, "analyse.log"))
        return;
    if (aip__mkdirs(dir) == AIP_OK)
        aip__write_file(path, r->buf ? r->buf : "", r->len);
}
