/*
 * writer.c — the raw writer thread of one trace.
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
 */
#include "recorder_int.h"
#include "clock.h"
#include "error.h"
#include "fork_handlers.h"
#include "fs.h"
#include "host_uid.h"
#include "intern.h"
#include "raw_writer.h"
#include "trace_strings.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_INTERVAL_MS 100
#define STRINGS_CHUNK_BYTES (4u * 1024u * 1024u)

static aip__pool *const pool = &aip__pool_state;

typedef struct raw_writer {
    aip__raw_file file;
    char path[PATH_MAX];
    pthread_t thread;
    int running;
    aip__trace_strings strings; /* which ids this file defines */
    int io_error;
    char io_message[300];
    aip__clock_pair start;
    char hostname[256], program[256]; /* for the INFO chunk */
    void (*prepare)(void *arg);
    void *prepare_arg;
} raw_writer;

/* The one writer of the process: one trace records at a time. */
static raw_writer writer = {.file.fd = -1};

static void write_failed(int e)
{
    writer.io_error = e;
    snprintf(writer.io_message, sizeof writer.io_message, "writing %.200s failed: %s",
             writer.path, strerror(e));
    aip__warn("%s; further events of this trace are dropped", writer.io_message);
}

static void write_chunk(uint16_t type, uint64_t tid, const void *payload, uint32_t size)
{
    if (writer.io_error)
        return;
    int e = aip__raw_put_chunk(&writer.file, type, tid, payload, size);
    if (e)
        write_failed(e);
}

static void write_strings_chunk(void *ctx, uint16_t type, const void *payload, uint32_t size)
{
    (void)ctx;
    write_chunk(type, 0, payload, size);
}

/* Strings first: every id an EVENTS chunk uses is defined before it.
 * Returns the bytes of `p` written. */
static uint32_t write_events(uint64_t tid, const uint8_t *p, uint32_t size)
{
    aip__trace_strings_scan(&writer.strings, p, size);
    aip__trace_strings_flush(&writer.strings, STRINGS_CHUNK_BYTES, write_strings_chunk, NULL);
    if (writer.io_error)
        return 0;
    int e;
    uint32_t done = aip__raw_put_events(&writer.file, tid, p, size, &e);
    if (e)
        write_failed(e);
    return done;
}

static void write_clock(void)
{
    aip__clock_pair c;
    aip__clock_sync(&c);
    write_chunk(AIP_CHUNK_CLOCK, 0, &c, sizeof c);
}

static uint64_t now_ms(void) { return aip__mono_ns() / 1000000u; }

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
        uint64_t n = aip__raw_count_records(b->data + b->start, size);
        uint32_t done = write_events(b->tid, b->data + b->start, size);
        uint64_t ok = done == size ? n : aip__raw_count_records(b->data + b->start, done);
        pthread_mutex_lock(&pool->lock);
        aip__tid_stats *st = aip__stats_for(b->tid);
        if (st) {
            st->recorded += ok;
            st->dropped += n - ok;
        }
        pthread_mutex_unlock(&pool->lock);
    }
    pthread_mutex_lock(&pool->lock);
    aip__pool_release(rev);
    pthread_mutex_unlock(&pool->lock);
}

static char *info_text(void);

/* The file's beginning: header, INFO, the start's CLOCK.  On failure the
 * trace goes on unwritten, its events counted as dropped (write_failed). */
static void open_raw(void)
{
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
    }
}

/* The file is created when there is first something to write: a full
 * buffer, the first crash-safety snapshot (FLUSH_INTERVAL_MS after the
 * start) or the stop.  A short profile (20 steps of a small model) then
 * costs no file-system work until its stop, as with torch.profiler, whose
 * start writes nothing. */
static void *writer_main(void *arg)
{
    (void)arg;
    int opened = 0;
    uint64_t last_flush = now_ms(), last_clock = last_flush;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        while (!pool->queue && !pool->stop_requested) {
            uint64_t due = last_flush + FLUSH_INTERVAL_MS, now = now_ms();
            if (now >= due) {
                aip__snapshot_threads(0, NULL); /* crash safety */
                last_flush = now;
                if (pool->queue || !opened)
                    break;
                continue;
            }
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t wait_ns = (due - now) * 1000000u;
            ts.tv_sec += (time_t)(wait_ns / 1000000000u);
            ts.tv_nsec += (long)(wait_ns % 1000000000u);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&pool->wake, &pool->lock, &ts);
        }
        aip__buf *list = pool->queue;
        pool->queue = NULL;
        int stop = pool->stop_requested;
        pthread_mutex_unlock(&pool->lock);

        if (!opened) {
            open_raw();
            opened = 1;
        }
        write_buffers(list);
        if (now_ms() - last_clock >= 1000) {
            write_clock();
            last_clock = now_ms();
        }
        if (stop) {
            pthread_mutex_lock(&pool->lock);
            int empty = pool->queue == NULL;
            pthread_mutex_unlock(&pool->lock);
            if (empty)
                break;
        }
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
    memset(&writer, 0, sizeof writer);
    writer.file.fd = -1;
    if (snprintf(writer.path, sizeof writer.path, "%s", info->raw_path) >= (int)sizeof writer.path)
        return aip__fail(AIP_ERR_PATH, "raw file path too long: %s", info->raw_path);
    snprintf(writer.hostname, sizeof writer.hostname, "%s", info->hostname ? info->hostname : "");
    snprintf(writer.program, sizeof writer.program, "%s", info->program ? info->program : "");
    writer.start = info->start;
    writer.prepare = info->prepare;
    writer.prepare_arg = info->prepare_arg;
    if (start)
        *start = writer.start;
    if (pthread_create(&writer.thread, NULL, writer_main, NULL) != 0)
        return aip__fail(AIP_ERR_NOMEM, "cannot start the raw writer thread");
    writer.running = 1;
    return AIP_OK;
}

aip_status aip__writer_finish(aip__trace_totals *totals)
{
    if (!writer.running)
        return aip__fail(AIP_ERR_STATE, "raw writer not running");
    pthread_join(writer.thread, NULL);
    writer.running = 0;
    aip__trace_strings_free(&writer.strings);

    pthread_mutex_lock(&pool->lock);
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
    pthread_mutex_unlock(&pool->lock);
    if (payload) {
        write_chunk(AIP_CHUNK_STATS, 0, payload, (uint32_t)size);
        free(payload);
    }
    aip__clock_sync(&totals->end);
    write_chunk(AIP_CHUNK_CLOCK, 0, &totals->end, sizeof totals->end);
    write_chunk(AIP_CHUNK_END, 0, NULL, 0);
    totals->start = writer.start;
    totals->io_error = writer.io_error;
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
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_WRITER, NULL, NULL, fork_child);
}
