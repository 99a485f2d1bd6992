/*
 * device_tracks.h — what the device layers of the timeline and the device
 * tables of the database compute alike from a process's derived device
 * tasks (device_tracks.c): each task's number on its queue (TASK.taskId,
 * the "Task Id" arg), the track it is drawn on, and each device's overlap
 * sections (the "Overlap Analysis" process, OVERLAP_ANALYSIS).
 *
 * Tracks: a queue's tasks are drawn on one thread named after the queue.
 * An out-of-order queue (OpenCL's CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
 * runs tasks at the same time, and slices on one track must nest or be
 * disjoint (tests/e2e/check_nesting.py) — but a task is never inside
 * another, so nesting them would draw a false parent.  Such a task goes to
 * the queue's first extra lane where it is disjoint from the lane's last
 * task (first fit in start order): lane 0 is the queue's own track, lane k
 * a sibling thread "<queue> (k+1)".  An in-order queue has one lane.
 */
#ifndef AIP_DEVICE_TRACKS_H
#define AIP_DEVICE_TRACKS_H

#include "model.h"

/* tid of (queue, lane) in a device process: the raw queue id (the
 * Ascend layer's tid is the stream id), AIP_DEV_TRACK_NO_QUEUE for tasks
 * of no queue, lanes above it in strides. */
#define AIP_DEV_TRACK_NO_QUEUE AIP_RAW_MAX_QUEUES
#define AIP_DEV_TRACK_LANE_STRIDE (2 * AIP_RAW_MAX_QUEUES)

typedef struct aip__dev_tracks {
    uint32_t *task_id;      /* per dev_task: its number on its queue, by start, from 0 */
    uint32_t *lane;         /* per dev_task: its lane on its queue */
    uint32_t *lanes;        /* per queue index: lanes used, 0 = no task */
    size_t n_queues;        /* entries of lanes: AIP_DEV_TRACK_NO_QUEUE + 1 */
} aip__dev_tracks;

/* aip__dev_tracks_build() : numbers and lanes of p's tasks (sorted by start,
 * as device_derive.c leaves them).  @return AIP_ERR_NOMEM or AIP_OK. */
aip_status aip__dev_tracks_build(const aip__process *p, aip__dev_tracks *t);
void aip__dev_tracks_free(aip__dev_tracks *t);
/* aip__dev_tracks_of() (dev_share.c) : what aip__dev_tracks_build()
 * gives for process p of model m, built once per process when the model
 * shares them (m->dev_share); t is the caller's to free either way. */
aip_status aip__dev_tracks_of(const aip__model *m, const aip__process *p, aip__dev_tracks *t);

/* The queue index of a task: its raw queue id (described or not), or
 * AIP_DEV_TRACK_NO_QUEUE for none. */
static inline size_t aip__dev_task_queue_index(const aip__device_task *k)
{
    return k->queue < AIP_RAW_MAX_QUEUES ? k->queue : AIP_DEV_TRACK_NO_QUEUE;
}

/* The tid of queue index q, lane `lane`. */
static inline uint64_t aip__dev_track_tid(size_t q, uint32_t lane)
{
    return q + (uint64_t)lane * AIP_DEV_TRACK_LANE_STRIDE;
}

/* The connection id of process p's first runtime API call: calls are
 * numbered across the model's processes in order (CANN_API.connectionId,
 * TASK.connectionId, the "connection_id" args of the timeline). */
static inline int64_t aip__dev_connection_base(const aip__model *m, const aip__process *p)
{
    int64_t base = 0;
    for (const aip__process *q = m->procs; q < p; q++)
        base += (int64_t)q->dev_api.n;
    return base;
}

/* msprof's overlap types (ENUM_OVERLAP_ANALYSIS_TYPE; the Overlap Analysis
 * process's tids). */
enum aip__overlap_type {
    AIP_OVERLAP_COMPUTE = 0,
    AIP_OVERLAP_COMMUNICATION = 1,
    AIP_OVERLAP_COMM_NOT_OVERLAPPED = 2,
    AIP_OVERLAP_FREE = 3
};

typedef struct aip__overlap_section {
    int64_t start, end;     /* wall ns, end > start */
    uint8_t type;           /* enum aip__overlap_type */
} aip__overlap_section;

/* aip__device_overlap() (dev_share.c) : device `device`'s sections,
 * cut from its step_trace_time rows (m->step_rows, device_steps.c) with
 * their definitions: per row's window, Computing = the union of the step's
 * kernels, Communication = the communication ops' union,
 * Communication(Not Overlapped) = that less Computing, Free = the rest of
 * the window; so a step's Free sections sum to its Free.  Sorted by start;
 * *out is malloc'ed (NULL when *n is 0), the caller's to free.
 * @return AIP_ERR_NOMEM or AIP_OK. */
aip_status aip__device_overlap(const aip__model *m, uint32_t device, aip__overlap_section **out,
                               size_t *n);
/* aip__device_overlap_compute() (device_sections.c) : what
 * aip__device_overlap() returns, computed afresh. */
aip_status aip__device_overlap_compute(const aip__model *m, uint32_t device,
                                       aip__overlap_section **out, size_t *n);
/* dev_share.c : a derived model's sections and tracks, kept once
 * computed.  The trace JSON (and Perfetto), the database and
 * kernel_details.csv want them alike, on different threads of the export
 * pool; the first to ask computes them, the others copy them
 * (aip__device_overlap() and aip__dev_tracks_of() go through the cache
 * when the model has one).  aip__dev_share_new() : for a model of n_procs
 * processes; NULL when there is no memory for it (then each asker computes
 * its own). */
struct aip__dev_share *aip__dev_share_new(size_t n_procs);
void aip__dev_share_free(struct aip__dev_share *c);

/* The seed's task type of a task (TASK.taskType, the "Task Type" arg, and
 * kernel_details' Type of a non-kernel task): a kernel runs on the
 * device's kind of core (aip__dev_kind_name: "GPU", "CPU", ...); a copy is
 * msprof's "MEMCPY_ASYNC"; the others say what they are. */
const char *aip__task_type_name(const aip__process *p, const aip__device_task *k);
/* The stream id the outputs show for queue `queue` (kernel_details' Stream
 * ID, TASK.streamId, the timeline's "Physic Stream Id"): the back end's own
 * number when it has one (the CUDA stream id), else aiprof's queue id
 * (OpenCL queues have no number). */
uint64_t aip__queue_stream_id(const aip__process *p, uint32_t queue);
/* A kernel's work-groups (blocks) per dimension into g[3], and their
 * product: Π ceil(global / local), a dimension past the kernel's own
 * (global and local 0) counting one group; 0 when not known: not a kernel,
 * no work size, or the local size left to the runtime (local[0] 0).  For
 * kernel_details' Block Num and COMPUTE_TASK_INFO's blockNum / gridDim. */
uint64_t aip__task_groups(const aip__device_task *k, uint32_t g[3]);
/* msprof's memcpy operation (ENUM_MEMCPY_OPERATION) of a copy direction:
 * 0 host to host, 1 host to device, 2 device to host, 3 device to device,
 * 65535 other; and its name. */
int aip__memcpy_operation(uint8_t direction);
const char *aip__memcpy_operation_name(int op);

#endif
