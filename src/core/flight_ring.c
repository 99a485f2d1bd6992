/*
 * flight_ring.c — the flight recorder's ring of segment files
 * (docs/FLIGHT_RECORDER.md).
 *
 * The writer thread (writer.c) writes an armed recorder's buffers into
 * segment files seg_{seq}.raw of the ring's directory, each a raw file of
 * its own (docs/RAW_FORMAT.md) no larger than ring_bytes / 16.  Here: the
 * segments' names, and their recycling: when the ring holds 16, the
 * oldest is read back before it is removed, and each of its events is
 * counted exactly, by its time against the window at that moment, as
 * overwritten (younger than the window: lost, the ring was too small for
 * it) or outside the window (older: no dump would have held it).  The
 * counts are persisted in ring.counts after each recycling, so that a
 * salvage after a SIGKILL reports them too.  Descriptions (a thread's
 * name, a device, a queue, a communicator, a device clock sample) are
 * written once per trace, so the ring keeps the last of each and the
 * writer repeats them at each segment's start.  A recycled segment's file
 * becomes the next segment (renamed, overwritten in place, cut at its
 * close): on tmpfs, freeing the oldest's pages and allocating and zeroing
 * new ones at every recycling was most of what an armed recorder's writer
 * did beyond a normal one's (docs/FLIGHT_RECORDER.md, Overhead); the mark
 * in ring.counts says where the live segment's own bytes end.
 */
#include "flight.h"
#include "error.h"
#include "fs.h"
#include "raw.h"
#include "raw_writer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int seg_name(char *out, size_t cap, const char *dir, uint64_t seq)
{
    int n = snprintf(out, cap, "%s/seg_%010llu.raw", dir, (unsigned long long)seq);
    return n > 0 && (size_t)n < cap;
}

aip_status aip__flight_ring_open(aip__flight_ring *r, const char *dir, uint64_t ring_bytes,
                                 uint64_t window_ticks)
{
    memset(r, 0, sizeof *r);
    r->counts_fd = -1;
    if (snprintf(r->dir, sizeof r->dir, "%s", dir) >= (int)sizeof r->dir)
        return aip__fail(AIP_ERR_PATH, "flight recorder ring path too long: %s", dir);
    aip_status s = aip__mkdirs(dir);
    if (s)
        return s;
    DIR *d = opendir(dir);
    if (!d)
        return aip__fail(AIP_ERR_IO, "cannot read the flight recorder ring %s: %s", dir,
                         strerror(errno));
    struct dirent *e;
    int taken = 0;
    while ((e = readdir(d)))
        taken |= !strncmp(e->d_name, "seg_", 4);
    closedir(d);
    if (taken)
        return aip__fail(AIP_ERR_STATE, "%s holds the flight recorder ring of an earlier "
                         "process; salvage it (aiprof flight salvage) or remove it", dir);
    char counts[PATH_MAX];
    if (aip__join(counts, sizeof counts, dir, "ring.counts"))
        return aip__fail(AIP_ERR_PATH, "flight recorder ring path too long: %s", dir);
    r->counts_fd = open(counts, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (r->counts_fd < 0)
        return aip__fail(AIP_ERR_IO, "cannot create %s: %s", counts, strerror(errno));
    r->seg_bytes = ring_bytes / AIP_FLIGHT_SEGMENTS;
    r->window_ticks = window_ticks;
    r->counts.ring_bytes = ring_bytes;
    r->next_seq = 1;
    return AIP_OK;
}

/* Count the events of segment `path` against `cutoff`: those whose time
 * is older are outside the window, the others overwritten.  A device
 * task's times are the device's: it takes the segment's last clock sync
 * point before it (when it was written, near enough). */
static void count_discarded(aip__flight_ring *r, const char *path, uint64_t cutoff)
{
    aip__raw_reader *rd;
    if (aip__raw_open(path, &rd) != AIP_OK)
        return;
    aip__raw_chunk c;
    uint64_t clock = 0;
    while (aip__raw_next(rd, &c) == 1) {
        if (c.type == AIP_CHUNK_CLOCK && c.size >= 8) {
            memcpy(&clock, c.payload, 8);
            continue;
        }
        if (c.type != AIP_CHUNK_EVENTS)
            continue;
        for (uint32_t off = 0; off + sizeof(aip__rec_header) <= c.size;) {
            aip__rec_header h;
            memcpy(&h, c.payload + off, sizeof h);
            if (h.size < sizeof h || off + h.size > c.size)
                break;
            uint64_t t = aip__flight_event_time(c.payload + off);
            if (t == UINT64_MAX)
                t = clock;
            if (t) { /* 0: a description, not an event */
                if (t >= cutoff)
                    r->counts.overwritten++;
                else
                    r->counts.outside_window++;
            }
            off += h.size;
        }
    }
    aip__raw_close(rd);
}

void aip__flight_ring_save_counts(const aip__flight_ring *r)
{
    /* One small pwrite in place: a kill cannot leave it half old. */
    if (r->counts_fd >= 0 && pwrite(r->counts_fd, &r->counts, sizeof r->counts, 0) < 0)
        return; /* a salvage then reports the counts of the last save */
}

void aip__flight_ring_mark(const aip__flight_ring *r, uint64_t bytes)
{
    aip__flight_mark m = {r->n_live ? r->seq[r->n_live - 1] : 0, bytes};
    if (r->counts_fd >= 0 &&
        pwrite(r->counts_fd, &m, sizeof m, (off_t)sizeof r->counts) < 0)
        return; /* the last mark holds: a salvage cuts more than it need */
}

void aip__flight_ring_trim(const char *dir)
{
    char path[PATH_MAX];
    aip__flight_mark m;
    if (aip__join(path, sizeof path, dir, "ring.counts"))
        return;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = pread(fd, &m, sizeof m, (off_t)sizeof(aip__flight_counts));
    close(fd);
    if (got != (ssize_t)sizeof m || !m.seq)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "seg_", 4))
            continue;
        unsigned long long seq = strtoull(e->d_name + 4, &end, 10);
        if (strcmp(end, ".raw") || aip__join(path, sizeof path, dir, e->d_name))
            continue;
        if (seq > m.seq) {
            unlink(path); /* renamed for reuse: the recycled segment's, counted */
        } else if (seq == m.seq) {
            int w = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
            struct stat st;
            if (w >= 0 && !fstat(w, &st) && (uint64_t)st.st_size > m.bytes &&
                ftruncate(w, (off_t)m.bytes)) {
                /* uncut: the reader may take the older segment's chunks */
            }
            if (w >= 0)
                close(w);
        }
    }
    closedir(d);
}

