/*
 * writer.c — the raw writer thread of one trace.
 *
 * Appends chunks to FRAMEWORK/aiprof_{pid}.raw: header, INFO, CLOCK, then
 * EVENTS chunks as buffers fill, each preceded by the STRINGS it uses that
 * the file lacks (trace_strings.c), a periodic snapshot of
 * partly filled buffers every 100 ms (so a killed program loses at most that
 * much), CLOCK sync points, and STATS/CLOCK/END at stop.  Each chunk goes out
 * in one writev(); a write error (disk full) is reported once, and the
 * events that could not be written are counted as dropped.  A chunk cut
 * short by a full disk is taken back (the file ends at its last whole
 * chunk, which a reader can use), and EVENTS that do not fit are written in
 * smaller pieces cut at record boundaries: what fits of the collected
 * events reaches the disk.
 */
#include "recorder_int.h"
#include "clock.h"
#include "error.h"
#include "fork_handlers.h"
#include "fs.h"
#include "host_uid.h"
#include "intern.h"
#include "trace_strings.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define P aip__pool_state
#define FLUSH_INTERVAL_MS 100
#define STRINGS_CHUNK_BYTES (4u * 1024u * 1024u)

typedef struct writer {
    int fd;
    char path[PATH_MAX];
    pthread_t thread;
    int running;
    aip__trace_strings strings; /* which ids this file defines */
    uint64_t bytes;
    int io_error;
    char io_message[300];
    aip_clock_sync start;
} writer;

static writer W = {.fd = -1};

/* One chunk; 0, or the errno of a failed write, after which the file is
 * cut back to its last whole chunk. */
static int put_chunk(uint16_t type, uint64_t tid, const void *payload, uint32_t size)
{
    aip_chunk_header h;
    aip__chunk_fill(&h, type, tid, payload, size);
    static const uint8_t zeros[8];
    struct iovec iov[3] = {
        {&h, sizeof h}, {(void *)payload, size}, {(void *)zeros, aip__chunk_pad(size)}};
    size_t total = sizeof h + size + aip__chunk_pad(size);
    int cnt = 3;
    struct iovec *v = iov;
    size_t left = total;
    while (left) {
        ssize_t w = writev(W.fd, v, cnt);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (ftruncate(W.fd, (off_t)W.bytes) == 0)
                (void)lseek(W.fd, (off_t)W.bytes, SEEK_SET);
            return e;
        }
        left -= (size_t)w;
        while (cnt && (size_t)w >= v->iov_len) {
            w -= (ssize_t)v->iov_len;
            v++;
            cnt--;
        }
        if (cnt) {
            v->iov_base = (char *)v->iov_base + w;
            v->iov_len -= (size_t)w;
        }
    }
    W.bytes += total;
    return 0;
}

static void write_failed(int e)
{
    W.io_error = e;
    snprintf(W.io_message, sizeof W.io_message, "writing %.200s failed: %s", W.path,
             strerror(e));
    aip__warn("%s; further events of this trace are dropped", W.io_message);
}

static void write_chunk(uint16_t type, uint64_t tid, const void *payload, uint32_t size)
{
    if (W.io_error)
        return;
    int e = put_chunk(type, tid, payload, size);
    if (e)
        write_failed(e);
}

/* The last record boundary at or before `target` (the first record's end
 * if it is longer); 0 if `p` holds no whole record. */
static uint32_t record_cut(const uint8_t *p, uint32_t size, uint32_t target)
{
    uint32_t cut = 0;
    for (uint32_t off = 0; off + sizeof(aip_rec_header) <= size;) {
        const aip_rec_header *h = (const aip_rec_header *)(p + off);
        if (h->size < sizeof *h || off + h->size > size)
            break;
        off += h->size;
        if (off > target && cut)
            break;
        cut = off;
    }
    return cut;
}

#define MIN_SPLIT_BYTES 4096u

