/*
 * dyn_config.h — profiler_config.json: the seed's default content, and
 * parsing + validation into an aip_config plus the dynamic-only keys.
 */
#ifndef AIP_DYN_CONFIG_H
#define AIP_DYN_CONFIG_H

#include "aiprof.h"

#include <jansson.h>
#include <limits.h>
#include <stddef.h>

#define AIP_DYN_CONFIG_MAX_BYTES (1024 * 1024)

typedef struct aip__dyn_config {
    aip_config cfg;               /* string fields point into this struct */
    char prof_dir[PATH_MAX];
    int64_t start_step;           /* 0 never, -1 next step, N at step N */
    int64_t active, warmup;
    int analyse, async_mode;
    int is_rank;
    int64_t *rank_list;
    size_t n_ranks;
    json_t *metadata;             /* object or NULL */
    char **include, **exclude;    /* NULL-terminated */
    char flight_ring_dir[PATH_MAX]; /* flight_recorder.ring_dir ("" = the default) */
} aip__dyn_config;

/* Whether the config arms the flight recorder (its "flight_recorder" key):
 * then a collection is an armed recorder, not warmup + active steps. */
static inline int aip__dyn_config_flight(const aip__dyn_config *c)
{
    return c->cfg.flight_recorder_seconds > 0;
}

/* The seed's default profiler_config.json (pretty-printed). */
const char *aip__dyn_default_config_text(void);

/* aip__dyn_config_parse() : AIP_OK or AIP_ERR_INVALID_ARG with the reason in
 * `error`.  Unknown keys are not errors; they are listed in `warning`. */
aip_status aip__dyn_config_parse(const char *text, size_t len, aip__dyn_config *out, char *error,
                                size_t error_cap, char *warning, size_t warning_cap);
void aip__dyn_config_free(aip__dyn_config *c);

/* Whether this process (rank from RANK / OMPI_COMM_WORLD_RANK / PMI_RANK)
 * collects under is_rank / rank_list. */
int aip__dyn_config_selects_rank(const aip__dyn_config *c, int rank);

#endif
