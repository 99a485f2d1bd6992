/*
 * writer.c — the raw writer thread: one trace at a time, parked between them.
 *
 * Appends chunks to FRAMEWORK/aiprof_{pid}.raw (the format's writing side is
 * src/raw/raw_writer.c): header, INFO, CLOCK, then EVENTS chunks as buffers
 * fill, each preceded by the STRINGS it uses that the file lacks
 * (trace_strings.c), a periodic snapshot of partly filled buffers every
 * 100 ms (so a killed program loses at most that much), CLOCK sync points,
 * and STATS/CLOCK/END at stop.  A write error (disk full) is reported once,
 * and the events that could not be written are counted as dropped; the
 * file still ends at its last whole chunk and holds what fit of the
 * collected events.  The thread itself creates the file (and first runs
 * the trace's `prepare`, see aip__trace_info) when it first has something
 * to write: start() stays free of file-system calls, and a file that
 * cannot be created is that write error.
 *
 * The counters outlive a run that does not stop cleanly (SIGKILL, a full
 * disk, `ulimit -f`): a page-sized STATS chunk near the start of the file
 * (the "slot") is rewritten in place after every flush, which needs no new
 * disk space and cannot be torn by a kill (one page, one pwrite).  A size
 * limit (aip_config.max_raw_bytes, or RLIMIT_FSIZE) is enforced before it
 * is hit, keeping room for the closing chunks: recording then stops being
 * written, with a message, and what follows is counted as dropped.
 */
#include "thread.h"
#include "recorder_int.h"
#include "clock.h"
#include "error.h"
#include "fork_handlers.h"
#include "flight.h"
#include "fs.h"
#include "host_uid.h"
#include "intern.h"
#include "raw_writer.h"
#include "strbuild.h"
#include "trace_strings.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_INTERVAL_MS 100
#define PARK_POLL_MS 20
#define PARK_IDLE_MS 10000
#define STRINGS_CHUNK_BYTES (4u * 1024u * 1024u)
#define DEFER_BUFFERS 8 /* full buffers that may wait for the file (4 MiB) */
/* The STATS slot: one page, at a page-aligned offset. */
#define SLOT_BYTES 4096u
#define SLOT_PAYLOAD (SLOT_BYTES - AIP_CHUNK_HEADER_SIZE)
#define SLOT_ENTRIES ((SLOT_PAYLOAD - 8) / sizeof(aip__stats_entry))
/* Kept free under a size limit for the closing STATS, CLOCK and END (an
 * eighth of a smaller limit). */
#define LIMIT_HEADROOM (64u * 1024u)
#define HEADROOM (writer.limit / 8 < LIMIT_HEADROOM ? writer.limit / 8 : LIMIT_HEADROOM)

static aip__pool *const pool = &aip__pool_state;

typedef struct raw_writer {
    aip__raw_file file;
    int running;                /* a trace's run was asked of the thread */
    aip__trace_strings strings; /* which ids this file defines */
    int io_error;
    aip__clock_pair start;
    uint64_t slot_off;          /* the STATS slot's offset, 0 if none */
    uint64_t slot_recorded, slot_dropped; /* the totals it holds */
    uint64_t limit;             /* bytes the file may reach, 0 = no limit */
    int limit_is_cap;           /* the limit is max_raw_bytes, not RLIMIT_FSIZE */
    int limit_reached;
    int finishing;              /* the closing chunks use the headroom */
    void (*prepare)(void *arg);
    void *prepare_arg;
    /* Flight recorder (flight.h): the ring, and what its dumps need. */
    aip__flight_ring *ring;      /* NULL: a normal trace */
    int roll;                    /* the segment is full: the next one takes the rest */
    int seg_events;              /* the segment holds events of the program's */
    aip_status (*dump_dir)(void *arg, char *out, size_t cap);
    void (*dump_done)(void *arg, const char *dir, const aip__flight_counts *counts);
    void *dump_arg;
    /* The buffers below are not cleared at a trace's start (9 KB that a
     * start after a training loop meets cold): each is written before it
     * is read (io_message: its first byte says whether it is set). */
    char io_message[300];
    char path[PATH_MAX];
    char hostname[256], program[256]; /* for the INFO chunk */
    uint8_t slot[SLOT_BYTES] __attribute__((aligned(8)));
} raw_writer;

/* The one writer of the process: one trace records at a time. */
static raw_writer writer = {.file.fd = -1};
static aip__flight_ring ring_state;

