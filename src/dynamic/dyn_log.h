/*
 * dyn_log.h — the dynamic-profiling logs in <config dir>/log/.
 *
 * dp_{hostname}_{pid}_rank_{rank}.log (what this process did) and
 * monitor_dp_{hostname}_{pid}_rank_{rank}.log (what the watcher saw), each
 * rotated at 200 KB into one `.1` backup, like the seed's RotatingFileHandler.
 * Lines: "2024-08-21 15:51:46,392 [INFO] [2127856] file: message".
 */
#ifndef AIP_DYN_LOG_H
#define AIP_DYN_LOG_H

#include "error.h"

#define AIP_DYN_LOG_MAX_BYTES (200 * 1024)

typedef struct aip__dyn_log {
    char path[4096];
    const char *source;   /* "dynamic.c", "dp_watch.c" (the log's source column) */
} aip__dyn_log;

/* Set up `log` for <dir>/log/<prefix>_{host}_{pid}_rank_{rank}.log
 * (creates the log directory, 0750). */
int aip__dyn_log_open(aip__dyn_log *log, const char *config_dir, const char *prefix,
                     const char *source);
void aip__dyn_log_write(aip__dyn_log *log, const char *level, const char *fmt, ...)
    AIP_PRINTF(3, 4);

#endif
