/*
 * raw_info.c — the INFO chunk's payload, a UTF-8 JSON object describing
 * the recording process (docs/RAW_FORMAT.md), decoded into plain fields so
 * that the model loader (src/analysis/model_load.c) parses no JSON itself.
 */
#include "raw.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *str_dup(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? strdup(v) : NULL;
}

int aip__raw_info_parse(const uint8_t *payload, size_t size, aip__raw_info *out)
{
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *o = json_loadb((const char *)payload, size, JSON_DISABLE_EOF_CHECK, &err);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    json_t *pid = json_object_get(o, "pid");
    if (json_is_integer(pid)) {
        out->pid = (int64_t)json_integer_value(pid);
        out->has_pid = 1;
    }
    out->hostname = str_dup(o, "hostname");
    out->program = str_dup(o, "program");
    out->clock = str_dup(o, "clock");
    out->version = str_dup(o, "aiprof_version");
    /* Not written by aiprof 0.1 (the host's identity belongs to the
     * recording machine, so only the writer can know it); read if present,
     * as a decimal string or number. */
    json_t *uid = json_object_get(o, "host_uid");
    char num[32];
    if (json_is_string(uid))
        out->host_uid = strdup(json_string_value(uid));
    else if (json_is_integer(uid) &&
             snprintf(num, sizeof num, "%llu", (unsigned long long)json_integer_value(uid)) > 0)
        out->host_uid = strdup(num);
    json_t *tps = json_object_get(o, "ticks_per_second");
    if (json_is_number(tps)) {
        out->ticks_per_second = json_number_value(tps);
        out->has_ticks_per_second = 1;
    }
    json_decref(o);
    return 0;
}