static void write_failed(int e)
{
    writer.io_error = e;
    if (writer.io_message[0])
        return; /* the first failure is the one reported */
    snprintf(writer.io_message, sizeof writer.io_message, "writing %.200s failed: %s%s",
             writer.path, strerror(e),
             e == EFBIG ? " (the file size limit, ulimit -f, was reached)" : "");
    aip__warn("%s; further events of this trace are dropped", writer.io_message);
}

static void limit_reached(void)
{
    if (writer.limit_reached)
        return;
    writer.limit_reached = 1;
    if (writer.ring) { /* a segment's bound: the next segment goes on */
        writer.roll = 1;
        return;
    }
    if (writer.limit_is_cap)
        aip__warn("%s reached the raw data size cap of %llu bytes (max_raw_bytes, aiprof run "
                  "--max-size): recording stops here and the program runs on; later events "
                  "are counted as dropped", writer.path, (unsigned long long)writer.limit);
    else
        aip__warn("%s reached the file size limit of %llu bytes (ulimit -f): recording stops "
                  "here and the program runs on; later events are counted as dropped",
                  writer.path, (unsigned long long)writer.limit);
}

/* Whether `size` more payload bytes stay under the limit (with headroom
 * for the closing chunks, which alone may use it). */
static int fits(uint32_t size)
{
    if (!writer.limit || writer.finishing)
        return 1;
    uint64_t after = writer.file.bytes + AIP_CHUNK_HEADER_SIZE + size + 8;
    if (after + HEADROOM <= writer.limit)
        return 1;
    limit_reached();
    return 0;
}

/* @return whether the chunk was written. */
static int write_chunk(uint16_t type, uint64_t tid, const void *payload, uint32_t size)
{
    if (writer.io_error || !fits(size))
        return 0;
    int e = aip__raw_put_chunk(&writer.file, type, tid, payload, size);
    if (e)
        write_failed(e);
    return !e;
}

/* The counters of the open trace into the slot: written totals, and
 * drops (pool->stats, plus what attached threads counted since).  A
 * thread past the slot's room is added to its last entry.  Lock held. */
static void fill_slot(uint64_t *recorded, uint64_t *dropped)
{
    uint8_t *pl = writer.slot + AIP_CHUNK_HEADER_SIZE;
    memset(pl, 0, SLOT_PAYLOAD);
    aip__stats_entry *e = (aip__stats_entry *)(pl + 8); /* 8-aligned in `slot` */
    uint32_t n = 0;
    *recorded = *dropped = 0;
    for (size_t i = 0; i < pool->nstats; i++) {
        const aip__tid_stats *st = &pool->stats[i];
        if (n < SLOT_ENTRIES)
            e[n++].tid = st->tid;
        aip__stats_entry *x = &e[n - 1]; /* past the room: the last entry */
        x->recorded += st->recorded;
        x->dropped += st->dropped;
        *recorded += st->recorded;
        *dropped += st->dropped;
    }
    if (!pool->stop_requested) /* at stop they are in pool->stats already */
        for (aip__tstate *t = pool->threads; t; t = t->next) {
            if (t->gen != pool->gen)
                continue;
            uint64_t d = atomic_load_explicit(&t->dropped, memory_order_relaxed);
            if (!d)
                continue;
            uint32_t k = 0;
            while (k < n && e[k].tid != t->tid)
                k++;
            if (k == n && n < SLOT_ENTRIES)
                e[n++].tid = t->tid;
            e[k < SLOT_ENTRIES ? k : SLOT_ENTRIES - 1].dropped += d;
            *dropped += d;
        }
    memcpy(pl, &n, 4);
}

/* Rewrite the slot when the counters changed (always with `force`). */
static void persist_stats(int force)
{
    if (!writer.slot_off)
        return;
    uint64_t recorded, dropped;
    aip__pool_lock();
    fill_slot(&recorded, &dropped);
    aip__pool_unlock();
    if (!force && recorded == writer.slot_recorded && dropped == writer.slot_dropped)
        return;
    aip__chunk_fill((aip__chunk_header *)writer.slot, AIP_CHUNK_STATS, 0,
                    writer.slot + AIP_CHUNK_HEADER_SIZE, SLOT_PAYLOAD);
    ssize_t w;
    do
        w = pwrite(writer.file.fd, writer.slot, SLOT_BYTES, (off_t)writer.slot_off);
    while (w < 0 && errno == EINTR);
    if (w == (ssize_t)SLOT_BYTES) { /* else the slot keeps its last counts */
        writer.slot_recorded = recorded;
        writer.slot_dropped = dropped;
    }
}

