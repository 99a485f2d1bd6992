/*
 * dyn_parse.h — the config thread: each process's reader and parser of the
 * edits its shared watcher publishes, so that aip_dynamic_step() (the
 * training thread) never parses.
 *
 * A 1 MB profiler_config.json takes milliseconds to parse and to free; the
 * config thread watches the watcher's generation counter, parses each new
 * edit and leaves the result for step(), which checks for it with one load
 * (aip__dyn_parse_ready) and takes it (aip__dyn_parse_take).  Configs that
 * step() is done with go back to the thread to be freed
 * (aip__dyn_parse_dispose).  One config thread per process; a forked child
 * has none (ready stays 0 there, dispose frees inline).
 */
#ifndef AIP_DYN_PARSE_H
#define AIP_DYN_PARSE_H

#include "dyn_config.h"
#include "dyn_watch.h"

#include <sys/types.h>

/* One edit as the config thread found it. */
typedef struct aip__dyn_parsed {
    int valid;                    /* cfg holds a parsed config (the caller owns it) */
    aip__dyn_config cfg;
    char message[512];            /* why refused, or the parser's warning ("" if none) */
    double parse_ms;              /* read + parse time */
    pid_t tid;                    /* the thread that parsed it */
} aip__dyn_parsed;

/* Start the config thread on `w` (attached; it must stay attached until
 * aip__dyn_parse_stop).  Edits after w->seen_generation count. */
aip_status aip__dyn_parse_start(aip__dyn_watch *w);

/* Stop and join it; drops an edit not taken and frees what was disposed. */
void aip__dyn_parse_stop(void);

/* Whether a parsed edit waits (one load; 0 in a forked child). */
int aip__dyn_parse_ready(void);

/* Take the waiting edit; 0 if there was one. */
int aip__dyn_parse_take(aip__dyn_parsed *out);

/* Free `c` on the config thread (inline where there is none); *c is
 * emptied. */
void aip__dyn_parse_dispose(aip__dyn_config *c);

/* Kernel thread id of the thread that parsed the last edit (0: none yet),
 * for tests: it is never the thread calling aip_dynamic_step(). */
pid_t aip__dyn_last_parse_tid(void);

#endif
