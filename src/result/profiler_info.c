/*
 * profiler_info.c — read profiler_info*.json of a result directory into
 * the model's aip__profiler_info_data (see profiler_info.h, model.h).
 */
#include "profiler_info.h"
#include "config_names.h"
#include "error.h"
#include "fs.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INFO_MAX_BYTES (16u * 1024u * 1024u)

/* profiler_info.json or profiler_info_<digits>.json */
static int is_info_name(const char *n)
{
    if (!strcmp(n, "profiler_info.json"))
        return 1;
    if (strncmp(n, "profiler_info_", 14) != 0)
        return 0;
    const char *p = n + 14;
    if (*p < '0' || *p > '9')
        return 0;
    while (*p >= '0' && *p <= '9')
        p++;
    return !strcmp(p, ".json");
}

static int get_flag(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

static int get_u64(json_t *o, const char *key, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return 0;
    *out = (uint64_t)json_integer_value(v);
    return 1;
}

static unsigned activity_bits(json_t *a)
{
    unsigned bits = 0;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        const char *t = json_string_value(v);
        const char *dot = t ? strrchr(t, '.') : NULL; /* "ProfilerActivity.CPU" */
        const char *w = dot ? dot + 1 : t;
        if (!w)
            continue;
        if (aip__same_word(w, "cpu"))
            bits |= AIP_ACTIVITY_CPU;
        else if (aip__same_word(w, "npu"))
            bits |= AIP_ACTIVITY_NPU;
        else if (aip__same_word(w, "cuda"))
            bits |= AIP_ACTIVITY_CUDA;
        else if (aip__same_word(w, "xpu"))
            bits |= AIP_ACTIVITY_XPU;
    }
    return bits;
}

static unsigned host_sys_bits(json_t *a)
{
    static const char *const names[] = {"cpu", "mem", "disk", "network", "osrt"};
    unsigned bits = 0;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        const char *t = json_string_value(v);
        const char *dot = t ? strrchr(t, '.') : NULL;
        const char *w = dot ? dot + 1 : t;
        for (unsigned k = 0; w && k < 5; k++)
            if (aip__same_word(w, names[k]))
                bits |= 1u << k;
    }
    return bits;
}

static void parse_experimental(json_t *exp, aip__profiler_info_data *out)
{
    aip_profiler_level level;
    if (!aip__profiler_level_parse(json_string_value(json_object_get(exp, "_profiler_level")),
                                   &level)) {
        out->profiler_level = level;
        out->level_known = 1;
    }
    json_t *ds = json_object_get(exp, "_data_simplification");
    if (ds)
        out->data_simplification = json_is_true(ds);
    out->record_op_args = get_flag(exp, "record_op_args");
    out->mstx = get_flag(exp, "_mstx") || get_flag(exp, "_msprof_tx");
    out->gc_detect = json_is_number(json_object_get(exp, "_gc_detect_threshold"));
    out->host_sys = host_sys_bits(json_object_get(exp, "_host_sys"));
    out->l2_cache = get_flag(exp, "_l2_cache");
    out->sys_io = get_flag(exp, "_sys_io");
    out->sys_interconnection = get_flag(exp, "_sys_interconnection");
    out->op_attr = get_flag(exp, "_op_attr");
}

static void parse(json_t *root, aip__profiler_info_data *out)
{
    json_t *config = json_object_get(root, "config");
    json_t *common = json_object_get(config, "common_config");
    json_t *exp = json_object_get(config, "experimental_config");
    json_t *et = json_object_get(exp, "_export_type");
    if (json_is_string(et)) {
        out->export_type = aip__export_type_parse(json_string_value(et));
    } else if (json_is_array(et)) {
        size_t i;
        json_t *v;
        json_array_foreach(et, i, v)
            out->export_type |= aip__export_type_parse(json_string_value(v));
    }
    if (json_is_object(common)) {
        out->has_config = 1;
        out->record_shapes = get_flag(common, "record_shapes");
        out->profile_memory = get_flag(common, "profile_memory");
        out->with_stack = get_flag(common, "with_stack");
        out->with_flops = get_flag(common, "with_flops");
        out->with_modules = get_flag(common, "with_modules");
        out->activities = activity_bits(json_object_get(common, "activities"));
        json_t *sch = json_object_get(common, "schedule");
        out->has_schedule = json_is_object(sch) && json_object_size(sch) > 0;
    }
    if (json_is_object(exp))
        parse_experimental(exp, out);
    json_t *rank = json_object_get(root, "rank_id");
    if (json_is_integer(rank))
        out->rank = (int64_t)json_integer_value(rank);
    uint64_t cut;
    if (get_u64(json_object_get(root, "aiprof"), "texts_cut", &cut)) {
        out->texts_cut = cut;
        out->has_texts_cut = 1;
    }
    json_t *si = json_object_get(root, "start_info");
    aip__clock_pair cs;
    if (get_u64(si, "start_cnt", &cs.ticks) && get_u64(si, "start_monotonic", &cs.monotonic_ns) &&
        get_u64(si, "start_realtime", &cs.realtime_ns)) {
        out->start_sync = cs;
        out->has_start_sync = 1;
    }
}

aip_status aip__profiler_info_read(const char *result_dir, aip__profiler_info_data *out)
{
    aip__profiler_info_defaults(out);
    DIR *d = opendir(result_dir);
    if (!d) {
        snprintf(out->problem, sizeof out->problem, "cannot list %s", result_dir);
        return AIP_OK;
    }
    char best[64] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        /* Several files (one per rank) are not expected; take the first by
         * name so the choice does not depend on directory order. */
        size_t len = strlen(e->d_name);
        if (is_info_name(e->d_name) && len < sizeof best &&
            (!best[0] || strcmp(e->d_name, best) < 0))
            memcpy(best, e->d_name, len + 1);
    }
    closedir(d);
    if (!best[0]) {
        snprintf(out->problem, sizeof out->problem,
                 "no profiler_info.json (the program may have ended before writing it); "
                 "using defaults");
        return AIP_OK;
    }
    char path[PATH_MAX];
    if (aip__join(path, sizeof path, result_dir, best))
        return AIP_OK;
    char *text = NULL;
    size_t size = 0;
    aip_status s = aip__read_file(path, INFO_MAX_BYTES, &text, &size);
    if (s == AIP_ERR_NOMEM)
        return s;
    if (s) {
        snprintf(out->problem, sizeof out->problem, "%s", aip_last_error());
        return AIP_OK;
    }
    json_error_t err;
    json_t *root = json_loadb(text, size, 0, &err);
    free(text);
    if (!root) {
        snprintf(out->problem, sizeof out->problem, "%s is not valid JSON (line %d: %.120s); "
                 "using defaults", best, err.line, err.text);
        return AIP_OK;
    }
    if (!json_is_object(root)) {
        snprintf(out->problem, sizeof out->problem, "%s is not a JSON object; using defaults",
                 best);
        json_decref(root);
        return AIP_OK;
    }
    parse(root, out);
    json_decref(root);
    out->found = 1;
    snprintf(out->file, sizeof out->file, "%s", best);
    return AIP_OK;
}
