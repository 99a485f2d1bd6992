/*
 * analyse_dirs.h — what the parts of aip_analyse_dirs() share: the run
 * (analyse_dirs.c: options, the events, the progress bar, the results)
 * and its two ways of running directories at once, forked processes
 * (analyse_dirs_procs.c) and threads (analyse_dirs_threads.c).  Either
 * way the calling thread alone reports: every event and the bar come from
 * it, so a caller's callback need not be thread-safe.
 */
#ifndef AIP_ANALYSE_DIRS_H
#define AIP_ANALYSE_DIRS_H

#include "aiprof.h"

typedef struct aip__dirs_run {
    const char *const *dirs;
    size_t n;
    aip_analyse_options analyse;     /* every directory's */
    aip_analyse_dirs_options o;      /* the caller's, defaults filled in */
    aip_dir_result *results;
    size_t workers;                  /* 1..n */
    size_t done, failed;
    int cancelled;                   /* the callback asked to stop */
} aip__dirs_run;

/* The calling thread's reports: dirs[i] started / finished (results[i]
 * filled) / nothing happened for a while.  Each returns non-zero once the
 * run is cancelled, after which nothing new may start. */
int aip__dirs_started(aip__dirs_run *r, size_t i);
int aip__dirs_finished(aip__dirs_run *r, size_t i);
int aip__dirs_waiting(aip__dirs_run *r);

/* aip__dirs_analyse_one() : dirs[i] analysed in this process and thread,
 * the outcome in *out. */
void aip__dirs_analyse_one(const aip__dirs_run *r, size_t i, aip_dir_result *out);

/* aip__dirs_in_line() : dirs from `next` on, one after the other in the
 * calling thread, until the end or a cancel. */
void aip__dirs_in_line(aip__dirs_run *r, size_t next);

/* The two parallel ways; each falls back to aip__dirs_in_line() when it
 * cannot get a process or a thread. */
void aip__dirs_by_processes(aip__dirs_run *r);
void aip__dirs_by_threads(aip__dirs_run *r);

/* How long the calling thread waits without news before
 * AIP_DIRS_WAITING, when there is a callback to tell. */
#define AIP__DIRS_TICK_MS 200

#endif
