/*
 * buffers.c — per-thread recording state and the bounded buffer pool.
 *
 * See recorder.h for the concurrency contract.  Locks are taken once per
 * 512 KiB buffer, never per event; when the pool is exhausted the drop path
 * is lock-free (it reads `obtainable`).
 */
#include "recorder_int.h"
#include "clock.h"
#include "fork_handlers.h"
#include "error.h"
#include "intern.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

uint32_t aip_recording_generation;
uint32_t aip__rec_mask_v;
__thread aip__tstate *aip__tls __attribute__((tls_model("initial-exec")));
__thread uint8_t aip__tls_writing __attribute__((tls_model("initial-exec")));
__thread uint32_t aip__tls_inside __attribute__((tls_model("initial-exec")));

aip__pool aip__pool_state = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};
static aip__pool *const pool = &aip__pool_state;

static pthread_key_t tls_key;
static void queue_buffer(aip__buf *b, uint64_t tid, uint32_t gen, uint32_t start);
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

void aip__pool_lock(void)
{
    aip__tls_inside++;
    aip__signal_fence();
    pthread_mutex_lock(&pool->lock);
}

void aip__pool_unlock(void)
{
    pthread_mutex_unlock(&pool->lock);
    aip__signal_fence();
    aip__tls_inside--;
}

/* Buffers and thread states are mapped, not malloc'd: a thread's first
 * record, or a buffer swap, may run in a signal handler (an OSRT wrapper
 * the handler calls) that interrupted the program inside malloc, whose
 * lock the thread then holds.  mmap takes none.  Page-aligned, so the 64
 * bytes their types ask for hold. */
static void *map_zeroed(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

#define BUF_MAP_BYTES (sizeof(aip__buf) + AIP_BUF_BYTES)

aip__buf *aip__buf_new(void)
{
    aip__buf *b = map_zeroed(BUF_MAP_BYTES);
    if (b) {
        b->next = NULL;
        atomic_init(&b->used, 0);
    }
    return b;
}

void aip__buf_free(aip__buf *b)
{
    if (b)
        munmap(b, BUF_MAP_BYTES);
}

static void set_obtainable(void)
{
    uint32_t n = pool->n_free;
    n += pool->max_bufs > pool->allocated ? pool->max_bufs - pool->allocated : 0;
    atomic_store_explicit(&pool->obtainable, n, memory_order_relaxed);
}

void aip__pool_release(aip__buf *list)
{
    while (list) {
        aip__buf *next = list->next;
        if (pool->allocated > pool->max_bufs) { /* cap lowered, or stop-time copies */
            aip__buf_free(list);
            pool->allocated--;
        } else {
            list->next = pool->free_list;
            pool->free_list = list;
            pool->n_free++;
        }
        list = next;
    }
    set_obtainable();
}

static void aip__pool_release_one(aip__buf *b)
{
    b->next = NULL;
    aip__pool_release(b);
}

/* `n` bytes of records of thread `tid` queued for the writer in a buffer of
 * their own: copies live outside the cap and are freed once written.
 * False when no memory is left. */
static int queue_copy(uint64_t tid, const uint8_t *data, size_t n)
{
    aip__buf *copy = aip__buf_new();
    if (!copy)
        return 0;
    pool->allocated++;
    memcpy(copy->data, data, n);
    atomic_store_explicit(&copy->used, (uint32_t)n, memory_order_relaxed);
    queue_buffer(copy, tid, pool->gen, 0);
    return 1;
}

void aip__snapshot_threads(int final, uint64_t *unbalanced)
{
    for (aip__tstate *t = pool->threads; t; t = t->next) {
        if (t->gen != pool->gen)
            continue;
        aip__tid_stats *st = NULL;
        if (final) {
            st = aip__stats_for(t->tid);
            if (st)
                st->dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);
            if (unbalanced)
                *unbalanced += atomic_load_explicit(&t->unbalanced, memory_order_relaxed);
        }
        if (!t->buf)
            continue;
        uint32_t used = atomic_load_explicit(&t->buf->used, memory_order_acquire);
        if (used <= t->flushed)
            continue;
        if (queue_copy(t->tid, t->buf->data + t->flushed, used - t->flushed))
            t->flushed = used; /* else retried at the next snapshot; at stop it is lost */
    }
}

