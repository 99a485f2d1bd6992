/*
 * dyn_config.c — profiler_config.json parsing and validation.
 *
 * Strict on types and values (a wrong value rejects the edit, with a
 * message naming the key, and the next valid edit works), lenient on
 * unknown keys (warned), as the issue asks.  Names and defaults come from
 * the seed's profiler_config.json table; each key is a row of root_keys or
 * experimental_keys below, read by one loop (parse_object / read_value).
 * "flight_recorder" (not in the seed: aiprof's flight recorder,
 * docs/FLIGHT_RECORDER.md) arms the recorder with the C config's options.
 * tests/fuzz/fuzz_profiler_config.c fuzzes this file.
 */
#include "dyn_config.h"
#include "config_names.h"
#include "error.h"
#include "fs.h"
#include "strlist.h"

#include <math.h>
#include <signal.h>
#include <stddef.h>
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

/* ---- the keys ---------------------------------------------------------
 *
 * One row per key of profiler_config.json: its JSON name, the kind of
 * value, where the value goes (an offset into aip__dyn_config) and the
 * messages that reject a bad value.  Each message is a format whose %s is
 * the key as written in the file; a second %s, where there is one, is the
 * list of allowed names.  Messages are the ones users have seen since the
 * seed: tests compare them byte for byte. */

typedef enum value_kind {
    V_BOOL,          /* true / false into an int */
    V_BOOL_OR,       /* true / false OR-ed into an int (mstx and its alias) */
    V_INT,           /* an integer >= min into an int64_t */
    V_NAME,          /* one of names[] into an enum */
    V_BITS,          /* a list of names[] into OR-ed bits (an unsigned) */
    V_STRINGS,       /* a list of non-empty strings: NULL-terminated char ** */
    V_RANK_LIST,     /* a list of integers >= 0: rank_list / n_ranks */
    V_PATH,          /* a non-empty path of safe characters: prof_dir */
    V_THRESHOLD,     /* null (-1) or a number >= 0 into a double */
    V_OBJECT,        /* an object, kept (json_t *) */
    V_SECTION,       /* experimental_config: an object with its own table */
    V_FLIGHT         /* flight_recorder: seconds, an object of its options, or null */
} value_kind;

typedef struct name_value {
    const char *name;
    unsigned value;
} name_value;

/* V_BITS options */
#define ONE_OR_LIST 1u   /* a single name stands for a list of one */
#define NOT_EMPTY 2u     /* an empty list is rejected with bad_type */

typedef struct key_rule {
    const char *key;
    value_kind kind;
    size_t offset;           /* of the target in aip__dyn_config */
    const char *bad_type;    /* the value has the wrong JSON type */
    const char *bad_value;   /* right type, wrong value (range, entry, name) */
    int64_t min;             /* V_INT */
    const name_value *names; /* V_NAME, V_BITS; ends with {NULL, 0} */
    const char *allowed;     /* V_NAME: the names as bad_value lists them */
    unsigned options;        /* V_BITS */
} key_rule;

#define AT(field) offsetof(aip__dyn_config, field)

/* V_NAME stores through an unsigned *: the enums must be that size. */
_Static_assert(sizeof(aip_profiler_level) == sizeof(unsigned), "enum size");
_Static_assert(sizeof(aip_aic_metrics) == sizeof(unsigned), "enum size");

#define LEVEL_NAME(value, name) {name, value},
#define AIC_NAME(value, name, acl) {name, value},
static const name_value level_names[] = {AIP__PROFILER_LEVELS(LEVEL_NAME){NULL, 0}};
static const name_value aic_names[] = {AIP__AIC_METRICS(AIC_NAME){NULL, 0}};
#undef LEVEL_NAME
#undef AIC_NAME
static const name_value activity_names[] = {
    {"CPU", AIP_ACTIVITY_CPU}, {"NPU", AIP_ACTIVITY_NPU}, {NULL, 0}};
static const name_value export_names[] = {
    {"text", AIP_EXPORT_TEXT}, {"db", AIP_EXPORT_DB}, {NULL, 0}};