/* EVENTS; the bytes of `p` written, in halves when the whole does not fit. */
static uint32_t put_events(uint64_t tid, const uint8_t *p, uint32_t size)
{
    int e = put_chunk(AIP_CHUNK_EVENTS, tid, p, size);
    if (!e)
        return size;
    if ((e == ENOSPC || e == EDQUOT || e == EFBIG) && size > MIN_SPLIT_BYTES) {
        uint32_t half = record_cut(p, size, size / 2);
        if (half > 0 && half < size) {
            uint32_t done = put_events(tid, p, half);
            if (done < half)
                return done;
            return half + put_events(tid, p + half, size - half);
        }
    }
    write_failed(e);
    return 0;
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
    aip__trace_strings_scan(&W.strings, p, size);
    aip__trace_strings_flush(&W.strings, STRINGS_CHUNK_BYTES, write_strings_chunk, NULL);
    if (W.io_error)
        return 0;
    return put_events(tid, p, size);
}

static uint64_t count_records(const uint8_t *p, uint32_t size)
{
    uint64_t n = 0;
    for (uint32_t off = 0; off + sizeof(aip_rec_header) <= size;) {
        const aip_rec_header *h = (const aip_rec_header *)(p + off);
        if (h->size < sizeof *h)
            break;
        off += h->size;
        n++;
    }
    return n;
}

static void write_clock(void)
{
    aip_clock_sync c;
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
        uint64_t n = count_records(b->data + b->start, size);
        uint32_t done = write_events(b->tid, b->data + b->start, size);
        uint64_t ok = done == size ? n : count_records(b->data + b->start, done);
        pthread_mutex_lock(&P.lock);
        aip__tid_stats *st = aip__stats_for(b->tid);
        if (st) {
            st->recorded += ok;
            st->dropped += n - ok;
        }
        pthread_mutex_unlock(&P.lock);
    }
    pthread_mutex_lock(&P.lock);
    aip__pool_release(rev);
    pthread_mutex_unlock(&P.lock);
}