/* Python calls still running on any thread when the trace stops end at
 * the stop, as torch ends its open python_function events: their children
 * then keep an existing parent.  Each thread's closing records go out as a
 * chunk of its own, ahead of its last snapshot (pool lock held). */
static void close_thread_pyfuncs(aip__tstate *t, uint64_t end)
{
    static uint8_t records[AIP_STACK_DEPTH * sizeof(aip__rec_pyfunc)]; /* pool lock held */
    if (!__atomic_load_n(&t->py_depth, __ATOMIC_ACQUIRE))
        return;
    size_t n = aip__pyfunc_close_open(t, end, records, sizeof records);
    queue_copy(t->tid, records, n); /* no memory: those calls stay open, as before */
}

static void close_open_pyfuncs(void)
{
    uint64_t end = aip__ticks();
    for (aip__tstate *t = pool->threads; t; t = t->next)
        if (t->gen == pool->gen)
            close_thread_pyfuncs(t, end);
}

static aip__buf *pool_get(void)
{
    aip__buf *b = pool->free_list;
    if (b) {
        pool->free_list = b->next;
        pool->n_free--;
    } else if (pool->allocated < pool->max_bufs) {
        b = aip__buf_new();
        if (b)
            pool->allocated++;
    }
    /* Reset under the lock: once it is t->buf, a snapshot may read `used`. */
    if (b)
        atomic_store_explicit(&b->used, 0, memory_order_relaxed);
    set_obtainable();
    return b;
}

aip__tid_stats *aip__stats_for(uint64_t tid)
{
    for (size_t i = 0; i < pool->nstats; i++)
        if (pool->stats[i].tid == tid)
            return &pool->stats[i];
    if (pool->nstats == pool->capstats) {
        size_t cap = pool->capstats ? pool->capstats * 2 : 16;
        aip__tid_stats *s = realloc(pool->stats, cap * sizeof *s);
        if (!s)
            return NULL;
        pool->stats = s;
        pool->capstats = cap;
    }
    aip__tid_stats *s = &pool->stats[pool->nstats++];
    s->tid = tid;
    s->recorded = s->dropped = 0;
    return s;
}

int aip__trace_accepting(uint32_t gen)
{
    return pool->open && !pool->stop_requested && pool->gen == gen;
}

static void queue_buffer(aip__buf *b, uint64_t tid, uint32_t gen, uint32_t start)
{
    b->start = start;
    b->tid = tid;
    b->gen = gen;
    b->next = pool->queue;
    pool->queue = b;
    pthread_cond_signal(&pool->wake);
}

/* Thread exit: hand a partial buffer of the open trace to the writer (no
 * late write can race: the thread is gone), fold counters, unregister.
 * Python calls still open end here: the calls replayed when the thread was
 * first seen (threading.py _bootstrap ...) return unseen in eval-frame
 * mode, and would otherwise be lost with the thread. */
static void thread_exit(void *arg)
{
    aip__tstate *t = arg;
    aip__pool_lock();
    if (t->registry_epoch == pool->registry_epoch) {
        for (aip__tstate **pp = &pool->threads; *pp; pp = &(*pp)->next)
            if (*pp == t) {
                *pp = t->next;
                break;
            }
        if (aip__trace_accepting(t->gen)) {
            aip__tid_stats *s = aip__stats_for(t->tid);
            if (s)
                s->dropped += atomic_load(&t->dropped);
            close_thread_pyfuncs(t, aip__ticks());
            if (t->buf && atomic_load(&t->buf->used) > t->flushed) {
                queue_buffer(t->buf, t->tid, t->gen, t->flushed);
                t->buf = NULL;
            }
        }
        if (t->buf) {
            t->buf->next = NULL;
            aip__pool_release(t->buf);
        }
    } else {
        aip__buf_free(t->buf); /* inherited over fork, never accounted in this process */
    }
    aip__pool_unlock();
    aip__tls = NULL;
    munmap(t, sizeof *t);
}

/* fork(): the pool lock is the last library lock the forking thread takes
 * (fork_handlers.h), so that no other thread holds it at the fork. */
static void fork_prepare(void) { aip__pool_lock(); }
static void fork_parent(void) { aip__pool_unlock(); }

/* The child has only the forking thread: the writer and all other threads
 * are gone.  It must not append to the parent's raw file, so recording stops
 * here; the child may start a session of its own. */