static const name_value host_sys_names[] = {
    {"cpu", AIP_HOST_SYS_CPU}, {"mem", AIP_HOST_SYS_MEM}, {"disk", AIP_HOST_SYS_DISK},
    {"network", AIP_HOST_SYS_NETWORK}, {"osrt", AIP_HOST_SYS_OSRT}, {NULL, 0}};

static const char must_be_bool[] = "\"%s\" must be true or false";
static const char must_be_int[] = "\"%s\" must be an integer";

static const key_rule experimental_keys[] = {
    {"profiler_level", V_NAME, AT(cfg.profiler_level), NULL,
     "\"experimental_config.%s\" must be one of %s", 0, level_names,
     AIP__PROFILER_LEVEL_NAME_LIST, 0},
    {"aic_metrics", V_NAME, AT(cfg.aic_metrics), NULL,
     "\"experimental_config.%s\" must be one of %s", 0, aic_names,
     AIP__AIC_METRICS_NAME_LIST, 0},
    {"l2_cache", V_BOOL, AT(cfg.l2_cache), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"op_attr", V_BOOL, AT(cfg.op_attr), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"data_simplification", V_BOOL, AT(cfg.data_simplification), must_be_bool, NULL, 0, NULL,
     NULL, 0},
    {"record_op_args", V_BOOL, AT(cfg.record_op_args), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"mstx", V_BOOL_OR, AT(cfg.mstx), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"msprof_tx", V_BOOL_OR, AT(cfg.mstx), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"sys_io", V_BOOL, AT(cfg.sys_io), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"sys_interconnection", V_BOOL, AT(cfg.sys_interconnection), must_be_bool, NULL, 0, NULL,
     NULL, 0},
    {"gc_detect_threshold", V_THRESHOLD, AT(cfg.gc_detect_threshold_ms),
     "\"experimental_config.%s\" must be null or a number >= 0", NULL, 0, NULL, NULL, 0},
    {"export_type", V_BITS, AT(cfg.export_type),
     "\"experimental_config.%s\" must be \"text\", \"db\" or a list of them",
     "\"experimental_config.%s\" entries must be \"text\" or \"db\"", 0, export_names, NULL,
     ONE_OR_LIST | NOT_EMPTY},
    {"mstx_domain_include", V_STRINGS, AT(include),
     "\"experimental_config.%s\" must be a list of strings",
     "\"experimental_config.%s\" must be a list of non-empty strings", 0, NULL, NULL, 0},
    {"mstx_domain_exclude", V_STRINGS, AT(exclude),
     "\"experimental_config.%s\" must be a list of strings",
     "\"experimental_config.%s\" must be a list of non-empty strings", 0, NULL, NULL, 0},
    {"host_sys", V_BITS, AT(cfg.host_sys), "\"experimental_config.%s\" must be a list",
     "\"experimental_config.%s\" entries must be cpu, mem, disk, network or osrt", 0,
     host_sys_names, NULL, 0},
    {NULL, V_BOOL, 0, NULL, NULL, 0, NULL, NULL, 0}};

