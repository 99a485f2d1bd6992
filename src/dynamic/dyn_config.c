/*
 * dyn_config.c — profiler_config.json parsing and validation.
 *
 * Strict on types and values (a wrong value rejects the edit, with a
 * message naming the key, and the next valid edit works), lenient on
 * unknown keys (warned), as the issue asks.  Names and defaults come from
 * the seed's profiler_config.json table.
 */
#include "dyn_config.h"
#include "error.h"
#include "fs.h"
#include "strlist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char default_text[] =
    "{\n"
    "    \"activities\": [\"CPU\", \"NPU\"],\n"
    "    \"prof_dir\": \"./\",\n"
    "    \"analyse\": false,\n"
    "    \"record_shapes\": false,\n"
    "    \"profile_memory\": false,\n"
    "    \"with_stack\": false,\n"
    "    \"with_flops\": false,\n"
    "    \"with_modules\": false,\n"
    "    \"active\": 1,\n"
    "    \"warmup\": 0,\n"
    "    \"start_step\": 0,\n"
    "    \"is_rank\": false,\n"
    "    \"rank_list\": [],\n"
    "    \"async_mode\": false,\n"
    "    \"experimental_config\": {\n"
    "        \"profiler_level\": \"Level0\",\n"
    "        \"aic_metrics\": \"AiCoreNone\",\n"
    "        \"l2_cache\": false,\n"
    "        \"op_attr\": false,\n"
    "        \"gc_detect_threshold\": null,\n"
    "        \"data_simplification\": true,\n"
    "        \"record_op_args\": false,\n"
    "        \"export_type\": [\"text\"],\n"
    "        \"mstx\": false,\n"
    "        \"mstx_domain_include\": [],\n"
    "        \"mstx_domain_exclude\": [],\n"
    "        \"host_sys\": [],\n"
    "        \"sys_io\": false,\n"
    "        \"sys_interconnection\": false\n"
    "    }\n"
    "}\n";

const char *aip__dyn_default_config_text(void) { return default_text; }

typedef struct parse_ctx {
    char *error;
    size_t error_cap;
    char *warning;
    size_t warning_cap;
} parse_ctx;

static aip_status bad(parse_ctx *p, const char *fmt, const char *key)
{
    snprintf(p->error, p->error_cap, fmt, key);
    return AIP_ERR_INVALID_ARG;
}

static void unknown(parse_ctx *p, const char *where, const char *key)
{
    size_t n = strlen(p->warning);
    snprintf(p->warning + n, p->warning_cap - n, "%sunknown key \"%s%s\" ignored",
             n ? "; " : "", where, key);
}

static aip_status get_bool(parse_ctx *p, json_t *v, const char *key, int *out)
{
    if (!json_is_boolean(v))
        return bad(p, "\"%s\" must be true or false", key);
    *out = json_is_true(v);
    return AIP_OK;
}

static aip_status get_int(parse_ctx *p, json_t *v, const char *key, int64_t *out)
{
    if (!json_is_integer(v))
        return bad(p, "\"%s\" must be an integer", key);
    *out = json_integer_value(v);
    return AIP_OK;
}

static aip_status get_str_list(parse_ctx *p, json_t *v, const char *key, char ***out)
{
    if (!json_is_array(v))
        return bad(p, "\"%s\" must be a list of strings", key);
    size_t n = json_array_size(v);
    char **l = calloc(n + 1, sizeof *l);
    if (!l)
        return bad(p, "no memory for \"%s\"", key);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || !json_string_length(e)) {
            for (size_t k = 0; k < i; k++)
                free(l[k]);
            free(l);
            return bad(p, "\"%s\" must be a list of non-empty strings", key);
        }
        l[i] = strdup(json_string_value(e));
    }
    *out = l;
    return AIP_OK;
}

