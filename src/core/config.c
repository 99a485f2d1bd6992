/*
 * config.c — aip_config defaults and validation.
 *
 * Defaults and rules follow torch_npu.profiler.profile and
 * _ExperimentalConfig as documented in the seeds.  Errors name the
 * parameter; soft problems (both domain lists set, NPU/CUDA activities on a
 * machine without such a device) are warnings, as in torch_npu.
 */
#include "aiprof.h"
#include "config_names.h"
#include "error.h"
#include "fs.h"
#include "flight.h"

#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#define AIP_WORKER_NAME_MAX 226 /* torch_npu: worker name shorter than 226 */

void aip_config_init(aip_config *c)
{
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
    c->activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    c->export_type = AIP_EXPORT_TEXT;
    c->profiler_level = AIP_LEVEL0;
    c->aic_metrics = AIP_AIC_DEFAULT;
    c->data_simplification = 1;
    c->gc_detect_threshold_ms = -1.0;
    c->buffer_cap_bytes = 64u * 1024u * 1024u;
}

const char *aip_profiler_level_name(aip_profiler_level level)
{
    switch (level) {
#define LEVEL_CASE(value, name) \
    case value: return name;
        AIP__PROFILER_LEVELS(LEVEL_CASE)
#undef LEVEL_CASE
    }
    return NULL;
}

const char *aip_aic_metrics_name(aip_aic_metrics m)
{
    switch (m) {
    case AIP_AIC_DEFAULT: return NULL;
#define AIC_CASE(value, name, acl) \
    case value: return acl;
        AIP__AIC_METRICS(AIC_CASE)
#undef AIC_CASE
    }
    return NULL;
}

static int is_bool(int v) { return v == 0 || v == 1; }