static void *writer_main(void *arg)
{
    (void)arg;
    uint64_t last_flush = now_ms(), last_clock = last_flush;
    for (;;) {
        pthread_mutex_lock(&P.lock);
        while (!P.queue && !P.stop_requested) {
            uint64_t due = last_flush + FLUSH_INTERVAL_MS, now = now_ms();
            if (now >= due) {
                aip__snapshot_threads(0, NULL); /* crash safety */
                last_flush = now;
                if (P.queue)
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
            pthread_cond_timedwait(&P.wake, &P.lock, &ts);
        }
        aip__buf *list = P.queue;
        P.queue = NULL;
        int stop = P.stop_requested;
        pthread_mutex_unlock(&P.lock);

        write_buffers(list);
        if (now_ms() - last_clock >= 1000) {
            write_clock();
            last_clock = now_ms();
        }
        if (stop) {
            pthread_mutex_lock(&P.lock);
            int empty = P.queue == NULL;
            pthread_mutex_unlock(&P.lock);
            if (empty)
                break;
        }
    }
    return NULL;
}

static uint64_t host_uid_value;
static void host_uid_once(void) { host_uid_value = aip__host_uid(); }

static void write_info(const aip__trace_info *info)
{
    json_t *o = json_object();
    json_object_set_new(o, "pid", json_integer((json_int_t)getpid()));
    json_object_set_new(o, "hostname", json_string(info->hostname ? info->hostname : ""));
    /* Recorded here: an analysis on another machine cannot compute it. */
    static pthread_once_t uid_once = PTHREAD_ONCE_INIT;
    pthread_once(&uid_once, host_uid_once);
    if (host_uid_value) {
        char text[24];
        snprintf(text, sizeof text, "%llu", (unsigned long long)host_uid_value);
        json_object_set_new(o, "host_uid", json_string(text));
    }
    json_object_set_new(o, "program", json_string(info->program ? info->program : ""));
    json_object_set_new(o, "clock", json_string(aip__clock_name()));
    json_object_set_new(o, "ticks_per_second", json_real(aip__clock_ticks_per_second()));
    json_object_set_new(o, "aiprof_version", json_string(AIP_VERSION_STRING));
    char *text = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(o);
    if (text) {
        write_chunk(AIP_CHUNK_INFO, 0, text, (uint32_t)strlen(text));
        free(text);
    }
}

aip_status aip__writer_start(const aip__trace_info *info, aip_clock_sync *start)
{
    if (W.running)
        return aip__fail(AIP_ERR_STATE, "raw writer already running");
    memset(&W, 0, sizeof W);
    W.fd = aip__open_output(info->raw_path);
    if (W.fd < 0)
        return AIP_ERR_IO;
    snprintf(W.path, sizeof W.path, "%s", info->raw_path);
    uint8_t header[AIP_RAW_HEADER_SIZE] = {0};
    memcpy(header, AIP_RAW_MAGIC, AIP_RAW_MAGIC_LEN);
    uint16_t major = AIP_RAW_VERSION_MAJOR, minor = AIP_RAW_VERSION_MINOR;
    uint32_t hs = AIP_RAW_HEADER_SIZE;
    memcpy(header + 8, &major, 2);
    memcpy(header + 10, &minor, 2);
    memcpy(header + 12, &hs, 4);
    aip_status s = aip__write_all(W.fd, header, sizeof header, W.path);
    if (s) {
        close(W.fd);
        W.fd = -1;
        return s;
    }
    W.bytes = sizeof header;
    write_info(info);
    aip__clock_sync(&W.start);
    write_chunk(AIP_CHUNK_CLOCK, 0, &W.start, sizeof W.start);
    if (W.io_error) {
        close(W.fd);
        W.fd = -1;
        return aip__fail(AIP_ERR_IO, "%s", W.io_message);
    }
    if (start)
        *start = W.start;
    if (pthread_create(&W.thread, NULL, writer_main, NULL) != 0) {
        close(W.fd);
        W.fd = -1;
        return aip__fail(AIP_ERR_NOMEM, "cannot start the raw writer thread");
    }
    W.running = 1;
    return AIP_OK;
}

aip_status aip__writer_finish(aip__trace_totals *totals)
{
    if (!W.running)
        return aip__fail(AIP_ERR_STATE, "raw writer not running");
    pthread_join(W.thread, NULL);
    W.running = 0;
    aip__trace_strings_free(&W.strings);

    pthread_mutex_lock(&P.lock);
    size_t n = P.nstats;
    size_t size = 8 + n * sizeof(aip_stats_entry);
    uint8_t *payload = malloc(size);
    if (payload) {
        uint32_t cnt = (uint32_t)n, zero = 0;
        memcpy(payload, &cnt, 4);
        memcpy(payload + 4, &zero, 4);
        for (size_t i = 0; i < n; i++) {
            aip_stats_entry e = {P.stats[i].tid, P.stats[i].recorded, P.stats[i].dropped};
            memcpy(payload + 8 + i * sizeof e, &e, sizeof e);
        }
    }
    for (size_t i = 0; i < n; i++) {
        totals->recorded += P.stats[i].recorded;
        totals->dropped += P.stats[i].dropped;
    }
    pthread_mutex_unlock(&P.lock);
    if (payload) {
        write_chunk(AIP_CHUNK_STATS, 0, payload, (uint32_t)size);
        free(payload);
    }
    aip__clock_sync(&totals->end);
    write_chunk(AIP_CHUNK_CLOCK, 0, &totals->end, sizeof totals->end);
    write_chunk(AIP_CHUNK_END, 0, NULL, 0);
    totals->start = W.start;
    totals->io_error = W.io_error;
    aip_status s = AIP_OK;
    if (W.io_error)
        s = aip__fail(AIP_ERR_IO, "%s", W.io_message);
    if (close(W.fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed: %s", W.path, strerror(errno));
    W.fd = -1;
    totals->bytes = W.bytes;
    return s;
}

/* A forked child must not write into its parent's raw file; it may start
 * a writer of its own (fork_handlers.h). */
static void fork_child(void)
{
    if (W.fd >= 0)
        close(W.fd); /* the parent keeps its own descriptor */
    W.fd = -1;
    W.running = 0;
    aip__trace_strings_free(&W.strings);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_WRITER, NULL, NULL, fork_child);
}