static void fork_child(void)
{
    /* The writer thread does not exist here; nobody waits on pool->wake. */
    pthread_cond_init(&pool->wake, NULL);
    __atomic_store_n(&aip_recording_generation, 0, __ATOMIC_RELEASE);
    pool->open = 0;
    pool->gen = 0;
    pool->threads = NULL;
    pool->registry_epoch++;
    /* Queued buffers are the parent's data: in the child they are just
     * memory, recycled into the free list. */
    while (pool->queue) {
        aip__buf *b = pool->queue;
        pool->queue = b->next;
        b->next = pool->free_list;
        pool->free_list = b;
        pool->n_free++;
    }
    pool->stop_requested = 0;
    pool->allocated = pool->n_free;
    set_obtainable();
    aip__pool_unlock();
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_POOL, fork_prepare, fork_parent, fork_child);
}

static void init_once_fn(void)
{
    aip__clock_init();
    pthread_key_create(&tls_key, thread_exit);
    aip__fork_install();
}

void aip__recorder_init(void) { pthread_once(&init_once, init_once_fn); }

/* The thread's name at the start of its buffer space (a fresh buffer, so
 * it fits). */
static void emit_thread_name(aip__tstate *t)
{
    if (!t->thread_name || !t->buf)
        return;
    aip__rec_thread_name *r = (aip__rec_thread_name *)t->pos;
    if (t->pos + sizeof *r > t->end)
        return;
    uint8_t writing = aip__tls_writing; /* the caller's reserve, if any, stays open */
    aip__tls_writing = 1;
    aip__signal_fence();
    r->h.kind = AIP_REC_THREAD_NAME;
    r->h.flags = 0;
    r->h.size = sizeof *r;
    r->h.name = t->thread_name;
    r->ts = aip__ticks();
    aip__publish(t, sizeof *r);
    aip__signal_fence();
    aip__tls_writing = writing;
}

aip__tstate *aip__tls_state(void)
{
    aip__tstate *t = aip__tls;
    if (!t) {
        aip__tls_inside++;
        aip__signal_fence();
        aip__recorder_init();
        /* Mapped (see map_zeroed), zeroed, page-aligned: each open op's
         * frame is one cache line. */
        t = map_zeroed(sizeof *t);
        if (t) {
            t->tid = (uint64_t)syscall(SYS_gettid);
            t->registry_epoch = (uint32_t)-1;
            aip__tls = t;
            pthread_setspecific(tls_key, t);
        }
        aip__signal_fence();
        aip__tls_inside--;
    }
    return t;
}

aip__tstate *aip__attach(uint32_t gen)
{
    aip__tstate *t = aip__tls_state();
    if (!t)
        return NULL;
    aip__pool_lock();
    if (t->registry_epoch != pool->registry_epoch) {
        if (t->registry_epoch != (uint32_t)-1) { /* state inherited over fork */
            aip__buf_free(t->buf);
            t->buf = NULL;
            t->tid = (uint64_t)syscall(SYS_gettid);
        }
        t->registry_epoch = pool->registry_epoch;
        t->next = pool->threads;
        pool->threads = t;
    }
    if (!aip__trace_accepting(gen)) { /* the trace ended meanwhile */
        aip__pool_unlock();
        return NULL;
    }
    /* Fresh start for this trace: whatever the buffer holds was already
     * copied by the previous trace's stopper (or is a late, lost write). */
    t->gen = gen;
    t->flushed = 0;
    t->ann_depth = t->range_depth = t->op_depth = t->py_depth = 0;
    t->ann_pushed = t->range_pushed = t->op_pushed = t->py_pushed = 0;
    atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
    atomic_store_explicit(&t->unbalanced, 0, memory_order_relaxed);
    if (!t->buf)
        t->buf = pool_get();
    /* No buffer at the cap: the name is owed, counted as dropped until the
     * thread gets a buffer and sends it then (aip__reserve_slow). */
    t->name_pending = 0;
    if (t->buf) {
        atomic_store_explicit(&t->buf->used, 0, memory_order_relaxed);
        t->pos = t->buf->data;
        t->end = t->buf->data + AIP_BUF_BYTES;
    } else {
        t->pos = t->end = NULL;
        if (t->thread_name) {
            t->name_pending = 1;
            atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        }
    }
    aip__pool_unlock();
    emit_thread_name(t);
    return t;
}

