/*
 * outbuf.c — buffered, all-or-nothing output files (see outbuf.h).
 */
#include "thread.h"
#include "outbuf.h"
#include "error.h"
#include "fs.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char aip__digit_pairs[200] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";

/* Double buffering: the caller fills one buffer while this thread writes
 * the other.  Only one buffer is ever in flight. */
struct aip__out_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fd;
    const char *path;
    char *pending;            /* handed over, being written; NULL = idle */
    size_t pending_len;
    char *spare;              /* the buffer the caller gets next */
    int stop;
    aip_status status;        /* first write error */
    char message[512];
};

static void *writer_main(void *arg)
{
    struct aip__out_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->pending && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->pending)
            break;
        char *buf = w->pending;
        size_t len = w->pending_len;
        int failed = w->status != AIP_OK;
        pthread_mutex_unlock(&w->mu);
        aip_status s = failed ? AIP_OK : aip__write_all(w->fd, buf, len, w->path);
        pthread_mutex_lock(&w->mu);
        if (s && !w->status) {
            w->status = s;
            snprintf(w->message, sizeof w->message, "%s", aip_last_error());
        }
        w->spare = buf;
        w->pending = NULL;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Wait until nothing is in flight; @return the writer's first error. */
static aip_status writer_idle(struct aip__out_writer *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->pending)
        pthread_cond_wait(&w->cv, &w->mu);
    aip_status s = w->status;
    pthread_mutex_unlock(&w->mu);
    return s;
}

static void writer_start(aip__out *o)
{
    struct aip__out_writer *w = calloc(1, sizeof *w);
    if (!w)
        return; /* fine: write inline */
    w->spare = malloc(AIP_OUT_CAP);
    w->fd = o->fd;
    w->path = o->path;
    if (!w->spare || pthread_mutex_init(&w->mu, NULL) != 0) {
        free(w->spare);
        free(w);
        return;
    }
    pthread_cond_init(&w->cv, NULL);
    if (aip__thread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w->spare);
        free(w);
        return;
    }
    o->writer = w;
}

/* Stop the thread; a write error becomes this thread's error if `report`. */
static void writer_stop(aip__out *o, int report)
{
    struct aip__out_writer *w = o->writer;
    if (!w)
        return;
    writer_idle(w);
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    if (report && w->status && !o->status)
        o->status = aip__fail(w->status, "%s", w->message);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w->spare);
    free(w);
    o->writer = NULL;
}

const uint64_t aip__pow10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                 10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                 100000000000ull, 1000000000000ull, 10000000000000ull,
                                 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                 100000000000000000ull, 1000000000000000000ull,
                                 10000000000000000000ull};

static aip_status alloc_buffer(aip__out *o)
{
    o->buf = malloc(AIP_OUT_CAP);
    if (!o->buf)
        return o->status = aip__fail(AIP_ERR_NOMEM, "no memory for an output buffer");
    return AIP_OK;
}

aip_status aip__out_open(aip__out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path ||
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof o->tmp)
        return o->status = aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    if (alloc_buffer(o))
        return o->status;
    o->fd = aip__open_output(o->tmp);
    if (o->fd < 0) {
        free(o->buf);
        o->buf = NULL;
        return o->status = AIP_ERR_IO;
    }
    o->to_file = 1;
    /* The writer thread (and its spare buffer) only once the output
     * outgrows one buffer: most files of a short trace fit in one and are
     * written by a single write at close, with no thread to start and
     * join for each (issue 25: fixed costs of a small export). */
    o->writer_due = 1;
    return AIP_OK;
}

aip_status aip__out_target(aip__out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path)
        return o->status = aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    return AIP_OK;
}

aip_status aip__out_init_fd(aip__out *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    snprintf(o->path, sizeof o->path, "fd %d", fd);
    return alloc_buffer(o);
}

static void write_out(aip__out *o, const void *p, size_t n)
{
    if (o->status || !n)
        return;
    o->status = aip__write_all(o->fd, p, n, o->path);
    o->total += n;
}

void aip__out_flush_buffer(aip__out *o)
{
    if (!o->buf)
        return;
    if (o->writer_due && o->len) {
        o->writer_due = 0;
        writer_start(o);
    }
    struct aip__out_writer *w = o->writer;
    if (!w) {
        write_out(o, o->buf, o->len);
    } else if (o->len) {
        /* Hand the full buffer over and continue in the spare one. */
        pthread_mutex_lock(&w->mu);
        while (w->pending)
            pthread_cond_wait(&w->cv, &w->mu);
        w->pending = o->buf;
        w->pending_len = o->len;
        o->buf = w->spare;
        w->spare = NULL;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        o->total += o->len;
    }
    o->len = 0;
}

void aip__out_printf(aip__out *o, const char *fmt, ...)
{
    char small[1024];
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof small) {
        aip__out_put(o, small, (size_t)n);
    } else if (n > 0) { /* longer than any line the reports print: not worth a fast path */
        char *big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            aip__out_put(o, big, (size_t)n);
            free(big);
        } else if (!o->status) {
            o->status = aip__fail(AIP_ERR_NOMEM, "no memory for an output line");
        }
    }
    va_end(again);
}

void aip__out_write_big(aip__out *o, const void *p, size_t n)
{
    aip__out_flush_buffer(o);
    if (o->writer && writer_idle(o->writer))
        return; /* the error surfaces at close */
    write_out(o, p, n);
}

aip_status aip__out_close(aip__out *o)
{
    o->writer_due = 0; /* the last buffer: written here */
    aip__out_flush_buffer(o);
    writer_stop(o, 1);
    free(o->buf);
    o->buf = NULL;
    if (!o->to_file)
        return o->status;
    aip_status s = o->status;
    if (close(o->fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed: %s", o->tmp, strerror(errno));
    o->fd = -1;
    if (!s) {
        struct stat st;
        if (lstat(o->path, &st) == 0 && S_ISLNK(st.st_mode))
            s = aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link",
                          o->path);
        else if (rename(o->tmp, o->path) != 0)
            s = aip__fail(AIP_ERR_IO, "cannot rename %s to %s: %s", o->tmp, o->path,
                          strerror(errno));
    }
    if (s)
        unlink(o->tmp);
    o->to_file = 0;
    o->status = s;
    return s;
}

void aip__out_abort(aip__out *o)
{
    writer_stop(o, 0);
    free(o->buf);
    o->buf = NULL;
    if (o->to_file) {
        close(o->fd);
        unlink(o->tmp);
        o->to_file = 0;
    }
    o->fd = -1;
}

aip_status aip__out_finish(aip__out *o, aip_status written)
{
    if (written) {
        aip__out_abort(o);
        return written;
    }
    return aip__out_close(o);
}
