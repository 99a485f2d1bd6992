/*
 * flight_trigger.c — what makes an armed flight recorder dump
 * (docs/FLIGHT_RECORDER.md), and the hand-over to the writer thread,
 * which does every dump.
 *
 * Triggers only ask: a signal handler sets a flag (an atomic store, all it
 * may do), a slow step and aip_flight_dump() set a bit and wake the
 * writer, and the hang watchdog is the writer itself, which looks at the
 * time of the last step at each of its 100 ms flushes.  The writer takes
 * what was asked (aip__flight_take), dumps once for all of it, and says
 * so (aip__flight_done) to aip_flight_dump() callers waiting for it.
 */
#include "flight.h"
#include "clock.h"
#include "error.h"
#include "recorder_int.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_HISTORY 64   /* the running median's window of steps */
#define STEP_MIN_SEEN 8   /* steps seen before a median is trusted */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int armed;                     /* lock */
static uint64_t asked, done;          /* tickets, lock */
static aip_status done_status;        /* lock */
static char done_dir[PATH_MAX];       /* lock */
static _Atomic uint32_t pending;      /* reasons asked, not yet taken */
static _Atomic int signalled;         /* set by the handler */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler's flag must be lock-free");

static int sig_installed, sig_number;
static struct sigaction sig_old;

/* The step watch: written by the thread that steps the session. */
static double slow_factor;
static uint64_t step_ticks[STEP_HISTORY];
static uint32_t n_steps;
static _Atomic uint64_t last_step_ns;
static _Atomic int hang_fired;
static _Atomic uint64_t hang_ns; /* set at arm, read by the writer thread */

static void on_signal(int sig)
{
    (void)sig;
    atomic_store_explicit(&signalled, 1, memory_order_relaxed);
}

static void wake_writer(void)
{
    aip__pool_lock();
    pthread_cond_signal(&aip__pool_state.wake);
    aip__pool_unlock();
}

void aip__flight_arm(int signal, double slow, double hang_seconds)
{
    pthread_mutex_lock(&lock);
    armed = 1;
    pthread_mutex_unlock(&lock);
    atomic_store(&pending, 0);
    atomic_store(&signalled, 0);
    slow_factor = slow;
    n_steps = 0;
    /* The watch's start before its limit: the writer thread, already
     * running, must not see a limit with the last trace's step time. */
    atomic_store(&last_step_ns, aip__mono_ns());
    atomic_store(&hang_fired, 0);
    atomic_store(&hang_ns, (uint64_t)(hang_seconds * 1e9));
    sig_number = signal == 0 ? SIGUSR2 : signal;
    if (sig_number > 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sig_installed = sigaction(sig_number, &sa, &sig_old) == 0;
        if (!sig_installed)
            aip__warn("the flight recorder's signal %d could not be caught; it is not a "
                      "trigger", sig_number);
    }
}

void aip__flight_disarm(void)
{
    atomic_store(&hang_ns, 0);
    if (sig_installed)
        sigaction(sig_number, &sig_old, NULL); /* the program's own handler again */
    sig_installed = 0;
    pthread_mutex_lock(&lock);
    armed = 0;
    pthread_cond_broadcast(&done_cond); /* callers still waiting get AIP_ERR_STATE */
    pthread_mutex_unlock(&lock);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void aip__flight_step(uint64_t start, uint64_t end)
{
    atomic_store(&last_step_ns, aip__mono_ns());
    atomic_store(&hang_fired, 0);
    uint64_t d = end > start ? end - start : 0;
    if (slow_factor > 1 && n_steps >= STEP_MIN_SEEN) {
        uint64_t v[STEP_HISTORY];
        uint32_t n = n_steps < STEP_HISTORY ? n_steps : STEP_HISTORY;
        memcpy(v, step_ticks, n * sizeof v[0]);
        qsort(v, n, sizeof v[0], cmp_u64);
        uint64_t median = v[n / 2];
        if ((double)d > slow_factor * (double)median)
            aip__flight_request(AIP_FLIGHT_SLOW_STEP);
    }
    step_ticks[n_steps % STEP_HISTORY] = d;
    n_steps++;
}

void aip__flight_request(uint32_t reason)
{
    pthread_mutex_lock(&lock);
    if (armed) {
        asked++;
        atomic_fetch_or(&pending, reason);
    }
    pthread_mutex_unlock(&lock);
    wake_writer();
}

/* No step for hang_ns, and not dumped for this hang yet. */
static int hang_due(void)
{
    uint64_t limit = atomic_load(&hang_ns);
    return limit && !atomic_load(&hang_fired) &&
           aip__mono_ns() - atomic_load(&last_step_ns) > limit;
}

int aip__flight_pending(void)
{
    return atomic_load_explicit(&pending, memory_order_relaxed) ||
           atomic_load_explicit(&signalled, memory_order_relaxed) || hang_due();
}

uint32_t aip__flight_take(uint64_t *ticket)
{
    uint32_t r = 0;
    if (atomic_exchange(&signalled, 0))
        r |= AIP_FLIGHT_SIGNAL;
    if (hang_due()) {
        atomic_store(&hang_fired, 1); /* once per hang: the next step re-arms it */
        r |= AIP_FLIGHT_HANG;
    }
    pthread_mutex_lock(&lock);
    r |= atomic_exchange(&pending, 0);
    *ticket = asked;
    pthread_mutex_unlock(&lock);
    return r;
}

void aip__flight_done(uint64_t ticket, aip_status status, const char *dir)
{
    pthread_mutex_lock(&lock);
    if (ticket > done)
        done = ticket;
    done_status = status;
    snprintf(done_dir, sizeof done_dir, "%s", dir ? dir : "");
    pthread_cond_broadcast(&done_cond);
    pthread_mutex_unlock(&lock);
}

aip_status aip_flight_dump(const char *reason, char *result_dir, size_t cap)
{
    (void)reason; /* named in the log by the caller's thread, below */
    if (result_dir && cap)
        result_dir[0] = '\0';
    pthread_mutex_lock(&lock);
    if (!armed) {
        pthread_mutex_unlock(&lock);
        return aip__fail(AIP_ERR_STATE, "aip_flight_dump: no flight recorder is armed in this "
                         "process (flight_recorder_seconds)");
    }
    uint64_t ticket = ++asked;
    atomic_fetch_or(&pending, AIP_FLIGHT_API);
    pthread_mutex_unlock(&lock);
    wake_writer();
    pthread_mutex_lock(&lock);
    while (armed && done < ticket)
        pthread_cond_wait(&done_cond, &lock);
    aip_status st;
    if (done < ticket)
        st = aip__fail(AIP_ERR_STATE, "aip_flight_dump: the flight recorder was stopped first");
    else if (done_status)
        st = aip__fail(done_status, "flight recorder dump failed: %s", done_dir);
    else
        st = AIP_OK;
    if (!st && result_dir && cap)
        snprintf(result_dir, cap, "%s", done_dir);
    pthread_mutex_unlock(&lock);
    return st;
}