static int lookup(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

static aip_status parse_experimental(parse_ctx *p, json_t *exp, aip__dyn_config *c)
{
    if (!json_is_object(exp))
        return bad(p, "\"%s\" must be an object", "experimental_config");
    const char *key;
    json_t *v;
    aip_status st = AIP_OK;
    json_object_foreach(exp, key, v) {
        int b;
        if (!strcmp(key, "profiler_level")) {
            static const char *const levels[] = {"Level_none", "Level0", "Level1", "Level2", NULL};
            int i = json_is_string(v) ? lookup(levels, json_string_value(v)) : -1;
            if (i < 0)
                return bad(p, "\"experimental_config.%s\" must be one of Level_none, Level0, "
                              "Level1, Level2", key);
            c->cfg.profiler_level = (aip_profiler_level)i;
        } else if (!strcmp(key, "aic_metrics")) {
            static const char *const m[] = {"AiCoreNone", "PipeUtilization", "ArithmeticUtilization",
                                            "Memory", "MemoryL0", "ResourceConflictRatio",
                                            "MemoryUB", "L2Cache", "MemoryAccess", NULL};
            int i = json_is_string(v) ? lookup(m, json_string_value(v)) : -1;
            if (i < 0)
                return bad(p, "\"experimental_config.%s\" must be one of AiCoreNone, "
                              "PipeUtilization, ArithmeticUtilization, Memory, MemoryL0, "
                              "ResourceConflictRatio, MemoryUB, L2Cache, MemoryAccess", key);
            c->cfg.aic_metrics = (aip_aic_metrics)(AIP_AIC_NONE + i);
        } else if (!strcmp(key, "l2_cache")) {
            if ((st = get_bool(p, v, key, &c->cfg.l2_cache)))
                return st;
        } else if (!strcmp(key, "op_attr")) {
            if ((st = get_bool(p, v, key, &c->cfg.op_attr)))
                return st;
        } else if (!strcmp(key, "data_simplification")) {
            if ((st = get_bool(p, v, key, &c->cfg.data_simplification)))
                return st;
        } else if (!strcmp(key, "record_op_args")) {
            if ((st = get_bool(p, v, key, &c->cfg.record_op_args)))
                return st;
        } else if (!strcmp(key, "mstx") || !strcmp(key, "msprof_tx")) {
            if ((st = get_bool(p, v, key, &b)))
                return st;
            c->cfg.mstx |= b;
        } else if (!strcmp(key, "sys_io")) {
            if ((st = get_bool(p, v, key, &c->cfg.sys_io)))
                return st;
        } else if (!strcmp(key, "sys_interconnection")) {
            if ((st = get_bool(p, v, key, &c->cfg.sys_interconnection)))
                return st;
        } else if (!strcmp(key, "gc_detect_threshold")) {
            if (json_is_null(v))
                c->cfg.gc_detect_threshold_ms = -1;
            else if (json_is_number(v) && json_number_value(v) >= 0 &&
                     isfinite(json_number_value(v)))
                c->cfg.gc_detect_threshold_ms = json_number_value(v);
            else
                return bad(p, "\"experimental_config.%s\" must be null or a number >= 0", key);
        } else if (!strcmp(key, "export_type")) {
            unsigned et = 0;
            json_t *items = v;
            json_t *one = NULL;
            if (json_is_string(v)) {
                one = json_array();
                json_array_append(one, v);
                items = one;
            }
            if (!json_is_array(items) || !json_array_size(items)) {
                json_decref(one);
                return bad(p, "\"experimental_config.%s\" must be \"text\", \"db\" or a list of "
                              "them", key);
            }
            size_t i;
            json_t *e;
            json_array_foreach(items, i, e) {
                const char *s = json_is_string(e) ? json_string_value(e) : "";
                if (!strcmp(s, "text"))
                    et |= AIP_EXPORT_TEXT;
                else if (!strcmp(s, "db"))
                    et |= AIP_EXPORT_DB;
                else {
                    json_decref(one);
                    return bad(p, "\"experimental_config.%s\" entries must be \"text\" or \"db\"",
                               key);
                }
            }
            json_decref(one);
            c->cfg.export_type = et;
        } else if (!strcmp(key, "mstx_domain_include")) {
            if ((st = get_str_list(p, v, "experimental_config.mstx_domain_include", &c->include)))
                return st;
        } else if (!strcmp(key, "mstx_domain_exclude")) {
            if ((st = get_str_list(p, v, "experimental_config.mstx_domain_exclude", &c->exclude)))
                return st;
        } else if (!strcmp(key, "host_sys")) {
            static const char *const hs[] = {"cpu", "mem", "disk", "network", "osrt", NULL};
            if (!json_is_array(v))
                return bad(p, "\"experimental_config.%s\" must be a list", key);
            size_t i;
            json_t *e;
            c->cfg.host_sys = 0;
            json_array_foreach(v, i, e) {
                int k = json_is_string(e) ? lookup(hs, json_string_value(e)) : -1;
                if (k < 0)
                    return bad(p, "\"experimental_config.%s\" entries must be cpu, mem, disk, "
                                  "network or osrt", key);
                c->cfg.host_sys |= 1u << k;
            }
        } else {
            unknown(p, "experimental_config.", key);
        }
    }
    return AIP_OK;
}

static aip_status parse_root(parse_ctx *p, json_t *root, aip__dyn_config *c)
{
    if (!json_is_object(root))
        return bad(p, "%s must be a JSON object", "profiler_config.json");
    const char *key;
    json_t *v;
    aip_status st;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, "activities")) {
            if (!json_is_array(v))
                return bad(p, "\"%s\" must be a list of \"CPU\"/\"NPU\"", key);
            unsigned a = 0;
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e) {
                const char *s = json_is_string(e) ? json_string_value(e) : "";
                if (!strcmp(s, "CPU"))
                    a |= AIP_ACTIVITY_CPU;
                else if (!strcmp(s, "NPU"))
                    a |= AIP_ACTIVITY_NPU;
                else
                    return bad(p, "\"%s\" entries must be \"CPU\" or \"NPU\"", key);
            }
            c->cfg.activities = a;
        } else if (!strcmp(key, "prof_dir")) {
            if (!json_is_string(v) || !json_string_length(v))
                return bad(p, "\"%s\" must be a non-empty string", key);
            snprintf(c->prof_dir, sizeof c->prof_dir, "%s", json_string_value(v));
            if (aip__path_check(c->prof_dir, "prof_dir"))
                return bad(p, "\"%s\" may only hold letters, digits and _ - . /", key);
        } else if (!strcmp(key, "analyse")) {
            if ((st = get_bool(p, v, key, &c->analyse)))
                return st;
        } else if (!strcmp(key, "async_mode")) {
            if ((st = get_bool(p, v, key, &c->async_mode)))
                return st;
        } else if (!strcmp(key, "record_shapes")) {
            if ((st = get_bool(p, v, key, &c->cfg.record_shapes)))
                return st;
        } else if (!strcmp(key, "profile_memory")) {
            if ((st = get_bool(p, v, key, &c->cfg.profile_memory)))
                return st;
        } else if (!strcmp(key, "with_stack")) {
            if ((st = get_bool(p, v, key, &c->cfg.with_stack)))
                return st;
        } else if (!strcmp(key, "with_flops")) {
            if ((st = get_bool(p, v, key, &c->cfg.with_flops)))
                return st;
        } else if (!strcmp(key, "with_modules")) {
            if ((st = get_bool(p, v, key, &c->cfg.with_modules)))
                return st;
        } else if (!strcmp(key, "is_rank")) {
            if ((st = get_bool(p, v, key, &c->is_rank)))
                return st;
        } else if (!strcmp(key, "active")) {
            if ((st = get_int(p, v, key, &c->active)))
                return st;
            if (c->active <= 0)
                return bad(p, "\"%s\" must be a positive integer", key);
        } else if (!strcmp(key, "warmup")) {
            if ((st = get_int(p, v, key, &c->warmup)))
                return st;
            if (c->warmup < 0)
                return bad(p, "\"%s\" must be an integer >= 0", key);
        } else if (!strcmp(key, "start_step")) {
            if ((st = get_int(p, v, key, &c->start_step)))
                return st;
            if (c->start_step < -1)
                return bad(p, "\"%s\" must be -1 (next step), 0 (off) or a step number", key);
        } else if (!strcmp(key, "rank_list")) {
            if (!json_is_array(v))
                return bad(p, "\"%s\" must be a list of integers", key);
            size_t n = json_array_size(v), i;
            json_t *e;
            free(c->rank_list);
            c->rank_list = calloc(n ? n : 1, sizeof *c->rank_list);
            c->n_ranks = 0;
            json_array_foreach(v, i, e) {
                if (!json_is_integer(e) || json_integer_value(e) < 0)
                    return bad(p, "\"%s\" entries must be integers >= 0", key);
                c->rank_list[c->n_ranks++] = json_integer_value(e);
            }
        } else if (!strcmp(key, "experimental_config")) {
            if ((st = parse_experimental(p, v, c)))
                return st;
        } else if (!strcmp(key, "metadata")) {
            if (!json_is_object(v))
                return bad(p, "\"%s\" must be an object", key);
            c->metadata = json_incref(v);
        } else {
            unknown(p, "", key);
        }
    }
    return AIP_OK;
}