/* A PAD chunk up to the next page boundary, then the slot (count 0). */
static void write_slot(void)
{
    uint64_t at = writer.file.bytes + AIP_CHUNK_HEADER_SIZE;
    at = (at + SLOT_BYTES - 1) / SLOT_BYTES * SLOT_BYTES;
    uint32_t pad = (uint32_t)(at - writer.file.bytes - AIP_CHUNK_HEADER_SIZE);
    uint8_t *zeros = calloc(1, pad ? pad : 1);
    if (!zeros)
        return; /* no slot: the counters are persisted at stop only */
    write_chunk(AIP_CHUNK_PAD, 0, zeros, pad);
    free(zeros);
    memset(writer.slot, 0, sizeof writer.slot);
    uint64_t off = writer.file.bytes;
    write_chunk(AIP_CHUNK_STATS, 0, writer.slot + AIP_CHUNK_HEADER_SIZE, SLOT_PAYLOAD);
    if (!writer.io_error && off == at)
        writer.slot_off = off;
}

static void write_strings_chunk(void *ctx, uint16_t type, const void *payload, uint32_t size)
{
    if (!write_chunk(type, 0, payload, size))
        *(int *)ctx = 1;
}

/* The bytes of the whole records at the start of `p` that stay under the
 * size limit, as one EVENTS chunk; 0 (and the limit noted) if none. */
static uint32_t within_limit(const uint8_t *p, uint32_t size)
{
    if (!writer.limit)
        return size;
    uint64_t used = writer.file.bytes + HEADROOM + AIP_CHUNK_HEADER_SIZE + 8;
    uint64_t room = writer.limit > used ? writer.limit - used : 0;
    uint32_t n = size <= room ? size : aip__raw_records_within(p, size, (uint32_t)room);
    if (n < size)
        limit_reached();
    return n;
}

/* Strings first: every id an EVENTS chunk uses is defined before it (no
 * events go out after strings that did not).  Returns the bytes of `p`
 * written; `*records` the number of records in them when they are all of
 * `p` (counted by the strings' scan, which reads every record anyway),
 * else 0; then `times` (a flight recorder's, or NULL) holds the records'
 * times, taken by the same scan. */
static uint32_t write_events(uint64_t tid, const uint8_t *p, uint32_t size, uint64_t *records,
                             aip__flight_times *times)
{
    *records = 0;
    if (writer.io_error || writer.limit_reached)
        return 0;
    uint32_t n = within_limit(p, size);
    uint64_t scanned = times ? aip__trace_strings_scan_timed(&writer.strings, p, n, times)
                             : aip__trace_strings_scan(&writer.strings, p, n);
    int strings_lost = 0;
    aip__trace_strings_flush(&writer.strings, STRINGS_CHUNK_BYTES, write_strings_chunk,
                             &strings_lost);
    if (writer.io_error || strings_lost)
        return 0;
    if (writer.limit) { /* the strings took room too */
        uint64_t used = writer.file.bytes + HEADROOM + AIP_CHUNK_HEADER_SIZE + 8;
        uint64_t room = writer.limit > used ? writer.limit - used : 0;
        if (n > room) {
            n = aip__raw_records_within(p, n, (uint32_t)room);
            limit_reached();
        }
    }
    if (!n)
        return 0;
    int e;
    uint32_t done = aip__raw_put_events(&writer.file, tid, p, n, &e);
    if (e)
        write_failed(e);
    if (done == size)
        *records = scanned;
    return done;
}

static void write_clock(void)
{
    aip__clock_pair c;
    aip__clock_sync(&c);
    write_chunk(AIP_CHUNK_CLOCK, 0, &c, sizeof c);
}

static uint64_t now_ms(void) { return aip__mono_ns() / 1000000u; }

static void open_raw(void);
static uint32_t ring_write(uint64_t tid, const uint8_t *p, uint32_t size, uint64_t *records);

