/*
 * cl_events.c — from an enqueue to its device task, without making the
 * application wait (see cl_int.h).
 *
 * The wrapper asks the real call for an event: the application's own when
 * it passed an event pointer (retained, so an application releasing it at
 * once does not free it under us), else one of ours.  The command's
 * QUEUED/SUBMIT/START/END are read once it completed, in a CL_COMPLETE
 * callback, which records the task and drops our reference; it runs on the
 * OpenCL runtime's thread, or on the enqueuing thread when the command had
 * already completed.  The application's events keep their reference counts
 * and statuses; error codes and out-parameters pass through untouched.
 *
 * One callback per command is what profiling used to cost most on the
 * enqueuing thread (PoCL: a malloc and a lock in clSetEventCallback, our
 * context's malloc, freed on another thread).  So each thread gathers its
 * commands in a batch, without a lock or an allocation, and hands the batch
 * over with one callback, on its last command, when it holds BATCH_CAP
 * commands, when its first is BATCH_AGE_S old, when the thread waits
 * (clFinish, clWaitForEvents), exits, or when a trace stops.  The callback
 * reads every command that has completed (on an in-order queue: all that
 * came before) and moves the callback on to the first that has not (another
 * queue, an out-of-order one), so each command is recorded once, when done.
 * `issued - completed` counts commands handed over and not yet read, which
 * a stopping trace waits for (boundedly).
 */
#include "cl_int.h"

#include "clock.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

aip__cl_counters aip__cl_count;

#define BATCH_CAP 32
#define BATCH_AGE_S 0.01

/* A command followed: its task without the times, in one cache line (the
 * enqueuing thread writes a line per command; a batch is read on another
 * thread, and its lines come back when the batch is reused). */
typedef struct followed {
    cl_event ev;
    uint64_t correlation, bytes;
    aip_string_id name;
    uint32_t queue;
    uint16_t device;
    uint8_t kind, direction, app_event;
    uint32_t global[3], local[3];
} followed;
_Static_assert(sizeof(followed) <= 64, "a followed command fits a cache line");

/* Commands handed over with one callback; `next` is the first not read. */
typedef struct batch {
    unsigned cap, n, next;
    followed e[];
} batch;

/* A thread's batch being gathered.  `busy` is held by the owner while it
 * adds a command, or by whoever hands the batch over for it (a stopping
 * trace): the owner never waits for it, it follows the command alone. */
typedef struct cl_thread {
    _Atomic int busy;
    int alive;
    batch *cur;
    uint64_t first; /* tick of cur's first command */
    struct cl_thread *next;
} cl_thread;

static cl_thread *threads; /* all, for a stopping trace; reused after exits */
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static __thread cl_thread *self __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t age_ticks;

/* ---- batches ----------------------------------------------------------- */

/* Full-size batches are kept for reuse: malloc'ed on one thread and
 * freed on another, a batch cost glibc thousands of instructions. */
#define POOL_MAX 64
static batch *pool[POOL_MAX];
static unsigned pooled;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static batch *batch_new(unsigned cap)
{
    batch *b = NULL;
    if (cap == BATCH_CAP) {
        pthread_mutex_lock(&pool_lock);
        if (pooled)
            b = pool[--pooled];
        pthread_mutex_unlock(&pool_lock);
    }
    if (!b)
        b = malloc(sizeof *b + cap * sizeof(followed));
    if (b) {
        b->cap = cap;
        b->n = b->next = 0;
    }
    return b;
}

static void batch_free(batch *b)
{
    if (b->cap == BATCH_CAP) {
        pthread_mutex_lock(&pool_lock);
        int kept = pooled < POOL_MAX;
        if (kept)
            pool[pooled++] = b;
        pthread_mutex_unlock(&pool_lock);
        if (kept)
            return;
    }
    free(b);
}

/* ---- reading a completed command ---------------------------------------- */

static int profiling_time(const aip__cl_api *cl, cl_event ev, cl_profiling_info what, uint64_t *out)
{
    cl_ulong v = 0;
    if (cl->clGetEventProfilingInfo(ev, what, sizeof v, &v, NULL) != CL_SUCCESS)
        return 0;
    *out = v;
    return 1;
}

