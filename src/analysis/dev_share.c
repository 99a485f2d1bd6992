/*
 * dev_share.c — aip__device_overlap() and aip__dev_tracks_of()
 * (device_tracks.h) through the derived model's cache of each device's
 * Overlap Analysis sections and each process's task numbers and lanes.
 *
 * Why: the trace JSON (and the Perfetto trace) and the main database both
 * write every device's sections (the "Overlap Analysis" tracks,
 * OVERLAP_ANALYSIS), and they and kernel_details.csv every task's number
 * and lane, on different threads of the export pool
 * (src/result/analyse_dir.c); each computed them, the same sets, unions
 * and lane searches, from the same read-only model.  Now the first to ask
 * computes them under that device's (process's) lock and keeps them; the
 * others wait for it (on two CPUs they would have computed them in the
 * same time anyway) and copy them.  The copy keeps the contract of the
 * plain functions (the caller frees), so the outputs do not change and a
 * model without a cache (one not derived here, or no memory for it)
 * computes them as before.
 */
#include "device_tracks.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct proc_tracks {
    pthread_mutex_t lock;
    int done;                 /* under lock */
    aip__dev_tracks t;
} proc_tracks;

struct aip__dev_share {
    pthread_mutex_t lock[AIP_RAW_MAX_DEVICES];
    int done[AIP_RAW_MAX_DEVICES];          /* under lock[d] */
    aip__overlap_section *sec[AIP_RAW_MAX_DEVICES];
    size_t n[AIP_RAW_MAX_DEVICES];
    proc_tracks *tracks;      /* per process of the model */
    size_t n_procs;
};

struct aip__dev_share *aip__dev_share_new(size_t n_procs)
{
    struct aip__dev_share *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->tracks = calloc(n_procs ? n_procs : 1, sizeof *c->tracks);
    if (!c->tracks) {
        free(c);
        return NULL;
    }
    c->n_procs = n_procs;
    for (size_t d = 0; d < AIP_RAW_MAX_DEVICES; d++)
        pthread_mutex_init(&c->lock[d], NULL);
    for (size_t i = 0; i < n_procs; i++)
        pthread_mutex_init(&c->tracks[i].lock, NULL);
    return c;
}

void aip__dev_share_free(struct aip__dev_share *c)
{
    if (!c)
        return;
    for (size_t d = 0; d < AIP_RAW_MAX_DEVICES; d++) {
        free(c->sec[d]);
        pthread_mutex_destroy(&c->lock[d]);
    }
    for (size_t i = 0; i < c->n_procs; i++) {
        aip__dev_tracks_free(&c->tracks[i].t);
        pthread_mutex_destroy(&c->tracks[i].lock);
    }
    free(c->tracks);
    free(c);
}

/* *to = a copy of *from, sized as aip__dev_tracks_build() sizes it. */
static aip_status tracks_copy(const aip__process *p, const aip__dev_tracks *from,
                              aip__dev_tracks *to)
{
    size_t n = p->dev_tasks.n ? p->dev_tasks.n : 1;
    memset(to, 0, sizeof *to);
    to->n_queues = from->n_queues;
    to->task_id = malloc(n * sizeof *to->task_id);
    to->lane = malloc(n * sizeof *to->lane);
    to->lanes = malloc(to->n_queues * sizeof *to->lanes);
    if (!to->task_id || !to->lane || !to->lanes) {
        aip__dev_tracks_free(to);
        return aip__fail(AIP_ERR_NOMEM, "no memory for the device tracks");
    }
    memcpy(to->task_id, from->task_id, n * sizeof *to->task_id);
    memcpy(to->lane, from->lane, n * sizeof *to->lane);
    memcpy(to->lanes, from->lanes, to->n_queues * sizeof *to->lanes);
    return AIP_OK;
}

aip_status aip__dev_tracks_of(const aip__model *m, const aip__process *p, aip__dev_tracks *t)
{
    struct aip__dev_share *c = m->dev_share;
    size_t i = (size_t)(p - m->procs);
    if (!c || p < m->procs || i >= c->n_procs)
        return aip__dev_tracks_build(p, t);
    proc_tracks *pt = &c->tracks[i];
    pthread_mutex_lock(&pt->lock);
    aip_status s = AIP_OK;
    if (!pt->done) { /* a failure is not kept: the next asker tries again */
        s = aip__dev_tracks_build(p, &pt->t);
        pt->done = s == AIP_OK;
    }
    if (s)
        memset(t, 0, sizeof *t);
    else
        s = tracks_copy(p, &pt->t, t);
    pthread_mutex_unlock(&pt->lock);
    return s;
}

aip_status aip__device_overlap(const aip__model *m, uint32_t device, aip__overlap_section **out,
                               size_t *n)
{
    struct aip__dev_share *c = m->dev_share;
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
