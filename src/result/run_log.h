/*
 * run_log.h — what one analysis of a result directory tells: lines for
 * logs/analyse.log (kept in memory, written at the end), warnings that
 * also go to stderr unless quiet, and phase timings.
 */
#ifndef AIP_RUN_LOG_H
#define AIP_RUN_LOG_H

#include "error.h"

#include <stddef.h>
#include <time.h>

typedef struct aip__run_log {
    const char *dir;          /* the result directory, for messages */
    int quiet;                /* no stderr (also AIPROF_QUIET) */
    struct timespec mark;     /* start of the current phase */
    char *buf;
    size_t len, cap;
} aip__run_log;

void aip__runlog_init(aip__run_log *r, const char *dir, int quiet);
void aip__runlog_free(aip__run_log *r);
/* aip__runlog_line() : one line of the log. */
void aip__runlog_line(aip__run_log *r, const char *fmt, ...) AIP_PRINTF(2, 3);
/* aip__runlog_warn() : "warning: ..." in the log and, unless quiet, stderr. */
void aip__runlog_warn(aip__run_log *r, const char *fmt, ...) AIP_PRINTF(2, 3);
/* aip__runlog_lap() : seconds since the last lap (or init). */
double aip__runlog_lap(aip__run_log *r);
/* aip__runlog_write() : logs/analyse.log of the directory (best effort). */
void aip__runlog_write(aip__run_log *r);

#endif