/* Record f's task (status: its final execution status) and drop f->ev. */
static void read_command(const aip__cl_api *cl, const followed *f, cl_int status)
{
    aip__dev_task_info task, *ti = &task;
    memset(ti, 0, sizeof *ti);
    if (status != CL_COMPLETE) {
        /* a negative status: the command was abandoned (an error) */
        atomic_fetch_add_explicit(&aip__cl_count.failed, 1, memory_order_relaxed);
    } else if (!profiling_time(cl, f->ev, CL_PROFILING_COMMAND_START, &ti->start) ||
               !profiling_time(cl, f->ev, CL_PROFILING_COMMAND_END, &ti->end)) {
        atomic_fetch_add_explicit(&aip__cl_count.untimed, 1, memory_order_relaxed);
    } else if (ti->end < ti->start) {
        atomic_fetch_add_explicit(&aip__cl_count.bad_times, 1, memory_order_relaxed);
    } else {
        /* QUEUED and SUBMIT are optional in the record: 0 when unknown */
        if (!profiling_time(cl, f->ev, CL_PROFILING_COMMAND_QUEUED, &ti->queued))
            ti->queued = 0;
        if (!profiling_time(cl, f->ev, CL_PROFILING_COMMAND_SUBMIT, &ti->submit))
            ti->submit = 0;
        ti->name_id = f->name;
        ti->device = f->device == UINT16_MAX ? AIP_DEV_NONE : f->device;
        ti->queue = f->queue;
        ti->kind = f->kind;
        ti->direction = f->direction;
        ti->app_event = f->app_event;
        ti->correlation = f->correlation;
        ti->bytes = f->bytes;
        memcpy(ti->global, f->global, sizeof ti->global);
        memcpy(ti->local, f->local, sizeof ti->local);
        aip__dev_task(ti);
    }
    cl->clReleaseEvent(f->ev);
}

/* Commands from b->next on that can no longer be followed. */
static void drop_rest(const aip__cl_api *cl, batch *b)
{
    unsigned n = b->n - b->next;
    for (unsigned i = b->next; i < b->n; i++)
        cl->clReleaseEvent(b->e[i].ev);
    atomic_fetch_add_explicit(&aip__cl_count.no_callback, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&aip__cl_count.completed, n, memory_order_release);
    batch_free(b);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user);

/* Read b's completed commands in order; at the first still running, wait
 * for it with a callback (which may run at once, on this thread). */
static void read_batch(batch *b)
{
    const aip__cl_api *cl = aip__cl_real();
    while (b->next < b->n) {
        followed *f = &b->e[b->next];
        cl_int status;
        if (cl->clGetEventInfo(f->ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                               NULL) != CL_SUCCESS)
            status = CL_INVALID_EVENT;
        if (status > CL_COMPLETE) {
            /* b belongs to the callback from here on: not touched after */
            if (cl->clSetEventCallback(f->ev, CL_COMPLETE, on_complete, b) != CL_SUCCESS)
                drop_rest(cl, b);
            return;
        }
        read_command(cl, f, status);
        b->next++;
        atomic_fetch_add_explicit(&aip__cl_count.completed, 1, memory_order_release);
    }
    batch_free(b);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user)
{
    (void)ev, (void)status; /* read_batch asks each command's status itself */
    read_batch(user);
}

/* Hand b over: one callback, on its last command, the likeliest to
 * complete last. */
static void hand_over(batch *b)
{
    const aip__cl_api *cl = aip__cl_real();
    atomic_fetch_add_explicit(&aip__cl_count.issued, b->n, memory_order_relaxed);
    if (cl->clSetEventCallback(b->e[b->n - 1].ev, CL_COMPLETE, on_complete, b) != CL_SUCCESS)
        drop_rest(cl, b);
}

/* ---- the calling thread's batch ----------------------------------------- */

static void hand_over_thread(cl_thread *t)
{
    batch *b = t->cur;
    t->cur = NULL;
    if (b)
        hand_over(b);
}

/* Take t's busy flag from another thread (or at the owner's exit): the
 * holder keeps it for a few instructions, so a bounded spin is plenty;
 * @return 0 when it stays held (a child forked while it was). */
static int take(cl_thread *t)
{
    for (int i = 0; atomic_exchange_explicit(&t->busy, 1, memory_order_acquire); i++) {
        if (i == 1000)
            return 0;
        sched_yield();
    }
    return 1;
}

static void thread_exit(void *arg)
{
    cl_thread *t = arg;
    if (take(t)) {
        hand_over_thread(t);
        atomic_store_explicit(&t->busy, 0, memory_order_release);
    }
    /* after the flag: aip__cl_hand_over_all takes threads_lock, then flags */
    pthread_mutex_lock(&threads_lock);
    t->alive = 0;
    pthread_mutex_unlock(&threads_lock);
    self = NULL;
}

/* A forked child has only the forking thread, and none of its parent's
 * commands to follow: the parent's batches are forgotten, its flags and
 * lock reset. */
static void fork_child(void)
{
    pthread_mutex_init(&threads_lock, NULL);
    pthread_mutex_init(&pool_lock, NULL);
    for (cl_thread *t = threads; t; t = t->next) {
        t->cur = NULL;
        t->alive = t == self;
        atomic_store_explicit(&t->busy, 0, memory_order_relaxed);
    }
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, thread_exit);
    pthread_atfork(NULL, NULL, fork_child);
}

