/*
 * osrt_int.h — what the OS runtime collector's files share (osrt_wrap.c:
 * the wrappers and their records; osrt_got.c: finding and rewriting the
 * GOT entries that lead to the real functions; osrt_control.c: turning it
 * on and off with the trace).  docs/OSRT.md tells the whole story.
 *
 * The functions are listed once, below, as an X-macro: name, return type,
 * parameter list, argument list and how the function reports failure
 * (ERRNO: -1 and errno; RC: a returned error number, errno untouched; PTR:
 * MAP_FAILED and errno; NONE: it cannot fail).  The functions that need
 * hand-written wrappers (pthread_mutex_lock, the variadic open family,
 * dlopen) are not in it.
 */
#ifndef AIP_OSRT_INT_H
#define AIP_OSRT_INT_H

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define AIP_OSRT_FUNCS(X)                                                                      \
    X(read, ssize_t, (int fd, void *b, size_t n), (fd, b, n), ERRNO)                           \
    X(write, ssize_t, (int fd, const void *b, size_t n), (fd, b, n), ERRNO)                    \
    X(pread, ssize_t, (int fd, void *b, size_t n, off_t o), (fd, b, n, o), ERRNO)              \
    X(pread64, ssize_t, (int fd, void *b, size_t n, off64_t o), (fd, b, n, o), ERRNO)          \
    X(pwrite, ssize_t, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o), ERRNO)       \
    X(pwrite64, ssize_t, (int fd, const void *b, size_t n, off64_t o), (fd, b, n, o), ERRNO)   \
    X(readv, ssize_t, (int fd, const struct iovec *v, int n), (fd, v, n), ERRNO)               \
    X(writev, ssize_t, (int fd, const struct iovec *v, int n), (fd, v, n), ERRNO)              \
    X(__read_chk, ssize_t, (int fd, void *b, size_t n, size_t cap), (fd, b, n, cap), ERRNO)    \
    X(close, int, (int fd), (fd), ERRNO)                                                       \
    X(poll, int, (struct pollfd *f, nfds_t n, int t), (f, n, t), ERRNO)                        \
    X(ppoll, int, (struct pollfd *f, nfds_t n, const struct timespec *t, const sigset_t *m),   \
      (f, n, t, m), ERRNO)                                                                     \
    X(epoll_wait, int, (int e, struct epoll_event *v, int n, int t), (e, v, n, t), ERRNO)      \
    X(epoll_pwait, int, (int e, struct epoll_event *v, int n, int t, const sigset_t *m),       \
      (e, v, n, t, m), ERRNO)                                                                  \
    X(select, int, (int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *t),                \
      (n, r, w, x, t), ERRNO)                                                                  \
    X(pselect, int,                                                                            \
      (int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *t, const sigset_t *m),   \
      (n, r, w, x, t, m), ERRNO)                                                               \
    X(nanosleep, int, (const struct timespec *a, struct timespec *b), (a, b), ERRNO)           \
    X(clock_nanosleep, int, (clockid_t c, int f, const struct timespec *a, struct timespec *b),\
      (c, f, a, b), RC)                                                                        \
    X(usleep, int, (useconds_t u), (u), ERRNO)                                                 \
    X(sleep, unsigned, (unsigned s), (s), NONE)                                                \
    X(pthread_cond_wait, int, (pthread_cond_t *c, pthread_mutex_t *m), (c, m), RC)             \
    X(pthread_cond_timedwait, int,                                                             \
      (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t), (c, m, t), RC)        \
    X(pthread_join, int, (pthread_t t, void **r), (t, r), RC)                                  \
    X(sem_wait, int, (sem_t *s), (s), ERRNO)                                                   \
    X(sem_timedwait, int, (sem_t *s, const struct timespec *t), (s, t), ERRNO)                 \
    X(recv, ssize_t, (int s, void *b, size_t n, int f), (s, b, n, f), ERRNO)                   \
    X(recvfrom, ssize_t,                                                                       \
      (int s, void *b, size_t n, int f, struct sockaddr *a, socklen_t *l), (s, b, n, f, a, l), \
      ERRNO)                                                                                   \
    X(recvmsg, ssize_t, (int s, struct msghdr *m, int f), (s, m, f), ERRNO)                    \
    X(send, ssize_t, (int s, const void *b, size_t n, int f), (s, b, n, f), ERRNO)             \
    X(sendto, ssize_t,                                                                         \
      (int s, const void *b, size_t n, int f, const struct sockaddr *a, socklen_t l),          \
      (s, b, n, f, a, l), ERRNO)                                                               \
    X(sendmsg, ssize_t, (int s, const struct msghdr *m, int f), (s, m, f), ERRNO)              \
    X(accept, int, (int s, struct sockaddr *a, socklen_t *l), (s, a, l), ERRNO)                \
    X(accept4, int, (int s, struct sockaddr *a, socklen_t *l, int f), (s, a, l, f), ERRNO)     \
    X(connect, int, (int s, const struct sockaddr *a, socklen_t l), (s, a, l), ERRNO)          \
    X(mmap, void *, (void *a, size_t n, int p, int f, int fd, off_t o), (a, n, p, f, fd, o),   \
      PTR)                                                                                     \
    X(mmap64, void *, (void *a, size_t n, int p, int f, int fd, off64_t o),                    \
      (a, n, p, f, fd, o), PTR)                                                                \
    X(munmap, int, (void *a, size_t n), (a, n), ERRNO)                                         \
    X(fsync, int, (int fd), (fd), ERRNO)                                                       \
    X(fdatasync, int, (int fd), (fd), ERRNO)

