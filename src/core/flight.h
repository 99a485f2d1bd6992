/*
 * flight.h — the flight recorder (docs/FLIGHT_RECORDER.md): a trace that
 * records always into a bounded ring of raw segment files and writes a
 * result directory only when a trigger asks.
 *
 * The parts: the writer thread (writer.c) writes buffers into the ring's
 * segments instead of one raw file and, asked, dumps; flight_ring.c names
 * and recycles segments and counts what recycling discards; flight_dump.c
 * assembles the segments covering the window into one raw file;
 * flight_trigger.c holds the triggers (signal, API, slow step, hang) and
 * the hand-over between the thread that asks and the writer that dumps.
 */
#ifndef AIP_FLIGHT_H
#define AIP_FLIGHT_H

#include "aiprof.h"
#include "flight_time.h"
#include "raw_format.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define AIP_FLIGHT_MIN_RING (4ull << 20)
#define AIP_FLIGHT_DEFAULT_RING (256ull << 20)
/* Segments of the ring: recycling discards one at a time, so the ring
 * keeps at least (SEGMENTS-1)/SEGMENTS of its bound once full. */
#define AIP_FLIGHT_SEGMENTS 16u

/* Why a dump was made (bits: several triggers may meet in one dump). */
enum {
    AIP_FLIGHT_API = 1u << 0,
    AIP_FLIGHT_SIGNAL = 1u << 1,
    AIP_FLIGHT_SLOW_STEP = 1u << 2,
    AIP_FLIGHT_HANG = 1u << 3,
    AIP_FLIGHT_SALVAGE = 1u << 4
};

/* The FLIGHT chunk's payload (docs/RAW_FORMAT.md, format 1.8), and the
 * ring's persisted counters (ring.counts, rewritten in place).  Events
 * are records other than descriptions (THREAD_NAME, DEVICE, DEVICE_QUEUE,
 * COMM_GROUP, DEVICE_CLOCK), which each segment repeats.  Of the events
 * emitted since the recorder was armed, a dump holds `recorded`; the
 * ring discarded `overwritten` while they were younger than the window
 * (the ring was too small for the window: lost); `outside_window` were
 * older than the window (discarded at recycling or left out of the
 * dump); the buffer cap dropped the STATS chunk's `dropped`. */
typedef struct aip__flight_counts {
    uint64_t window_ns;
    uint64_t ring_bytes;
    uint64_t overwritten;
    uint64_t outside_window;
    uint64_t recorded;
    uint64_t trigger_ticks;   /* when the dump was asked (INFO clock ticks) */
    uint64_t open_ranges;     /* ranges still open, written unfinished */
    uint32_t reasons;         /* AIP_FLIGHT_* bits */
    uint32_t segments;        /* ring segments the dump read */
} aip__flight_counts;

/* ---- flight_ring.c: the ring of segment files ------------------------- */

typedef struct aip__flight_ring {
    char dir[PATH_MAX];
    uint64_t seg_bytes;         /* bound of one segment file */
    uint64_t window_ticks;
    uint64_t seq[AIP_FLIGHT_SEGMENTS]; /* live segments, oldest first */
    /* Per live segment: its events and their earliest and latest times, so
     * that recycling reads a segment back only when the window's edge
     * falls inside it (else all its events are on one side). */
    uint64_t events[AIP_FLIGHT_SEGMENTS], t_min[AIP_FLIGHT_SEGMENTS],
        t_max[AIP_FLIGHT_SEGMENTS];
    uint32_t n_live;
    uint64_t next_seq;
    int reused;                 /* the next segment is the oldest's file, renamed */
    int counts_fd;              /* ring.counts, open while armed (-1: none) */
    aip__flight_counts counts;  /* overwritten / outside_window since arming */
    /* The last description of each thing, repeated at every segment's
     * start so that each segment stands alone (descriptions are written
     * once per trace, and their segment is recycled in time). */
    struct aip__flight_meta *meta;
    size_t n_meta, cap_meta;
} aip__flight_ring;

typedef struct aip__flight_meta {
    uint64_t tid, key;
    uint8_t kind;
    uint32_t size;
    uint8_t *rec;
} aip__flight_meta;

/* aip__flight_ring_open() : make the ring's directory `dir` (0750, not
 * through a link; an existing ring there is an error) for `ring_bytes`. */
aip_status aip__flight_ring_open(aip__flight_ring *r, const char *dir, uint64_t ring_bytes,
                                 uint64_t window_ticks);

