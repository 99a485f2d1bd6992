/*
 * osrt_wrap.c — the wrappers the patched GOT entries lead to, and the OSRT
 * record each one writes (raw format 1.5, docs/RAW_FORMAT.md).
 *
 * A wrapper calls the real function through the pointer osrt_resolve.c
 * found (aip__osrt_funcs[i].real) and, while recording is on, times it with the
 * recorder's tick clock.  A call at least aip__osrt_threshold_ticks long
 * becomes one OSRT record on the calling thread: function, start, end,
 * return value and, for a failed call, its error.  The program sees
 * exactly what the real function did: the return value is passed through
 * and errno is saved before recording and restored after it.
 *
 * A wrapper may run in a signal handler that interrupted its own thread
 * anywhere, the recorder included (issue 27, defect 5: a SIGALRM handler
 * that writes).  Recording then would write over a record the thread was
 * making, or wait for the pool lock the thread holds, forever.  So a call
 * made while the thread is inside the recorder (recorder.h:
 * aip__tls_may_record(), or this file's own record under way) is not
 * recorded: it is counted as a dropped event of the thread, and in
 * aip__osrt_skipped for the trace log.  Everything else a recording call
 * needs is free of locks the program could hold: the thread state and
 * buffers are mapped, not malloc'd (buffers.c).
 * While recording is off the cost is one load and a branch.
 */
#include "osrt_int.h"
#include "clock.h"
#include "intern.h"
#include "recorder.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#define UNLIKELY(x) __builtin_expect(!!(x), 0)

aip__osrt_func aip__osrt_funcs[AIP_OSRT_N];
_Atomic int aip__osrt_on;
uint64_t aip__osrt_threshold_ticks;
_Atomic uint64_t aip__osrt_recorded;
_Atomic uint64_t aip__osrt_skipped;

/* This file's record under way on the thread (see the file comment). */
static __thread uint8_t in_record __attribute__((tls_model("initial-exec")));

static inline uint64_t osrt_begin(void)
{
    if (__builtin_expect(!atomic_load_explicit(&aip__osrt_on, memory_order_relaxed), 1))
        return 0;
    return aip__ticks();
}

/* A call that may not be recorded here: a dropped event of the thread's
 * trace (when the thread is attached to the open one) and a skipped call. */
static __attribute__((noinline, cold)) void osrt_skip(void)
{
    atomic_fetch_add_explicit(&aip__osrt_skipped, 1, memory_order_relaxed);
    uint32_t g = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    aip__tstate *t = aip__tls;
    if (g && t && t->gen == g)
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
}

static void osrt_record(int fn, uint64_t start, uint64_t end, int64_t result, int failed,
                        int error)
{
    if (UNLIKELY(in_record || !aip__tls_may_record())) {
        osrt_skip();
        return;
    }
    in_record = 1;
    aip__signal_fence();
    aip__tstate *t = aip__current();
    if (t) {
        aip__rec_osrt *r = aip__reserve(t, sizeof *r);
        if (r) {
            aip__rec_set_header(&r->h, AIP_REC_OSRT, failed ? AIP_OSRTF_FAILED : 0, sizeof *r,
                                aip__osrt_funcs[fn].name_id);
            r->start = start;
            r->end = end;
            r->result = result;
            r->error = failed ? error : 0;
            r->reserved = 0;
            aip__commit(t, sizeof *r);
            atomic_fetch_add_explicit(&aip__osrt_recorded, 1, memory_order_relaxed);
        }
    }
    aip__signal_fence();
    in_record = 0;
}

/* After the real call: errno as the call left it is the program's; it is
 * read first and put back last, whatever recording did to it. */
static inline void osrt_end(int fn, uint64_t start, int64_t result, int failed, int rc_error)
{
    int saved = errno;
    uint64_t end = aip__ticks();
    if (end - start >= aip__osrt_threshold_ticks)
        osrt_record(fn, start, end, result, failed, rc_error ? rc_error : saved);
    errno = saved;
}

#define FAILED_ERRNO(r) ((r) == -1)
#define FAILED_RC(r) ((r) != 0)
#define FAILED_PTR(r) ((r) == MAP_FAILED)
#define FAILED_NONE(r) ((void)(r), 0)
#define RCERR_ERRNO(r) 0
#define RCERR_RC(r) ((int)(r))
#define RCERR_PTR(r) 0
#define RCERR_NONE(r) 0
#define AS_I64_ERRNO(r) ((int64_t)(r))
#define AS_I64_RC(r) ((int64_t)(r))
#define AS_I64_PTR(r) ((int64_t)(intptr_t)(r))
#define AS_I64_NONE(r) ((int64_t)(r))

