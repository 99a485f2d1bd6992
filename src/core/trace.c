/*
 * trace.c — one trace: its result directory, log, info files and the
 * recorder run that fills FRAMEWORK/.
 *
 * A trace that cannot start (unwritable directory, symlink, bad
 * ASCEND_WORK_PATH) is reported once, with the reason, and the program goes
 * on unprofiled; nothing here aborts.
 */
#include "session_int.h"
#include "collector.h"
#include "comm.h"
#include "device.h"
#include "domain_filter.h"
#include "env.h"
#include "error.h"
#include "flight.h"
#include "fs.h"
#include "clock.h"
#include "intern.h"
#include "session_log.h"
#include "strbuild.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

uint64_t aip__gc_threshold_ns;

static aip_status base_dir(const aip_session *s, char *out, size_t cap)
{
    if (s->dir_name) {
        aip__sb b = aip__sb_init(out, cap);
        aip__sb_str(&b, s->dir_name);
        return aip__sb_ok(&b) ? AIP_OK
                              : aip__fail(AIP_ERR_PATH, "dir_name too long: %s", s->dir_name);
    }
    const char *work = getenv("ASCEND_WORK_PATH");
    if (work && *work) {
        aip_status st = aip__path_check(work, "ASCEND_WORK_PATH");
        if (st)
            return st;
        return aip__join(out, cap, work, "profiling_data");
    }
    snprintf(out, cap, ".");
    return AIP_OK;
}

/* The last name given without creating the directory (make_result_dir):
 * its {base}/{worker}_{stamp} and its _N (0: none). */
static char last_prefix[PATH_MAX];
static int last_index;

/* The base directory the last start found usable: a later start in the
 * same base leaves its check to the writer thread (prepare_dirs), which
 * makes it before creating anything there, so a base that became a
 * symbolic link or unwritable is still refused, reported by that trace's
 * stop() (its events counted as dropped) and checked by the next start
 * itself.  Its three system calls cost a start() after a training loop
 * ~9 us; schedules that repeat and short profiles start again and again in
 * the same directory, while the first start in a directory still reports
 * a bad one itself. */
static char checked_base[PATH_MAX];
static int checked;

/* {base}/{worker}_{YYYYmmddHHMMSSmmm}_ascend_pt, made unique with _N.
 * With the default worker name, {hostname}_{pid}, no other process makes
 * such a name, and this one knows the names it gave: the directory is
 * then only named here and created by the writer thread (*deferred set,
 * see prepare_dirs), which keeps a mkdir off start().  A name of the
 * user's choosing may be shared by several processes: that one is
 * claimed here with mkdir, the next _N if it exists.
 * *unchecked: the base directory `out` lies in was not checked (see
 * checked_base); it is written to `base_out` (PATH_MAX bytes). */
