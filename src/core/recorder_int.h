/*
 * recorder_int.h — state shared by buffers.c (threads, pool) and writer.c
 * (the raw writer thread).  Everything here is guarded by pool.lock unless
 * marked otherwise.
 */
#ifndef AIP_RECORDER_INT_H
#define AIP_RECORDER_INT_H

#include "recorder.h"

#include <pthread.h>

typedef struct aip__tid_stats {
    uint64_t tid, recorded, dropped;
} aip__tid_stats;

typedef struct aip__pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;           /* writer: work queued or stop requested */
    aip__buf *free_list;
    uint32_t n_free;               /* buffers on free_list (walking it touches every buffer) */
    aip__buf *queue;               /* full buffers, newest first */
    uint32_t allocated, max_bufs;
    _Atomic uint32_t obtainable;   /* free + (max - allocated), read lock-free */
    aip__tstate *threads;          /* registry of attached threads */
    uint32_t registry_epoch;       /* bumped in a forked child */
    uint32_t gen;                  /* generation of the open trace, 0 if none */
    uint32_t next_gen;
    int open;
    int stop_requested;
    /* per-thread totals of the open trace */
    aip__tid_stats *stats;
    size_t nstats, capstats;
} aip__pool;

extern aip__pool aip__pool_state;

/* The pool lock, taken and released with the calling thread marked as
 * inside the recorder (recorder.h: aip__tls_inside). */
void aip__pool_lock(void);
void aip__pool_unlock(void);

aip__tid_stats *aip__stats_for(uint64_t tid);     /* lock held; NULL on OOM */
void aip__pool_release(aip__buf *list);           /* lock held */
aip__buf *aip__buf_new(void);                     /* no lock needed */
void aip__buf_free(aip__buf *b);                  /* no lock needed; NULL: nothing */
int aip__trace_accepting(uint32_t gen);           /* lock held: open, not stopping */
/* aip__snapshot_threads() : lock held; queue a copy of what each attached
 * thread published since the last snapshot.  Used by the periodic flush
 * (crash safety) and at stop. */
void aip__snapshot_threads(int final, uint64_t *unbalanced);

/* writer.c */
aip_status aip__writer_start(const aip__trace_info *info, aip__clock_pair *start);
aip_status aip__writer_finish(aip__trace_totals *totals);

#endif
