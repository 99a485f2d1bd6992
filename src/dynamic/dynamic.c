/*
 * dynamic.c — dynamic_profile: aip_dynamic_init / step / start / shutdown.
 *
 * The state machine follows torch_npu's _DynamicProfile.step (reference
 * §4): the step counter is incremented first; a pending config starts a
 * collection when start_step is -1 or equals the current step, is dropped
 * with a warning when start_step already passed, and waits otherwise.  A
 * collection is schedule(wait=0, warmup=W, active=A, repeat=1) with
 * ProfilerStep# numbers continuing the training step count, and ends after
 * W+A steps.  Edits arriving during a collection stay pending (the latest
 * wins) and apply after it ends.  Nothing here stops or slows the program:
 * every problem is logged to <config dir>/log/dp_*.log.  A config with
 * "flight_recorder" arms the flight recorder at its start_step instead: it
 * stays armed (its dumps saved by its triggers) until a new config or the
 * end, whatever warmup and active say.
 *
 * Edits are read and parsed by this process's config thread (dyn_parse.c),
 * never by the training thread: a 1 MB config takes milliseconds to parse,
 * which step() must not pay.  step() takes a parsed edit when one waits
 * (one load when nothing changed), so an edit applies at the first step
 * after it has been parsed.
 */
#include "aiprof.h"
#include "aiprof_integration.h"
#include "dyn_config.h"
#include "dyn_log.h"
#include "dyn_watch.h"
#include "dyn_parse.h"
#include "env.h"
#include "error.h"
#include "fs.h"
#include "session_control.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct dynamic_state {
    pthread_mutex_t lock;
    int inited;
    char dir[PATH_MAX];
    aip__dyn_watch watch;
    aip__dyn_log log;
    int64_t cur_step;
    uint64_t t10_ns;

    aip__dyn_config pending;
    int has_pending;

    aip__dyn_config active_cfg;    /* config of the running collection */
    aip_session *session;
    int64_t remaining;
    int from_start;               /* started by aip_dynamic_start() */
    int flight;                   /* the collection is an armed flight recorder */
    int analyse, async_mode;

    aip_dynamic_hook hook;
    void *hook_data;
    int atexit_registered;
} dynamic_state;

static dynamic_state dynamic = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- analysis of a finished collection ------------------------------- */

static void analyse_dir(const char *dir, int async_mode)
{
    if (!async_mode) {
        aip_analyse_options o;
        aip_analyse_options_init(&o);
        if (aip_analyse_dir(dir, &o) != AIP_OK)
            aip__dyn_log_write(&dynamic.log, "ERROR", "analyse %s failed: %s", dir, aip_last_error());
        else
            aip__dyn_log_write(&dynamic.log, "INFO", "analysed %s", dir);
        return;
    }
    /* Asynchronous: a grandchild analyses, so training never waits and no
     * zombie is left behind. */
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            aip_analyse_options o;
            aip_analyse_options_init(&o);
            o.quiet = 1;
            _exit(aip_analyse_dir(dir, &o) == AIP_OK ? 0 : 1);
        }
        _exit(0);
    }
    if (child > 0) {
        int status;
        waitpid(child, &status, 0);
        aip__dyn_log_write(&dynamic.log, "INFO", "analysing %s in the background", dir);
    } else {
        aip__dyn_log_write(&dynamic.log, "ERROR", "cannot fork to analyse %s: %s", dir, strerror(errno));
    }
}

static void on_ready(aip_session *s, const char *dir, void *user)
{
    (void)s;
    (void)user;
    aip__dyn_log_write(&dynamic.log, "INFO", "%s saved in %s",
                       dynamic.flight ? "flight recorder dump" : "collection", dir);
    /* Under `aiprof run`, announce the directory so that it is analysed and
     * summarised when the program ends. */
    const char *list = getenv("AIPROF_RUN_RESULT_LIST");
    if (list && *list) {
        FILE *f = fopen(list, "a");
        if (f) {
            fprintf(f, "%s\n", dir);
            fclose(f);
        }
    }
    /* A dump is made on the recorder's writer thread, which must not wait
     * for an analysis (the program's buffers would fill): in the background. */
    if (dynamic.analyse)
        analyse_dir(dir, dynamic.async_mode || dynamic.flight);
}

