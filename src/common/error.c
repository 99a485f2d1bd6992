/*
 * error.c — aip_strerror(), aip_last_error() and the warning channel.
 *
 * Library code never aborts: failures become a status plus a message that
 * names the problem (the path, the parameter, the file offset).
 */
#include "error.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local char last_error[512];
static _Atomic(aip__log_sink) log_sink;

const char *aip_strerror(aip_status status)
{
    /* The texts live beside the codes in aiprof.h (AIP_STATUS_LIST). */
    switch (status) {
#define STATUS_TEXT(code, number, message) case code: return message;
    AIP_STATUS_LIST(STATUS_TEXT)
#undef STATUS_TEXT
    }
    return "unknown status";
}

const char *aip_last_error(void) { return last_error; }

void aip__set_log_sink(aip__log_sink sink) { atomic_store(&log_sink, sink); }

static void emit(const char *level, const char *msg)
{
    aip__log_sink sink = atomic_load(&log_sink);
    if (sink)
        sink(level, msg);
}

aip_status aip__fail(aip_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    emit("ERROR", last_error);
    return status;
}

void aip__warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* A warning quotes paths and file contents (a rank directory's name, a
     * CSV cell): no control byte of theirs reaches the terminal or splits
     * the log line. */
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    if (!getenv("AIPROF_QUIET"))
        fprintf(stderr, "aiprof: warning: %s\n", msg);
    emit("WARNING", msg);
}
