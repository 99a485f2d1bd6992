/*
 * dyn_log.c — see dyn_log.h.  Each line is one O_APPEND write; rotation is a
 * rename, so a reader never sees a torn file.
 */
#include "dyn_log.h"
#include "env.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int aip__dyn_log_open(aip__dyn_log *log, const char *config_dir, const char *prefix,
                     const char *source)
{
    log->path[0] = '\0';
    log->source = source;
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/log", config_dir) >= (int)sizeof dir)
        return -1;
    if (mkdir(dir, AIP_DIR_MODE) != 0 && errno != EEXIST)
        return -1;
    if (snprintf(log->path, sizeof log->path, "%s/%s_%s_%d_rank_%d.log", dir, prefix,
                 aip__hostname(), (int)getpid(), aip__rank()) >= (int)sizeof log->path) {
        log->path[0] = '\0';
        return -1;
    }
    return 0;
}

static void rotate_if_needed(const char *path, size_t incoming)
{
    struct stat st;
    if (stat(path, &st) != 0 || (size_t)st.st_size + incoming <= AIP_DYN_LOG_MAX_BYTES)
        return;
    char backup[4200];
    snprintf(backup, sizeof backup, "%s.1", path);
    rename(path, backup); /* the old backup is dropped, as with backupCount=1 */
}

void aip__dyn_log_write(aip__dyn_log *log, const char *level, const char *fmt, ...)
{
    if (!log || !log->path[0])
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char line[1400];
    int n = snprintf(line, sizeof line, "%04d-%02d-%02d %02d:%02d:%02d,%03ld [%s] [%d] %s: %s\n",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, level, (int)getpid(), log->source, msg);
    if (n <= 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    rotate_if_needed(log->path, (size_t)n);
    int fd = open(log->path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, AIP_FILE_MODE);
    if (fd < 0 && errno == ENOENT) {
        /* The config directory was deleted and has come back: recreate
         * log/ (its parent must exist; nothing else is recreated). */
        char dir[sizeof log->path];
        snprintf(dir, sizeof dir, "%s", log->path);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            if (mkdir(dir, AIP_DIR_MODE) == 0)
                fd = open(log->path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                          AIP_FILE_MODE);
        }
    }
    if (fd < 0)
        return; /* logging must never disturb training */
    ssize_t w = write(fd, line, (size_t)n);
    (void)w;
    close(fd);
}
