/*
 * own_profile.h — test helper: the test process's own profile read back:
 * its raw file loaded and derived as the analyser does, and a session's
 * result directory analysed (the outputs written) in place.
 */
#ifndef AIP_OWN_PROFILE_H
#define AIP_OWN_PROFILE_H

#include "aiprof.h"
#include "model.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

/* This process's raw file under `dir`, loaded and derived into `m`
 * (aip__model_free it either way); nonzero on failure. */
static inline int load_own_raw(const char *dir, aip__model *m)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/FRAMEWORK/aiprof_%d.raw", dir, (int)getpid());
    aip__model_init(m);
    return aip__model_load_raw(m, path) || aip__model_derive(m);
}

/* The session's last result directory, analysed quietly; NULL if that failed. */
static inline const char *analysed_dir(aip_session *s)
{
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    if (aip_analyse_dir(aip_session_result_dir(s), &o) != AIP_OK)
        return NULL;
    return aip_session_result_dir(s);
}

#endif
