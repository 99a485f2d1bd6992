"""Files the Python layer writes (export_chrome_trace, export_stacks,
trace_view.json.gz, the memory timeline without the extension) follow
libaiprof's rules for its own (src/common/fs.c): no symbolic link anywhere
on the path, missing directories made 0750 and files 0640 at most, whatever
the umask.  A refused or failed path is an OSError naming it."""
import errno
import os
import stat

FILE_MODE = 0o640
DIR_MODE = 0o750


def refuse_links(path):
    """Every existing prefix of the absolute `path`, itself included."""
    prefix = ""
    for part in path.split(os.sep)[1:]:
        prefix += os.sep + part
        try:
            if stat.S_ISLNK(os.lstat(prefix).st_mode):
                raise OSError(errno.ELOOP, f"refusing path {path}: component {prefix} is a "
                                           "symbolic link")
        except (FileNotFoundError, NotADirectoryError):
            return  # nothing below a missing component (or a file) exists


def make_dirs(path):
    """Directory `path` (absolute), made with its missing parents."""
    refuse_links(path)
    missing = []
    p = path
    while not os.path.lexists(p):
        missing.append(p)
        p = os.path.dirname(p)
    if not os.path.isdir(p):
        # Name the culprit: the OS's "Not a directory" names the path only.
        raise NotADirectoryError(errno.ENOTDIR, f"cannot make directory {path}: {p} is a "
                                                "file, not a directory")
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            pass
    if not os.path.isdir(path):
        raise NotADirectoryError(errno.ENOTDIR, f"{path} is not a directory")


def open_output(path, mode="wb"):
    """`path` opened for writing (truncated), checked and made as above."""
    path = os.path.abspath(path)
    make_dirs(os.path.dirname(path))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                     FILE_MODE)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, f"refusing to write {path}: it is a symbolic link") \
                from None
        raise
    try:  # a file that existed keeps its mode: no more than FILE_MODE
        os.fchmod(fd, stat.S_IMODE(os.fstat(fd).st_mode) & FILE_MODE)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise
