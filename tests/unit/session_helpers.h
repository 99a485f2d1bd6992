/*
 * session_helpers.h — test helper: sessions set up the common way, and the
 * trace_view.json of the last trace.
 */
#ifndef AIP_SESSION_HELPERS_H
#define AIP_SESSION_HELPERS_H

#include "aip_test.h"
#include "aiprof.h"

#include <limits.h>
#include <stdio.h>

/* CPU activity and mstx, results under `dir`. */
static inline void base_config(aip_config *c, const char *dir)
{
    aip_config_init(c);
    c->dir_name = dir;
    c->activities = AIP_ACTIVITY_CPU;
    c->mstx = 1;
}

/* base_config() with a step schedule. */
static inline void scheduled_config(aip_config *c, const char *dir, aip_schedule schedule)
{
    base_config(c, dir);
    c->has_schedule = 1;
    c->schedule = schedule;
}

/* A session of `c`, created and started; NULL if either failed. */
static inline aip_session *start_new(const aip_config *c)
{
    aip_session *s;
    if (aip_session_create(c, &s) != AIP_OK)
        return NULL;
    if (aip_session_start(s) != AIP_OK) {
        aip_session_destroy(s);
        return NULL;
    }
    return s;
}

/* The session's last trace analysed into trace_view.json only, read
 * whole; NULL if the analysis or the read failed. */
static inline char *analysed_trace(aip_session *s)
{
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.outputs = AIP_OUTPUTS_TRACE_VIEW;
    if (aip_analyse_dir(aip_session_result_dir(s), &o) != AIP_OK)
        return NULL;
    char trace[PATH_MAX + 64];
    snprintf(trace, sizeof trace, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json",
             aip_session_result_dir(s));
    size_t n = 0;
    return aip_test_slurp(trace, &n);
}

#endif