aip_status aip__flight_ring_next(aip__flight_ring *r, uint64_t now, char *path, size_t cap)
{
    if (r->n_live == AIP_FLIGHT_SEGMENTS) {
        char old[PATH_MAX];
        uint64_t cutoff = now > r->window_ticks ? now - r->window_ticks : 0;
        if (r->events[0] && r->t_min[0] >= cutoff) /* all in the window: usual once full */
            r->counts.overwritten += r->events[0];
        else if (r->events[0] && r->t_max[0] < cutoff) /* all of it older */
            r->counts.outside_window += r->events[0];
        else if (r->events[0] && seg_name(old, sizeof old, r->dir, r->seq[0]))
            count_discarded(r, old, cutoff); /* the window's edge inside: event by event */
        char next[PATH_MAX];
        if (seg_name(old, sizeof old, r->dir, r->seq[0])) {
            /* Reused when it can be (its pages, on tmpfs); else removed. */
            if (seg_name(next, sizeof next, r->dir, r->next_seq) && !rename(old, next))
                r->reused = 1;
            else
                unlink(old);
        }
        size_t move = (AIP_FLIGHT_SEGMENTS - 1) * sizeof r->seq[0];
        memmove(r->seq, r->seq + 1, move);
        memmove(r->events, r->events + 1, move);
        memmove(r->t_min, r->t_min + 1, move);
        memmove(r->t_max, r->t_max + 1, move);
        r->n_live--;
        aip__flight_ring_save_counts(r);
    }
    uint64_t seq = r->next_seq++;
    if (!seg_name(path, cap, r->dir, seq))
        return aip__fail(AIP_ERR_PATH, "flight recorder segment path too long in %s", r->dir);
    r->events[r->n_live] = r->t_max[r->n_live] = 0;
    r->t_min[r->n_live] = UINT64_MAX;
    r->seq[r->n_live++] = seq;
    return AIP_OK;
}

