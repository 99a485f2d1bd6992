/*
 * cuda_int.h — the CUDA back end's inside (docs/CUDA.md): the translation
 * of CUPTI activity records into the device model (cuda_translate.c, a pure
 * function of the records, which the unit tests drive with buffers built
 * from the public record structs) and the runtime side that loads libcupti
 * and feeds it (cuda_cupti.c).
 *
 * Records are read through the header's current structs (Kernel10,
 * Memcpy6, Memset4, Memory4, MemcpyPtoP4), and only through the leading
 * fields that every CUPTI since CUDA 11 lays out alike, so a libcupti
 * older than the headers (the pip torch's CUDA 12 CUPTI) still reads right.
 */
#ifndef AIP_CUDA_INT_H
#define AIP_CUDA_INT_H

#include "device.h"

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

/* CUPTI's correlation ids start at 1, as aip__dev_correlation()'s do for
 * OpenCL: the CUDA ones carry this tag so that both back ends in one
 * process never share an id. */
#define AIP_CUDA_CORR_TAG (1ull << 48)
#define AIP_CUDA_MAX_ORDINALS 64

/* What one translation saw (summed over a trace, said at stop). */
typedef struct aip__cuda_counts {
    uint64_t kernels, copies, sets, memory;
    uint64_t ignored;      /* kinds the model has no place for (or not asked for) */
    uint64_t dropped;      /* unreadable, cut, or with impossible times */
    uint64_t no_device;    /* the device or stream table was full */
} aip__cuda_counts;

typedef struct aip__cuda_tctx {
    /* host CLOCK_MONOTONIC ns − CUPTI ns: 0 when CUPTI stamps with our
     * clock (the timestamp callback); used for device memory events,
     * which the model times on the host. */
    int64_t offset_ns;
    /* The name of device `ordinal` into buf (NULL: "CUDA device N"). */
    const char *(*device_name)(uint32_t ordinal, char *buf, size_t cap);
    /* A demangled kernel name (malloc'd), or NULL to keep the mangled one. */
    char *(*demangle)(const char *mangled);
    uint32_t dev_ids[AIP_CUDA_MAX_ORDINALS]; /* ordinal -> device id + 1 */
    aip__cuda_counts n;
} aip__cuda_tctx;

/* CUPTI's record walker: cuptiActivityGetNextRecord's signature. */
typedef CUptiResult (*aip__cuda_next_fn)(uint8_t *buffer, size_t valid, CUpti_Activity **record);

void aip__cuda_tctx_init(aip__cuda_tctx *c);

/* Translate every record of a completed buffer into aip__dev_* calls.
 * A walker error other than "end of buffer" counts the rest as dropped. */
void aip__cuda_translate_buffer(aip__cuda_tctx *c, uint8_t *buf, size_t valid,
                                aip__cuda_next_fn next);

/* One record; `room` = bytes from the record to the buffer's end (a
 * record longer than that is cut: dropped). */
void aip__cuda_translate(aip__cuda_tctx *c, const CUpti_Activity *rec, size_t room);

/* The walker over records laid back to back, each the size of this
 * header's struct for its kind, 8-byte aligned: the layout the unit tests
 * build.  Unknown kind: CUPTI_ERROR_INVALID_KIND; a cut record:
 * CUPTI_ERROR_INVALID_PARAMETER; the end: CUPTI_ERROR_MAX_LIMIT_REACHED. */
CUptiResult aip__cuda_packed_next(uint8_t *buffer, size_t valid, CUpti_Activity **record);
/* The size of kind's record in that layout, 0 when it has none. */
size_t aip__cuda_record_size(CUpti_ActivityKind kind);

/* The names the outputs use, as Kineto writes them ("Memcpy HtoD
 * (Pageable -> Device)", "Memset (Device)"), so that kernel lists compare
 * name for name. */
const char *aip__cuda_copy_kind_name(unsigned copy_kind);
const char *aip__cuda_mem_kind_name(unsigned mem_kind);

/* A runtime / driver API call seen by the callback API on the calling
 * thread (cuda_cupti.c feeds these; the tests call them directly).  enter
 * returns what exit needs (the start tick); `name` must outlive the
 * process (CUPTI's own name table, or aip__cuda_api_name's). */
uint64_t aip__cuda_api_enter(void);
void aip__cuda_api_exit(const char *name, uint64_t start, uint32_t correlation);
/* A callback of the runtime (runtime = 1) or driver API domain, as
 * CUPTI's Callback API delivers it on the calling thread: records the call
 * at its exit, with the start taken at its enter; driver calls inside a
 * runtime call and exits whose enter was not seen are not recorded. */
void aip__cuda_on_api(int runtime, int enter, uint32_t correlation, const char *name);
/* A trace starts: calls left open on any thread by the last one (whose
 * exits were never delivered) are forgotten. */
void aip__cuda_api_new_trace(void);
/* Whether the program made a CUDA call since the trace started: only then
 * may the stop synchronise the device (a runtime synchronisation in a
 * process that never initialised CUDA would create a context). */
int aip__cuda_api_calls_seen(void);
/* The callback API's ids of the calls the back end records
 * (cuda_callbacks.c): wanted() says whether a call of that name (CUPTI's,
 * "cudaLaunchKernel_v7000") is one; ids() writes the ids of every such
 * call of `domain` into ids (at most cap) and returns how many, from the
 * names that name_of (cuptiGetCallbackName's signature) gives. */
typedef CUptiResult (*aip__cuda_name_fn)(CUpti_CallbackDomain domain, uint32_t cbid,
                                         const char **name);
int aip__cuda_callback_wanted(CUpti_CallbackDomain domain, const char *name);
size_t aip__cuda_callback_ids(aip__cuda_name_fn name_of, CUpti_CallbackDomain domain,
                              uint32_t *ids, size_t cap);
/* Switch those callbacks on or off for subscriber `sub` (the ids looked up
 * at the first call); with no names (an older CUPTI: name or
 * enable_callback NULL), both whole domains.  Called under the back end's
 * lock. */
typedef struct aip__cuda_callback_fns {
    aip__cuda_name_fn name;                                      /* cuptiGetCallbackName */
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                   CUpti_CallbackId);            /* cuptiEnableCallback */
    CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle,
                                 CUpti_CallbackDomain);          /* cuptiEnableDomain */
} aip__cuda_callback_fns;
void aip__cuda_api_callbacks(const aip__cuda_callback_fns *f, CUpti_SubscriberHandle sub,
                             uint32_t on);
/* The API name without CUPTI's "_v3020" version suffix, kept for the
 * process's life (NULL name: "cudaUnknown"). */
const char *aip__cuda_api_name(const char *name);

#endif
