/*
 * session.c — aip_session: create / start / step / stop / destroy, and the
 * schedule's state transitions.
 *
 * The transition table is torch.profiler.profile's action_map: a trace
 * starts when the schedule enters RECORD or RECORD_AND_SAVE, and is saved
 * (on_trace_ready) after RECORD_AND_SAVE or when the session stops while
 * recording.  WARMUP records nothing here: torch discards warmup data, and
 * not collecting it is cheaper.  Only one session records at a time.
 */
#include "session_int.h"
#include "collector.h"
#include "aiprof_integration.h"
#include "clock.h"
#include "error.h"
#include "flight.h"
#include "fork_handlers.h"
#include "session_log.h"
#include "strlist.h"
#include "intern.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define META_MAX_FIELD 4096
#define META_MAX_TOTAL (50u * 1024u)

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static aip_session *active_session; /* started and not stopped */
static void (*ext_step)(void *);    /* aip_external_control() */
static void *ext_user;
static aip_session *ext_session;

const char *aip_version(void) { return AIP_VERSION_STRING; }
unsigned aip_version_number(void) { return AIP_VERSION_NUMBER; }

void aip_external_control(void (*on_program_step)(void *), void *user_data,
                          aip_session *controller_session)
{
    pthread_mutex_lock(&session_lock);
    ext_step = on_program_step;
    ext_user = user_data;
    ext_session = on_program_step ? controller_session : NULL;
    if (controller_session)
        controller_session->controller = 1;
    pthread_mutex_unlock(&session_lock);
}

void aip__session_mark_controller(aip_session *s) { s->controller = 1; }

/* fork(): the session lock is the first library lock the forking thread
 * takes (fork_handlers.h). */
static void fork_prepare(void) { pthread_mutex_lock(&session_lock); }
static void fork_parent(void) { pthread_mutex_unlock(&session_lock); }

static void fork_child(void)
{
    active_session = NULL; /* the parent's session stays the parent's */
    pthread_mutex_unlock(&session_lock);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_SESSION, fork_prepare, fork_parent, fork_child);
}

static aip_session *spare; /* one destroyed session's memory (aip_session_create) */

aip_status aip_session_create(const aip_config *config, aip_session **out)
{
    if (!out)
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_session_create: out is NULL");
    *out = NULL;
    aip_status st = aip_config_validate(config);
    if (st)
        return st;
    aip__recorder_init();
    /* The last destroyed session's memory, if any: a loop of short
     * profiles makes one per start(), and a calloc of these 7 KiB right
     * after a stop freed the trace's buffers costs more than the rest of
     * the construction (malloc consolidating its free lists). */
    aip_session *s = __atomic_exchange_n(&spare, NULL, __ATOMIC_ACQ_REL);
    if (s)
        memset(s, 0, sizeof *s);
    else
        s = calloc(1, sizeof *s);
    if (!s)
        return aip__fail(AIP_ERR_NOMEM, "no memory for a session");
    aip_config_init(&s->cfg);
    memcpy(&s->cfg, config, config->struct_size < sizeof s->cfg ? config->struct_size
                                                                 : sizeof s->cfg);
    s->cfg.struct_size = sizeof s->cfg;
    if (s->cfg.schedule_fn)
        s->cfg.has_schedule = 1; /* steps are ProfilerStep#N, as with a schedule */
    if (aip__session_flight(s)) {
        /* An armed flight recorder records from start to stop, whatever
         * the schedule (docs/FLIGHT_RECORDER.md): one RECORD cycle with
         * ProfilerStep#N ranges, which the step triggers need. */
        if (config->has_schedule || s->cfg.schedule_fn)
            aip__warn("flight_recorder_seconds is set: the schedule is ignored, the flight "
                      "recorder records every step");
        s->cfg.schedule_fn = NULL;
        s->cfg.has_schedule = 1;
        s->cfg.schedule = (aip_schedule){.active = INT64_MAX / 4, .repeat = 1};
    }
    if (!s->cfg.buffer_cap_bytes)
        s->cfg.buffer_cap_bytes = 64u * 1024u * 1024u;
    s->dir_name = config->dir_name ? strdup(config->dir_name) : NULL;
    s->worker_name = config->worker_name ? strdup(config->worker_name) : NULL;
    s->include = aip__strlist_copy(config->mstx_domain_include);
    s->exclude = aip__strlist_copy(config->mstx_domain_exclude);
    if (s->include && s->exclude) {
        aip__warn("mstx_domain_include and mstx_domain_exclude are both set; "
                  "only mstx_domain_include is used");
        aip__strlist_free(s->exclude);
        s->exclude = NULL;
    }
    if ((s->include || s->exclude) && !s->cfg.mstx && s->cfg.profiler_level != AIP_LEVEL_NONE)
        aip__warn("mstx_domain_include/exclude need mstx=True; no mstx data will be recorded");
    s->cfg.dir_name = s->dir_name;
    s->cfg.worker_name = s->worker_name;
    s->cfg.mstx_domain_include = (const char *const *)s->include;
    s->cfg.mstx_domain_exclude = (const char *const *)s->exclude;
    s->metadata = json_object();
    s->owner_pid = getpid();
    s->action = AIP_ACTION_NONE;
    *out = s;
    return AIP_OK;
}

