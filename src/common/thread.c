/*
 * thread.c — starting aiprof's threads with asynchronous signals blocked
 * (thread.h says why).
 */
#include "thread.h"

#include <signal.h>

int aip__thread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                       void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (unsigned i = 0; i < sizeof synchronous / sizeof *synchronous; i++)
        sigdelset(&all, synchronous[i]);
    int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
    int rc = pthread_create(th, attr, fn, arg);
    if (masked)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