aip_status aip__dyn_config_parse(const char *text, size_t len, aip__dyn_config *c, char *error,
                                size_t error_cap, char *warning, size_t warning_cap)
{
    memset(c, 0, sizeof *c);
    aip_config_init(&c->cfg);
    c->cfg.has_schedule = 1;
    snprintf(c->prof_dir, sizeof c->prof_dir, "./");
    c->active = 1;
    error[0] = warning[0] = '\0';
    parse_ctx p = {error, error_cap, warning, warning_cap};
    if (len > AIP_DYN_CONFIG_MAX_BYTES) {
        snprintf(error, error_cap, "profiler_config.json is %zu bytes, over the %d-byte limit", len,
                 AIP_DYN_CONFIG_MAX_BYTES);
        return AIP_ERR_LIMIT;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        snprintf(error, error_cap, "malformed JSON at line %d column %d: %s", jerr.line,
                 jerr.column, jerr.text);
        return AIP_ERR_INVALID_ARG;
    }
    aip_status st = parse_root(&p, root, c);
    json_decref(root);
    if (st) {
        aip__dyn_config_free(c);
        return st;
    }
    c->cfg.schedule = (aip_schedule){.skip_first = 0, .wait = 0, .warmup = c->warmup,
                                     .active = c->active, .repeat = 1};
    c->cfg.dir_name = c->prof_dir;
    c->cfg.mstx_domain_include = (const char *const *)c->include;
    c->cfg.mstx_domain_exclude = (const char *const *)c->exclude;
    if (aip_config_validate(&c->cfg)) {
        snprintf(error, error_cap, "%s", aip_last_error());
        aip__dyn_config_free(c);
        return AIP_ERR_INVALID_ARG;
    }
    return AIP_OK;
}

void aip__dyn_config_free(aip__dyn_config *c)
{
    free(c->rank_list);
    c->rank_list = NULL;
    json_decref(c->metadata);
    c->metadata = NULL;
    aip__strlist_free(c->include);
    aip__strlist_free(c->exclude);
    c->include = c->exclude = NULL;
}

int aip__dyn_config_selects_rank(const aip__dyn_config *c, int rank)
{
    if (!c->is_rank)
        return 1;
    for (size_t i = 0; i < c->n_ranks; i++)
        if (c->rank_list[i] == rank)
            return 1;
    return 0;
}