static aip_status check_owner(const aip_session *s, const char *what)
{
    if (!s)
        return aip__fail(AIP_ERR_INVALID_ARG, "%s: session is NULL", what);
    if (s->owner_pid != getpid())
        return aip__fail(AIP_ERR_STATE, "%s: the session belongs to process %d, not to this "
                         "forked child; start a new session here", what, (int)s->owner_pid);
    return AIP_OK;
}

static aip_status check_started(const aip_session *s, const char *what)
{
    aip_status st = check_owner(s, what);
    if (!st && !s->started)
        st = aip__fail(AIP_ERR_STATE, "%s: the session is not started", what);
    return st;
}

static aip_action schedule_at(const aip_session *s, int64_t step)
{
    if (s->cfg.schedule_fn) {
        aip_action a = s->cfg.schedule_fn(s->cfg.schedule_fn_data, step);
        if (a < AIP_ACTION_NONE || a > AIP_ACTION_RECORD_AND_SAVE) {
            aip__warn("the schedule returned %d for step %lld: taken as NONE", (int)a,
                      (long long)step);
            a = AIP_ACTION_NONE;
        }
        return a;
    }
    if (!s->cfg.has_schedule)
        return AIP_ACTION_RECORD; /* torch's default schedule */
    return aip_schedule_action(&s->cfg.schedule, step);
}

static int records(aip_action a) { return a == AIP_ACTION_RECORD || a == AIP_ACTION_RECORD_AND_SAVE; }

/* A started session holds the process's recording slot (active_session)
 * except after a trace of it failed to begin: then it gives the slot back,
 * so that a failed start leaves nothing held and another session can
 * record, and takes it again at its next trace if it is free. */
static aip_status begin_trace(aip_session *s)
{
    pthread_mutex_lock(&session_lock);
    if (!active_session)
        active_session = s;
    int held = active_session == s;
    pthread_mutex_unlock(&session_lock);
    if (!held)
        return aip__fail(AIP_ERR_STATE, "another session is profiling this process; this "
                         "session's trace is not recorded");
    aip_status st = aip__trace_begin(s);
    if (st && !s->trace_open) {
        pthread_mutex_lock(&session_lock);
        if (active_session == s)
            active_session = NULL;
        pthread_mutex_unlock(&session_lock);
    }
    return st;
}

