/*
 * analyse_dirs.c — aip_analyse_dirs(): many result directories analysed at
 * once, for `aiprof analyse`, the cluster pass (src/cluster/cluster.c: the
 * ranks not analysed yet) and Python's aiprof.profiler.analyse().  This
 * file holds the run: its options, the per-directory outcomes, the events
 * the caller's callback sees and the progress bar; analyse_dirs_procs.c
 * and analyse_dirs_threads.c hold the two ways of running directories side
 * by side.  The outputs of a directory do not depend on which way, nor on
 * how many at once: each is aip_analyse_dir() on that directory alone.
 */
#include "analyse_dirs.h"
#include "error.h"
#include "progress_bar.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void aip_analyse_dirs_options_init(aip_analyse_dirs_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->progress_fd = -1;
}

/* max_process_number's rules: <= 0 half the CPUs (at least one), never
 * more than the CPUs, and never more than there are directories. */
static size_t worker_count(long asked, size_t n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    long w = asked > 0 ? asked : cpus / 2;
    if (w > cpus)
        w = cpus;
    if (w < 1)
        w = 1;
    return (size_t)w < n ? (size_t)w : (n ? n : 1);
}

static void tell_bar(const aip__dirs_run *r, const char *failed_dir)
{
    const char *label = r->o.progress_label ? r->o.progress_label : "analysed";
    aip__progress_bar(r->o.progress_fd, label, r->done, r->n, r->failed, failed_dir);
}

/* After a cancel the callback still hears of the directories that were
 * running, so that their outcomes can be reported. */
static int tell(aip__dirs_run *r, unsigned event, size_t i)
{
    if (r->o.progress && r->o.progress(r->o.progress_arg, event, i, r->done, r->n))
        r->cancelled = 1;
    return r->cancelled;
}

int aip__dirs_started(aip__dirs_run *r, size_t i)
{
    return tell(r, AIP_DIRS_STARTED, i);
}

int aip__dirs_finished(aip__dirs_run *r, size_t i)
{
    int ok = r->results[i].status == AIP_OK;
    r->done++;
    r->failed += !ok;
    /* The caller's word on a failure first, then the bar below it. */
    int stop = tell(r, AIP_DIRS_DONE, i);
    tell_bar(r, ok ? NULL : r->dirs[i]);
    return stop;
}

int aip__dirs_waiting(aip__dirs_run *r)
{
    return tell(r, AIP_DIRS_WAITING, (size_t)-1);
}

void aip__dirs_analyse_one(const aip__dirs_run *r, size_t i, aip_dir_result *out)
{
    memset(out, 0, sizeof *out);
    out->status = aip_analyse_dir(r->dirs[i], &r->analyse);
    if (out->status) {
        const char *m = aip_last_error();
        snprintf(out->message, sizeof out->message, "%s",
                 m && *m ? m : aip_strerror(out->status));
    }
}

void aip__dirs_in_line(aip__dirs_run *r, size_t next)
{
    for (; next < r->n && !r->cancelled; next++) {
        if (aip__dirs_started(r, next))
            break;
        aip__dirs_analyse_one(r, next, &r->results[next]);
        aip__dirs_finished(r, next);
    }
}

/* The caller's options with the defaults of what an older or NULL struct
 * lacks; AIP_ERR_INVALID_ARG for a struct_size that holds nothing. */
static aip_status take_options(aip__dirs_run *r, const aip_analyse_dirs_options *o)
{
    aip_analyse_dirs_options_init(&r->o);
    if (o) {
        if (o->struct_size < offsetof(aip_analyse_dirs_options, workers))
            return aip__fail(AIP_ERR_INVALID_ARG, "aip_analyse_dirs_options.struct_size is "
                             "%zu (call aip_analyse_dirs_options_init)", o->struct_size);
        memcpy(&r->o, o, o->struct_size < sizeof r->o ? o->struct_size : sizeof r->o);
        r->o.struct_size = sizeof r->o;
    }
    aip_analyse_options_init(&r->analyse);
    if (r->o.analyse) {
        size_t n = r->o.analyse->struct_size;
        if (n < sizeof(size_t))
            return aip__fail(AIP_ERR_INVALID_ARG, "aip_analyse_dirs_options.analyse->struct_size "
                             "is not set (call aip_analyse_options_init)");
        memcpy(&r->analyse, r->o.analyse, n < sizeof r->analyse ? n : sizeof r->analyse);
        r->analyse.struct_size = sizeof r->analyse;
    }
    return AIP_OK;
}

/* AIP_OK, or the first directory not analysed, named in aip_last_error(). */
static aip_status outcome(const aip__dirs_run *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->results[i].status)
            return aip__fail(r->results[i].status, "%s: %s", r->dirs[i], r->results[i].message);
    return AIP_OK;
}

aip_status aip_analyse_dirs(const char *const *dirs, size_t n,
                            const aip_analyse_dirs_options *options, aip_dir_result *results)
{
    if (n && (!dirs || !results))
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_analyse_dirs: %s is NULL",
                         dirs ? "results" : "dirs");
    aip__dirs_run r = {.dirs = dirs, .n = n, .results = results};
    aip_status s = take_options(&r, options);
    if (s || !n)
        return s;
    for (size_t i = 0; i < n; i++) { /* what stays if a cancel comes before it starts */
        memset(&results[i], 0, sizeof results[i]);
        results[i].status = AIP_ERR_CANCELLED;
        snprintf(results[i].message, sizeof results[i].message, "not analysed: cancelled");
    }
    r.workers = worker_count(r.o.workers, n);
    tell_bar(&r, NULL);
    if (r.o.processes)
        aip__dirs_by_processes(&r);
    else if (r.workers > 1)
        aip__dirs_by_threads(&r);
    else
        aip__dirs_in_line(&r, 0);
    if (r.done < n && r.o.progress_fd >= 0) { /* cancelled: end the bar's line */
        ssize_t w = write(r.o.progress_fd, "\n", 1);
        (void)w;
    }
    return outcome(&r);
}