/* ---- collections ------------------------------------------------------ */

static void finish_collection(const char *why)
{
    if (!dynamic.session)
        return;
    aip_session_stop(dynamic.session); /* no-op when the schedule already saved it */
    if (dynamic.hook)
        dynamic.hook(&dynamic.active_cfg.cfg, dynamic.session, 0, dynamic.hook_data);
    aip__dyn_log_write(&dynamic.log, "INFO", "%s at step %lld (%s)",
                       dynamic.flight ? "flight recorder disarmed" : "collection stopped",
                       (long long)dynamic.cur_step, why);
    aip_session_destroy(dynamic.session);
    dynamic.session = NULL;
    dynamic.remaining = 0;
    dynamic.from_start = 0;
    dynamic.flight = 0;
    aip__dyn_parse_dispose(&dynamic.active_cfg);
}

/* Takes ownership of *cfg. */
static aip_status start_collection(aip__dyn_config *cfg, int from_start)
{
    dynamic.active_cfg = *cfg;
    memset(cfg, 0, sizeof *cfg);
    aip__dyn_config *c = &dynamic.active_cfg;
    /* Re-point the string fields at the moved struct. */
    c->cfg.dir_name = c->prof_dir;
    c->cfg.mstx_domain_include = (const char *const *)c->include;
    c->cfg.mstx_domain_exclude = (const char *const *)c->exclude;
    c->cfg.flight_ring_dir = c->flight_ring_dir[0] ? c->flight_ring_dir : NULL;
    c->cfg.on_trace_ready = on_ready;
    c->cfg.on_trace_ready_data = NULL;
    /* is_rank turns automatic analysis off unless it runs asynchronously. */
    dynamic.analyse = c->analyse && (!c->is_rank || c->async_mode);
    dynamic.async_mode = c->async_mode;
    dynamic.flight = aip__dyn_config_flight(c);
    aip_session *s;
    aip_status st = aip_session_create(&c->cfg, &s);
    if (!st) {
        aip__session_mark_controller(s);
        st = aip_session_set_step_offset(s, dynamic.cur_step);
    }
    if (st) {
        aip__dyn_log_write(&dynamic.log, "ERROR", "cannot start a collection: %s", aip_last_error());
        aip__dyn_config_free(c);
        return st;
    }
    /* The hook first: what it adds to the session (Python's
     * parallel_group_info) gives way to the config file's metadata. */
    if (dynamic.hook)
        dynamic.hook(&c->cfg, s, 1, dynamic.hook_data);
    if (c->metadata) {
        const char *key;
        json_t *v;
        json_object_foreach(c->metadata, key, v) {
            char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            if (text && aip_session_add_metadata_json(s, key, text))
                aip__dyn_log_write(&dynamic.log, "WARNING", "metadata \"%s\" not added: %s", key,
                                  aip_last_error());
            free(text);
        }
    }
    st = aip_session_start(s);
    if (st) {
        aip__dyn_log_write(&dynamic.log, "ERROR", "cannot start a collection: %s", aip_last_error());
        if (dynamic.hook)
            dynamic.hook(&c->cfg, s, 0, dynamic.hook_data);
        aip_session_destroy(s);
        aip__dyn_config_free(c);
        return st;
    }
    dynamic.session = s;
    dynamic.remaining = c->warmup + c->active;
    dynamic.from_start = from_start;
    if (dynamic.flight)
        aip__dyn_log_write(&dynamic.log, "INFO",
                           "flight recorder armed at step %lld (the last %g s; ring %llu bytes, "
                           "0 = default; slow step %g, hang %g s) into %s%s: armed until a new "
                           "config or the end", (long long)dynamic.cur_step,
                           c->cfg.flight_recorder_seconds,
                           (unsigned long long)c->cfg.flight_ring_bytes, c->cfg.flight_slow_step,
                           c->cfg.flight_hang_seconds, c->prof_dir,
                           from_start ? " by dp.start" : "");
    else
        aip__dyn_log_write(&dynamic.log, "INFO",
                           "collection started at step %lld (warmup %lld, active %lld) into %s%s",
                           (long long)dynamic.cur_step, (long long)c->warmup,
                           (long long)c->active, c->prof_dir, from_start ? " by dp.start" : "");
    return AIP_OK;
}

