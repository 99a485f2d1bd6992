/*
 * collectors.c — the core's side of collector.h: the table the build
 * generated plus the collectors added at run time, walked at a session's
 * start, at each trace's start and stop, and in a forked child; and the
 * injection variables `aiprof run` sets (aip_injection_var).
 */
#include "collector.h"
#include "aiprof_integration.h"
#include "device.h"
#include "error.h"
#include "fork_handlers.h"

#include <pthread.h>
#include <stdatomic.h>

#define MAX_ADDED 8
#define MAX_STARTED 64

static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;
static const aip__collector *added[MAX_ADDED];
static _Atomic size_t n_added; /* stored after its entry (release) */
/* Which collectors the open trace started (by aip__collector_each index):
 * only those are stopped, so a stop never finds a collector it did not
 * start.  Touched by the thread that starts and stops traces only. */
static unsigned char started[MAX_STARTED];

aip_status aip__collector_register(const aip__collector *c)
{
    if (!c)
        return aip__fail(AIP_ERR_INVALID_ARG, "aip__collector_register: NULL collector");
    aip_status st = AIP_OK;
    pthread_mutex_lock(&add_lock);
    size_t n = atomic_load_explicit(&n_added, memory_order_relaxed), i = 0;
    for (const aip__collector *k; (k = aip__collector_each(&i));)
        if (k == c)
            goto out; /* known: once is enough */
    if (n == MAX_ADDED) {
        st = aip__fail(AIP_ERR_NOMEM, "collector %s: no room for more than %d added collectors",
                       c->name ? c->name : "(unnamed)", MAX_ADDED);
        goto out;
    }
    added[n] = c;
    atomic_store_explicit(&n_added, n + 1, memory_order_release);
out:
    pthread_mutex_unlock(&add_lock);
    return st;
}

const aip__collector *aip__collector_each(size_t *i)
{
    size_t built = 0;
    while (aip__collectors[built])
        built++;
    if (*i < built)
        return aip__collectors[(*i)++];
    size_t k = *i - built;
    if (k >= atomic_load_explicit(&n_added, memory_order_acquire))
        return NULL;
    (*i)++;
    return added[k];
}

void aip__collectors_session_started(const aip_config *cfg)
{
    size_t i = 0;
    for (const aip__collector *c; (c = aip__collector_each(&i));)
        if (c->session_started && c->wanted && c->wanted(cfg))
            c->session_started(cfg);
}

void aip__collectors_trace_started(const aip_config *cfg)
{
    size_t i = 0;
    for (const aip__collector *c; (c = aip__collector_each(&i));) {
        int on = c->wanted && c->wanted(cfg); /* a collector may have a stop only */
        if (i - 1 < MAX_STARTED)
            started[i - 1] = (unsigned char)on;
        if (on && c->start)
            c->start(cfg);
    }
    aip__dev_trace_started(aip__dev_wanted(cfg));
}

/* In reverse: the host collectors stop before the device back ends, which
 * wait (boundedly) for the device times still owed. */
void aip__collectors_trace_stopping(void)
{
    size_t n = 0;
    while (aip__collector_each(&n))
        ;
    for (size_t k = n < MAX_STARTED ? n : MAX_STARTED; k-- > 0;) {
        size_t i = k;
        const aip__collector *c = aip__collector_each(&i);
        if (started[k] && c->stop)
            c->stop();
        started[k] = 0;
    }
    aip__dev_trace_stopping();
}

const char *aip__collector_backend_name(uint8_t backend)
{
    if (!backend)
        return "none";
    size_t i = 0;
    for (const aip__collector *c; (c = aip__collector_each(&i));)
        if (c->backend == backend)
            return c->name;
    return NULL;
}

/* ---- fork (fork_handlers.h) ------------------------------------------ */

static void fork_child(void)
{
    size_t i = 0;
    for (const aip__collector *c; (c = aip__collector_each(&i));)
        if (c->fork_child)
            c->fork_child();
    for (size_t k = 0; k < MAX_STARTED; k++)
        started[k] = 0; /* the parent's trace is the parent's */
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_COLLECTORS, NULL, NULL, fork_child);
}

/* ---- injection (aiprof_integration.h) -------------------------------- */

const char *aip_injection_var(size_t n, const char **off)
{
    size_t i = 0;
    for (const aip__collector *c; (c = aip__collector_each(&i));) {
        if (!c->inject_var || n--)
            continue;
        if (off)
            *off = c->inject_off;
        return c->inject_var;
    }
    if (off)
        *off = NULL;
    return NULL;
}
