/*
 * session_info.c — profiler_info.json and profiler_metadata.json.
 *
 * Key names follow torch_npu (reference §2.6): experimental_config keys are
 * the private attribute names (`_profiler_level`, ...) because that is what
 * downstream tools read.  Clock pairs taken at start and stop let every
 * output show absolute times.
 */
#include "fork_handlers.h"
#include "host_uid.h"
#include "session_int.h"
#include "collector.h"
#include "clock.h"
#include "env.h"
#include "error.h"
#include "fs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static json_t *str_list(char **l)
{
    json_t *a = json_array();
    for (char **p = l; p && *p; p++)
        json_array_append_new(a, json_string(*p));
    return a;
}

static json_t *common_config(const aip_session *s)
{
    const aip_config *c = &s->cfg;
    json_t *o = json_object();
    json_t *acts = json_array();
    if (c->activities & AIP_ACTIVITY_CPU)
        json_array_append_new(acts, json_string("ProfilerActivity.CPU"));
    if (c->activities & AIP_ACTIVITY_NPU)
        json_array_append_new(acts, json_string("ProfilerActivity.NPU"));
    if (c->activities & AIP_ACTIVITY_CUDA)
        json_array_append_new(acts, json_string("ProfilerActivity.CUDA"));
    if (c->activities & AIP_ACTIVITY_XPU)
        json_array_append_new(acts, json_string("ProfilerActivity.XPU"));
    json_object_set_new(o, "activities", acts);
    json_t *sch = json_object();
    if (c->schedule_fn) {
        json_object_set_new(sch, "custom", json_true()); /* the host's own function */
    } else if (c->has_schedule) {
        json_object_set_new(sch, "wait", json_integer(c->schedule.wait));
        json_object_set_new(sch, "active", json_integer(c->schedule.active));
        json_object_set_new(sch, "warmup", json_integer(c->schedule.warmup));
        json_object_set_new(sch, "repeat", json_integer(c->schedule.repeat));
        json_object_set_new(sch, "skip_first", json_integer(c->schedule.skip_first));
    }
    json_object_set_new(o, "schedule", sch);
    json_object_set_new(o, "record_shapes", json_boolean(c->record_shapes));
    json_object_set_new(o, "profile_memory", json_boolean(c->profile_memory));
    json_object_set_new(o, "with_stack", json_boolean(c->with_stack));
    json_object_set_new(o, "with_flops", json_boolean(c->with_flops));
    json_object_set_new(o, "with_modules", json_boolean(c->with_modules));
    return o;
}

static json_t *experimental_config(const aip_session *s)
{
    const aip_config *c = &s->cfg;
    json_t *o = json_object();
    json_object_set_new(o, "_profiler_level",
                        json_string(aip_profiler_level_name(c->profiler_level)));
    aip_aic_metrics m = c->aic_metrics;
    if (m == AIP_AIC_DEFAULT || c->profiler_level <= AIP_LEVEL0)
        m = c->profiler_level >= AIP_LEVEL1 && m == AIP_AIC_DEFAULT ? AIP_AIC_PIPE_UTILIZATION
                                                                     : AIP_AIC_NONE;
    json_object_set_new(o, "_aic_metrics", json_string(aip_aic_metrics_name(m)));
    json_object_set_new(o, "_l2_cache", json_boolean(c->l2_cache));
    json_object_set_new(o, "_msprof_tx", json_boolean(c->mstx));
    json_object_set_new(o, "_mstx", json_boolean(c->mstx));
    json_object_set_new(o, "_data_simplification", json_boolean(c->data_simplification));
    json_object_set_new(o, "record_op_args", json_boolean(c->record_op_args));
    json_t *et = json_array();
    if (c->export_type & AIP_EXPORT_TEXT)
        json_array_append_new(et, json_string("text"));
    if (c->export_type & AIP_EXPORT_DB)
        json_array_append_new(et, json_string("db"));
    json_object_set_new(o, "_export_type", et);
    json_t *hs = json_array();
    static const char *const host_names[] = {"cpu", "mem", "disk", "network", "osrt"};
    for (int i = 0; i < 5; i++)
        if (c->host_sys & (1u << i))
            json_array_append_new(hs, json_string(host_names[i]));
    json_object_set_new(o, "_host_sys", hs);
    json_object_set_new(o, "_op_attr", json_boolean(c->op_attr));
    json_object_set_new(o, "_gc_detect_threshold", c->gc_detect_threshold_ms >= 0
                                                       ? json_real(c->gc_detect_threshold_ms)
                                                       : json_null());
    json_object_set_new(o, "_mstx_domain_include", str_list(s->include));
    json_object_set_new(o, "_mstx_domain_exclude", str_list(s->exclude));
    json_object_set_new(o, "_sys_io", json_boolean(c->sys_io));
    json_object_set_new(o, "_sys_interconnection", json_boolean(c->sys_interconnection));
    return o;
}

