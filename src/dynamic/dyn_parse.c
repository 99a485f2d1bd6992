/*
 * dyn_parse.c — the config thread (see dyn_parse.h).
 *
 * The thread sleeps on a condition variable for a fraction of the watcher's
 * poll period, looks at the generation counter, and when it moved reads
 * and parses the published text without holding any lock step() takes.
 * The result replaces one not yet taken (the latest edit wins, as when
 * step() read the watcher's latest itself).
 */
#include "thread.h"
#include "dyn_parse.h"
#include "error.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A config step() is done with, left for the thread to free. */
typedef struct disposal {
    struct disposal *next;
    aip__dyn_config cfg;
} disposal;

static struct {
    pthread_mutex_t lock;         /* guards parsed, to_free, stop */
    pthread_cond_t wake;
    int cond_ready;
    pthread_t thread;
    pid_t owner;                  /* the process whose thread it is; 0: none */
    aip__dyn_watch *watch;
    int stop;
    int ready;                    /* atomic: `parsed` holds an edit not taken */
    aip__dyn_parsed parsed;
    disposal *to_free;
    pid_t last_tid;               /* atomic */
} cfgt = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void parsed_free(aip__dyn_parsed *e)
{
    if (e->valid)
        aip__dyn_config_free(&e->cfg);
    e->valid = 0;
}

/* Free what aip__dyn_parse_dispose() left; called with the lock held,
 * frees without it. */
static void free_disposals(void)
{
    disposal *d = cfgt.to_free;
    cfgt.to_free = NULL;
    if (!d)
        return;
    pthread_mutex_unlock(&cfgt.lock);
    while (d) {
        disposal *next = d->next;
        aip__dyn_config_free(&d->cfg);
        free(d);
        d = next;
    }
    pthread_mutex_lock(&cfgt.lock);
}

/* Read and parse the edit the watcher published. */
static void parse_edit(aip__dyn_parsed *e)
{
    memset(e, 0, sizeof *e);
    e->tid = (pid_t)syscall(SYS_gettid);
    uint64_t t0 = now_ns();
    char *text = NULL, message[512];
    size_t len = 0;
    int valid = 0;
    if (aip__dyn_watch_read(cfgt.watch, &text, &len, &valid, message, sizeof message) != 0) {
        snprintf(e->message, sizeof e->message, "could not read the published config");
        return;
    }
    if (!valid) { /* the watcher's verdict: not parsed again */
        snprintf(e->message, sizeof e->message, "%s", message);
        free(text);
        return;
    }
    char err[512], warn[512];
    aip_status st = aip__dyn_config_parse(text, len, &e->cfg, err, sizeof err, warn, sizeof warn);
    free(text);
    e->valid = st == AIP_OK;
    snprintf(e->message, sizeof e->message, "%s", st ? err : warn);
    e->parse_ms = (double)(now_ns() - t0) / 1e6;
}

/* The sleep between looks at the generation: a quarter of the watcher's
 * poll period, so it adds little to an edit's delay, and at most 100 ms
 * (10 wake-ups a second at the 2 s default). */
static uint64_t nap_ns(void)
{
    uint64_t ms = aip__dyn_default_poll_ms() / 4;
    if (ms < 5)
        ms = 5;
    if (ms > 100)
        ms = 100;
    return ms * 1000000ull;
}

static void *thread_main(void *arg)
{
    uint64_t seen = *(uint64_t *)arg;
    free(arg);
    uint64_t nap = nap_ns();
    pthread_mutex_lock(&cfgt.lock);
    while (!cfgt.stop) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        uint64_t t = (uint64_t)dl.tv_nsec + nap;
        dl.tv_sec += (time_t)(t / 1000000000ull);
        dl.tv_nsec = (long)(t % 1000000000ull);
        pthread_cond_timedwait(&cfgt.wake, &cfgt.lock, &dl);
        free_disposals();
        if (cfgt.stop)
            break;
        uint64_t gen = aip__dyn_watch_generation(cfgt.watch);
        if (gen == seen)
            continue;
        seen = gen;
        pthread_mutex_unlock(&cfgt.lock);
        aip__dyn_parsed e;
        parse_edit(&e); /* unlocked: step() never waits for a parse */
        __atomic_store_n(&cfgt.last_tid, e.tid, __ATOMIC_RELAXED);
        pthread_mutex_lock(&cfgt.lock);
        if (__atomic_load_n(&cfgt.ready, __ATOMIC_RELAXED))
            parsed_free(&cfgt.parsed); /* superseded before step() took it */
        cfgt.parsed = e;
        __atomic_store_n(&cfgt.ready, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&cfgt.lock);
    return NULL;
}

