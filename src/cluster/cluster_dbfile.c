/*
 * cluster_dbfile.c — cluster_analysis.db written as every output is: by a
 * copy beside it, renamed into place when complete.  The file may hold
 * other tools' tables (msprof-analyze's recipes write theirs into it), so
 * the writers do not start from an empty database: the existing file,
 * opened without following a link and only if it is a regular file, is
 * copied into a temporary file (created O_EXCL, 0640, never through a
 * link) in the same folder; the writer changes the copy, and only a
 * complete copy replaces the file (rename, refused if a link was planted
 * there since).  A failure at any point (a full disk, `ulimit -f`, a
 * refusal) removes the copy and leaves the old database as it was.
 *
 * SIGXFSZ is blocked from the copy to the rename, so that a write past
 * RLIMIT_FSIZE fails with EFBIG (reported like a full disk) instead of
 * killing the process.  The copy is private until renamed, so its journal
 * is kept in memory: no `-journal` file beside it to leave behind.
 */
#include "cluster.h"
#include "error.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copy the existing database `from` (if any) into the open `fd`. */
static aip_status copy_old(const char *from, int fd, const char *tmp)
{
    int in = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0) {
        if (errno == ENOENT)
            return AIP_OK; /* a first run: the database starts empty */
        if (errno == ELOOP)
            return aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link",
                             from);
        return aip__fail(AIP_ERR_IO, "cannot read %s: %s", from, strerror(errno));
    }
    struct stat st;
    aip_status s = AIP_OK;
    if (fstat(in, &st) != 0)
        s = aip__fail(AIP_ERR_IO, "cannot stat %s: %s", from, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        s = aip__fail(AIP_ERR_IO, "%s is %s, not a database file", from,
                      aip__file_kind(st.st_mode));
    char buf[65536];
    while (!s) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            s = aip__fail(AIP_ERR_IO, "cannot read %s: %s", from, strerror(errno));
        if (n <= 0)
            break;
        s = aip__write_all(fd, buf, (size_t)n, tmp);
    }
    close(in);
    return s;
}

/* The copy made: open it, journal in memory. */
static aip_status open_copy(aip__cluster_dbfile *f)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(f->tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "PRAGMA journal_mode=MEMORY", NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        aip_status s = aip__fail(AIP_ERR_IO, "%s: cannot open: %s", f->path,
                                 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return s;
    }
    f->db = db;
    return AIP_OK;
}

aip_status aip__cluster_db_open(aip__cluster_dbfile *f, const char *out_dir)
{
    memset(f, 0, sizeof *f);
    aip_status s = aip__join(f->path, sizeof f->path, out_dir, "cluster_analysis.db");
    if (!s && snprintf(f->tmp, sizeof f->tmp, "%s.tmp%ld", f->path, (long)getpid()) >=
                  (int)sizeof f->tmp)
        s = aip__fail(AIP_ERR_PATH, "path too long: %s", f->path);
    if (!s)
        s = aip__path_no_symlink(out_dir);
    if (s)
        return s;
    aip__xfsz_block(&f->old_mask);
    unlink(f->tmp); /* one a killed run of the same pid left */
    int fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, AIP_FILE_MODE);
    if (fd < 0) {
        s = aip__fail(AIP_ERR_IO, "cannot create %s: %s", f->tmp, strerror(errno));
        aip__xfsz_restore(&f->old_mask);
        return s;
    }
    s = copy_old(f->path, fd, f->tmp);
    if (close(fd) != 0 && !s)
        s = aip__fail(AIP_ERR_IO, "closing %s failed: %s", f->tmp, strerror(errno));
    if (!s)
        s = open_copy(f);
    if (s) {
        unlink(f->tmp);
        aip__xfsz_restore(&f->old_mask);
    }
    return s;
}

aip_status aip__cluster_db_close(aip__cluster_dbfile *f, aip_status s)
{
    if (sqlite3_close(f->db) != SQLITE_OK && !s)
        s = aip__fail(AIP_ERR_IO, "%s: close failed: %s", f->path, sqlite3_errmsg(f->db));
    f->db = NULL;
    struct stat st;
    if (!s && lstat(f->path, &st) == 0 && S_ISLNK(st.st_mode))
        s = aip__fail(AIP_ERR_SYMLINK, "refusing to replace %s: it is a symbolic link", f->path);
    if (!s && rename(f->tmp, f->path) != 0)
        s = aip__fail(AIP_ERR_IO, "cannot rename %s to %s: %s", f->tmp, f->path,
                      strerror(errno));
    if (s)
        unlink(f->tmp); /* the old database stays as it was */
    aip__xfsz_restore(&f->old_mask);
    return s;
}
