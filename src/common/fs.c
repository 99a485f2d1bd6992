/*
 * fs.c — safe file creation (see fs.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fs.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

aip_status aip__path_check(const char *path, const char *what)
{
    if (!path || !*path)
        return aip__fail(AIP_ERR_PATH, "%s is empty", what);
    size_t n = strlen(path);
    if (n >= PATH_MAX)
        return aip__fail(AIP_ERR_PATH, "%s is longer than %d characters", what, PATH_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || c == '.' || c == '/';
        if (!ok)
            return aip__fail(AIP_ERR_PATH,
                             "%s \"%s\" has character 0x%02x at position %zu; only letters, "
                             "digits and _ - . / are allowed",
                             what, path, c, i);
    }
    return AIP_OK;
}

/* Call `fn` on every prefix of `path` ending at a '/' and on the whole
 * path, in order; stops at the first non-OK status. */
static aip_status for_each_prefix(const char *path, aip_status (*fn)(const char *prefix,
                                                                     const char *path))
{
    char buf[PATH_MAX];
    size_t n = strlen(path);
    if (n >= sizeof buf)
        return aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (i < n && buf[i] != '/')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        aip_status st = fn(buf, path);
        if (st)
            return st;
        buf[i] = saved;
    }
    return AIP_OK;
}

/* Whether the last prefix refuse_link saw (the whole path, once a walk
 * ends) is a directory: aip__mkdirs needs no lstat of its own. */
static __thread int last_is_dir;

static aip_status refuse_link(const char *prefix, const char *path)
{
    struct stat st;
    last_is_dir = 0;
    if (lstat(prefix, &st) != 0)
        return AIP_OK;
    if (S_ISLNK(st.st_mode))
        return aip__fail(AIP_ERR_SYMLINK, "refusing path %s: component %s is a symbolic link",
                         path, prefix);
    last_is_dir = S_ISDIR(st.st_mode);
    return AIP_OK;
}

aip_status aip__existing_dir(const char *path, const char *what)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return aip__fail(AIP_ERR_NOT_FOUND, "%s %s: %s", what, path, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return aip__fail(AIP_ERR_NOT_FOUND, "%s %s is a file, not a directory", what, path);
    return AIP_OK;
}

static aip_status make_dir(const char *prefix, const char *path)
{
    struct stat st;
    if (mkdir(prefix, AIP_DIR_MODE) == 0)
        return AIP_OK;
    if (errno != EEXIST)
        return aip__fail(AIP_ERR_IO, "cannot create directory %s: %s", prefix, strerror(errno));
    /* Name the file in the way: the OS would only say "Not a directory"
     * about the component below it. */
    if (stat(prefix, &st) == 0 && !S_ISDIR(st.st_mode))
        return aip__fail(AIP_ERR_IO, "cannot create directory %s: %s is a file, not a directory",
                         path, prefix);
    return AIP_OK;
}

aip_status aip__path_no_symlink(const char *path) { return for_each_prefix(path, refuse_link); }

aip_status aip__mkdirs(const char *path)
{
    last_is_dir = 0;
    aip_status s = for_each_prefix(path, refuse_link);
    if (s)
        return s;
    /* The common case, a directory that exists (every trace's start asks
     * for its base directory): the walk has just seen every component,
     * none a link, and the whole path a directory; the mkdir of each
     * prefix would only fail with EEXIST.  Half the system calls of a
     * start. */
    struct stat st;
    if (!last_is_dir) {
        s = for_each_prefix(path, make_dir);
        if (s)
            return s;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return aip__fail(AIP_ERR_IO, "%s is not a directory", path);
    }
    if (access(path, W_OK | X_OK) != 0)
        return aip__fail(AIP_ERR_IO, "directory %s is not writable: %s", path, strerror(errno));
    return AIP_OK;
}

aip_status aip__path_usable(const char *path, const char *what)
{
    aip_status s = aip__path_check(path, what);
    return s ? s : aip__path_no_symlink(path);
}

