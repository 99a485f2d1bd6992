/*
 * session_log.c — see session_log.h.
 */
#include "session_log.h"
#include "fork_handlers.h"
#include "env.h"
#include "fs.h"
#include "strbuild.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
/* Lines of a trace whose log the writer thread has yet to create
 * (aip__log_expect): kept here and written first when it opens. */
static int pending_on;
static char pending[16384];
static size_t pending_len;
static unsigned long pending_lost;

#define LINE_MAX_BYTES 1024

/* "YYYY-mm-dd HH:MM:SS.mmm [LEVEL] [pid] message\n" of a line logged at
 * `at` into line[LINE_MAX_BYTES], without printf (strbuild.h); returns its
 * length. */
static size_t format_line(char *line, const struct timespec *at, const char *level,
                          const char *msg)
{
    struct timespec ts = *at;
    struct tm tm;
    aip__localtime(ts.tv_sec, &tm);
    aip__sb b = aip__sb_init(line, LINE_MAX_BYTES - 1); /* room kept for the '\n' */
    const int parts[4] = {tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
    static const char seps[4] = {' ', ':', ':', '.'};
    aip__sb_uint(&b, (unsigned long long)(tm.tm_year + 1900), 4);
    aip__sb_mem(&b, "-", 1);
    aip__sb_uint(&b, (unsigned long long)(tm.tm_mon + 1), 2);
    aip__sb_mem(&b, "-", 1);
    for (int i = 0; i < 4; i++) {
        aip__sb_uint(&b, (unsigned long long)parts[i], 2);
        aip__sb_mem(&b, &seps[i], 1);
    }
    aip__sb_uint(&b, (unsigned long long)(ts.tv_nsec / 1000000), 3);
    aip__sb_str(&b, " [");
    aip__sb_str(&b, level);
    aip__sb_str(&b, "] [");
    aip__sb_int(&b, (long long)getpid());
    aip__sb_str(&b, "] ");
    aip__sb_str(&b, msg);
    size_t n = b.len; /* a message cut at the buffer's end keeps its newline */
    line[n++] = '\n';
    return n;
}

static void write_line(const char *level, const char *msg)
{
    char line[LINE_MAX_BYTES];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    size_t n = format_line(line, &ts, level, msg);
    pthread_mutex_lock(&lock);
    if (log_fd >= 0) {
        sigset_t old;
        aip__xfsz_block(&old); /* past `ulimit -f`: EFBIG, not the program's death */
        ssize_t w = write(log_fd, line, (size_t)n);
        (void)w; /* a failing log must not fail the profile */
        aip__xfsz_restore(&old);
    } else if (pending_on && pending_len + (size_t)n <= sizeof pending) {
        memcpy(pending + pending_len, line, (size_t)n);
        pending_len += (size_t)n;
    } else if (pending_on) {
        pending_lost++;
    }
    pthread_mutex_unlock(&lock);
}

/* fork() holds the log lock (fork_handlers.h). */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }

/* A forked child must not write into its parent's trace log. */
static void fork_child(void)
{
    aip__set_log_sink(NULL);
    if (log_fd >= 0)
        close(log_fd);
    log_fd = -1;
    pending_on = 0;
    pending_len = 0;
    pthread_mutex_unlock(&lock);
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    aip__fork_register(AIP_FORK_LOG, fork_prepare, fork_parent, fork_child);
}

static void sink(const char *level, const char *message) { write_line(level, message); }

void aip__log_expect(void)
{
    pthread_mutex_lock(&lock);
    pending_on = 1;
    pending_len = 0;
    pending_lost = 0;
    pthread_mutex_unlock(&lock);
    aip__set_log_sink(sink);
}

void aip__log_open(const char *path, const struct timespec *first_at, const char *first_msg)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, AIP_FILE_MODE);
    char line[LINE_MAX_BYTES];
    size_t first = first_msg ? format_line(line, first_at, "INFO", first_msg) : 0;
    pthread_mutex_lock(&lock);
    if (log_fd >= 0)
        close(log_fd);
    log_fd = fd;
    if (fd >= 0 && first) {
        ssize_t w = write(fd, line, first);
        (void)w;
    }
    if (fd >= 0 && pending_len) {
        ssize_t w = write(fd, pending, pending_len);
        (void)w;
    }
    if (fd >= 0 && pending_lost) {
        char note[96];
        int n = snprintf(note, sizeof note, "(%lu earlier log lines did not fit the start's "
                         "buffer)\n", pending_lost);
        ssize_t w = write(fd, note, (size_t)n);
        (void)w;
    }
    pending_on = 0;
    pending_len = 0;
    pending_lost = 0;
    pthread_mutex_unlock(&lock);
    aip__set_log_sink(fd >= 0 ? sink : NULL);
}

void aip__log_close(void)
{
    aip__set_log_sink(NULL);
    pthread_mutex_lock(&lock);
    if (log_fd >= 0)
        close(log_fd);
    log_fd = -1;
    pending_on = 0;
    pending_len = 0;
    pthread_mutex_unlock(&lock);
}

void aip__log(const char *level, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    write_line(level, msg);
}
