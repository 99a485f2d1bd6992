/*
 * dyn_watch.h — one watcher per config directory, shared by every process
 * (rank) that profiles with it.
 *
 * The watcher is a small daemon (double fork, own session) that polls
 * profiler_config.json's mtime, validates each edit and publishes it in a
 * shared-memory segment named after the directory: a generation counter,
 * the JSON text and its verdict.  Processes register their pid there; the
 * watcher outlives whichever process started it and exits (removing the
 * segment) once no registered process is alive.  A segment left by a killed
 * watcher is recognised (dead pid or stale heartbeat) and taken over.
 * The config thread (dyn_parse.c) reads the generation counter, a pread,
 * at each of its looks; the training step only checks that thread's flag.
 * The segment is checked before use and never mapped after attaching
 * (dyn_watch.c says why).
 */
#ifndef AIP_DYN_WATCH_H
#define AIP_DYN_WATCH_H

#include "aiprof.h"
#include "dyn_log.h"

#include <limits.h>
#include <stdint.h>

typedef struct aip__dyn_shared aip__dyn_shared;

typedef struct aip__dyn_watch {
    int fd;                       /* the segment, read and written through it */
    int attached;
    int broken;                   /* a read came back short: said once */
    aip__dyn_log *log;
    char name[96];                /* shm_open name */
    char config_dir[PATH_MAX];
    uint64_t seen_generation;     /* at attach */
    uint64_t last_generation;     /* last one read */
} aip__dyn_watch;

/* Default poll period (2 s); AIPROF_DP_POLL_MS overrides it (tests). */
uint32_t aip__dyn_default_poll_ms(void);

aip_status aip__dyn_watch_attach(aip__dyn_watch *w, const char *config_dir, aip__dyn_log *log);
void aip__dyn_watch_detach(aip__dyn_watch *w);

/* Generation of the last published edit (0: none yet; the last one read
 * if the segment cannot be read any more). */
uint64_t aip__dyn_watch_generation(aip__dyn_watch *w);

/* Copy the published edit: text (malloc'd, NUL-terminated), whether the
 * watcher found it valid, and its message.  0 on success. */
int aip__dyn_watch_read(aip__dyn_watch *w, char **text, size_t *len, int *valid, char *message,
                       size_t message_cap);

/* The measured step interval becomes the poll period (1 s..50 s). */
void aip__dyn_watch_set_poll_ms(aip__dyn_watch *w, uint32_t ms);

/* The shm name used for `config_dir` (for tests and docs). */
void aip__dyn_watch_name(const char *config_dir, char *out, size_t cap);

#endif