int aip__open_output(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, AIP_FILE_MODE);
    if (fd < 0) {
        if (errno == ELOOP)
            aip__fail(AIP_ERR_SYMLINK, "refusing to write %s: it is a symbolic link", path);
        else
            aip__fail(AIP_ERR_IO, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    return fd;
}

void aip__xfsz_block(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void aip__xfsz_restore(const sigset_t *old)
{
    if (!sigismember(old, SIGXFSZ)) { /* else it stays blocked, as it was */
        sigset_t pending, set;
        sigemptyset(&set);
        sigaddset(&set, SIGXFSZ);
        static const struct timespec now = {0, 0};
        if (sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ))
            (void)sigtimedwait(&set, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

aip_status aip__write_all(int fd, const void *data, size_t size, const char *path)
{
    const char *p = data;
    sigset_t old;
    aip__xfsz_block(&old);
    aip_status s = AIP_OK;
    while (size) {
        ssize_t w = write(fd, p, size);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            s = aip__fail(AIP_ERR_IO, "write to %s failed: %s", path, strerror(errno));
            break;
        }
        p += w;
        size -= (size_t)w;
    }
    aip__xfsz_restore(&old);
    return s;
}

/* `data` into a new file next to `path` (its name in `tmp`), closed. */
static aip_status write_temp(const char *path, const void *data, size_t size, char *tmp,
                             size_t cap)
{
    if (snprintf(tmp, cap, "%s.tmp%d", path, (int)getpid()) >= (int)cap)
        return aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    int fd = aip__open_output(tmp);
    if (fd < 0)
        return AIP_ERR_IO;
    aip_status s = aip__write_all(fd, data, size, path);
    if (close(fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed: %s", path, strerror(errno));
    if (s)
        unlink(tmp);
    return s;
}

aip_status aip__write_file(const char *path, const void *data, size_t size)
{
    char tmp[PATH_MAX];
    aip_status s = write_temp(path, data, size, tmp, sizeof tmp);
    if (s)
        return s;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        s = aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link", path);
    else if (rename(tmp, path) != 0)
        s = aip__fail(AIP_ERR_IO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (s)
        unlink(tmp);
    return s;
}

aip_status aip__create_file(const char *path, const void *data, size_t size, int *created)
{
    *created = 0;
    char tmp[PATH_MAX];
    aip_status s = write_temp(path, data, size, tmp, sizeof tmp);
    if (s)
        return s;
    if (link(tmp, path) == 0)
        *created = 1;
    else if (errno != EEXIST)
        s = aip__fail(AIP_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    unlink(tmp);
    return s;
}

const char *aip__file_kind(unsigned mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer,
 * forever if none comes (a FIFO as profiler_config.json hung the config
 * watcher); the type is then checked on the open descriptor, so nothing
 * but a regular file is ever read.  Regular files ignore O_NONBLOCK. */
static aip_status read_regular(const char *path, size_t max_size, char **out, size_t *size,
                               int nofollow)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        if (nofollow && errno == ELOOP)
            return aip__fail(AIP_ERR_SYMLINK, "refusing to read %s: it is a symbolic link", path);
        return aip__fail(errno == ENOENT ? AIP_ERR_NOT_FOUND : AIP_ERR_IO, "cannot open %s: %s",
                         path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return aip__fail(AIP_ERR_IO, "cannot stat %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return aip__fail(AIP_ERR_IO, "refusing to read %s: it is %s, not a regular file", path,
                         aip__file_kind(st.st_mode));
    }
    if ((uint64_t)st.st_size > max_size) {
        close(fd);
        return aip__fail(AIP_ERR_LIMIT, "%s is %lld bytes, over the %zu-byte limit", path,
                         (long long)st.st_size, max_size);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return aip__fail(AIP_ERR_NOMEM, "no memory to read %s", path);
    }
    /* At most the size fstat saw: a file growing meanwhile cannot push
     * the read past the bound. */
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    if (size)
        *size = got;
    return AIP_OK;
}

aip_status aip__read_file(const char *path, size_t max_size, char **out, size_t *size)
{
    return read_regular(path, max_size, out, size, 0);
}

aip_status aip__read_file_nofollow(const char *path, size_t max_size, char **out, size_t *size)
{
    return read_regular(path, max_size, out, size, 1);
}

aip_status aip__join(char *out, size_t cap, const char *a, const char *b)
{
    int n = snprintf(out, cap, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= cap)
        return aip__fail(AIP_ERR_PATH, "path too long: %s/%s", a, b);
    return AIP_OK;
}
