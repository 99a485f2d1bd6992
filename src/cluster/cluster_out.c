/*
 * cluster_out.c — how `aiprof cluster` writes its text outputs
 * (cluster_step_trace_time.csv, communication_group.json,
 * cluster_communication(_matrix).json): through the same path as every
 * single-rank output (outbuf.h: a temporary file beside the target, 0640,
 * O_NOFOLLOW, renamed into place only when complete).  A job directory is
 * often shared and the pass often runs as root, so a symbolic link planted
 * where an output goes must never be written through, and a full disk or
 * `ulimit -f` must never leave half a file under the real name.
 *
 * The writers format with stdio (fprintf, Python's json.dumps text); the
 * FILE * given here is a fopencookie(3) stream whose writes go into the
 * aip__out, so they need not change.
 */
#include "cluster.h"
#include "error.h"
#include "fs.h"
#include "outbuf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
    aip__out *o = cookie;
    aip__out_put(o, buf, n);
    if (o->status) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)n;
}

aip_status aip__cluster_out_open(aip__out *o, FILE **f, const char *out_dir, const char *name)
{
    char path[PATH_MAX];
    *f = NULL;
    aip_status s = aip__join(path, sizeof path, out_dir, name);
    if (!s)
        s = aip__out_open(o, path);
    if (s)
        return s;
    cookie_io_functions_t io = {.write = cookie_write};
    if (!(*f = fopencookie(o, "w", io))) {
        aip__out_abort(o);
        return aip__fail(AIP_ERR_NOMEM, "%s: out of memory", path);
    }
    return AIP_OK;
}

aip_status aip__cluster_out_close(aip__out *o, FILE *f, int failed)
{
    int bad = fclose(f) != 0 || failed;
    if (bad && !o->status)
        o->status = aip__fail(AIP_ERR_IO, "%s: write failed", o->path);
    return aip__out_finish(o, o->status);
}
