/*
 * outbuf.c — buffered, all-or-nothing output files (see outbuf.h).
 */
#include "outbuf.h"
#include "error.h"
#include "fs.h"

#include <errno.h>
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

static aip_status alloc_buffer(aip_out *o)
{
    o->buf = malloc(AIP_OUT_CAP);
    if (!o->buf)
        return o->status = aip__fail(AIP_ERR_NOMEM, "no memory for an output buffer");
    return AIP_OK;
}

aip_status aip__out_open(aip_out *o, const char *path)
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
    return AIP_OK;
}

aip_status aip__out_init_fd(aip_out *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    snprintf(o->path, sizeof o->path, "fd %d", fd);
    return alloc_buffer(o);
}

static void write_out(aip_out *o, const void *p, size_t n)
{
    if (o->status || !n)
        return;
    o->status = aip__write_all(o->fd, p, n, o->path);
    o->total += n;
}

void aip__out_flush_buffer(aip_out *o)
{
    if (!o->buf)
        return;
    write_out(o, o->buf, o->len);
    o->len = 0;
}

void aip__out_write_big(aip_out *o, const void *p, size_t n)
{
    aip__out_flush_buffer(o);
    write_out(o, p, n);
}

aip_status aip__out_close(aip_out *o)
{
    aip__out_flush_buffer(o);
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

void aip__out_abort(aip_out *o)
{
    free(o->buf);
    o->buf = NULL;
    if (o->to_file) {
        close(o->fd);
        unlink(o->tmp);
        o->to_file = 0;
    }
    o->fd = -1;
}
