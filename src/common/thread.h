/*
 * thread.h — the one way libaiprof and its tools start a thread.
 *
 * A process-directed signal (kill, Ctrl-C, a job scheduler's SIGTERM) goes
 * to any thread that does not block it.  A program that blocks SIGTERM in
 * all its threads and takes it with sigwait or a signalfd would otherwise
 * have it delivered to one of ours, whose default action ends the process
 * (issue 27, defect 4).  So every thread aiprof starts blocks every
 * asynchronous signal from its first instruction: the mask is set around
 * pthread_create, which the new thread inherits, and the caller's mask is
 * restored.  The synchronous ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS: faults of the thread itself) stay as they were.
 */
#ifndef AIP_THREAD_H
#define AIP_THREAD_H

#include <pthread.h>

/* aip__thread_create() : pthread_create with every asynchronous signal
 * blocked in the new thread.  @return pthread_create's. */
int aip__thread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                       void *arg);

/* aip__cpus_usable() : the CPUs this process may run on (its affinity
 * mask: taskset, a container's cpuset), at least 1; the number online when
 * the mask cannot be read.  Sizes the analysis's worker pools: more
 * workers than usable CPUs only take turns. */
int aip__cpus_usable(void);

#endif