#define AIP_OSRT_WRAPPER(F, ret, params, args, fail)                                           \
    typedef ret(*F##_fn) params;                                                               \
    static ret w_##F params                                                                    \
    {                                                                                          \
        uint64_t t0_ = osrt_begin();                                                           \
        ret res_ = ((F##_fn)aip__osrt_funcs[AIP_OSRT_F_##F].real) args;                        \
        if (UNLIKELY(t0_))                                                                     \
            osrt_end(AIP_OSRT_F_##F, t0_, AS_I64_##fail(res_), FAILED_##fail(res_),            \
                     RCERR_##fail(res_));                                                      \
        return res_;                                                                           \
    }
AIP_OSRT_FUNCS(AIP_OSRT_WRAPPER)
#undef AIP_OSRT_WRAPPER

/* A lock taken at once never blocked: the first try (trylock, which takes
 * a free mutex exactly as lock does) keeps the uncontended case at the
 * cost of the real call, and only a lock that has to wait is timed.  Any
 * answer but EBUSY is final (an error-checking mutex the caller holds:
 * EBUSY, then lock says EDEADLK as it would have). */
typedef int (*mutex_fn)(pthread_mutex_t *);
static int w_pthread_mutex_lock(pthread_mutex_t *m)
{
    if (__builtin_expect(!atomic_load_explicit(&aip__osrt_on, memory_order_relaxed), 1))
        return ((mutex_fn)aip__osrt_funcs[AIP_OSRT_F_pthread_mutex_lock].real)(m);
    int r = ((mutex_fn)aip__osrt_funcs[AIP_OSRT_F_pthread_mutex_trylock].real)(m);
    if (r != EBUSY)
        return r;
    uint64_t t0 = aip__ticks();
    r = ((mutex_fn)aip__osrt_funcs[AIP_OSRT_F_pthread_mutex_lock].real)(m);
    osrt_end(AIP_OSRT_F_pthread_mutex_lock, t0, r, r != 0, r);
    return r;
}

/* open and openat take a mode only when they create a file: reading a
 * third (fourth) variadic argument that was not passed is undefined. */
static int needs_mode(int flags)
{
#ifdef O_TMPFILE
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return 1;
#endif
    return (flags & O_CREAT) != 0;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

static int do_open(int fn, const char *path, int flags, mode_t mode)
{
    uint64_t t0 = osrt_begin();
    open_fn real = (open_fn)aip__osrt_funcs[fn].real;
    int r = needs_mode(flags) ? real(path, flags, mode) : real(path, flags);
    if (UNLIKELY(t0))
        osrt_end(fn, t0, r, r == -1, 0);
    return r;
}

static int do_openat(int fn, int dir, const char *path, int flags, mode_t mode)
{
    uint64_t t0 = osrt_begin();
    openat_fn real = (openat_fn)aip__osrt_funcs[fn].real;
    int r = needs_mode(flags) ? real(dir, path, flags, mode) : real(dir, path, flags);
    if (UNLIKELY(t0))
        osrt_end(fn, t0, r, r == -1, 0);
    return r;
}

#define VA_MODE(flags, last, mode)                                                             \
    mode_t mode = 0;                                                                           \
    if (needs_mode(flags)) {                                                                   \
        va_list ap;                                                                            \
        va_start(ap, last);                                                                    \
        mode = (mode_t)va_arg(ap, int);                                                        \
        va_end(ap);                                                                            \
    }

static int w_open(const char *path, int flags, ...)
{
    VA_MODE(flags, flags, mode)
    return do_open(AIP_OSRT_F_open, path, flags, mode);
}

static int w_open64(const char *path, int flags, ...)
{
    VA_MODE(flags, flags, mode)
    return do_open(AIP_OSRT_F_open64, path, flags, mode);
}

static int w_openat(int dir, const char *path, int flags, ...)
{
    VA_MODE(flags, flags, mode)
    return do_openat(AIP_OSRT_F_openat, dir, path, flags, mode);
}

static int w_openat64(int dir, const char *path, int flags, ...)
{
    VA_MODE(flags, flags, mode)
    return do_openat(AIP_OSRT_F_openat64, dir, path, flags, mode);
}

/* dlopen: the objects it brings in get their GOT entries patched while
 * recording is on (a Python extension imported mid-trace). */
typedef void *(*dlopen_fn)(const char *, int);
static void *w_dlopen(const char *file, int mode)
{
    void *h = ((dlopen_fn)aip__osrt_funcs[AIP_OSRT_F_dlopen].real)(file, mode);
    if (h && atomic_load_explicit(&aip__osrt_on, memory_order_relaxed)) {
        int saved = errno;
        aip__osrt_after_dlopen();
        errno = saved;
    }
    return h;
}

void aip__osrt_table_init(void)
{
#define AIP_OSRT_ENTRY(F, ret, params, args, fail)                                             \
    aip__osrt_funcs[AIP_OSRT_F_##F].name = #F;                                                 \
    aip__osrt_funcs[AIP_OSRT_F_##F].wrapper = (void *)w_##F;
    AIP_OSRT_FUNCS(AIP_OSRT_ENTRY)
#undef AIP_OSRT_ENTRY
    aip__osrt_funcs[AIP_OSRT_F_pthread_mutex_lock] =
        (aip__osrt_func){"pthread_mutex_lock", (void *)w_pthread_mutex_lock, NULL, NULL, 0};
    /* looked up for the lock wrapper, never patched (no wrapper) */
    aip__osrt_funcs[AIP_OSRT_F_pthread_mutex_trylock] =
        (aip__osrt_func){"pthread_mutex_trylock", NULL, NULL, NULL, 0};
    aip__osrt_funcs[AIP_OSRT_F_open] = (aip__osrt_func){"open", (void *)w_open, NULL, NULL, 0};
    aip__osrt_funcs[AIP_OSRT_F_open64] = (aip__osrt_func){"open64", (void *)w_open64, NULL, NULL, 0};
    aip__osrt_funcs[AIP_OSRT_F_openat] = (aip__osrt_func){"openat", (void *)w_openat, NULL, NULL, 0};
    aip__osrt_funcs[AIP_OSRT_F_openat64] =
        (aip__osrt_func){"openat64", (void *)w_openat64, NULL, NULL, 0};
    aip__osrt_funcs[AIP_OSRT_F_dlopen] = (aip__osrt_func){"dlopen", (void *)w_dlopen, NULL, NULL, 0};
    for (int i = 0; i < AIP_OSRT_N; i++) {
        aip__osrt_funcs[i].real =
            aip__osrt_resolve(aip__osrt_funcs[i].name, &aip__osrt_funcs[i].canonical);
        aip__osrt_funcs[i].name_id =
            aip__intern_n(aip__osrt_funcs[i].name, strlen(aip__osrt_funcs[i].name));
    }
}
