/*
 * profiler_metadata.c — profiler_metadata.json of a result directory as
 * (key, JSON text) pairs for the META_DATA table.  Values are re-encoded
 * the way torch_npu's json.dumps() writes them (", " and ": " separators,
 * non-ASCII escaped), in the file's key order.  A missing or broken file is
 * not an error: the program may have died before writing it.  The pairs
 * are the model's (model.h), freed with it (model.c).
 */
#include "profiler_info.h"
#include "error.h"
#include "fs.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define METADATA_MAX_BYTES (16u * 1024u * 1024u)

/* jansson writes \uXXXX with upper-case hex; Python's json.dumps, whose
 * text torch_npu stores, with lower case. */
static void lower_unicode_escapes(char *s)
{
    for (; *s; s++) {
        if (*s != '\\')
            continue;
        if (s[1] == 'u')
            for (int i = 2; i < 6 && s[i]; i++)
                if (s[i] >= 'A' && s[i] <= 'F')
                    s[i] = (char)(s[i] + 32);
        if (s[1])
            s++; /* skip the escaped character (also a second backslash) */
    }
}

aip_status aip__metadata_read(const char *result_dir, aip__metadata *md)
{
    memset(md, 0, sizeof *md);
    char path[PATH_MAX];
    if (aip__join(path, sizeof path, result_dir, "profiler_metadata.json"))
        return AIP_OK;
    char *text = NULL;
    size_t size = 0;
    aip_status s = aip__read_file(path, METADATA_MAX_BYTES, &text, &size);
    if (s == AIP_ERR_NOMEM)
        return s;
    if (s) {
        snprintf(md->problem, sizeof md->problem, "no readable profiler_metadata.json");
        return AIP_OK;
    }
    json_error_t err;
    json_t *root = json_loadb(text, size, 0, &err);
    free(text);
    if (!json_is_object(root)) {
        snprintf(md->problem, sizeof md->problem,
                 "profiler_metadata.json is not a JSON object (line %d: %.100s)", err.line,
                 root ? "not an object" : err.text);
        json_decref(root);
        return AIP_OK;
    }
    size_t n = json_object_size(root);
    md->keys = calloc(n ? n : 1, sizeof *md->keys);
    md->values = calloc(n ? n : 1, sizeof *md->values);
    const char *key;
    json_t *v;
    s = md->keys && md->values ? AIP_OK : AIP_ERR_NOMEM;
    json_object_foreach(root, key, v) {
        if (s)
            break;
        char *k = strdup(key);
        char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
        if (!k || !val) {
            free(k);
            free(val);
            s = AIP_ERR_NOMEM;
            break;
        }
        lower_unicode_escapes(val);
        md->keys[md->n] = k;
        md->values[md->n++] = val;
    }
    json_decref(root);
    if (s) {
        aip__metadata_free(md);
        return aip__fail(AIP_ERR_NOMEM, "no memory for profiler_metadata.json");
    }
    md->found = 1;
    return AIP_OK;
}