aip_status aip__dyn_parse_start(aip__dyn_watch *w)
{
    if (!cfgt.cond_ready) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&cfgt.wake, &ca);
        pthread_condattr_destroy(&ca);
        cfgt.cond_ready = 1;
    }
    uint64_t *seen = malloc(sizeof *seen);
    if (!seen)
        return aip__fail(AIP_ERR_NOMEM, "no memory for the config thread");
    *seen = w->seen_generation;
    cfgt.watch = w;
    cfgt.stop = 0;
    __atomic_store_n(&cfgt.ready, 0, __ATOMIC_RELAXED);
    /* The program's signals are not for this thread (thread.h). */
    int rc = aip__thread_create(&cfgt.thread, NULL, thread_main, seen);
    if (rc != 0) {
        free(seen);
        return aip__fail(AIP_ERR_IO, "cannot start the config thread: %s", strerror(rc));
    }
    cfgt.owner = getpid();
    return AIP_OK;
}

void aip__dyn_parse_stop(void)
{
    if (!cfgt.owner)
        return;
    if (cfgt.owner != getpid()) {
        /* A forked child: the thread does not exist here and the lock may
         * have been held at the fork.  What it owned is left. */
        cfgt.owner = 0;
        cfgt.to_free = NULL;
        __atomic_store_n(&cfgt.ready, 0, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&cfgt.lock);
    cfgt.stop = 1;
    pthread_cond_signal(&cfgt.wake);
    pthread_mutex_unlock(&cfgt.lock);
    pthread_join(cfgt.thread, NULL);
    cfgt.owner = 0;
    pthread_mutex_lock(&cfgt.lock);
    free_disposals();
    if (__atomic_load_n(&cfgt.ready, __ATOMIC_RELAXED))
        parsed_free(&cfgt.parsed);
    __atomic_store_n(&cfgt.ready, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&cfgt.lock);
}

int aip__dyn_parse_ready(void)
{
    /* The pid check only when an edit waits: a forked child has no
     * config thread, and its lock may have been held at the fork. */
    return __atomic_load_n(&cfgt.ready, __ATOMIC_ACQUIRE) && cfgt.owner == getpid();
}

int aip__dyn_parse_take(aip__dyn_parsed *out)
{
    pthread_mutex_lock(&cfgt.lock);
    int had = __atomic_load_n(&cfgt.ready, __ATOMIC_RELAXED);
    if (had) {
        *out = cfgt.parsed;
        memset(&cfgt.parsed, 0, sizeof cfgt.parsed);
        __atomic_store_n(&cfgt.ready, 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&cfgt.lock);
    return had ? 0 : -1;
}

void aip__dyn_parse_dispose(aip__dyn_config *c)
{
    if (cfgt.owner && cfgt.owner == getpid()) {
        disposal *d = malloc(sizeof *d);
        if (d) {
            /* Moved: only cfg's string fields point into the struct, and
             * aip__dyn_config_free does not use them. */
            d->cfg = *c;
            memset(c, 0, sizeof *c);
            pthread_mutex_lock(&cfgt.lock);
            d->next = cfgt.to_free;
            cfgt.to_free = d;
            pthread_cond_signal(&cfgt.wake);
            pthread_mutex_unlock(&cfgt.lock);
            return;
        }
    }
    aip__dyn_config_free(c);
}

pid_t aip__dyn_last_parse_tid(void) { return __atomic_load_n(&cfgt.last_tid, __ATOMIC_RELAXED); }
