/*
 * nvtx_int.h — between the NVTX collector's two files: nvtx_calls.c holds the
 * functions that record NVTX calls as mstx ranges and marks, nvtx_inject.c
 * hands them to NVTX through the injection interface (nvtx_abi.h).
 */
#ifndef AIP_NVTX_INT_H
#define AIP_NVTX_INT_H

#include "nvtx_abi.h"

/* One function for one slot of a callback module's table. */
typedef struct aip__nvtx_slot {
    unsigned int id;
    aip_nvtx_fn fn;
} aip__nvtx_slot;

extern const aip__nvtx_slot aip__nvtx_core_slots[];
extern const size_t aip__nvtx_core_count;
extern const aip__nvtx_slot aip__nvtx_core2_slots[];
extern const size_t aip__nvtx_core2_count;

#endif