/* An edit the config thread parsed: check the rank, keep it (step()). */
static void take_edit(void)
{
    aip__dyn_parsed e;
    if (aip__dyn_parse_take(&e) != 0)
        return;
    if (!e.valid) {
        aip__dyn_log_write(&dynamic.log, "WARNING", "profiler_config.json edit ignored: %s",
                           e.message);
        return;
    }
    aip__dyn_config cfg = e.cfg;
    if (e.message[0])
        aip__dyn_log_write(&dynamic.log, "WARNING", "%s", e.message);
    int rank = aip__rank();
    if (!aip__dyn_config_selects_rank(&cfg, rank)) {
        aip__dyn_log_write(&dynamic.log, "INFO", "config loaded; rank %d is not in rank_list, not "
                          "collecting", rank);
        aip__dyn_parse_dispose(&cfg);
        return;
    }
    if (dynamic.has_pending)
        aip__dyn_parse_dispose(&dynamic.pending);
    dynamic.pending = cfg;
    dynamic.has_pending = 1;
    aip__dyn_log_write(&dynamic.log, "INFO", "config loaded: start_step %lld, warmup %lld, active "
                       "%lld%s%s (parsed in %.1f ms by the config thread, tid %d)",
                       (long long)cfg.start_step, (long long)cfg.warmup, (long long)cfg.active,
                       aip__dyn_config_flight(&cfg) ? ", flight recorder" : "",
                       dynamic.session && !dynamic.flight ? "; applied after the running collection"
                                                          : "",
                       e.parse_ms, (int)e.tid);
    /* An armed recorder has no end of its own: it holds while its config is
     * the latest, and a new one (start_step 0 included) disarms it. */
    if (dynamic.flight)
        finish_collection("a new config");
}

static void apply_pending(void)
{
    if (!dynamic.has_pending || dynamic.session)
        return;
    int64_t start = dynamic.pending.start_step;
    if (start == 0) {
        aip__dyn_log_write(&dynamic.log, "INFO", "start_step is 0: collection off");
        aip__dyn_parse_dispose(&dynamic.pending);
        dynamic.has_pending = 0;
    } else if (start == -1 || start == dynamic.cur_step) {
        dynamic.has_pending = 0;
        start_collection(&dynamic.pending, 0);
    } else if (dynamic.cur_step > start) {
        aip__dyn_log_write(&dynamic.log, "WARNING", "start_step %lld is already past (current step "
                          "%lld); config is not effective", (long long)start,
                          (long long)dynamic.cur_step);
        aip__dyn_parse_dispose(&dynamic.pending);
        dynamic.has_pending = 0;
    }
    /* else: READY, waiting for start_step */
}

/* ---- public API ----------------------------------------------------- */

static void at_exit(void) { aip_dynamic_shutdown(); }

