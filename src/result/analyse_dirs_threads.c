/*
 * analyse_dirs_threads.c — aip_analyse_dirs() on threads of the calling
 * process (options.processes 0, more than one worker), as Python's
 * aiprof.profiler.analyse() runs it: aip_analyse_dir() keeps no global
 * state, so directories can be analysed side by side without forking a
 * process that may hold an interpreter and its threads.
 *
 * Workers take the next directory under a lock and queue what happens
 * (started, done) for the calling thread, which alone reports it: the
 * caller's callback and the progress bar never run on a worker.  On a
 * cancel, no worker takes another directory; those running finish.
 */
#include "analyse_dirs.h"
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct pool {
    aip__dirs_run *r;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next;              /* the next directory to take */
    int stop;                 /* cancelled: take no more */
    size_t *events;           /* index * 2 + (1 done, 0 started), 2n of them */
    size_t n_events, n_read;
    size_t busy;              /* workers still running */
} pool;

static void push_event(pool *p, size_t code)
{
    p->events[p->n_events++] = code;
    pthread_cond_signal(&p->cv);
}

static void *worker(void *arg)
{
    pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop && p->next < p->r->n) {
        size_t i = p->next++;
        push_event(p, i * 2);
        pthread_mutex_unlock(&p->mu);
        aip_dir_result res;
        aip__dirs_analyse_one(p->r, i, &res);
        pthread_mutex_lock(&p->mu);
        p->r->results[i] = res; /* read by the calling thread under the lock */
        push_event(p, i * 2 + 1);
    }
    p->busy--;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Wait (the lock held) for an event or, with a callback to tell, the tick;
 * @return 1 when the tick passed with no news. */
static int wait_news(pool *p)
{
    if (!p->r->o.progress)
        return pthread_cond_wait(&p->cv, &p->mu), 0;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += AIP__DIRS_TICK_MS * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return pthread_cond_timedwait(&p->cv, &p->mu, &t) == ETIMEDOUT;
}

/* The calling thread: report each event, until every worker has ended. */
static void report(pool *p)
{
    aip__dirs_run *r = p->r;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        int quiet = 0;
        if (p->n_read == p->n_events) {
            if (!p->busy)
                break;
            quiet = wait_news(p);
        }
        if (p->n_read == p->n_events && !quiet)
            continue;
        size_t code = quiet ? 0 : p->events[p->n_read++];
        pthread_mutex_unlock(&p->mu);
        int stop = quiet ? aip__dirs_waiting(r)
                 : code & 1 ? aip__dirs_finished(r, code / 2) : aip__dirs_started(r, code / 2);
        pthread_mutex_lock(&p->mu);
        p->stop |= stop;
    }
    pthread_mutex_unlock(&p->mu);
}

void aip__dirs_by_threads(aip__dirs_run *r)
{
    pool p = {.r = r};
    pthread_t *th = calloc(r->workers, sizeof *th);
    p.events = malloc(2 * r->n * sizeof *p.events);
    if (!th || !p.events) {
        free(th);
        free(p.events);
        aip__dirs_in_line(r, 0);
        return;
    }
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    size_t started = 0;
    pthread_mutex_lock(&p.mu);
    for (; started < r->workers; started++) {
        p.busy++;
        if (aip__thread_create(&th[started], NULL, worker, &p)) {
            p.busy--;
            break;
        }
    }
    pthread_mutex_unlock(&p.mu);
    if (started)
        report(&p);
    for (size_t k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    pthread_mutex_destroy(&p.mu);
    pthread_cond_destroy(&p.cv);
    free(th);
    free(p.events);
    if (!started) /* no thread to be had: the calling thread does it all */
        aip__dirs_in_line(r, 0);
}
