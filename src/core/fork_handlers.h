/*
 * fork_handlers.h — the library's one pthread_atfork(), shared by the
 * subsystems that hold locks or per-process state.
 *
 * A fork() in a recording program must find no library lock held by a
 * thread that does not exist in the child, and the child must let go of
 * what is its parent's (the active session, the trace log, the raw file,
 * the recording threads).  Each subsystem registers its own handlers in a
 * slot of its own; the slots are the library's lock order:
 *
 *   prepare runs slot by slot upward (locks are taken in lock order),
 *   parent and child run downward (released in reverse),
 *
 * so that the forking thread takes every lock the way any other thread
 * does and cannot deadlock against one.  Subsystems register from a load-time
 * constructor, so the table is complete once the library is loaded and
 * never changes after; the handlers become active when the recorder is first
 * set up (aip__fork_install(), from aip__recorder_init()), as they always did.
 */
#ifndef AIP_FORK_HANDLERS_H
#define AIP_FORK_HANDLERS_H

/* In lock order: a thread holding the lock of one slot may take the lock of
 * a later slot, never of an earlier one. */
typedef enum aip__fork_slot {
    AIP_FORK_COLLECTORS, /* collectors.c: no lock; each collector's fork_child
                          * (collector.h), last in the child, after the core
                          * let go of the parent's trace */
    AIP_FORK_PARK,     /* writer.c: park lock; a writer thread parked between traces
                        * ends before the fork, so the child's process is as
                        * single-threaded as the program left it */
    AIP_FORK_SESSION,  /* session.c: session lock; the child forgets the active session */
    AIP_FORK_META,     /* session_info.c: metadata lock (held while the file is written,
                        * which may log) */
    AIP_FORK_LOG,      /* session_log.c: log lock; the child closes the parent's trace log */
    AIP_FORK_DOMAIN,   /* domain_filter.c: filter lock */
    AIP_FORK_DEVICE,   /* record_device.c: device/queue registry lock (interns under it) */
    AIP_FORK_COMM,     /* record_comm.c: communication group registry lock (interns under it) */
    AIP_FORK_STRINGS,  /* intern.c: string table lock */
    AIP_FORK_POOL,     /* buffers.c: pool lock; the child stops recording */
    AIP_FORK_WRITER,   /* writer.c: no lock; the child drops the parent's raw file
                        * (runs while the pool lock is still held) */
    AIP_FORK_SLOTS
} aip__fork_slot;

/* aip__fork_register() : set the handlers of `slot` (any may be NULL).
 * From load-time constructors only: fork() reads the table without a lock. */
void aip__fork_register(aip__fork_slot slot, void (*prepare)(void), void (*parent)(void),
                        void (*child)(void));

/* aip__fork_install() : install the pthread_atfork() handlers that run the
 * slots; idempotent. */
void aip__fork_install(void);

#endif