static cl_thread *thread_attach(void)
{
    pthread_once(&exit_key_once, make_exit_key);
    pthread_mutex_lock(&threads_lock);
    cl_thread *t = threads;
    while (t && t->alive)
        t = t->next;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (t) {
            t->next = threads;
            threads = t;
        }
    }
    if (t)
        t->alive = 1;
    pthread_mutex_unlock(&threads_lock);
    if (t && pthread_setspecific(exit_key, t) != 0) {
        /* no exit hook: a batch could be stranded at the thread's exit */
        pthread_mutex_lock(&threads_lock);
        t->alive = 0;
        pthread_mutex_unlock(&threads_lock);
        return NULL;
    }
    self = t;
    return t;
}

static void keep(followed *f, cl_event ev, const aip__dev_task_info *ti)
{
    f->ev = ev;
    f->correlation = ti->correlation;
    f->bytes = ti->bytes;
    f->name = ti->name_id ? ti->name_id : ti->name ? aip_intern(ti->name) : 0;
    f->queue = ti->queue;
    f->device = ti->device < UINT16_MAX ? (uint16_t)ti->device : UINT16_MAX;
    f->kind = ti->kind;
    f->direction = ti->direction;
    f->app_event = ti->app_event;
    memcpy(f->global, ti->global, sizeof f->global);
    memcpy(f->local, ti->local, sizeof f->local);
}

/* Follow ev, whose command `ti` describes (`now`: its call's start tick). */
static void follow(cl_event ev, const aip__dev_task_info *ti, uint64_t now)
{
    cl_thread *t = self ? self : thread_attach();
    if (!t || atomic_exchange_explicit(&t->busy, 1, memory_order_acquire)) {
        batch *one = batch_new(1); /* a batch of one, as before batches */
        if (!one) {
            const aip__cl_api *cl = aip__cl_real();
            cl->clReleaseEvent(ev);
            atomic_fetch_add_explicit(&aip__cl_count.no_callback, 1, memory_order_relaxed);
            return;
        }
        keep(&one->e[0], ev, ti);
        one->n = 1;
        hand_over(one);
        return;
    }
    batch *b = t->cur;
    if (!b) {
        b = t->cur = batch_new(BATCH_CAP);
        t->first = now;
    }
    if (b)
        keep(&b->e[b->n++], ev, ti);
    uint64_t age = atomic_load_explicit(&age_ticks, memory_order_relaxed);
    if (!age) {
        age = (uint64_t)(BATCH_AGE_S * aip__clock_ticks_per_second());
        atomic_store_explicit(&age_ticks, age, memory_order_relaxed);
    }
    if (!b || b->n == BATCH_CAP || now - t->first >= age)
        hand_over_thread(t);
    atomic_store_explicit(&t->busy, 0, memory_order_release);
    if (!b) {
        aip__cl_real()->clReleaseEvent(ev);
        atomic_fetch_add_explicit(&aip__cl_count.no_callback, 1, memory_order_relaxed);
    }
}

void aip__cl_hand_over(void)
{
    cl_thread *t = self;
    if (!t || atomic_exchange_explicit(&t->busy, 1, memory_order_acquire))
        return; /* nothing gathered, or being handed over already */
    hand_over_thread(t);
    atomic_store_explicit(&t->busy, 0, memory_order_release);
}

void aip__cl_hand_over_all(void)
{
    pthread_mutex_lock(&threads_lock);
    for (cl_thread *t = threads; t; t = t->next)
        if (take(t)) {
            hand_over_thread(t);
            atomic_store_explicit(&t->busy, 0, memory_order_release);
        }
    pthread_mutex_unlock(&threads_lock);
}

/* ---- the wrappers' two halves ------------------------------------------- */

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

void aip__cl_launch_end(aip__cl_launch *l, aip_string_id api, cl_int err, cl_event *app_event,
                        aip__dev_task_info *ti)
{
    aip__dev_api_end_id(api, l->api_start, err == CL_SUCCESS ? l->correlation : 0,
                        l->queue.device);
    aip__cl_clock_tick(l->queue.device, l->api_start);
    if (err != CL_SUCCESS)
        return;
    if (!(l->queue.flags & AIP_CLQ_PROFILING) || !l->event || !*l->event) {
        atomic_fetch_add_explicit(&aip__cl_count.untimed, 1, memory_order_relaxed);
        return;
    }
    cl_event ev = *l->event;
    /* Ours already holds the reference the reading drops; the app's gets one. */
    if (app_event && aip__cl_real()->clRetainEvent(ev) != CL_SUCCESS) {
        atomic_fetch_add_explicit(&aip__cl_count.no_callback, 1, memory_order_relaxed);
        return;
    }
    ti->device = l->queue.device;
    ti->queue = l->queue.queue;
    ti->correlation = l->correlation;
    ti->app_event = app_event != NULL;
    follow(ev, ti, l->api_start);
}

void aip__cl_api_call(const char *api, uint64_t start, uint32_t device)
{
    aip__dev_api_end(api, start, 0, device);
}
