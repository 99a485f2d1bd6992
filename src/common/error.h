/*
 * error.h — status messages: the thread-local "last error" text behind
 * aip_last_error(), and a printf-style setter used by every layer.
 */
#ifndef AIP_ERROR_H
#define AIP_ERROR_H

#include "aiprof.h"

#if defined(__GNUC__)
#define AIP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AIP_PRINTF(a, b)
#endif

/* aip__fail() : record `fmt` as this thread's last error; @return status. */
aip_status aip__fail(aip_status status, const char *fmt, ...) AIP_PRINTF(2, 3);

/* aip__warn() : print "aiprof: warning: ..." on stderr (unless AIPROF_QUIET
 * is set) and pass it to the session log hook if one is installed. */
void aip__warn(const char *fmt, ...) AIP_PRINTF(1, 2);

/* A sink that receives every warning and failure text (the session log). */
typedef void (*aip__log_sink)(const char *level, const char *message);
void aip__set_log_sink(aip__log_sink sink);

#endif
