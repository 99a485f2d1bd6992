/*
 * model_helpers.h — test helper for the internal tests that record through
 * the core and read back through the analyser: the model of a session's
 * last trace, and a model string as a C string.
 */
#ifndef AIP_MODEL_HELPERS_H
#define AIP_MODEL_HELPERS_H

#include "aiprof.h"
#include "model.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

/* Text of string `id` of p (aip__model_str wants a length pointer). */
static inline const char *S(const aip__process *p, uint32_t id)
{
    size_t len;
    return aip__model_str(p, id, &len);
}

/* The raw file of this process in the session's last trace, loaded and
 * derived into *m (initialised here; free it with aip__model_free).
 * @return 0 on success. */
static inline int load(const aip_session *s, aip__model *m)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/FRAMEWORK/aiprof_%d.raw", aip_session_result_dir(s),
             (int)getpid());
    aip__model_init(m);
    return aip__model_load_raw(m, path) || aip__model_derive(m);
}

#endif