/* Function indices: the X-macro's, then the hand-written wrappers. */
enum {
#define AIP_OSRT_ENUM(F, ret, params, args, fail) AIP_OSRT_F_##F,
    AIP_OSRT_FUNCS(AIP_OSRT_ENUM)
#undef AIP_OSRT_ENUM
    AIP_OSRT_F_pthread_mutex_lock,
    AIP_OSRT_F_pthread_mutex_trylock, /* not patched: the lock wrapper's first try */
    AIP_OSRT_F_open,
    AIP_OSRT_F_open64,
    AIP_OSRT_F_openat,
    AIP_OSRT_F_openat64,
    AIP_OSRT_F_dlopen,          /* not recorded: it patches the objects it loads */
    AIP_OSRT_N
};

/* One interceptable function: its symbol, our wrapper, the real one (the
 * definition an unpatched GOT entry leads to: osrt_resolve.c), the
 * program's canonical PLT entry when the program takes the function's
 * address (what every other object's entry then holds; NULL if none), and
 * its interned name. */
typedef struct aip__osrt_func {
    const char *name;
    void *wrapper;
    void *real;
    void *canonical;
    uint32_t name_id;
} aip__osrt_func;

extern aip__osrt_func aip__osrt_funcs[AIP_OSRT_N];

/* Recording is on: set after the GOT entries were patched, cleared before
 * they are restored.  The wrappers' only cost while off is its load. */
extern _Atomic int aip__osrt_on;
/* Calls shorter than this many ticks are not recorded. */
extern uint64_t aip__osrt_threshold_ticks;
/* Calls recorded, and calls that could not be (buffer full) — the latter
 * are also counted as dropped events by the recorder. */
extern _Atomic uint64_t aip__osrt_recorded;
/* Calls made while their thread was inside the recorder (a signal handler
 * that interrupted it), not recorded and counted as dropped events. */
extern _Atomic uint64_t aip__osrt_skipped;

/* osrt_wrap.c : fill aip__osrt_funcs' names and wrappers (once). */
void aip__osrt_table_init(void);

/* osrt_resolve.c : the definition of function `name` that its callers
 * reach, never a PLT entry (whose GOT slot may hold our wrapper); NULL if
 * none is found.  `*canonical` gets the program's PLT entry that dlsym
 * named instead, or NULL. */
void *aip__osrt_resolve(const char *name, void **canonical);

/* osrt_got.c : patch every loaded object's GOT entries of the functions
 * (objects already patched are skipped, so a dlopen can call it again);
 * restore every entry still holding a wrapper.  Both under the caller's
 * lock (osrt_control.c). */
typedef struct aip__osrt_patch_stats {
    size_t objects, slots, foreign;  /* objects and entries patched; entries left alone */
    size_t refused;                  /* objects whose GOT could not be made writable */
    int self_in_program;             /* libaiprof is linked into the program itself */
    int no_dynamic;                  /* nothing to patch: a statically linked program */
} aip__osrt_patch_stats;
void aip__osrt_patch_all(aip__osrt_patch_stats *st);
size_t aip__osrt_restore_all(void);

/* osrt_control.c : the dlopen wrapper's way to patch what it loaded. */
void aip__osrt_after_dlopen(void);

#endif