static const key_rule root_keys[] = {
    {"activities", V_BITS, AT(cfg.activities), "\"%s\" must be a list of \"CPU\"/\"NPU\"",
     "\"%s\" entries must be \"CPU\" or \"NPU\"", 0, activity_names, NULL, 0},
    {"prof_dir", V_PATH, AT(prof_dir), "\"%s\" must be a non-empty string",
     "\"%s\" may only hold letters, digits and _ - . /", 0, NULL, NULL, 0},
    {"analyse", V_BOOL, AT(analyse), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"async_mode", V_BOOL, AT(async_mode), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"record_shapes", V_BOOL, AT(cfg.record_shapes), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"profile_memory", V_BOOL, AT(cfg.profile_memory), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"with_stack", V_BOOL, AT(cfg.with_stack), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"with_flops", V_BOOL, AT(cfg.with_flops), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"with_modules", V_BOOL, AT(cfg.with_modules), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"is_rank", V_BOOL, AT(is_rank), must_be_bool, NULL, 0, NULL, NULL, 0},
    {"active", V_INT, AT(active), must_be_int, "\"%s\" must be a positive integer", 1, NULL,
     NULL, 0},
    {"warmup", V_INT, AT(warmup), must_be_int, "\"%s\" must be an integer >= 0", 0, NULL, NULL,
     0},
    {"start_step", V_INT, AT(start_step), must_be_int,
     "\"%s\" must be -1 (next step), 0 (off) or a step number", -1, NULL, NULL, 0},
    {"rank_list", V_RANK_LIST, 0, "\"%s\" must be a list of integers",
     "\"%s\" entries must be integers >= 0", 0, NULL, NULL, 0},
    {"experimental_config", V_SECTION, 0, "\"%s\" must be an object", NULL, 0, NULL, NULL, 0},
    {"metadata", V_OBJECT, AT(metadata), "\"%s\" must be an object", NULL, 0, NULL, NULL, 0},
    {"flight_recorder", V_FLIGHT, 0,
     "\"%s\" must be a number of seconds > 0, an object of its options or null", NULL, 0, NULL,
     NULL, 0},
    {NULL, V_BOOL, 0, NULL, NULL, 0, NULL, NULL, 0}};

/* ---- reading values ------------------------------------------------- */

typedef struct parse_ctx {
    char *error;
    size_t error_cap;
    char *warning;
    size_t warning_cap;
} parse_ctx;

/* `fmt` has the key's %s and, for V_NAME, the allowed names' %s. */
static aip_status bad(parse_ctx *p, const char *fmt, const char *key, const char *allowed)
{
    snprintf(p->error, p->error_cap, fmt, key, allowed);
    return AIP_ERR_INVALID_ARG;
}

static void unknown(parse_ctx *p, const char *where, const char *key)
{
    size_t n = strlen(p->warning);
    snprintf(p->warning + n, p->warning_cap - n, "%sunknown key \"%s%s\" ignored",
             n ? "; " : "", where, key);
}

static int lookup(const name_value *names, const char *s, unsigned *value)
{
    for (int i = 0; names[i].name; i++)
        if (strcmp(names[i].name, s) == 0) {
            *value = names[i].value;
            return 0;
        }
    return -1;
}

static aip_status read_bits(parse_ctx *p, const key_rule *r, const char *key, json_t *v,
                            unsigned *out)
{
    json_t *one = NULL;
    if (json_is_string(v) && (r->options & ONE_OR_LIST)) {
        one = json_array();
        json_array_append(one, v);
        v = one;
    }
    if (!json_is_array(v) || ((r->options & NOT_EMPTY) && !json_array_size(v))) {
        json_decref(one);
        return bad(p, r->bad_type, key, NULL);
    }
    unsigned bits = 0, b;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        if (!json_is_string(e) || lookup(r->names, json_string_value(e), &b)) {
            json_decref(one);
            return bad(p, r->bad_value, key, NULL);
        }
        bits |= b;
    }
    json_decref(one);
    *out = bits;
    return AIP_OK;
}

static aip_status read_strings(parse_ctx *p, const key_rule *r, const char *key, json_t *v,
                               char ***out)
{
    if (!json_is_array(v))
        return bad(p, r->bad_type, key, NULL);
    size_t n = json_array_size(v);
    char **l = calloc(n + 1, sizeof *l);
    if (!l)
        return bad(p, "no memory for \"experimental_config.%s\"", key, NULL);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || !json_string_length(e) ||
            !(l[i] = strdup(json_string_value(e)))) {
            aip__strlist_free(l);
            return json_is_string(e) && json_string_length(e)
                       ? bad(p, "no memory for \"experimental_config.%s\"", key, NULL)
                       : bad(p, r->bad_value, key, NULL);
        }
    }
    aip__strlist_free(*out);
    *out = l;
    return AIP_OK;
}