void *aip__reserve_slow_as(aip__tstate *t, size_t n, int meta)
{
    uint64_t drop = meta ? 0 : 1;
    /* Lock-free drop path while the pool is exhausted.  A thread holding a
     * full buffer always takes the lock once to hand it to the writer,
     * otherwise full buffers could sit in threads while everyone drops. */
    if (!t->buf && !atomic_load_explicit(&pool->obtainable, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&t->dropped, drop, memory_order_relaxed);
        aip__tls_writing = 0;
        return NULL;
    }
    aip__pool_lock();
    if (!aip__trace_accepting(t->gen)) {
        aip__pool_unlock();
        aip__tls_writing = 0;
        return NULL; /* a late write after the trace ended: not part of it */
    }
    if (t->buf) {
        if (atomic_load_explicit(&t->buf->used, memory_order_relaxed) > t->flushed)
            queue_buffer(t->buf, t->tid, t->gen, t->flushed);
        else
            aip__pool_release_one(t->buf);
        t->buf = NULL;
        t->flushed = 0;
    }
    if (!t->buf)
        t->buf = pool_get();
    int resend = t->buf && t->name_pending;
    if (resend) { /* under the lock: the stopper has not folded `dropped` yet */
        t->name_pending = 0;
        atomic_fetch_sub_explicit(&t->dropped, 1, memory_order_relaxed);
    }
    aip__pool_unlock();
    if (!t->buf) {
        t->pos = t->end = NULL;
        atomic_fetch_add_explicit(&t->dropped, drop, memory_order_relaxed);
        aip__tls_writing = 0;
        return NULL;
    }
    t->pos = t->buf->data;
    t->end = t->buf->data + AIP_BUF_BYTES;
    if (resend)
        emit_thread_name(t);
    return t->pos;
}

aip_status aip__recorder_begin(const aip__trace_info *info, aip__clock_pair *start)
{
    aip__recorder_init();
    aip__pool_lock();
    if (pool->open) {
        aip__pool_unlock();
        return aip__fail(AIP_ERR_STATE, "a trace is already being recorded");
    }
    uint32_t want = (uint32_t)(info->cap_bytes / AIP_BUF_BYTES);
    pool->max_bufs = want < 4 ? 4 : want;
    /* A smaller cap than the last trace's: free what it left beyond it. */
    while (pool->allocated > pool->max_bufs && pool->free_list) {
        aip__buf *b = pool->free_list;
        pool->free_list = b->next;
        pool->n_free--;
        pool->allocated--;
        aip__buf_free(b);
    }
    pool->nstats = 0;
    pool->stop_requested = 0;
    set_obtainable();
    aip__pool_unlock();

    aip_status s = aip__writer_start(info, start);
    if (s)
        return s;

    aip__pool_lock();
    pool->next_gen = pool->next_gen + 1 ? pool->next_gen + 1 : 1;
    pool->gen = pool->next_gen;
    pool->open = 1;
    __atomic_store_n(&aip__rec_mask_v, info->rec_mask, __ATOMIC_RELAXED);
    __atomic_store_n(&aip_recording_generation, pool->gen, __ATOMIC_RELEASE);
    aip__pool_unlock();
    return AIP_OK;
}

aip_status aip__recorder_end(aip__trace_totals *totals)
{
    memset(totals, 0, sizeof *totals);
    aip__pool_lock();
    if (!pool->open) {
        aip__pool_unlock();
        return aip__fail(AIP_ERR_STATE, "no trace is being recorded");
    }
    __atomic_store_n(&aip_recording_generation, 0, __ATOMIC_RELEASE);
    close_open_pyfuncs();
    aip__snapshot_threads(1, &totals->unbalanced);
    pool->stop_requested = 1;
    pthread_cond_signal(&pool->wake);
    aip__pool_unlock();

    aip_status s = aip__writer_finish(totals);

    aip__pool_lock();
    pool->open = 0;
    pool->gen = 0;
    aip__pool_unlock();
    return s;
}

uint64_t aip__recorder_live_dropped(void)
{
    uint64_t n = 0;
    aip__pool_lock();
    if (pool->open) {
        for (size_t i = 0; i < pool->nstats; i++)
            n += pool->stats[i].dropped;
        if (!pool->stop_requested)
            for (aip__tstate *t = pool->threads; t; t = t->next)
                if (t->gen == pool->gen)
                    n += atomic_load_explicit(&t->dropped, memory_order_relaxed);
    }
    aip__pool_unlock();
    return n;
}