/* aip__flight_ring_next() : the path of a new segment; when the ring is
 * full its oldest segment is first read back (its events counted as
 * overwritten or outside the window, by their times against `now`) and
 * removed. */
aip_status aip__flight_ring_next(aip__flight_ring *r, uint64_t now, char *path, size_t cap);

/* aip__flight_ring_note() : `size` bytes of records of thread `tid` were
 * written into the newest segment at `now` (the time of records whose
 * own is not in ticks): counted into it, and the descriptions among them
 * kept (the last one of each thing holds). */
uint64_t aip__flight_ring_note(aip__flight_ring *r, uint64_t tid, const uint8_t *p,
                               uint32_t size, uint64_t now); /* @return the records */

/* aip__flight_ring_close() : remove the ring (a clean stop leaves nothing)
 * and free it. */
void aip__flight_ring_close(aip__flight_ring *r, int remove_files);

/* aip__flight_ring_save_counts() : rewrite ring.counts (for a salvage). */
void aip__flight_ring_save_counts(const aip__flight_ring *r);

/* The live segment's mark, after the counts in ring.counts: how many of
 * its bytes were written when the writer last finished writing.  A
 * recycled segment's file is the oldest one's, renamed and overwritten in
 * place (its pages are reused: no freeing and zeroing of the ring's memory
 * at every recycling), so after a SIGKILL the bytes past the mark may be
 * the older segment's; a salvage cuts them (aip__flight_ring_trim). */
typedef struct aip__flight_mark {
    uint64_t seq, bytes;
} aip__flight_mark;

/* aip__flight_ring_mark() : persist the live segment's mark (one pwrite). */
void aip__flight_ring_mark(const aip__flight_ring *r, uint64_t bytes);

/* aip__flight_ring_trim() : a dead process's ring as its last mark says:
 * the live segment cut at its mark, a segment renamed after it (being
 * reused, still holding what recycling already counted) removed.  A ring
 * without a mark is left as it is. */
void aip__flight_ring_trim(const char *dir);

/* aip__flight_ring_add() : what aip__flight_ring_note() counts, for
 * records without descriptions whose times one scan already took
 * (flight_time.h). */
void aip__flight_ring_add(aip__flight_ring *r, const aip__flight_times *t);

/* ---- flight_dump.c: a dump from the ring's segments ------------------- */

/* The records written as open ranges, per thread (flight_trigger.c). */
typedef struct aip__flight_open {
    uint64_t tid;
    uint8_t *records;
    uint32_t size;
} aip__flight_open;

/* aip__flight_assemble() : the segments in `ring_dir` (oldest first) into
 * the raw file `out_path`: their events no older than `cutoff` ticks,
 * every description, their strings and clock sync points, then `open`
 * (n_open threads' unfinished ranges), a FLIGHT chunk (`counts`, its
 * recorded / outside_window / segments / open_ranges completed here),
 * STATS (per thread: events written, and the drops of the segments' last
 * STATS), CLOCK, END. */
aip_status aip__flight_assemble(const char *ring_dir, uint64_t cutoff, const char *out_path,
                                const aip__flight_open *open, size_t n_open,
                                aip__flight_counts *counts);

/* ---- flight_trigger.c: triggers and the hand-over --------------------- */

/* aip__flight_arm() / aip__flight_disarm() : the triggers of an armed
 * recorder (signal handler installed, step watch reset); at trace begin
 * and end. */
void aip__flight_arm(int signal, double slow_factor, double hang_seconds);
void aip__flight_disarm(void);

/* aip__flight_step() : a step ran from `start` to `end` (ticks); may ask
 * for a dump (slow step). */
void aip__flight_step(uint64_t start, uint64_t end);

/* aip__flight_request() : ask for a dump (any thread; not from a signal
 * handler: the handler only sets a flag). */
void aip__flight_request(uint32_t reason);

/* For the writer thread: the reasons asked since the last call (0: none;
 * the hang watchdog is checked here), and the end of a dump. */
uint32_t aip__flight_take(uint64_t *ticket);
void aip__flight_done(uint64_t ticket, aip_status status, const char *dir);
int aip__flight_pending(void);

/* aip__flight_open_ranges() : every attached thread's open annotations,
 * mstx ranges, ops and Python calls as records flagged
 * AIP_REC_UNFINISHED ending at `end`, those that began after `begin`
 * (the trace's start) (flight_open.c; pool lock held).
 * *out: malloc'd array (free each .records, then it). */
size_t aip__flight_open_ranges(uint64_t begin, uint64_t end, aip__flight_open **out);

#endif
