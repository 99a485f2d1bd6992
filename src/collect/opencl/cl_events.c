/*
 * cl_events.c — from an enqueue to its device task, without making the
 * application wait (see cl_int.h).
 *
 * The wrapper asks the real call for an event: the application's own when
 * it passed an event pointer (retained, so an application releasing it at
 * once does not free it under us), else one of ours.  A CL_COMPLETE
 * callback then reads QUEUED/SUBMIT/START/END, records the task and drops
 * our reference; it runs on the OpenCL runtime's thread, or on the
 * enqueuing thread when the command had already completed.  The
 * application's events keep their reference counts and statuses; error
 * codes and out-parameters pass through untouched.  `issued - completed` counts
 * callbacks still owed, which a stopping trace waits for (boundedly).
 */
#include "cl_int.h"

#include <stdlib.h>

aip__cl_counters aip__cl_count;

typedef struct pending {
    aip__dev_task_info ti;
} pending;

static int profiling_time(const aip__cl_api *cl, cl_event ev, cl_profiling_info what, uint64_t *out)
{
    cl_ulong v = 0;
    if (cl->clGetEventProfilingInfo(ev, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    *out = v;
    return 1;
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user)
{
    pending *p = user;
    const aip__cl_api *cl = aip__cl_real();
    if (status != CL_COMPLETE) {
        /* a negative status: the command was abandoned (an error) */
        atomic_fetch_add_explicit(&aip__cl_count.failed, 1, memory_order_relaxed);
    } else if (!profiling_time(cl, ev, CL_PROFILING_COMMAND_START, &p->ti.start) ||
               !profiling_time(cl, ev, CL_PROFILING_COMMAND_END, &p->ti.end)) {
        atomic_fetch_add_explicit(&aip__cl_count.untimed, 1, memory_order_relaxed);
    } else if (p->ti.end < p->ti.start) {
        atomic_fetch_add_explicit(&aip__cl_count.bad_times, 1, memory_order_relaxed);
    } else {
        /* QUEUED and SUBMIT are optional in the record: 0 when unknown */
        if (!profiling_time(cl, ev, CL_PROFILING_COMMAND_QUEUED, &p->ti.queued))
            p->ti.queued = 0;
        if (!profiling_time(cl, ev, CL_PROFILING_COMMAND_SUBMIT, &p->ti.submit))
            p->ti.submit = 0;
        aip__dev_task(&p->ti);
    }
    cl->clReleaseEvent(ev);
    free(p);
    atomic_fetch_add_explicit(&aip__cl_count.completed, 1, memory_order_release);
}

int aip__cl_launch_begin(aip__cl_launch *l, cl_command_queue q, cl_event *app_event)
{
    if (!aip__cl_queue_info(q, &l->queue))
        return 0; /* not a queue OpenCL knows: the real call reports it */
    l->own = NULL;
    /* Without profiling an event would tell nothing: do not create one. */
    l->event = app_event || !(l->queue.flags & AIP_CLQ_PROFILING) ? app_event : &l->own;
    l->correlation = aip__dev_correlation();
    l->api_start = aip__dev_api_begin();
    return 1;
}

void aip__cl_launch_end(aip__cl_launch *l, const char *api, cl_int err, cl_event *app_event,
                        aip__dev_task_info *ti)
{
    aip__dev_api_end(api, l->api_start, err == CL_SUCCESS ? l->correlation : 0, l->queue.device);
    aip__cl_clock_tick(l->queue.device, l->api_start);
    if (err != CL_SUCCESS)
        return;
    if (!(l->queue.flags & AIP_CLQ_PROFILING) || !l->event || !*l->event) {
        atomic_fetch_add_explicit(&aip__cl_count.untimed, 1, memory_order_relaxed);
        return;
    }
    const aip__cl_api *cl = aip__cl_real();
    cl_event ev = *l->event;
    /* Ours already holds the reference the callback drops; the app's gets one. */
    if (app_event && cl->clRetainEvent(ev) != CL_SUCCESS) {
        atomic_fetch_add_explicit(&aip__cl_count.no_callback, 1, memory_order_relaxed);
        return;
    }
    pending *p = malloc(sizeof *p);
    if (!p) {
        atomic_fetch_add_explicit(&aip__cl_count.no_callback, 1, memory_order_relaxed);
        cl->clReleaseEvent(ev);
        return;
    }
    p->ti = *ti;
    p->ti.device = l->queue.device;
    p->ti.queue = l->queue.queue;
    p->ti.correlation = l->correlation;
    p->ti.app_event = app_event != NULL;
    atomic_fetch_add_explicit(&aip__cl_count.issued, 1, memory_order_relaxed);
    if (cl->clSetEventCallback(ev, CL_COMPLETE, on_complete, p) != CL_SUCCESS) {
        atomic_fetch_add_explicit(&aip__cl_count.completed, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&aip__cl_count.no_callback, 1, memory_order_relaxed);
        cl->clReleaseEvent(ev);
        free(p);
    }
}

void aip__cl_api_call(const char *api, uint64_t start, uint32_t device)
{
    aip__dev_api_end(api, start, 0, device);
}
