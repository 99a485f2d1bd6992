/*
 * device_tracks.c — task numbers, drawing lanes and overlap sections of a
 * process's device tasks (device_tracks.h says what each is for).  Both
 * the timeline and the database call these, so the "Task Id" of a slice is
 * the taskId of its TASK row.  One pass over the tasks in start order
 * each; the lane search is first fit over the queue's lanes, which stay
 * few unless a queue really runs many tasks at once.
 */
#include "device_tracks.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

void aip__dev_tracks_free(aip__dev_tracks *t)
{
    free(t->task_id);
    free(t->lane);
    free(t->lanes);
    memset(t, 0, sizeof *t);
}

/* Lane ends of one queue: ends[l] = the end of lane l's last task. */
typedef struct lane_ends {
    int64_t *ends;
    uint32_t n, cap;
} lane_ends;

aip_status aip__dev_tracks_build(const aip__process *p, aip__dev_tracks *t)
{
    memset(t, 0, sizeof *t);
    size_t n = p->dev_tasks.n;
    t->n_queues = AIP_DEV_TRACK_NO_QUEUE + 1;
    t->lanes = calloc(t->n_queues, sizeof *t->lanes);
    t->task_id = malloc((n ? n : 1) * sizeof *t->task_id);
    t->lane = malloc((n ? n : 1) * sizeof *t->lane);
    lane_ends *le = calloc(t->n_queues, sizeof *le);
    uint32_t *next_id = calloc(t->n_queues, sizeof *next_id);
    aip_status s = AIP_OK;
    if (!t->lanes || !t->task_id || !t->lane || !le || !next_id)
        s = aip__fail(AIP_ERR_NOMEM, "no memory for device tracks");
    for (size_t i = 0; i < n && !s; i++) {
        const aip__device_task *k = &p->dev_tasks.v[i];
        size_t q = aip__dev_task_queue_index(k);
        lane_ends *L = &le[q];
        t->task_id[i] = next_id[q]++;
        uint32_t l = 0;
        while (l < L->n && L->ends[l] > k->start) /* touching is disjoint */
            l++;
        if (l == L->n) {
            if (L->n == L->cap) {
                uint32_t cap = L->cap ? 2 * L->cap : 4;
                int64_t *e = realloc(L->ends, cap * sizeof *e);
                if (!e) {
                    s = aip__fail(AIP_ERR_NOMEM, "no memory for device tracks");
                    break;
                }
                L->ends = e;
                L->cap = cap;
            }
            L->n++;
        }
        L->ends[l] = k->end;
        t->lane[i] = l;
        if (t->lanes[q] < l + 1)
            t->lanes[q] = l + 1;
    }
    if (le)
        for (size_t q = 0; q < t->n_queues; q++)
            free(le[q].ends);
    free(le);
    free(next_id);
    if (s)
        aip__dev_tracks_free(t);
    return s;
}

uint64_t aip__queue_stream_id(const aip__process *p, uint32_t queue)
{
    const aip__queue *q = queue < p->queues.n ? &p->queues.v[queue] : NULL;
    return q && q->present && q->has_native ? q->native : queue;
}

uint64_t aip__task_groups(const aip__device_task *k, uint32_t g[3])
{
    if (k->kind != AIP_TASK_KERNEL || !k->global[0] || !k->local[0])
        return 0;
    uint64_t n = 1;
    for (int j = 0; j < 3; j++) {
        uint32_t gl = k->global[j] ? k->global[j] : 1, lo = k->local[j] ? k->local[j] : 1;
        g[j] = gl / lo + (gl % lo != 0);
        n *= g[j];
    }
    return n;
}

const char *aip__task_type_name(const aip__process *p, const aip__device_task *k)
{
    switch (k->kind) {
    case AIP_TASK_KERNEL: {
        const aip__device *d = aip__model_device(p, k->device);
        return aip__dev_kind_name(d ? d->kind : AIP_DEVKIND_OTHER);
    }
    case AIP_TASK_MEMCPY:
        return "MEMCPY_ASYNC";
    case AIP_TASK_MEMSET:
        return "MEMSET";
    case AIP_TASK_MARKER:
        return "MARKER";
    case AIP_TASK_BARRIER:
        return "BARRIER";
    case AIP_TASK_MAP:
        return "MAP";
    default:
        return "OTHER";
    }
}

int aip__memcpy_operation(uint8_t direction)
{
    switch (direction) {
    case AIP_COPY_H2H:
        return 0;
    case AIP_COPY_H2D:
        return 1;
    case AIP_COPY_D2H:
        return 2;
    case AIP_COPY_D2D:
        return 3;
    default:
        return 65535;
    }
}

const char *aip__memcpy_operation_name(int op)
{
    static const char *const names[] = {"host to host", "host to device", "device to host",
                                        "device to device"};
    return op >= 0 && op < 4 ? names[op] : "other";
}