/* torch.profiler.profile.action_map; `cur_is_exit` is the (X, None) column. */
static aip_status transit(aip_session *s, aip_action prev, aip_action cur, int cur_is_exit)
{
    aip_status st = AIP_OK;
    if (cur_is_exit) {
        if (records(prev))
            st = aip__trace_end(s, 1);
        return st;
    }
    if (prev == AIP_ACTION_RECORD_AND_SAVE) {
        st = aip__trace_end(s, 1);
        if (records(cur)) {
            aip_status b = begin_trace(s);
            if (!st)
                st = b;
        }
        return st;
    }
    if (prev == AIP_ACTION_RECORD && !records(cur)) {
        aip__warn("incorrect schedule: RECORD followed by %s",
                  cur == AIP_ACTION_NONE ? "NONE" : "WARMUP");
        return aip__trace_end(s, 0);
    }
    if (prev == AIP_ACTION_WARMUP && cur == AIP_ACTION_NONE)
        aip__warn("incorrect schedule: WARMUP followed by NONE");
    if (!records(prev) && records(cur))
        st = begin_trace(s);
    return st;
}

static void open_step(aip_session *s)
{
    if (!s->cfg.has_schedule)
        return;
    s->step_label = s->step_num + s->step_offset;
    s->step_start_ticks = aip__ticks();
    s->step_open = 1;
}

/* The step's name is interned only for a step that is recorded: string ids
 * live as long as the process, and a long run steps millions of times
 * between its traces. */
static void close_step(aip_session *s)
{
    if (!s->step_open)
        return;
    s->step_open = 0;
    if (s->trace_open) {
        char name[64];
        snprintf(name, sizeof name, "ProfilerStep#%lld", (long long)s->step_label);
        uint64_t end = aip__ticks();
        aip__emit_annotation(aip_intern(name), s->step_start_ticks, end);
        if (aip__session_flight(s)) /* after its record: a dump it asks for holds it */
            aip__flight_step(s->step_start_ticks, end);
    }
}

aip_status aip_session_start(aip_session *s)
{
    aip_status st = check_owner(s, "aip_session_start");
    if (st)
        return st;
    pthread_mutex_lock(&session_lock);
    if (s->started) {
        pthread_mutex_unlock(&session_lock);
        return aip__fail(AIP_ERR_STATE, "aip_session_start: the session is already started");
    }
    if (ext_step && !s->controller) {
        /* aiprof run decides what is recorded; this session marks steps. */
        s->adopted = 1;
        s->started = 1;
        s->step_num = 0;
        pthread_mutex_unlock(&session_lock);
        aip__warn("profiling is controlled from outside (aiprof run): this program's session "
                  "only marks steps");
        return AIP_OK;
    }
    if (active_session) {
        pthread_mutex_unlock(&session_lock);
        return aip__fail(AIP_ERR_STATE, "aip_session_start: another session is already "
                         "profiling this process; stop it first");
    }
    active_session = s;
    s->started = 1;
    pthread_mutex_unlock(&session_lock);
    /* Before the first trace: NVTX picks its tool once, at the program's
     * first NVTX call, which may come in a step the schedule leaves
     * unrecorded. */
    aip__collectors_session_started(&s->cfg);
    s->step_num = 0;
    s->action = schedule_at(s, 0);
    st = transit(s, AIP_ACTION_NONE, s->action, 0);
    open_step(s);
    return st;
}

aip_status aip_session_step(aip_session *s)
{
    aip_status st = check_started(s, "aip_session_step");
    if (st)
        return st;
    if (s->adopted) {
        s->step_num++;
        pthread_mutex_lock(&session_lock);
        void (*fn)(void *) = ext_step;
        void *user = ext_user;
        pthread_mutex_unlock(&session_lock);
        if (fn)
            fn(user);
        return AIP_OK;
    }
    close_step(s);
    aip_action prev = s->action;
    s->step_num++;
    s->action = schedule_at(s, s->step_num);
    st = transit(s, prev, s->action, 0);
    open_step(s);
    return st;
}

aip_status aip_session_step_started(aip_session *s)
{
    aip_status st = check_started(s, "aip_session_step_started");
    if (!st && s->step_open && s->trace_open)
        s->step_start_ticks = aip__ticks();
    return st;
}

aip_status aip_session_stop(aip_session *s)
{
    aip_status st = check_started(s, "aip_session_stop");
    if (st)
        return st;
    if (s->adopted) {
        s->started = 0;
        s->adopted = 0;
        return AIP_OK;
    }
    close_step(s);
    st = transit(s, s->action, AIP_ACTION_NONE, 1);
    pthread_mutex_lock(&session_lock);
    s->started = 0;
    if (active_session == s)
        active_session = NULL;
    pthread_mutex_unlock(&session_lock);
    return st;
}