#define CHECK_BOOL(field)                                                              \
    if (!is_bool(c->field))                                                            \
        return aip__fail(AIP_ERR_INVALID_ARG, #field " must be 0 or 1 (got %d)", c->field);

/* A host schedule (config.schedule_fn), in a config recent enough to have one. */
static int has_schedule_fn(const aip_config *c)
{
    return c->struct_size >= offsetof(aip_config, schedule_fn_data) + sizeof(void *) &&
           c->schedule_fn;
}

/* The flight recorder's fields (docs/FLIGHT_RECORDER.md), in a config
 * recent enough to have them. */
static aip_status flight_validate(const aip_config *c)
{
    if (c->struct_size < offsetof(aip_config, flight_signal) + sizeof(int))
        return AIP_OK;
    double w = c->flight_recorder_seconds;
    if (!(w >= 0) || isinf(w))
        return aip__fail(AIP_ERR_INVALID_ARG, "flight_recorder_seconds must be a number >= 0 "
                         "(0 = off)");
    if (c->flight_ring_bytes && c->flight_ring_bytes < AIP_FLIGHT_MIN_RING)
        return aip__fail(AIP_ERR_INVALID_ARG, "flight_ring_bytes must be 0 (256 MiB) or at "
                         "least 4 MiB (got %llu)", (unsigned long long)c->flight_ring_bytes);
    if (!(c->flight_slow_step == 0 || c->flight_slow_step > 1) || isinf(c->flight_slow_step))
        return aip__fail(AIP_ERR_INVALID_ARG, "flight_slow_step must be 0 (off) or a factor > 1");
    if (!(c->flight_hang_seconds >= 0) || isinf(c->flight_hang_seconds))
        return aip__fail(AIP_ERR_INVALID_ARG, "flight_hang_seconds must be a number >= 0 "
                         "(0 = off)");
    int sig = c->flight_signal;
    if (sig < -1 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP)
        return aip__fail(AIP_ERR_INVALID_ARG, "flight_signal %d is not a signal that can be "
                         "caught (0 = SIGUSR2, -1 = none)", sig);
    if (c->flight_ring_dir) {
        aip_status s = aip__path_check(c->flight_ring_dir, "flight_ring_dir");
        if (s)
            return s;
    }
    return AIP_OK;
}

aip_status aip_config_validate(const aip_config *c)
{
    if (!c)
        return aip__fail(AIP_ERR_INVALID_ARG, "config is NULL");
    if (c->struct_size < offsetof(aip_config, buffer_cap_bytes) ||
        c->struct_size > sizeof(aip_config))
        return aip__fail(AIP_ERR_INVALID_ARG,
                         "config.struct_size is %zu; call aip_config_init() first", c->struct_size);
    if (c->activities & ~(unsigned)(AIP_ACTIVITY_CPU | AIP_ACTIVITY_DEVICES))
        return aip__fail(AIP_ERR_INVALID_ARG, "activities has unknown bits 0x%x", c->activities);
    if (c->has_schedule && !has_schedule_fn(c)) {
        aip_status s = aip_schedule_validate(&c->schedule);
        if (s)
            return s;
    }
    CHECK_BOOL(has_schedule)
    CHECK_BOOL(record_shapes)
    CHECK_BOOL(profile_memory)
    CHECK_BOOL(with_stack)
    CHECK_BOOL(with_flops)
    CHECK_BOOL(with_modules)
    CHECK_BOOL(use_cuda)
    CHECK_BOOL(l2_cache)
    CHECK_BOOL(op_attr)
    CHECK_BOOL(data_simplification)
    CHECK_BOOL(record_op_args)
    CHECK_BOOL(mstx)
    CHECK_BOOL(sys_io)
    CHECK_BOOL(sys_interconnection)
    if (c->dir_name) {
        aip_status s = aip__path_check(c->dir_name, "dir_name");
        if (s)
            return s;
    }
    if (c->worker_name) {
        aip_status s = aip__path_check(c->worker_name, "worker_name");
        if (s)
            return s;
        if (strchr(c->worker_name, '/'))
            return aip__fail(AIP_ERR_PATH, "worker_name \"%s\" must not contain '/'",
                             c->worker_name);
        if (strlen(c->worker_name) >= AIP_WORKER_NAME_MAX)
            return aip__fail(AIP_ERR_PATH, "worker_name must be shorter than %d characters",
                             AIP_WORKER_NAME_MAX);
    }
    if (c->export_type == 0 || (c->export_type & ~(unsigned)(AIP_EXPORT_TEXT | AIP_EXPORT_DB)))
        return aip__fail(AIP_ERR_INVALID_ARG, "export_type must be TEXT, DB or both (got 0x%x)",
                         c->export_type);
    if (c->profiler_level < AIP_LEVEL_NONE || c->profiler_level > AIP_LEVEL2)
        return aip__fail(AIP_ERR_INVALID_ARG, "profiler_level %d is not one of %s",
                         (int)c->profiler_level, AIP__PROFILER_LEVEL_NAME_LIST);
    if (c->aic_metrics < AIP_AIC_DEFAULT || c->aic_metrics > AIP_AIC_MEMORY_ACCESS)
        return aip__fail(AIP_ERR_INVALID_ARG, "aic_metrics %d is not a known AiCMetrics value",
                         (int)c->aic_metrics);
    if (isnan(c->gc_detect_threshold_ms))
        return aip__fail(AIP_ERR_INVALID_ARG, "gc_detect_threshold must be a number >= 0 or None");
    if (c->host_sys & ~(unsigned)0x1f)
        return aip__fail(AIP_ERR_INVALID_ARG, "host_sys has unknown bits 0x%x", c->host_sys);
    if (c->struct_size >= offsetof(aip_config, buffer_cap_bytes) + sizeof(size_t) &&
        c->buffer_cap_bytes && c->buffer_cap_bytes < 1024u * 1024u)
        return aip__fail(AIP_ERR_INVALID_ARG, "buffer_cap_bytes must be at least 1 MiB (got %zu)",
                         c->buffer_cap_bytes);
    if (c->struct_size >= offsetof(aip_config, max_raw_bytes) + sizeof(uint64_t) &&
        c->max_raw_bytes && c->max_raw_bytes < 1024u * 1024u)
        return aip__fail(AIP_ERR_INVALID_ARG, "max_raw_bytes must be 0 (no cap) or at least "
                         "1 MiB (got %llu)", (unsigned long long)c->max_raw_bytes);
    aip_status fs = flight_validate(c);
    if (fs)
        return fs;
    for (const char *const *l = c->mstx_domain_include; l && *l; l++)
        if (!**l)
            return aip__fail(AIP_ERR_INVALID_ARG, "mstx_domain_include has an empty name");
    for (const char *const *l = c->mstx_domain_exclude; l && *l; l++)
        if (!**l)
            return aip__fail(AIP_ERR_INVALID_ARG, "mstx_domain_exclude has an empty name");
    return AIP_OK;
}
