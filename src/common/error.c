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
    switch (status) {
    case AIP_OK: return "success";
    case AIP_ERR_INVALID_ARG: return "invalid argument";
    case AIP_ERR_STATE: return "call not allowed in the current state";
    case AIP_ERR_NOMEM: return "out of memory";
    case AIP_ERR_IO: return "input/output error";
    case AIP_ERR_PATH: return "invalid path";
    case AIP_ERR_SYMLINK: return "path is a symbolic link";
    case AIP_ERR_FORMAT: return "not aiprof raw data";
    case AIP_ERR_VERSION: return "raw data from a newer aiprof version";
    case AIP_ERR_CORRUPT: return "corrupt data";
    case AIP_ERR_TRUNCATED: return "truncated data";
    case AIP_ERR_UNBALANCED: return "unbalanced push/pop";
    case AIP_ERR_UNSUPPORTED: return "not supported on this machine";
    case AIP_ERR_NOT_FOUND: return "not found";
    case AIP_ERR_LIMIT: return "size limit exceeded";
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
    if (!getenv("AIPROF_QUIET"))
        fprintf(stderr, "aiprof: warning: %s\n", msg);
    emit("WARNING", msg);
}
