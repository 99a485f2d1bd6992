/*
 * thread.c — starting aiprof's threads with asynchronous signals blocked
 * (thread.h says why), and how many CPUs they may use.
 */
#include "thread.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

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

int aip__cpus_usable(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
