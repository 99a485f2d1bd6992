/*
 * memory_timeline.h — the memory timeline (export_memory_timeline(); the
 * driver is src/result/reports.c): memory use of one device over time, by
 * category, in torch's file formats (seed 显存可视化;
 * reference torch_profiler_facts §3.4), chosen by the output's suffix:
 *   .html         one self-contained page with an inline SVG chart
 *   .json[.gz]    [times_us, sizes]: sizes[i] has 9 slots, slot 0 the
 *                 stacking baseline (0), slot c+1 the bytes of category c
 *   raw.json.gz   [[t_ns, action, numbytes, category], ...]
 * Actions PREEXISTING 1, CREATE 2, INCREMENT_VERSION 3, DESTROY 4;
 * categories PARAMETER 0 ... AUTOGRAD_DETAIL 6, UNKNOWN 7 (enum
 * aip__mem_category).  docs/MEMORY.md says what the categories mean here.
 */
#ifndef AIP_MEMORY_TIMELINE_H
#define AIP_MEMORY_TIMELINE_H

#include "model.h"
#include "outbuf.h"

enum { AIP_MT_PREEXISTING = 1, AIP_MT_CREATE = 2, AIP_MT_INCREMENT_VERSION = 3, AIP_MT_DESTROY = 4 };

typedef struct aip__mt_event {
    int64_t t;                /* wall-clock ns; -1 for PREEXISTING, as torch writes it */
    int64_t bytes;            /* + for PREEXISTING/CREATE, - for DESTROY */
    uint8_t action, category;
} aip__mt_event;

typedef struct aip__mem_timeline {
    char device[32];          /* as given, e.g. "cpu", "npu:0" */
    aip__mt_event *ev;
    size_t n;
    /* coalesced: one point per distinct µs, cumulative bytes per slot */
    int64_t *times_us;
    int64_t (*sizes)[AIP_MEMCAT_COUNT + 1];
    size_t n_points;
    int64_t max_allocated, max_reserved; /* from the records' running totals */
    uint64_t records;
} aip__mem_timeline;

/* aip__device_parse() : "cpu", "npu", "npu:0", "cuda:1" (case-insensitive);
 * index -1 = any.  AIP_ERR_INVALID_ARG otherwise. */
aip_status aip__device_parse(const char *device, uint8_t *type, int *index);

/* aip__mem_timeline_build() : the timeline of `device` from every process. */
aip_status aip__mem_timeline_build(const aip__model *m, const char *device, aip__mem_timeline *t);
void aip__mem_timeline_free(aip__mem_timeline *t);

/* aip__mem_timeline_write() : the file `path`, format by suffix. */
aip_status aip__mem_timeline_write(const aip__mem_timeline *t, const char *path);

/* memory_timeline_html.c : the page; its chart (also in the summary page),
 * with `*drawn` points of t->n_points; the two peak lines (<li>). */
aip_status aip__mem_timeline_html(const aip__mem_timeline *t, aip__out *o);
aip_status aip__mem_timeline_svg(const aip__mem_timeline *t, aip__out *o, const char *id, int width,
                                 int height, size_t *drawn);
void aip__mem_timeline_peaks(const aip__mem_timeline *t, aip__out *o);

#endif