static json_t *profiler_info(const aip_session *s, const aip__trace_totals *end,
                             const char *program, int rank);

json_t *aip__profiler_info(const aip_session *s, const aip__trace_totals *end)
{
    return profiler_info(s, end, aip__program_name(), aip__rank());
}

json_t *aip__profiler_info_start(const aip_session *s, const char *program, int rank)
{
    return profiler_info(s, NULL, program, rank);
}

/* The devices of the trace and how their clocks were aligned to the host
 * (docs/DEVICE.md "Clock alignment"): method, samples, error bound. */
static json_t *devices_json(const aip_session *s)
{
    json_t *list = json_array();
    for (size_t i = 0; i < s->n_trace_devices; i++) {
        const aip__dev_trace_device *d = &s->trace_devices[i];
        json_t *o = json_object();
        json_object_set_new(o, "device_id", json_integer(d->id));
        json_t *name = json_string(d->name); /* NULL: not UTF-8 (a driver's bytes) */
        json_object_set_new(o, "name", name ? name : json_string("(name not UTF-8)"));
        const char *backend = aip__collector_backend_name(d->backend); /* collector.h */
        json_object_set_new(o, "backend", json_string(backend ? backend : "unknown"));
        json_object_set_new(o, "clock_sync", json_string(aip__dev_sync_method_name(d->method)));
        json_object_set_new(o, "clock_samples", json_integer((json_int_t)d->samples));
        json_object_set_new(o, "clock_error_bound_ns", d->error_ns >= 0
                                                           ? json_integer(d->error_ns)
                                                           : json_null());
        json_array_append_new(list, o);
    }
    return list;
}

static json_t *profiler_info(const aip_session *s, const aip__trace_totals *end,
                             const char *program, int rank)
{
    json_t *root = json_object();
    json_t *config = json_object();
    json_object_set_new(config, "common_config", common_config(s));
    json_object_set_new(config, "experimental_config", experimental_config(s));
    json_object_set_new(root, "config", config);

    json_t *start = json_object();
    json_object_set_new(start, "syscnt_enable", json_false());
    json_object_set_new(start, "freq", json_real(aip__clock_ticks_per_second()));
    json_object_set_new(start, "start_cnt", json_integer((json_int_t)s->trace_start.ticks));
    json_object_set_new(start, "start_monotonic",
                        json_integer((json_int_t)s->trace_start.monotonic_ns));
    json_object_set_new(start, "start_realtime",
                        json_integer((json_int_t)s->trace_start.realtime_ns));
    json_object_set_new(root, "start_info", start);
    if (end) {
        json_t *e = json_object();
        json_object_set_new(e, "collectionTimeEnd", json_integer((json_int_t)end->end.realtime_ns));
        json_object_set_new(e, "MonotonicTimeEnd", json_integer((json_int_t)end->end.monotonic_ns));
        json_object_set_new(e, "end_cnt", json_integer((json_int_t)end->end.ticks));
        json_object_set_new(root, "end_info", e);
    }
    json_object_set_new(root, "torch_npu_version", json_string(""));
    json_object_set_new(root, "cann_version", json_string(""));
    json_object_set_new(root, "rank_id", json_integer(rank));

    json_t *a = json_object();
    json_object_set_new(a, "version", json_string(AIP_VERSION_STRING));
    char worker[300];
    if (s->worker_name)
        snprintf(worker, sizeof worker, "%s", s->worker_name);
    else
        snprintf(worker, sizeof worker, "%s_%d", aip__hostname(), (int)getpid());
    json_object_set_new(a, "worker_name", json_string(worker));
    json_object_set_new(a, "pid", json_integer((json_int_t)getpid()));
    json_object_set_new(a, "hostname", json_string(aip__hostname()));
    /* which ranks share a clock, for aiprof cluster (docs/CLUSTER.md) */
    uint64_t uid = aip__host_uid();
    if (uid) {
        char text[24];
        snprintf(text, sizeof text, "%llu", (unsigned long long)uid);
        json_object_set_new(a, "host_uid", json_string(text));
    }
    json_object_set_new(a, "program", json_string(program));
    json_object_set_new(a, "clock", json_string(aip__clock_name()));
    json_object_set_new(a, "first_step", json_integer(s->trace_first_step + s->step_offset));
    if (end) {
        json_object_set_new(a, "recorded_events", json_integer((json_int_t)end->recorded));
        json_object_set_new(a, "dropped_events", json_integer((json_int_t)end->dropped));
        json_object_set_new(a, "unbalanced_pops", json_integer((json_int_t)end->unbalanced));
        json_object_set_new(a, "texts_cut", json_integer((json_int_t)s->texts_cut));
        json_object_set_new(a, "texts_invalid_utf8", json_integer((json_int_t)s->texts_invalid));
        json_object_set_new(a, "raw_bytes", json_integer((json_int_t)end->bytes));
        if (s->n_trace_devices)
            json_object_set_new(a, "devices", devices_json(s));
        else if (aip__dev_trace_status())
            json_object_set_new(a, "device_status", json_string(aip__dev_trace_status()));
    }
    json_object_set_new(root, "aiprof", a);
    return root;
}

