/*
 * overlap_cache.c — aip__device_overlap() (device_tracks.h) through the
 * derived model's cache of each device's Overlap Analysis sections.
 *
 * Why: the trace JSON (and the Perfetto trace) and the main database both
 * write every device's sections (the "Overlap Analysis" tracks,
 * OVERLAP_ANALYSIS), on different threads of the export pool
 * (src/result/analyse_dir.c); each computed them, the same sets and unions,
 * from the same read-only model.  Now the first to ask for a device
 * computes its sections under that device's lock and keeps them; the
 * others wait for it (on two CPUs they would have computed them in the
 * same time anyway) and copy them.  The copy keeps the contract of the
 * plain function (the caller frees), so the outputs do not change and a
 * model without a cache (one not derived here, or no memory for it)
 * computes them as before.
 */
#include "device_tracks.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct aip__overlap_cache {
    pthread_mutex_t lock[AIP_RAW_MAX_DEVICES];
    int done[AIP_RAW_MAX_DEVICES];          /* under lock[d] */
    aip__overlap_section *sec[AIP_RAW_MAX_DEVICES];
    size_t n[AIP_RAW_MAX_DEVICES];
};

struct aip__overlap_cache *aip__overlap_cache_new(void)
{
    struct aip__overlap_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (size_t d = 0; d < AIP_RAW_MAX_DEVICES; d++)
        pthread_mutex_init(&c->lock[d], NULL);
    return c;
}

void aip__overlap_cache_free(struct aip__overlap_cache *c)
{
    if (!c)
        return;
    for (size_t d = 0; d < AIP_RAW_MAX_DEVICES; d++) {
        free(c->sec[d]);
        pthread_mutex_destroy(&c->lock[d]);
    }
    free(c);
}

aip_status aip__device_overlap(const aip__model *m, uint32_t device, aip__overlap_section **out,
                               size_t *n)
{
    struct aip__overlap_cache *c = m->overlap;
    if (!c || device >= AIP_RAW_MAX_DEVICES)
        return aip__device_overlap_compute(m, device, out, n);
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&c->lock[device]);
    aip_status s = AIP_OK;
    if (!c->done[device]) { /* a failure is not kept: the next asker tries again */
        s = aip__device_overlap_compute(m, device, &c->sec[device], &c->n[device]);
        c->done[device] = s == AIP_OK;
    }
    size_t k = c->n[device];
    if (!s && k) {
        *out = malloc(k * sizeof **out);
        if (*out) {
            memcpy(*out, c->sec[device], k * sizeof **out);
            *n = k;
        } else {
            s = aip__fail(AIP_ERR_NOMEM, "no memory for the overlap analysis");
        }
    }
    pthread_mutex_unlock(&c->lock[device]);
    return s;
}