aip_status aip_dynamic_init(const char *config_dir)
{
    aip_status st = aip__path_check(config_dir, "config_dir");
    if (st)
        return st;
    pthread_mutex_lock(&dynamic.lock);
    if (dynamic.inited) {
        pthread_mutex_unlock(&dynamic.lock);
        return aip__fail(AIP_ERR_STATE, "dynamic profiling is already initialised with %s",
                         dynamic.dir);
    }
    st = aip__mkdirs(config_dir);
    if (st) {
        pthread_mutex_unlock(&dynamic.lock);
        return st;
    }
    snprintf(dynamic.dir, sizeof dynamic.dir, "%s", config_dir);
    aip__dyn_log_open(&dynamic.log, config_dir, "dp", "dynamic.c");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/profiler_config.json", config_dir);
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        /* Only if still absent: another process sharing the directory, or
         * the user, may write it at the same moment. */
        const char *text = aip__dyn_default_config_text();
        int created;
        if (aip__create_file(path, text, strlen(text), &created) != AIP_OK)
            aip__dyn_log_write(&dynamic.log, "ERROR", "cannot create %s: %s", path, aip_last_error());
        else if (created)
            aip__dyn_log_write(&dynamic.log, "INFO", "created %s with the default configuration", path);
    } else if (S_ISLNK(sb.st_mode)) {
        pthread_mutex_unlock(&dynamic.lock);
        return aip__fail(AIP_ERR_SYMLINK, "%s is a symbolic link; refused", path);
    } else if (!S_ISREG(sb.st_mode)) {
        /* Not fatal: the watcher never opens it, and a regular file put
         * there later is an edit like any other. */
        aip__dyn_log_write(&dynamic.log, "ERROR", "%s is %s, not a regular file; refused: "
                           "collections start once a regular file is written there", path,
                           aip__file_kind(sb.st_mode));
    }
    st = aip__dyn_watch_attach(&dynamic.watch, config_dir, &dynamic.log);
    if (st) {
        aip__dyn_log_write(&dynamic.log, "ERROR", "dynamic profiling not started: %s", aip_last_error());
        pthread_mutex_unlock(&dynamic.lock);
        return st;
    }
    st = aip__dyn_parse_start(&dynamic.watch);
    if (st) {
        aip__dyn_log_write(&dynamic.log, "ERROR", "dynamic profiling not started: %s", aip_last_error());
        aip__dyn_watch_detach(&dynamic.watch);
        pthread_mutex_unlock(&dynamic.lock);
        return st;
    }
    dynamic.inited = 1;
    dynamic.cur_step = 0;
    dynamic.t10_ns = 0;
    if (!dynamic.atexit_registered) {
        atexit(at_exit);
        dynamic.atexit_registered = 1;
    }
    aip__dyn_log_write(&dynamic.log, "INFO", "dynamic profiling initialised on %s (rank %d)", config_dir,
                      aip__rank());
    pthread_mutex_unlock(&dynamic.lock);
    return AIP_OK;
}

aip_status aip_dynamic_step(void)
{
    /* Idle cost: an uncontended lock and one load (aip__dyn_parse_ready). */
    if (!__atomic_load_n(&dynamic.inited, __ATOMIC_ACQUIRE))
        return aip__fail(AIP_ERR_STATE, "aip_dynamic_step: call aip_dynamic_init first");
    pthread_mutex_lock(&dynamic.lock);
    dynamic.cur_step++;
    if (dynamic.cur_step == 10) {
        dynamic.t10_ns = now_ns();
    } else if (dynamic.cur_step == 11 && dynamic.t10_ns) {
        /* The measured step interval becomes the poll period (1 s..50 s);
         * an AIPROF_DP_POLL_MS override below 1 s (tests) lowers the floor. */
        uint64_t ms = (now_ns() - dynamic.t10_ns) / 1000000u;
        uint32_t floor_ms = aip__dyn_default_poll_ms() < 1000 ? aip__dyn_default_poll_ms() : 1000;
        if (ms < floor_ms)
            ms = floor_ms;
        if (ms > 50000)
            ms = 50000;
        aip__dyn_watch_set_poll_ms(&dynamic.watch, (uint32_t)ms);
    }
    if (aip__dyn_parse_ready())
        take_edit();
    if (dynamic.session) {
        aip_session_step(dynamic.session); /* an armed recorder's step triggers need them */
        if (!dynamic.flight && --dynamic.remaining <= 0)
            finish_collection("all steps collected");
    }
    apply_pending();
    pthread_mutex_unlock(&dynamic.lock);
    return AIP_OK;
}

