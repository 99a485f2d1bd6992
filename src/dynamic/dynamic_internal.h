/*
 * dynamic_internal.h — what dynamic.c shows to tests beyond aiprof.h.
 */
#ifndef AIP_DYNAMIC_INTERNAL_H
#define AIP_DYNAMIC_INTERNAL_H

#include <sys/types.h>

/* Kernel thread id of the thread that parsed the last edit of
 * profiler_config.json (0: none yet): the config thread, never the one
 * calling aip_dynamic_step(). */
pid_t aip__dyn_last_parse_tid(void);

#endif