void aip_session_destroy(aip_session *s)
{
    if (!s)
        return;
    if (s->started && s->owner_pid == getpid())
        aip_session_stop(s);
    free(s->dir_name);
    free(s->worker_name);
    aip__strlist_free(s->include);
    aip__strlist_free(s->exclude);
    json_decref(s->metadata);
    free(__atomic_exchange_n(&spare, s, __ATOMIC_ACQ_REL)); /* kept for the next create */
}

int64_t aip_session_step_num(const aip_session *s) { return s ? s->step_num : 0; }

aip_action aip_session_current_action(const aip_session *s)
{
    return s && s->started ? s->action : AIP_ACTION_NONE;
}

aip_status aip_session_set_step_offset(aip_session *s, int64_t offset)
{
    aip_status st = check_owner(s, "aip_session_set_step_offset");
    if (st)
        return st;
    if (s->started)
        return aip__fail(AIP_ERR_STATE, "aip_session_set_step_offset: call it before start");
    s->step_offset = offset;
    return AIP_OK;
}

const char *aip_session_result_dir(const aip_session *s)
{
    if (s && s->adopted && ext_session) /* the program's data goes there */
        s = ext_session;
    return s && s->result_dir[0] ? s->result_dir : NULL;
}

uint64_t aip_session_dropped_events(const aip_session *s)
{
    if (!s)
        return 0;
    return s->trace_open ? aip__recorder_live_dropped() : s->last_totals.dropped;
}

/* The metadata of a session aiprof run's controller adopted belongs to the
 * controller's session: that is the one whose trace is saved. */
static aip_status add_meta(aip_session *s, const char *key, json_t *value, size_t value_len)
{
    size_t klen = strlen(key);
    if (klen > META_MAX_FIELD || value_len > META_MAX_FIELD) {
        json_decref(value);
        return aip__fail(AIP_ERR_LIMIT, "metadata key or value for \"%.40s\" exceeds %d "
                         "characters", key, META_MAX_FIELD);
    }
    pthread_mutex_lock(&session_lock);
    aip_session *to = s->adopted && ext_session ? ext_session : s;
    int open = to != s && to->trace_open;
    pthread_mutex_unlock(&session_lock);
    aip_status st = aip__metadata_add(to, key, value, klen + value_len, META_MAX_TOTAL);
    if (!st && open && aip__metadata_write(to))
        aip__warn("profiler_metadata.json not rewritten with \"%.40s\": %s", key,
                  aip_last_error());
    return st;
}

aip_status aip_session_add_metadata(aip_session *s, const char *key, const char *value)
{
    aip_status st = check_owner(s, "aip_session_add_metadata");
    if (st)
        return st;
    if (!key || !*key || !value)
        return aip__fail(AIP_ERR_INVALID_ARG, "add_metadata: key and value must be strings");
    json_t *v = json_string(value);
    if (!v)
        return aip__fail(AIP_ERR_INVALID_ARG, "add_metadata: value for \"%.40s\" is not UTF-8",
                         key);
    return add_meta(s, key, v, strlen(value));
}

aip_status aip_session_add_metadata_json(aip_session *s, const char *key, const char *json_value)
{
    aip_status st = check_owner(s, "aip_session_add_metadata_json");
    if (st)
        return st;
    if (!key || !*key || !json_value)
        return aip__fail(AIP_ERR_INVALID_ARG, "add_metadata_json: key and value must be strings");
    json_error_t err;
    json_t *v = json_loads(json_value, JSON_DECODE_ANY, &err);
    if (!v)
        return aip__fail(AIP_ERR_INVALID_ARG, "add_metadata_json: value for \"%.40s\" is not "
                         "valid JSON: %s (line %d)", key, err.text, err.line);
    return add_meta(s, key, v, strlen(json_value));
}