static aip_status read_rank_list(parse_ctx *p, const key_rule *r, const char *key, json_t *v,
                                 aip__dyn_config *c)
{
    if (!json_is_array(v))
        return bad(p, r->bad_type, key, NULL);
    size_t n = json_array_size(v), i;
    json_t *e;
    free(c->rank_list);
    c->n_ranks = 0;
    c->rank_list = calloc(n ? n : 1, sizeof *c->rank_list);
    if (!c->rank_list)
        return bad(p, "no memory for \"%s\"", key, NULL);
    json_array_foreach(v, i, e) {
        if (!json_is_integer(e) || json_integer_value(e) < 0)
            return bad(p, r->bad_value, key, NULL);
        c->rank_list[c->n_ranks++] = json_integer_value(e);
    }
    return AIP_OK;
}

static aip_status parse_object(parse_ctx *p, json_t *obj, const key_rule *rules,
                               const char *where, aip__dyn_config *c);

/* A number (integer or real) of `v`: 0 when it is one, -1 when not. */
static int number_of(json_t *v, double *out)
{
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* One option of "flight_recorder": {...}, as the C config's field
 * (docs/FLIGHT_RECORDER.md); the messages name the key as written. */
static aip_status read_flight_option(parse_ctx *p, const char *k, json_t *v, aip__dyn_config *c)
{
    aip_config *f = &c->cfg;
    double d;
    if (!strcmp(k, "seconds")) {
        if (number_of(v, &d) || !(d > 0))
            return bad(p, "\"flight_recorder.%s\" must be a number > 0", k, NULL);
        f->flight_recorder_seconds = d;
    } else if (!strcmp(k, "ring_bytes")) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (json_integer_value(v) && json_integer_value(v) < (json_int_t)(4 << 20)))
            return bad(p, "\"flight_recorder.%s\" must be 0 (256 MiB) or an integer of at "
                          "least 4194304 (4 MiB)", k, NULL);
        f->flight_ring_bytes = (uint64_t)json_integer_value(v);
    } else if (!strcmp(k, "slow_step")) {
        if (number_of(v, &d) || !(d == 0 || d > 1))
            return bad(p, "\"flight_recorder.%s\" must be 0 (off) or a factor > 1", k, NULL);
        f->flight_slow_step = d;
    } else if (!strcmp(k, "hang_seconds")) {
        if (number_of(v, &d) || !(d >= 0))
            return bad(p, "\"flight_recorder.%s\" must be a number >= 0 (0: off)", k, NULL);
        f->flight_hang_seconds = d;
    } else if (!strcmp(k, "signal")) {
        json_int_t sig = json_is_integer(v) ? json_integer_value(v) : -2;
        if (sig < -1 || sig >= NSIG || sig == SIGKILL || sig == SIGSTOP)
            return bad(p, "\"flight_recorder.%s\" must be 0 (SIGUSR2), -1 (none) or a "
                          "signal number that can be caught", k, NULL);
        f->flight_signal = (int)json_integer_value(v);
    } else if (!strcmp(k, "ring_dir")) {
        if (!json_is_string(v) || !json_string_length(v))
            return bad(p, "\"flight_recorder.%s\" must be a non-empty string", k, NULL);
        snprintf(c->flight_ring_dir, sizeof c->flight_ring_dir, "%s", json_string_value(v));
        if (aip__path_check(c->flight_ring_dir, "flight_recorder.ring_dir"))
            return bad(p, "\"flight_recorder.%s\" may only hold letters, digits and _ - . /", k,
                       NULL);
    } else {
        unknown(p, "flight_recorder.", k);
    }
    return AIP_OK;
}

/* "flight_recorder": 60, {"seconds": 60, ...} or null (off). */
static aip_status read_flight(parse_ctx *p, const key_rule *r, const char *key, json_t *v,
                              aip__dyn_config *c)
{
    double d;
    if (json_is_null(v))
        return AIP_OK;
    if (!number_of(v, &d)) {
        if (!(d > 0))
            return bad(p, r->bad_type, key, NULL);
        c->cfg.flight_recorder_seconds = d;
        return AIP_OK;
    }
    if (!json_is_object(v))
        return bad(p, r->bad_type, key, NULL);
    if (!json_object_get(v, "seconds"))
        return bad(p, "\"%s.seconds\" is needed: the window a dump holds", key, NULL);
    const char *k;
    json_t *o;
    json_object_foreach(v, k, o) {
        aip_status st = read_flight_option(p, k, o, c);
        if (st)
            return st;
    }
    return AIP_OK;
}

