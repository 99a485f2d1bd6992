/*
 * session_log.h — logs/aiprof_{pid}.log of the trace being recorded.
 *
 * While a trace is open every warning and failure of the library is
 * appended there with time, level and pid, so a user finds the reason for a
 * missing or partial profile next to the data.
 */
#ifndef AIP_SESSION_LOG_H
#define AIP_SESSION_LOG_H

#include "error.h"

#include <time.h>

/* aip__log_expect() : a log is about to be opened (by the writer thread,
 * see recorder.h's aip__trace_info): lines logged until then are kept and
 * written first.  aip__log_close() drops them if it never opens.
 * aip__log_open() : open it; `first_msg` (or NULL), an INFO line logged at
 * `first_at` (CLOCK_REALTIME), goes before the kept lines: a trace's start
 * line, formatted off the training thread. */
void aip__log_expect(void);
void aip__log_open(const char *path, const struct timespec *first_at, const char *first_msg);
void aip__log_close(void);
void aip__log(const char *level, const char *fmt, ...) AIP_PRINTF(2, 3);

#endif
