/*
 * nvtx.h — what the session asks of the NVTX collector (src/collect/nvtx,
 * docs/NVTX.md): NVTX finds its tool through NVTX_INJECTION64_PATH, which
 * libaiprof sets in its own process only once a session that records mstx
 * starts, so that loading the library leaves the environment as it was.
 */
#ifndef AIP_NVTX_H
#define AIP_NVTX_H

/* aip__nvtx_session_started() : a session that records mstx started
 * (before its schedule's first trace, so NVTX calls in its unrecorded steps
 * find the tool too): the first time, point NVTX_INJECTION64_PATH at this shared libaiprof unless it is
 * set already or AIPROF_NVTX=0; later calls do nothing. */
void aip__nvtx_session_started(void);

#endif