static aip_status make_result_dir(const aip_session *s, char *out, size_t cap, int *deferred,
                                  char *base_out, int *unchecked)
{
    *deferred = 0;
    *unchecked = 0;
    char base[PATH_MAX];
    aip_status st = base_dir(s, base, sizeof base);
    if (st)
        return st;
    if (!s->worker_name && checked && !strcmp(base, checked_base)) {
        *unchecked = 1;
        memcpy(base_out, base, sizeof base);
    } else {
        st = aip__mkdirs(base);
        if (st) {
            checked = 0;
            return st;
        }
        memcpy(checked_base, base, sizeof base);
        checked = 1;
    }
    /* {base}/{worker}_{YYYYmmddHHMMSSmmm}, without printf (strbuild.h). */
    char prefix[PATH_MAX];
    aip__sb b = aip__sb_init(prefix, sizeof prefix);
    aip__sb_str(&b, base);
    aip__sb_mem(&b, "/", 1);
    if (s->worker_name) {
        aip__sb_str(&b, s->worker_name);
    } else {
        aip__sb_str(&b, aip__hostname());
        aip__sb_mem(&b, "_", 1);
        aip__sb_int(&b, (long long)getpid());
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    aip__localtime(ts.tv_sec, &tm);
    aip__sb_mem(&b, "_", 1);
    aip__sb_uint(&b, (unsigned long long)(tm.tm_year + 1900), 4);
    const int parts[5] = {tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
    for (int i = 0; i < 5; i++)
        aip__sb_uint(&b, (unsigned long long)parts[i], 2);
    aip__sb_uint(&b, (unsigned long long)(ts.tv_nsec / 1000000), 3);
    int defer = !s->worker_name, first = 0;
    if (!aip__sb_ok(&b))
        return aip__fail(AIP_ERR_PATH, "result directory path too long under %s", base);
    if (defer && !strcmp(prefix, last_prefix))
        first = last_index + 1; /* a second trace within the same millisecond */
    for (int i = first; i < 1000; i++) {
        aip__sb o = aip__sb_init(out, cap);
        aip__sb_str(&o, prefix);
        if (i) {
            aip__sb_mem(&o, "_", 1);
            aip__sb_uint(&o, (unsigned long long)i, 0);
        }
        aip__sb_str(&o, "_ascend_pt");
        if (!aip__sb_ok(&o))
            return aip__fail(AIP_ERR_PATH, "result directory path too long under %s", base);
        if (defer) {
            memcpy(last_prefix, prefix, sizeof prefix);
            last_index = i;
            *deferred = 1;
            return AIP_OK;
        }
        if (mkdir(out, AIP_DIR_MODE) == 0)
            return AIP_OK;
        if (errno != EEXIST)
            return aip__fail(AIP_ERR_IO, "cannot create result directory %s: %s", out,
                             strerror(errno));
    }
    return aip__fail(AIP_ERR_IO, "cannot find a free result directory name under %s", base);
}

/* ProfilerActivity.NPU / CUDA / XPU (or use_cuda) ask for device activity. */
static uint32_t rec_mask(const aip_session *s, int filtering)
{
    const aip_config *c = &s->cfg;
    uint32_t m = 0;
    if (c->activities & AIP_ACTIVITY_CPU) {
        m |= AIP_MASK_CPU;
        /* FLOPs come from the inputs: with_flops records shapes too, as
         * torch.profiler does. */
        if (c->record_shapes || c->with_flops)
            m |= AIP_MASK_SHAPES;
        if (c->with_flops)
            m |= AIP_MASK_FLOPS;
        if (c->with_stack)
            m |= AIP_MASK_STACK;
        if (c->with_modules)
            m |= AIP_MASK_MODULES;
        if (c->profile_memory)
            m |= AIP_MASK_MEMORY;
        if (c->gc_detect_threshold_ms >= 0)
            m |= AIP_MASK_GC;
        m |= AIP_MASK_COMM; /* communication is host activity (src/core/comm.h) */
    }
    /* Level_none forces mstx on (torch_npu _ExperimentalConfig). */
    if (c->mstx || c->profiler_level == AIP_LEVEL_NONE)
        m |= AIP_MASK_MSTX;
    if (filtering)
        m |= AIP_MASK_DOMAIN_FILTER;
    if (aip__dev_wanted(c))
        m |= AIP_MASK_DEVICE;
    return m;
}

static const char *info_name(char *buf, size_t cap, int rank)
{
    if (rank >= 0)
        snprintf(buf, cap, "profiler_info_%d.json", rank);
    else
        snprintf(buf, cap, "profiler_info.json");
    return buf;
}

/* The work of a trace's start that can wait for the writer thread
 * (recorder.h's aip__trace_info): the result directory when only its name
 * was made (make_result_dir), FRAMEWORK/ and logs/, the trace log,
 * profiler_info.json (built there too: some 10 us of JSON that only the
 * file needs), the log's first line.  start() reports what it can check
 * without creating anything (a bad base path, a symlink, a directory it
 * may not write into: aip__mkdirs), unless the same base passed that check
 * at an earlier start (checked_base): then it is checked here.  One trace
 * records at a time, and stop() joins the writer before the next start,
 * so one static is enough. */
static struct {
    char dir[PATH_MAX];
    int create_dir;            /* make_result_dir only named it */
    /* For profiler_info.json: the session, whose configuration, start
     * clock pair and first step do not change while its trace records
     * (and it outlives the writer: a trace ends, joining it, before its
     * session is freed), and what the program may change meanwhile, read
     * by start(). */
    const aip_session *session;
    char program[256];
    int rank;
    char info_name[64];
    /* The log's "trace started" line: formatted here (printf and the
     * local time cost a cold start() some 5 us). */
    struct timespec started_at;
    long long start_step;
    /* The base directory was not checked by start() (make_result_dir):
     * checked here before anything is created in it. */
    char check_base[PATH_MAX];
} prepared;

static void prepare_dirs(void *arg)
{
    (void)arg;
    char path[PATH_MAX];
    /* What fails here fails the raw file too, which is then reported as
     * the trace's write error (its events counted as dropped). */
    if (prepared.check_base[0] && aip__mkdirs(prepared.check_base)) {
        checked = 0; /* the next start checks it itself (stop() joined this thread) */
        aip__warn("result directory %s not created: %s", prepared.dir, aip_last_error());
        prepared.session = NULL;
        return;
    }
    if (prepared.create_dir && mkdir(prepared.dir, AIP_DIR_MODE) != 0 && errno != EEXIST)
        aip__warn("cannot create result directory %s: %s", prepared.dir, strerror(errno));
    static const char *const subdirs[] = {"FRAMEWORK", "logs"};
    for (int i = 0; i < 2; i++)
        if (!aip__join(path, sizeof path, prepared.dir, subdirs[i]) &&
            mkdir(path, AIP_DIR_MODE) != 0 && errno != EEXIST)
            aip__warn("cannot create %s: %s", path, strerror(errno));
    if (snprintf(path, sizeof path, "%s/logs/aiprof_%d.log", prepared.dir, (int)getpid()) <
        (int)sizeof path) {
        char first[PATH_MAX + 64];
        snprintf(first, sizeof first, "trace started in %s (aiprof %s, step %lld)", prepared.dir,
                 AIP_VERSION_STRING, prepared.start_step);
        aip__log_open(path, &prepared.started_at, first);
    }
    if (prepared.session &&
        !aip__join(path, sizeof path, prepared.dir, prepared.info_name)) {
        json_t *info = aip__profiler_info_start(prepared.session, prepared.program,
                                                prepared.rank);
        if (info && aip__write_json_file(path, info))
            aip__warn("%s", aip_last_error());
        json_decref(info);
        /* profiler_metadata.json now too, not only at the end, when there
         * is some: a program that dies or leaves with _exit keeps its
         * metadata (added ones rewrite it, session.c).  Here, once the
         * directory exists: written by start() it came before the
         * directory and failed ("cannot create ...json.tmpPID") on every
         * distributed rank. */
        if (aip__metadata_has_any(prepared.session) && aip__metadata_write(prepared.session))
            aip__warn("profiler_metadata.json not written at trace start: %s",
                      aip_last_error());
    }
    prepared.session = NULL;
}

/* ---- flight recorder (docs/FLIGHT_RECORDER.md) ---------------------- */

int aip__session_flight(const aip_session *s) { return s->cfg.flight_recorder_seconds > 0; }

static uint64_t ring_bytes(const aip_session *s)
{
    return s->cfg.flight_ring_bytes ? s->cfg.flight_ring_bytes : AIP_FLIGHT_DEFAULT_RING;
}

/* Where the ring lives: flight_ring_dir, else /dev/shm (memory: nothing
 * reaches a disk until a trigger, and it outlives a killed process) when
 * it has room for the ring and a quarter more, else the result base. */
static aip_status ring_dir(const aip_session *s, char *out, size_t cap)
{
    char parent[PATH_MAX];
    struct statvfs v;
    if (s->cfg.flight_ring_dir) {
        snprintf(parent, sizeof parent, "%s", s->cfg.flight_ring_dir);
    } else if (statvfs("/dev/shm", &v) == 0 && access("/dev/shm", W_OK) == 0 &&
               (uint64_t)v.f_bavail * v.f_frsize >= ring_bytes(s) + ring_bytes(s) / 4) {
        snprintf(parent, sizeof parent, "/dev/shm/aiprof_flight");
    } else {
        char base[PATH_MAX];
        aip_status st = base_dir(s, base, sizeof base);
        if (st)
            return st;
        st = aip__join(parent, sizeof parent, base, ".aiprof_flight");
        if (st)
            return st;
    }
    int n = snprintf(out, cap, "%s/%s_%d.ring", parent,
                     s->worker_name ? s->worker_name : aip__hostname(), (int)getpid());
    if (n < 0 || (size_t)n >= cap)
        return aip__fail(AIP_ERR_PATH, "flight recorder ring path too long under %s", parent);
    return AIP_OK;
}

/* A dump's result directory, named as a trace's (make_result_dir), with
 * FRAMEWORK/ and logs/; on the writer thread. */
static aip_status flight_dump_dir(void *arg, char *out, size_t cap)
{
    const aip_session *s = arg;
    int deferred, unchecked;
    char base[PATH_MAX], path[PATH_MAX];
    aip_status st = make_result_dir(s, out, cap, &deferred, base, &unchecked);
    if (!st && unchecked)
        st = aip__mkdirs(base);
    if (!st && deferred && mkdir(out, AIP_DIR_MODE) != 0 && errno != EEXIST)
        st = aip__fail(AIP_ERR_IO, "cannot create result directory %s: %s", out,
                       strerror(errno));
    static const char *const subdirs[] = {"FRAMEWORK", "logs"};
    for (int i = 0; !st && i < 2; i++)
        if (!(st = aip__join(path, sizeof path, out, subdirs[i])) &&
            mkdir(path, AIP_DIR_MODE) != 0 && errno != EEXIST)
            st = aip__fail(AIP_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    return st;
}

static json_t *reasons_json(uint32_t r)
{
    static const char *const names[] = {"api", "signal", "slow_step", "hang", "salvage"};
    json_t *a = json_array();
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (r & (1u << i))
            json_array_append_new(a, json_string(names[i]));
    return a;
}

static json_t *flight_json(const aip__flight_counts *c)
{
    json_t *f = json_object();
    json_object_set_new(f, "window_ns", json_integer((json_int_t)c->window_ns));
    json_object_set_new(f, "ring_bytes", json_integer((json_int_t)c->ring_bytes));
    json_object_set_new(f, "triggers", reasons_json(c->reasons));
    json_object_set_new(f, "recorded_events", json_integer((json_int_t)c->recorded));
    json_object_set_new(f, "overwritten_events", json_integer((json_int_t)c->overwritten));
    json_object_set_new(f, "outside_window_events", json_integer((json_int_t)c->outside_window));
    json_object_set_new(f, "open_ranges", json_integer((json_int_t)c->open_ranges));
    json_object_set_new(f, "segments", json_integer((json_int_t)c->segments));
    return f;
}

/* After a dump: profiler_info.json (its counts under aiprof.flight_recorder)
 * and profiler_metadata.json, on the writer thread: what they read of the
 * session does not change while its trace records. */
static void flight_dump_done(void *arg, const char *dir, const aip__flight_counts *c)
{
    const aip_session *s = arg;
    aip__trace_totals t;
    memset(&t, 0, sizeof t);
    t.recorded = c->recorded;
    t.dropped = aip__recorder_live_dropped();
    t.start = s->trace_start;
    aip__clock_sync(&t.end);
    char path[PATH_MAX], name[64];
    json_t *j = aip__profiler_info(s, &t);
    json_t *a = json_object_get(j, "aiprof");
    if (a)
        json_object_set_new(a, "flight_recorder", flight_json(c));
    if (!aip__join(path, sizeof path, dir, info_name(name, sizeof name, aip__rank())) &&
        aip__write_json_file(path, j))
        aip__warn("%s", aip_last_error());
    json_decref(j);
    json_t *m = aip__profiler_metadata(s);
    if (!aip__join(path, sizeof path, dir, "profiler_metadata.json") &&
        aip__write_json_file(path, m))
        aip__warn("%s", aip_last_error());
    json_decref(m);
    aip__log("INFO", "flight recorder dump in %s: %llu events, %llu overwritten by the ring",
             dir, (unsigned long long)c->recorded, (unsigned long long)c->overwritten);
    if (s->cfg.on_trace_ready) /* each dump is a trace ready: on this thread */
        s->cfg.on_trace_ready((aip_session *)s, dir, s->cfg.on_trace_ready_data);
}

/* An armed flight recorder's trace: the ring instead of a result
 * directory, and the triggers. */
static aip_status flight_begin(aip_session *s, aip__trace_info *info, char *ring, size_t cap)
{
    aip_status st = ring_dir(s, ring, cap);
    if (st)
        return st;
    info->raw_path = ring;
    info->prepare = NULL;
    info->ring_dir = ring;
    info->ring_bytes = ring_bytes(s);
    info->window_ticks =
        (uint64_t)(s->cfg.flight_recorder_seconds * aip__clock_ticks_per_second());
    info->dump_dir = flight_dump_dir;
    info->dump_done = flight_dump_done;
    info->dump_arg = s;
    return AIP_OK;
}

static void collectors_started(aip_session *s)
{
    s->trace_open = 1;
    aip__collectors_trace_started(&s->cfg);
}

/* What every trace start sets first, flight recorder or not: the mstx
 * domain filter (returns whether one is set), the GC threshold, the
 * trace's clock pair and first step. */
static int trace_prologue(aip_session *s)
{
    int filtering = aip__domain_filter_set((const char *const *)s->include,
                                           (const char *const *)s->exclude);
    aip__gc_threshold_ns = s->cfg.gc_detect_threshold_ms >= 0
                               ? (uint64_t)(s->cfg.gc_detect_threshold_ms * 1e6)
                               : 0;
    aip__clock_sync(&s->trace_start);
    s->trace_first_step = s->step_num;
    return filtering;
}

static aip_status flight_trace_begin(aip_session *s)
{
    char ring[PATH_MAX];
    int filtering = trace_prologue(s);
    s->result_dir[0] = '\0';
    aip__trace_info info = {
        .hostname = aip__hostname(),
        .program = aip__program_name(),
        .cap_bytes = s->cfg.buffer_cap_bytes,
        .rec_mask = rec_mask(s, filtering),
        .start = s->trace_start,
    };
    aip_status st = flight_begin(s, &info, ring, sizeof ring);
    if (!st)
        st = aip__recorder_begin(&info, &s->trace_start);
    if (st) {
        aip__warn("the flight recorder is not armed: %s", aip_last_error());
        return st;
    }
    aip__flight_arm(s->cfg.flight_signal, s->cfg.flight_slow_step, s->cfg.flight_hang_seconds);
    collectors_started(s);
    return AIP_OK;
}

aip_status aip__trace_begin(aip_session *s)
{
    char path[PATH_MAX];
    int deferred, unchecked;
    if (aip__session_flight(s))
        return flight_trace_begin(s);
    aip_status st = make_result_dir(s, s->result_dir, sizeof s->result_dir, &deferred,
                                    prepared.check_base, &unchecked);
    if (!unchecked)
        prepared.check_base[0] = '\0';
    if (!st) {
        aip__sb b = aip__sb_init(path, sizeof path);
        aip__sb_str(&b, s->result_dir);
        aip__sb_str(&b, "/FRAMEWORK/aiprof_");
        aip__sb_int(&b, (long long)getpid());
        aip__sb_str(&b, ".raw");
        if (!aip__sb_ok(&b))
            st = aip__fail(AIP_ERR_PATH, "raw file path too long under %s", s->result_dir);
    }
    if (st) {
        aip__warn("profiling is off for this trace: %s", aip_last_error());
        s->result_dir[0] = '\0';
        return st;
    }
    aip__log_expect();
    clock_gettime(CLOCK_REALTIME, &prepared.started_at);
    prepared.start_step = (long long)(s->step_num + s->step_offset);

    int filtering = trace_prologue(s);
    /* Written with the trace's first data (by the writer thread, before
     * the raw file) so that a program killed mid-trace leaves it behind. */
    snprintf(prepared.dir, sizeof prepared.dir, "%s", s->result_dir);
    prepared.create_dir = deferred;
    prepared.session = s;
    snprintf(prepared.program, sizeof prepared.program, "%s", aip__program_name());
    prepared.rank = aip__rank();
    info_name(prepared.info_name, sizeof prepared.info_name, prepared.rank);
    aip__trace_info info = {
        .raw_path = path,
        .hostname = aip__hostname(),
        .program = aip__program_name(),
        .cap_bytes = s->cfg.buffer_cap_bytes,
        .max_bytes = s->cfg.max_raw_bytes,
        .rec_mask = rec_mask(s, filtering),
        .start = s->trace_start,
        .prepare = prepare_dirs,
    };
    s->texts_cut_base = aip__strings_cut();
    s->texts_cut = 0;
    s->texts_invalid_base = aip__strings_invalid_utf8();
    s->texts_invalid = 0;
    st = aip__recorder_begin(&info, &s->trace_start);
    if (st) {
        aip__warn("profiling is off for this trace: %s", aip_last_error());
        aip__log_close();
        prepared.session = NULL;
        return st;
    }
    collectors_started(s);
    return AIP_OK;
}

aip_status aip__trace_end(aip_session *s, int save)
{
    if (!s->trace_open)
        return AIP_OK;
    /* Python calls still running on any thread end in aip__recorder_end. */
    s->trace_open = 0;
    /* their last records, while recording is on: communication's drain
     * (collectives completed, records still owed) first, the device back
     * ends last (src/collect/comm) */
    aip__collectors_trace_stopping();
    s->n_trace_devices = aip__dev_trace_devices(s->trace_devices, AIP_DEV_MAX_DEVICES);
    aip__trace_totals *t = &s->last_totals;
    if (aip__session_flight(s)) { /* the ring goes: only dumps are kept */
        aip__flight_disarm();
        return aip__recorder_end(t);
    }
    aip_status st = aip__recorder_end(t);
    if (t->dropped && t->io_error)
        aip__warn("%llu events could not be written (%s); they are missing from %s",
                  (unsigned long long)t->dropped, strerror(t->io_error), s->result_dir);
    else if (t->dropped && t->size_capped)
        aip__warn("%llu events were not written: the raw data reached its size limit; they "
                  "are missing from %s", (unsigned long long)t->dropped, s->result_dir);
    else if (t->dropped)
        aip__warn("%llu events were dropped at the %zu-byte buffer cap (buffer_cap_bytes); "
                  "they are missing from %s",
                  (unsigned long long)t->dropped, s->cfg.buffer_cap_bytes, s->result_dir);
    if (t->unbalanced)
        aip__warn("%llu pops/ends had no matching push/begin on their thread",
                  (unsigned long long)t->unbalanced);
    s->texts_cut = aip__strings_cut() - s->texts_cut_base;
    if (s->texts_cut)
        aip__warn("%llu text(s) longer than %u bytes (names, shapes, call stacks) were cut to "
                  "that length", (unsigned long long)s->texts_cut, AIP_STRING_MAX_LEN);
    s->texts_invalid = aip__strings_invalid_utf8() - s->texts_invalid_base;
    if (s->texts_invalid)
        aip__warn("%llu new text(s) are not valid UTF-8; the outputs write each bad byte as "
                  "U+FFFD", (unsigned long long)s->texts_invalid);
    aip__log("INFO", "trace stopped: %llu events recorded, %llu dropped, %llu bytes of raw data",
             (unsigned long long)t->recorded, (unsigned long long)t->dropped,
             (unsigned long long)t->bytes);

    char path[PATH_MAX], name[64];
    if (!aip__join(path, sizeof path, s->result_dir, info_name(name, sizeof name, aip__rank()))) {
        json_t *j = aip__profiler_info(s, t);
        aip_status w = aip__write_json_file(path, j);
        json_decref(j);
        if (w && !st)
            st = w;
    }
    aip_status w = aip__metadata_write(s);
    if (w && !st)
        st = w;
    if (st)
        aip__log("ERROR", "trace saved with errors: %s", aip_last_error());
    aip__log_close();
    if (save && s->cfg.on_trace_ready)
        s->cfg.on_trace_ready(s, s->result_dir, s->cfg.on_trace_ready_data);
    return st;
}