/* What identifies the thing a description describes, within its kind. */
static uint64_t meta_key(const uint8_t *p, uint64_t tid)
{
    uint32_t a = 0, b = 0;
    switch (p[0]) {
    case AIP_REC_THREAD_NAME:
        return tid;
    case AIP_REC_DEVICE_QUEUE:
        memcpy(&a, p + 8, 4);
        memcpy(&b, p + 12, 4);
        return (uint64_t)a << 32 | b;
    case AIP_REC_DEVICE_CLOCK:
        memcpy(&a, p + 32, 4);
        return a;
    default: /* DEVICE: device_id; COMM_GROUP: group_id */
        memcpy(&a, p + 8, 4);
        return a;
    }
}

static void keep_meta(aip__flight_ring *r, uint64_t tid, const uint8_t *p, uint16_t size)
{
    uint64_t key = meta_key(p, tid);
    aip__flight_meta *m = NULL;
    for (size_t i = 0; i < r->n_meta && !m; i++)
        if (r->meta[i].kind == p[0] && r->meta[i].key == key)
            m = &r->meta[i];
    if (m && m->size == size && !memcmp(m->rec, p, size)) {
        m->tid = tid;
        return;
    }
    uint8_t *copy = malloc(size);
    if (!copy)
        return; /* a segment without it: the later one still has it where it was written */
    memcpy(copy, p, size);
    if (!m) {
        if (r->n_meta == r->cap_meta) {
            size_t cap = r->cap_meta ? 2 * r->cap_meta : 16;
            aip__flight_meta *v = realloc(r->meta, cap * sizeof *v);
            if (!v) {
                free(copy);
                return;
            }
            r->meta = v;
            r->cap_meta = cap;
        }
        m = &r->meta[r->n_meta++];
    } else {
        free(m->rec);
    }
    *m = (aip__flight_meta){.tid = tid, .key = key, .kind = p[0], .size = size, .rec = copy};
}

uint64_t aip__flight_ring_note(aip__flight_ring *r, uint64_t tid, const uint8_t *p,
                               uint32_t size, uint64_t now)
{
    if (!r->n_live)
        return aip__raw_count_records(p, size);
    uint32_t k = r->n_live - 1;
    uint64_t lo = r->t_min[k], hi = r->t_max[k], n = 0, records = 0;
    for (uint32_t off = 0; off + sizeof(aip__rec_header) <= size;) {
        aip__rec_header h;
        memcpy(&h, p + off, sizeof h);
        if (h.size < sizeof h || off + h.size > size)
            break;
        uint64_t t = aip__flight_event_time(p + off);
        if (!t) {
            keep_meta(r, tid, p + off, h.size);
        } else {
            if (t == UINT64_MAX)
                t = now;
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
            n++;
        }
        records++;
        off += h.size;
    }
    r->t_min[k] = lo;
    r->t_max[k] = hi;
    r->events[k] += n;
    return records;
}

void aip__flight_ring_add(aip__flight_ring *r, const aip__flight_times *t)
{
    if (!r->n_live || !t->events)
        return;
    uint32_t k = r->n_live - 1;
    r->t_min[k] = t->lo < r->t_min[k] ? t->lo : r->t_min[k];
    r->t_max[k] = t->hi > r->t_max[k] ? t->hi : r->t_max[k];
    r->events[k] += t->events;
}

void aip__flight_ring_close(aip__flight_ring *r, int remove_files)
{
    if (remove_files && r->dir[0]) {
        char path[PATH_MAX];
        for (uint32_t i = 0; i < r->n_live; i++)
            if (seg_name(path, sizeof path, r->dir, r->seq[i]))
                unlink(path);
        if (!aip__join(path, sizeof path, r->dir, "ring.counts"))
            unlink(path);
        if (r->reused && seg_name(path, sizeof path, r->dir, r->next_seq))
            unlink(path); /* renamed for a segment that was not begun */
        rmdir(r->dir); /* only when empty: nothing of anyone else's goes */
    }
    if (r->counts_fd >= 0)
        close(r->counts_fd);
    r->counts_fd = -1;
    r->reused = 0;
    for (size_t i = 0; i < r->n_meta; i++)
        free(r->meta[i].rec);
    free(r->meta);
    r->meta = NULL;
    r->n_meta = r->cap_meta = 0;
    r->n_live = 0;
}