aip_status aip_dynamic_start(const char *config_path)
{
    pthread_mutex_lock(&dynamic.lock);
    if (!dynamic.inited) {
        pthread_mutex_unlock(&dynamic.lock);
        return aip__fail(AIP_ERR_STATE, "aip_dynamic_start: call aip_dynamic_init first");
    }
    if (dynamic.session) {
        aip__dyn_log_write(&dynamic.log, "WARNING", "dp.start ignored: a collection is already running");
        pthread_mutex_unlock(&dynamic.lock);
        return aip__fail(AIP_ERR_STATE, "aip_dynamic_start: a collection is already running");
    }
    aip__dyn_config cfg;
    char err[512] = "", warn[512];
    aip_status st = AIP_ERR_NOT_FOUND;
    char fallback[PATH_MAX + 32];
    snprintf(fallback, sizeof fallback, "%s/profiler_config.json", dynamic.dir);
    const char *paths[2] = {config_path, fallback};
    for (int i = 0; i < 2 && st; i++) {
        if (!paths[i])
            continue;
        char *text = NULL;
        size_t len = 0;
        st = aip__path_check(paths[i], "config_path");
        if (!st)
            st = aip__path_no_symlink(paths[i]);
        if (!st)
            st = aip__read_file_nofollow(paths[i], AIP_DYN_CONFIG_MAX_BYTES, &text, &len);
        if (!st)
            st = aip__dyn_config_parse(text, len, &cfg, err, sizeof err, warn, sizeof warn);
        else
            snprintf(err, sizeof err, "%s", aip_last_error());
        free(text);
        if (st)
            aip__dyn_log_write(&dynamic.log, "WARNING", "dp.start: %s not usable: %s%s", paths[i], err,
                              i == 0 ? "; using the init directory's profiler_config.json" : "");
    }
    if (st) {
        pthread_mutex_unlock(&dynamic.lock);
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_dynamic_start: no valid configuration: %s",
                         err);
    }
    st = start_collection(&cfg, 1);
    pthread_mutex_unlock(&dynamic.lock);
    return st;
}

void aip_dynamic_shutdown(void)
{
    pthread_mutex_lock(&dynamic.lock);
    if (!dynamic.inited) {
        pthread_mutex_unlock(&dynamic.lock);
        return;
    }
    if (dynamic.session) {
        if (!dynamic.flight) /* an armed recorder's end writes nothing: nothing to warn of */
            aip__dyn_log_write(&dynamic.log, "WARNING",
                               "a collection was still running at exit; saving it");
        finish_collection("shutdown");
    }
    if (dynamic.has_pending) {
        aip__dyn_config_free(&dynamic.pending);
        dynamic.has_pending = 0;
    }
    aip__dyn_parse_stop(); /* before the detach: it reads the shared segment */
    aip__dyn_watch_detach(&dynamic.watch);
    aip__dyn_log_write(&dynamic.log, "INFO", "dynamic profiling stopped at step %lld",
                      (long long)dynamic.cur_step);
    __atomic_store_n(&dynamic.inited, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&dynamic.lock);
}

aip_dynamic_state aip_dynamic_get_state(void)
{
    pthread_mutex_lock(&dynamic.lock);
    aip_dynamic_state s = !dynamic.inited     ? AIP_DYN_UNINITIALIZED
                          : dynamic.session   ? AIP_DYN_RUNNING
                          : dynamic.has_pending ? AIP_DYN_READY
                                          : AIP_DYN_IDLE;
    pthread_mutex_unlock(&dynamic.lock);
    return s;
}

int64_t aip_dynamic_current_step(void)
{
    pthread_mutex_lock(&dynamic.lock);
    int64_t s = dynamic.cur_step;
    pthread_mutex_unlock(&dynamic.lock);
    return s;
}

void aip_dynamic_set_hook(aip_dynamic_hook hook, void *user_data)
{
    pthread_mutex_lock(&dynamic.lock);
    dynamic.hook = hook;
    dynamic.hook_data = user_data;
    pthread_mutex_unlock(&dynamic.lock);
}
