/*
 * flight_salvage.c — aip_flight_salvage(): the ring of a process that
 * died while its flight recorder was armed, into a result directory
 * (docs/FLIGHT_RECORDER.md).
 *
 * Nothing of the dead process is needed but its ring's files: each
 * segment is a crash-safe raw file (complete chunks survive a SIGKILL,
 * a torn tail is cut off by the reader), its STATS slot holds the drops
 * as of the last flush, and ring.counts what recycling discarded.  The
 * dump is flight_dump.c's, over every event the ring holds (the window is
 * the dead process's to apply: the salvage keeps it all).
 */
#include "flight.h"
#include "error.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The pid in a ring's name ({worker}_{pid}.ring), 0 if there is none. */
static long ring_pid(const char *ring_dir)
{
    const char *base = strrchr(ring_dir, '/');
    base = base ? base + 1 : ring_dir;
    const char *dot = strstr(base, ".ring");
    const char *us = strrchr(base, '_');
    if (!dot || !us || us > dot)
        return 0;
    return strtol(us + 1, NULL, 10);
}

static void read_counts(const char *ring_dir, aip__flight_counts *c)
{
    char path[PATH_MAX];
    memset(c, 0, sizeof *c);
    if (aip__join(path, sizeof path, ring_dir, "ring.counts"))
        return;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return; /* the ring never recycled: nothing was discarded */
    if (read(fd, c, sizeof *c) != (ssize_t)sizeof *c)
        memset(c, 0, sizeof *c);
    close(fd);
}

aip_status aip_flight_salvage(const char *ring_dir, const char *out_dir, char *result_dir,
                              size_t cap)
{
    if (result_dir && cap)
        result_dir[0] = '\0';
    if (!ring_dir || !*ring_dir || !out_dir || !*out_dir)
        return aip__fail(AIP_ERR_INVALID_ARG, "aip_flight_salvage: ring_dir and out_dir are "
                         "needed");
    aip_status st = aip__path_no_symlink(ring_dir);
    if (st)
        return st;
    st = aip__mkdirs(out_dir);
    if (st)
        return st;
    const char *base = strrchr(ring_dir, '/');
    base = base ? base + 1 : ring_dir;
    size_t stem = strcspn(base, ".");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    char dir[PATH_MAX], path[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s/%.*s_%04d%02d%02d%02d%02d%02d%03ld_salvaged_ascend_pt",
                     out_dir, (int)stem, base, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    if (n < 0 || (size_t)n >= sizeof dir)
        return aip__fail(AIP_ERR_PATH, "salvage directory path too long under %s", out_dir);
    if (mkdir(dir, AIP_DIR_MODE) != 0)
        return aip__fail(AIP_ERR_IO, "cannot create %s: %s", dir, strerror(errno));
    static const char *const subdirs[] = {"FRAMEWORK", "logs"};
    for (int i = 0; i < 2; i++)
        if (!aip__join(path, sizeof path, dir, subdirs[i]) && mkdir(path, AIP_DIR_MODE) != 0)
            return aip__fail(AIP_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    n = snprintf(path, sizeof path, "%s/FRAMEWORK/aiprof_%ld.raw", dir, ring_pid(ring_dir));
    if (n < 0 || (size_t)n >= sizeof path)
        return aip__fail(AIP_ERR_PATH, "salvage path too long under %s", dir);
    aip__flight_ring_trim(ring_dir); /* a reused segment's older bytes are not ours */
    aip__flight_counts c;
    read_counts(ring_dir, &c);
    c.reasons = AIP_FLIGHT_SALVAGE;
    c.trigger_ticks = 0;
    st = aip__flight_assemble(ring_dir, 0, path, NULL, 0, &c);
    if (!st && result_dir && cap)
        snprintf(result_dir, cap, "%s", dir);
    return st;
}
