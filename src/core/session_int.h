/*
 * session_int.h — the aip_session object, shared by session.c (lifecycle
 * and schedule transitions), trace.c (one trace's directory and files) and
 * session_info.c (profiler_info.json / profiler_metadata.json).
 */
#ifndef AIP_SESSION_INT_H
#define AIP_SESSION_INT_H

#include "aiprof.h"
#include "recorder.h"
#include "device.h"
#include "session_control.h"

#include <jansson.h>
#include <limits.h>
#include <sys/types.h>

struct aip_session {
    aip_config cfg;               /* strings point into the copies below */
    char *dir_name, *worker_name;
    char **include, **exclude;    /* NULL-terminated copies */
    pid_t owner_pid;              /* sessions do not cross fork() */

    int started;
    int adopted;                  /* under external control: only marks steps */
    int controller;               /* belongs to the controller: records */
    int64_t step_num, step_offset;
    aip_action action;

    /* ProfilerStep#N range kept by the session itself */
    int step_open;
    uint64_t step_start_ticks;
    int64_t step_label; /* N of the open step's ProfilerStep#N */

    /* current trace */
    int trace_open;
    char result_dir[PATH_MAX];
    aip__clock_pair trace_start;
    aip__trace_totals last_totals;
    int64_t trace_first_step;
    uint64_t texts_cut_base;      /* aip__strings_cut() when the trace began */
    uint64_t texts_cut;           /* texts cut during the finished trace */
    uint64_t texts_invalid_base;  /* aip__strings_invalid_utf8() when the trace began */
    uint64_t texts_invalid;       /* new texts with invalid UTF-8 in the finished trace */
    int trace_failed;             /* the trace could not start; logged once */
    /* devices the finished trace recorded, with their clock alignment */
    aip__dev_trace_device trace_devices[AIP_DEV_MAX_DEVICES];
    size_t n_trace_devices;

    json_t *metadata;             /* add_metadata / add_metadata_json */
    size_t metadata_bytes;
};

/* trace.c */
int aip__session_flight(const aip_session *s); /* an armed flight recorder's session */
aip_status aip__trace_begin(aip_session *s);
aip_status aip__trace_end(aip_session *s, int save);

/* session_info.c */
json_t *aip__profiler_info(const aip_session *s, const aip__trace_totals *end);
/* What aip__profiler_info(s, NULL) makes, with the process's program name
 * and rank as the caller read them: the start's file is built on the
 * writer thread (trace.c), which must not read what the program's threads
 * may change meanwhile (aip_set_process_name, the environment). */
json_t *aip__profiler_info_start(const aip_session *s, const char *program, int rank);
json_t *aip__profiler_metadata(const aip_session *s);
aip_status aip__write_json_file(const char *path, json_t *value);

/* session_info.c: metadata under one lock.  add: `value` (taken) under
 * `key` if the session's metadata stays within `cap` bytes; write:
 * profiler_metadata.json of the session's current result directory. */
aip_status aip__metadata_add(aip_session *s, const char *key, json_t *value, size_t bytes,
                             size_t cap);
aip_status aip__metadata_write(const aip_session *s);
int aip__metadata_has_any(const aip_session *s);

#endif
