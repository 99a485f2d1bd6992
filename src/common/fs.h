/*
 * fs.h — the only way aiprof creates files and directories.
 *
 * Every output path is checked against the seed's character rule (letters,
 * digits, `_ - . /`), refused if any existing component is a symbolic link,
 * and created with at most 0750 (dirs) / 0640 (files); a stricter umask wins.
 */
#ifndef AIP_FS_H
#define AIP_FS_H

#include "aiprof.h"
#include <stddef.h>

#define AIP_DIR_MODE 0750
#define AIP_FILE_MODE 0640

/* aip__path_check() : AIP_ERR_PATH if `path` is empty, too long or has a
 * character outside [A-Za-z0-9_./-]; `what` names the parameter. */
aip_status aip__path_check(const char *path, const char *what);

/* aip__path_no_symlink() : AIP_ERR_SYMLINK if an existing component of
 * `path` is a symbolic link. */
aip_status aip__path_no_symlink(const char *path);

/* aip__path_usable() : aip__path_check() then aip__path_no_symlink(): what
 * every path libaiprof writes under or reads a result from must pass. */
aip_status aip__path_usable(const char *path, const char *what);

/* aip__existing_dir() : AIP_ERR_NOT_FOUND unless `path` is a directory;
 * the message tells a missing path from one that is a file. */
aip_status aip__existing_dir(const char *path, const char *what);

/* aip__mkdirs() : create `path` and missing parents (0750), refusing
 * symlinks; AIP_ERR_IO when not creatable or not writable. */
aip_status aip__mkdirs(const char *path);

/* aip__open_output() : create/truncate a file for writing (O_NOFOLLOW,
 * 0640).  @return fd >= 0, or -1 with aip_last_error() set. */
int aip__open_output(const char *path);

/* A write past the file size limit (RLIMIT_FSIZE, `ulimit -f`) raises
 * SIGXFSZ in the writing thread, whose default action kills the process.
 * aiprof's writes block it around themselves so that they fail with EFBIG
 * instead, which is reported like a full disk, and the program's own
 * disposition is left alone.  aip__xfsz_block() : block it on the calling
 * thread, the previous mask in `old`.  aip__xfsz_restore() : take back a
 * SIGXFSZ that these writes left pending (it was aiprof's) and restore
 * `old`. */
#include <signal.h>
void aip__xfsz_block(sigset_t *old);
void aip__xfsz_restore(const sigset_t *old);

/* aip__write_all() : write everything, retrying on EINTR/short writes.
 * AIP_ERR_IO (disk full included) with the path in the message. */
aip_status aip__write_all(int fd, const void *data, size_t size, const char *path);

/* aip__write_file() : create `path` holding `data` (written to a temp name
 * then renamed, so a reader never sees half a file). */
aip_status aip__write_file(const char *path, const void *data, size_t size);

/* aip__create_file() : like aip__write_file(), but only if `path` does not
 * exist yet, decided atomically (link(2) of the complete temp file), so
 * that two processes, or a user's edit, racing a creation never see one
 * overwrite the other.  *created says whether this call made it. */
aip_status aip__create_file(const char *path, const void *data, size_t size, int *created);

/* aip__read_file() : whole file into a NUL-terminated malloc'd buffer;
 * AIP_ERR_LIMIT beyond `max_size`.  Never blocks: a FIFO, directory,
 * device or socket is refused (AIP_ERR_IO, the message names the path and
 * says what it is) without being read. */
aip_status aip__read_file(const char *path, size_t max_size, char **out, size_t *size);

/* aip__read_file_nofollow() : the same, and AIP_ERR_SYMLINK when `path`
 * itself is a symbolic link (checked by open, so no race with an lstat). */
aip_status aip__read_file_nofollow(const char *path, size_t max_size, char **out, size_t *size);

/* aip__file_kind() : "a FIFO (named pipe)", "a directory", ... for an
 * st_mode, for messages that refuse a path. */
const char *aip__file_kind(unsigned mode);

/* aip__join() : snprintf-style "a/b" into `out`; AIP_ERR_PATH if too long. */
aip_status aip__join(char *out, size_t cap, const char *a, const char *b);

#endif