/* One key's value into its place in `c`, by the row's kind. */
static aip_status read_value(parse_ctx *p, const key_rule *r, const char *key, json_t *v,
                             aip__dyn_config *c)
{
    void *at = (char *)c + r->offset;
    unsigned u;
    switch (r->kind) {
    case V_BOOL:
    case V_BOOL_OR:
        if (!json_is_boolean(v))
            return bad(p, r->bad_type, key, NULL);
        if (r->kind == V_BOOL)
            *(int *)at = json_is_true(v);
        else
            *(int *)at |= json_is_true(v);
        return AIP_OK;
    case V_INT:
        if (!json_is_integer(v))
            return bad(p, r->bad_type, key, NULL);
        *(int64_t *)at = json_integer_value(v);
        return json_integer_value(v) < r->min ? bad(p, r->bad_value, key, NULL) : AIP_OK;
    case V_NAME:
        if (!json_is_string(v) || lookup(r->names, json_string_value(v), &u))
            return bad(p, r->bad_value, key, r->allowed);
        *(unsigned *)at = u; /* the enum's own representation (asserted above) */
        return AIP_OK;
    case V_BITS:
        return read_bits(p, r, key, v, (unsigned *)at);
    case V_STRINGS:
        return read_strings(p, r, key, v, (char ***)at);
    case V_RANK_LIST:
        return read_rank_list(p, r, key, v, c);
    case V_PATH:
        if (!json_is_string(v) || !json_string_length(v))
            return bad(p, r->bad_type, key, NULL);
        snprintf(c->prof_dir, sizeof c->prof_dir, "%s", json_string_value(v));
        return aip__path_check(c->prof_dir, "prof_dir") ? bad(p, r->bad_value, key, NULL)
                                                         : AIP_OK;
    case V_THRESHOLD:
        if (json_is_null(v))
            *(double *)at = -1;
        else if (json_is_number(v) && json_number_value(v) >= 0 &&
                 isfinite(json_number_value(v)))
            *(double *)at = json_number_value(v);
        else
            return bad(p, r->bad_type, key, NULL);
        return AIP_OK;
    case V_OBJECT:
        if (!json_is_object(v))
            return bad(p, r->bad_type, key, NULL);
        *(json_t **)at = json_incref(v);
        return AIP_OK;
    case V_SECTION:
        if (!json_is_object(v))
            return bad(p, r->bad_type, key, NULL);
        return parse_object(p, v, experimental_keys, "experimental_config.", c);
    case V_FLIGHT:
        return read_flight(p, r, key, v, c);
    }
    return AIP_OK;
}

/* Every key of `obj` by its row of `rules`; unknown keys are warned about,
 * named with `where` before them.  The first bad value ends the parse. */
static aip_status parse_object(parse_ctx *p, json_t *obj, const key_rule *rules,
                               const char *where, aip__dyn_config *c)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        const key_rule *r = rules;
        while (r->key && strcmp(r->key, key))
            r++;
        if (!r->key) {
            unknown(p, where, key);
            continue;
        }
        aip_status st = read_value(p, r, key, v, c);
        if (st)
            return st;
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
    aip_status st = json_is_object(root)
                        ? parse_object(&p, root, root_keys, "", c)
                        : bad(&p, "%s must be a JSON object", "profiler_config.json", NULL);
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
    c->cfg.flight_ring_dir = c->flight_ring_dir[0] ? c->flight_ring_dir : NULL;
    if (aip__dyn_config_flight(c))
        c->cfg.has_schedule = 0; /* armed: from start to stop, whatever warmup/active say */
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