/* A session's metadata is added on the program's threads, and, for the
 * session aiprof run's controller adopted, into the controller's session
 * while its trace is open; written at trace start, at each addition while
 * a trace is open, and at trace end.  One lock for all of it: few, small
 * and rare. */
static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;

static void meta_fork_lock(void) { pthread_mutex_lock(&meta_lock); }
static void meta_fork_unlock(void) { pthread_mutex_unlock(&meta_lock); }

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_META, meta_fork_lock, meta_fork_unlock, meta_fork_unlock);
}

aip_status aip__metadata_add(aip_session *s, const char *key, json_t *value, size_t bytes,
                             size_t cap)
{
    pthread_mutex_lock(&meta_lock);
    if (s->metadata_bytes + bytes > cap) {
        pthread_mutex_unlock(&meta_lock);
        json_decref(value);
        return aip__fail(AIP_ERR_LIMIT, "metadata exceeds %zu bytes in total; \"%.40s\" not added",
                         cap, key);
    }
    s->metadata_bytes += bytes;
    json_object_set_new(s->metadata, key, value);
    pthread_mutex_unlock(&meta_lock);
    return AIP_OK;
}

json_t *aip__profiler_metadata(const aip_session *s)
{
    pthread_mutex_lock(&meta_lock);
    json_t *o = json_deep_copy(s->metadata);
    pthread_mutex_unlock(&meta_lock);
    if (!o)
        o = json_object();
    json_object_set_new(o, "ENV_VARIABLES", aip__env_variables());
    return o;
}

int aip__metadata_has_any(const aip_session *s)
{
    pthread_mutex_lock(&meta_lock);
    int any = json_object_size(s->metadata) > 0;
    pthread_mutex_unlock(&meta_lock);
    return any;
}

aip_status aip__metadata_write(const aip_session *s)
{
    char path[PATH_MAX];
    if (aip__join(path, sizeof path, s->result_dir, "profiler_metadata.json"))
        return aip__fail(AIP_ERR_INVALID_ARG, "result directory path too long");
    /* The trace's directory is made by its writer thread (trace.c
     * prepare_dirs), which writes this file once it has; an addition
     * before that finds no directory and leaves the file to it (the
     * addition is in the session's metadata before the writer reads it). */
    struct stat st_dir;
    if (stat(s->result_dir, &st_dir) != 0 && errno == ENOENT)
        return AIP_OK;
    json_t *j = aip__profiler_metadata(s);
    pthread_mutex_lock(&meta_lock); /* one writer of the file at a time */
    aip_status st = aip__write_json_file(path, j);
    pthread_mutex_unlock(&meta_lock);
    json_decref(j);
    return st;
}

aip_status aip__write_json_file(const char *path, json_t *value)
{
    char *text = json_dumps(value, JSON_INDENT(4) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (!text)
        return aip__fail(AIP_ERR_NOMEM, "cannot serialise %s", path);
    size_t n = strlen(text);
    char *withnl = realloc(text, n + 2);
    if (withnl) {
        text = withnl;
        text[n++] = '\n';
        text[n] = '\0';
    }
    aip_status st = aip__write_file(path, text, n);
    free(text);
    return st;
}