static void write_buffers(aip__buf *list)
{
    /* The queue is newest-first; write oldest first. */
    aip__buf *rev = NULL;
    while (list) {
        aip__buf *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    for (aip__buf *b = rev; b; b = b->next) {
        uint32_t used = atomic_load_explicit(&b->used, memory_order_acquire);
        uint32_t size = used - b->start;
        uint64_t ok, n;
        uint32_t done = writer.ring ? ring_write(b->tid, b->data + b->start, size, &ok)
                                    : write_events(b->tid, b->data + b->start, size, &ok, NULL);
        if (done == size) {
            n = ok; /* the usual case: one pass over the records */
        } else {
            n = aip__raw_count_records(b->data + b->start, size);
            ok = aip__raw_count_records(b->data + b->start, done);
        }
        aip__pool_lock();
        aip__tid_stats *st = aip__stats_for(b->tid);
        if (st) {
            st->recorded += ok;
            st->dropped += n - ok;
        }
        aip__pool_unlock();
    }
    aip__pool_lock();
    aip__pool_release(rev);
    aip__pool_unlock();
}

static char *info_text(void);

/* A new segment of the flight recorder's ring (flight_ring.c recycles
 * the oldest when the ring is full): a raw file of its own, with a fresh
 * clock sync point, its own STATS slot, and the descriptions its events
 * may need, so that each segment reads alone.  Its bound is the size
 * limit: limit_reached() then asks for the next one (writer.roll). */
static void open_segment(void)
{
    aip__trace_strings_free(&writer.strings);
    writer.file.bytes = 0;
    writer.slot_off = 0;
    writer.slot_recorded = writer.slot_dropped = 0;
    writer.limit_reached = writer.roll = 0;
    writer.limit = writer.ring->seg_bytes;
    if (aip__flight_ring_next(writer.ring, aip__ticks(), writer.path, sizeof writer.path)) {
        write_failed(EINVAL);
        return;
    }
    errno = 0;
    /* A recycled segment's file, overwritten in place (flight_ring.c): the
     * mark first, so that a salvage never takes its older bytes as ours. */
    aip__flight_ring_mark(writer.ring, 0);
    writer.file.fd = writer.ring->reused ? open(writer.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
                                         : aip__open_output(writer.path);
    writer.ring->reused = 0;
    if (writer.file.fd < 0 || aip__raw_put_header(&writer.file, writer.path)) {
        write_failed(errno ? errno : EIO);
        return;
    }
    char *text = info_text();
    if (text)
        write_chunk(AIP_CHUNK_INFO, 0, text, (uint32_t)strlen(text));
    free(text);
    write_clock();
    write_slot();
    uint64_t ignored;
    for (size_t i = 0; i < writer.ring->n_meta; i++) {
        const aip__flight_meta *m = &writer.ring->meta[i];
        write_events(m->tid, m->rec, m->size, &ignored, NULL);
    }
    writer.seg_events = 0;
}

/* The current segment's end: its counters, a clock sync point, END. */
static void close_segment(void)
{
    if (writer.file.fd < 0)
        return;
    writer.finishing = 1;
    persist_stats(1);
    write_clock();
    write_chunk(AIP_CHUNK_END, 0, NULL, 0);
    /* A reused file: the older segment's bytes past ours go (its pages too) */
    if (ftruncate(writer.file.fd, (off_t)writer.file.bytes) != 0)
        write_failed(errno);
    aip__flight_ring_mark(writer.ring, writer.file.bytes);
    close(writer.file.fd);
    writer.file.fd = -1;
    writer.finishing = 0;
}

/* write_events() into the ring: what the segment cannot hold goes into
 * the next.  A record that does not fit even an empty segment (with its
 * strings) is not written (counted as dropped by the caller). */
static uint32_t ring_write(uint64_t tid, const uint8_t *p, uint32_t size, uint64_t *records)
{
    uint32_t off = 0;
    uint64_t now = aip__ticks(), written = 0;
    while (off < size && !writer.io_error) {
        uint64_t scanned;
        aip__flight_times t = {.now = now};
        uint32_t done = write_events(tid, p + off, size - off, &scanned, &t);
        if (done == size - off && !t.has_meta) { /* the usual case: the scan's times */
            aip__flight_ring_add(writer.ring, &t);
            written += scanned;
            writer.seg_events = 1;
        } else if (done) { /* counted into the segment that holds them */
            written += aip__flight_ring_note(writer.ring, tid, p + off, done, now);
            writer.seg_events = 1;
        }
        off += done;
        if (off == size || !writer.roll)
            break;
        if (!done && !writer.seg_events)
            break; /* an empty segment is too small for the next record */
        close_segment();
        open_segment();
    }
    *records = off == size ? written : 0;
    return off;
}

/* A dump (flight.h): everything recorded until now written, the segment
 * closed, the segments assembled into a new result directory, a new
 * segment begun.  The program's threads go on recording meanwhile (into
 * their buffers, within the cap). */
static void flight_dump(uint32_t reasons, uint64_t ticket)
{
    uint64_t now = aip__ticks();
    aip__flight_open *open = NULL;
    aip__pool_lock();
    aip__snapshot_threads(0, NULL);
    aip__buf *list = pool->queue;
    pool->queue = NULL;
    size_t n_open = aip__flight_open_ranges(writer.start.ticks, now, &open);
    aip__pool_unlock();
    write_buffers(list);
    close_segment();
    aip__flight_counts c = writer.ring->counts;
    c.trigger_ticks = now;
    c.reasons = reasons;
    char dir[PATH_MAX] = "", raw[PATH_MAX + 64];
    aip_status st = writer.dump_dir(writer.dump_arg, dir, sizeof dir);
    if (!st) {
        snprintf(raw, sizeof raw, "%s/FRAMEWORK/aiprof_%d.raw", dir, (int)getpid());
        uint64_t w = writer.ring->window_ticks;
        st = aip__flight_assemble(writer.ring->dir, now > w ? now - w : 0, raw, open, n_open,
                                  &c);
    }
    for (size_t i = 0; i < n_open; i++)
        free(open[i].records);
    free(open);
    if (!st && writer.dump_done)
        writer.dump_done(writer.dump_arg, dir, &c);
    if (st)
        aip__warn("flight recorder dump failed: %s", aip_last_error());
    open_segment();
    aip__flight_done(ticket, st, st ? aip_last_error() : dir);
}

/* The file's beginning: header, INFO, the start's CLOCK.  On failure the
 * trace goes on unwritten, its events counted as dropped (write_failed). */
static void open_raw(void)
{
    if (writer.ring) {
        open_segment();
        return;
    }
    if (writer.prepare)
        writer.prepare(writer.prepare_arg);
    errno = 0;
    writer.file.fd = aip__open_output(writer.path);
    if (writer.file.fd < 0 || aip__raw_put_header(&writer.file, writer.path)) {
        writer.io_error = errno ? errno : EIO;
        snprintf(writer.io_message, sizeof writer.io_message, "%s", aip_last_error());
        aip__warn("profiling is off for this trace: %s; its events are dropped",
                  writer.io_message);
    } else {
        char *text = info_text();
        if (text)
            write_chunk(AIP_CHUNK_INFO, 0, text, (uint32_t)strlen(text));
        free(text);
        write_chunk(AIP_CHUNK_CLOCK, 0, &writer.start, sizeof writer.start);
        write_slot();
        if (writer.limit_reached && !writer.io_error)
            write_failed(EFBIG); /* not even the start fits */
    }
}

/* The CLOCK_REALTIME moment `ms` from now: pthread_cond_timedwait's deadline. */
static struct timespec deadline_in_ms(uint64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = ms * 1000000u;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec += (long)(ns % 1000000000u);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* `ulimit -f` lowers the limit.  Asked here, on the writer thread, before
 * its first write: a system call less in start(). */
static void apply_fsize_limit(void)
{
    struct rlimit fsize;
    if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
        (!writer.limit || (uint64_t)fsize.rlim_cur < writer.limit)) {
        writer.limit = (uint64_t)fsize.rlim_cur;
        writer.limit_is_cap = 0;
    }
}

/* Before the file exists (pool lock held): whether full buffers may wait
 * in the queue until the first snapshot is due.  A short profile (100
 * steps of a small model with profile_memory fill two buffers) then pays
 * for its file only at the stop, like torch.profiler, which writes
 * nothing before (its writer thread's work had made such a profile
 * dearer than torch's).  A program killed in its first FLUSH_INTERVAL_MS
 * loses what it recorded, within the crash-safety bound of the snapshots
 * (at most that much).  Bounded: at most DEFER_BUFFERS wait, and never
 * half the pool's cap, so that waiting cannot make a recording thread
 * find no buffer. */
static int may_defer(void)
{
    uint32_t n = 0;
    for (aip__buf *b = pool->queue; b && n < DEFER_BUFFERS; b = b->next)
        n++;
    return n < DEFER_BUFFERS && n < pool->max_bufs / 2;
}

/* One trace's run of the thread.  The file is created when there is
 * first something to write: the first crash-safety snapshot
 * (FLUSH_INTERVAL_MS after the start), the stop, or more full buffers
 * than may wait (may_defer).  A short profile then costs no file-system
 * work until its stop, as with torch.profiler, whose start writes nothing. */
static void write_trace(void)
{
    int opened = 0;
    apply_fsize_limit();
    uint64_t last_flush = now_ms(), last_clock = last_flush;
    for (;;) {
        aip__pool_lock();
        while ((!pool->queue || (!opened && !writer.ring && may_defer())) &&
               !pool->stop_requested && !(writer.ring && aip__flight_pending())) {
            uint64_t due = last_flush + FLUSH_INTERVAL_MS, now = now_ms();
            if (now >= due) {
                aip__snapshot_threads(0, NULL); /* crash safety */
                last_flush = now;
                if (pool->queue || !opened)
                    break;
                continue;
            }
            struct timespec ts = deadline_in_ms(due - now);
            pthread_cond_timedwait(&pool->wake, &pool->lock, &ts);
        }
        aip__buf *list = pool->queue;
        pool->queue = NULL;
        int stop = pool->stop_requested;
        aip__pool_unlock();

        if (!opened) {
            open_raw();
            opened = 1;
        }
        write_buffers(list);
        persist_stats(0);
        if (writer.ring && writer.file.fd >= 0)
            aip__flight_ring_mark(writer.ring, writer.file.bytes); /* what a salvage keeps */
        if (now_ms() - last_clock >= 1000) {
            write_clock();
            last_clock = now_ms();
        }
        uint64_t ticket;
        uint32_t reasons = writer.ring && !stop ? aip__flight_take(&ticket) : 0;
        if (reasons)
            flight_dump(reasons, ticket);
        if (stop) {
            aip__pool_lock();
            int empty = pool->queue == NULL;
            aip__pool_unlock();
            if (empty)
                break;
        }
    }
}

/* The thread outlives its trace: it is created by the process's first
 * trace and then waits, parked on `run_cond`, for the next one, so that
 * start() does not pay for a pthread_create (some 30 us in a Python
 * process, the largest part of what start() cost).  The hand-over is
 * under the pool lock, which fork() holds (fork_handlers.h): asked (a
 * trace's fields are set) and done (its run is over, which stop() waits
 * for as it once waited in pthread_join).  fork() ends a parked thread
 * first (park_prepare), so that a program that forks after profiling
 * forks a process with no thread of ours, as before; the park lock keeps
 * a start from handing a trace to the thread while that happens.  Lock
 * order: park lock, then the pool lock.  A thread left parked at exit
 * holds nothing. */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t run_cond = PTHREAD_COND_INITIALIZER;
static pthread_t writer_thread;
static int thread_alive;               /* park lock */
static int run_asked, run_done, run_quit, in_trace; /* pool lock */
static int deep_parked;                /* pool lock: the thread waits to be woken */

static void *writer_main(void *arg)
{
    (void)arg;
    /* Writes past `ulimit -f` fail with EFBIG instead of raising SIGXFSZ,
     * which would kill the program: the signal stays pending, blocked, on
     * this thread. */
    sigset_t old;
    aip__xfsz_block(&old);
    aip__pool_lock();
    for (;;) {
        /* start() hands a trace over without a wake-up when it can
         * (waking a thread was some 25 us, the dearest part of a start on
         * a 2-core machine): for PARK_IDLE_MS after a trace, the parked
         * thread looks every PARK_POLL_MS, well inside the first flush
         * (FLUSH_INTERVAL_MS), so that the traces of a loop of short
         * profiles start cheaply; after that it sleeps until woken
         * (deep_parked: the next start wakes it), so that a process that
         * stopped profiling gets no wake-ups.  A stop or a fork wakes it. */
        uint64_t parked_at = now_ms();
        while (!run_asked && !run_quit) {
            if (now_ms() - parked_at >= PARK_IDLE_MS) {
                deep_parked = 1;
                pthread_cond_wait(&run_cond, &pool->lock);
                continue;
            }
            struct timespec ts = deadline_in_ms(PARK_POLL_MS);
            pthread_cond_timedwait(&run_cond, &pool->lock, &ts);
        }
        deep_parked = 0;
        if (run_quit) { /* only ever asked of a parked thread */
            run_quit = 0;
            aip__pool_unlock();
            return NULL;
        }
        run_asked = 0;
        aip__pool_unlock();
        write_trace();
        aip__pool_lock();
        run_done = 1;
        pthread_cond_broadcast(&run_cond);
    }
    return NULL;
}

static uint64_t host_uid_value;
static void host_uid_once(void) { host_uid_value = aip__host_uid(); }

/* The INFO chunk's JSON (malloc'd), made on the thread. */
static char *info_text(void)
{
    json_t *o = json_object();
    json_object_set_new(o, "pid", json_integer((json_int_t)getpid()));
    json_object_set_new(o, "hostname", json_string(writer.hostname));
    /* Recorded here: an analysis on another machine cannot compute it. */
    static pthread_once_t uid_once = PTHREAD_ONCE_INIT;
    pthread_once(&uid_once, host_uid_once);
    if (host_uid_value) {
        char text[24];
        snprintf(text, sizeof text, "%llu", (unsigned long long)host_uid_value);
        json_object_set_new(o, "host_uid", json_string(text));
    }
    json_object_set_new(o, "program", json_string(writer.program));
    json_object_set_new(o, "clock", json_string(aip__clock_name()));
    json_object_set_new(o, "ticks_per_second", json_real(aip__clock_ticks_per_second()));
    json_object_set_new(o, "aiprof_version", json_string(AIP_VERSION_STRING));
    char *text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    return text;
}

aip_status aip__writer_start(const aip__trace_info *info, aip__clock_pair *start)
{
    if (writer.running)
        return aip__fail(AIP_ERR_STATE, "raw writer already running");
    memset(&writer, 0, offsetof(raw_writer, io_message));
    writer.io_message[0] = '\0';
    writer.limit = info->max_bytes;
    writer.limit_is_cap = info->max_bytes != 0;
    writer.file.fd = -1;
    aip__sb b = aip__sb_init(writer.path, sizeof writer.path);
    aip__sb_str(&b, info->raw_path);
    if (!aip__sb_ok(&b))
        return aip__fail(AIP_ERR_PATH, "raw file path too long: %s", info->raw_path);
    b = aip__sb_init(writer.hostname, sizeof writer.hostname);
    aip__sb_str(&b, info->hostname ? info->hostname : ""); /* cut if too long, as before */
    b = aip__sb_init(writer.program, sizeof writer.program);
    aip__sb_str(&b, info->program ? info->program : "");
    writer.start = info->start;
    writer.prepare = info->prepare;
    writer.prepare_arg = info->prepare_arg;
    writer.ring = NULL;
    if (info->ring_dir) {
        aip_status rs = aip__flight_ring_open(&ring_state, info->ring_dir, info->ring_bytes,
                                              info->window_ticks);
        if (rs)
            return rs;
        writer.ring = &ring_state;
        ring_state.counts.window_ns =
            (uint64_t)((double)info->window_ticks * 1e9 / aip__clock_ticks_per_second());
        writer.limit = ring_state.seg_bytes;
        writer.limit_is_cap = 0;
        writer.dump_dir = info->dump_dir;
        writer.dump_done = info->dump_done;
        writer.dump_arg = info->dump_arg;
    }
    if (start)
        *start = writer.start;
    pthread_mutex_lock(&park_lock);
    int created = 0; /* a new thread may wait before run_asked is set: woken */
    if (!thread_alive) {
        if (aip__thread_create(&writer_thread, NULL, writer_main, NULL) != 0) {
            pthread_mutex_unlock(&park_lock);
            return aip__fail(AIP_ERR_NOMEM, "cannot start the raw writer thread");
        }
        thread_alive = 1;
        created = 1;
    }
    aip__pool_lock();
    run_done = 0;
    run_asked = 1;
    in_trace = 1;
    int wake = deep_parked || created;
    aip__pool_unlock();
    /* Signalled after the unlock: a thread woken while the lock is still
     * held would only block on it again.  The park lock, still held, keeps
     * fork's park_prepare from ending the thread in between. */
    if (wake)
        pthread_cond_broadcast(&run_cond);
    pthread_mutex_unlock(&park_lock);
    writer.running = 1;
    return AIP_OK;
}

static aip_status finish_file(aip__trace_totals *totals);

aip_status aip__writer_finish(aip__trace_totals *totals)
{
    if (!writer.running)
        return aip__fail(AIP_ERR_STATE, "raw writer not running");
    aip__pool_lock();
    if (run_asked) /* a trace shorter than the thread's look: wake it */
        pthread_cond_broadcast(&run_cond);
    while (!run_done)
        pthread_cond_wait(&run_cond, &pool->lock);
    in_trace = 0;
    aip__pool_unlock();
    writer.running = 0;
    aip__trace_strings_free(&writer.strings);
    sigset_t old;
    aip__xfsz_block(&old); /* the closing chunks go out from the caller's thread */
    aip_status s = finish_file(totals);
    aip__xfsz_restore(&old);
    if (writer.ring) /* a stop without a trigger leaves nothing behind */
        aip__flight_ring_close(writer.ring, 1);
    writer.ring = NULL;
    return s;
}

/* Exact per-thread STATS, CLOCK and END; the slot first, which needs no
 * space, in case the disk is full. */
static aip_status finish_file(aip__trace_totals *totals)
{
    writer.finishing = 1;
    persist_stats(1);
    int io_error = writer.io_error;
    writer.io_error = 0; /* after a failed write, what still fits goes out */

    aip__pool_lock();
    size_t n = pool->nstats;
    size_t size = 8 + n * sizeof(aip__stats_entry);
    uint8_t *payload = malloc(size);
    if (payload) {
        uint32_t cnt = (uint32_t)n, zero = 0;
        memcpy(payload, &cnt, 4);
        memcpy(payload + 4, &zero, 4);
        for (size_t i = 0; i < n; i++) {
            const aip__tid_stats *st = &pool->stats[i];
            aip__stats_entry e = {st->tid, st->recorded, st->dropped};
            memcpy(payload + 8 + i * sizeof e, &e, sizeof e);
        }
    }
    for (size_t i = 0; i < n; i++) {
        totals->recorded += pool->stats[i].recorded;
        totals->dropped += pool->stats[i].dropped;
    }
    aip__pool_unlock();
    if (payload) {
        write_chunk(AIP_CHUNK_STATS, 0, payload, (uint32_t)size);
        free(payload);
    }
    aip__clock_sync(&totals->end);
    write_chunk(AIP_CHUNK_CLOCK, 0, &totals->end, sizeof totals->end);
    write_chunk(AIP_CHUNK_END, 0, NULL, 0);
    if (io_error)
        writer.io_error = io_error;
    totals->start = writer.start;
    totals->io_error = writer.io_error;
    totals->size_capped = writer.limit_reached;
    aip_status s = AIP_OK;
    if (writer.io_error)
        s = aip__fail(AIP_ERR_IO, "%s", writer.io_message);
    if (writer.file.fd >= 0 && close(writer.file.fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed: %s", writer.path, strerror(errno));
    writer.file.fd = -1;
    totals->bytes = writer.file.bytes;
    return s;
}

/* A forked child must not write into its parent's raw file; it may start
 * a writer of its own (fork_handlers.h). */
static void fork_child(void)
{
    if (writer.file.fd >= 0)
        close(writer.file.fd); /* the parent keeps its own descriptor */
    writer.file.fd = -1;
    writer.running = 0;
    aip__trace_strings_free(&writer.strings);
    if (writer.ring) /* the parent's ring: left to it */
        aip__flight_ring_close(writer.ring, 0);
    writer.ring = NULL;
    /* Only the forking thread goes on here: a writer busy with a trace
     * is the parent's. */
    run_asked = run_done = run_quit = in_trace = deep_parked = 0;
    pthread_cond_init(&run_cond, NULL);
}

/* A parked thread ends before the fork (see writer_main); one busy with
 * a trace stays, as it always did, and the child goes on without it. */
static void park_prepare(void)
{
    pthread_mutex_lock(&park_lock);
    aip__pool_lock();
    int parked = thread_alive && !in_trace;
    if (parked) {
        run_quit = 1;
        pthread_cond_broadcast(&run_cond);
    }
    aip__pool_unlock();
    if (parked) {
        pthread_join(writer_thread, NULL);
        thread_alive = 0;
    }
}

static void park_parent(void) { pthread_mutex_unlock(&park_lock); }

static void park_child(void)
{
    thread_alive = 0; /* the child has no writer thread */
    pthread_mutex_unlock(&park_lock);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_PARK, park_prepare, park_parent, park_child);
    aip__fork_register(AIP_FORK_WRITER, NULL, NULL, fork_child);
}
