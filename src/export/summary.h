/*
 * summary.h — `aiprof summary`: what a profile says at a glance — top ops
 * by self time, step times, the device's kernels, copies and busy time
 * (when there is device data), memory peaks, dropped events and raw-data
 * problems, and what was not collected and why — as terminal text
 * (summary.c) or one self-contained HTML page (summary_html.c).  The
 * driver, aip_summarise(), is src/result/reports.c.
 */
#ifndef AIP_SUMMARY_H
#define AIP_SUMMARY_H

#include "memory_timeline.h"
#include "model.h"
#include "outbuf.h"

#define AIP_SUMMARY_TOP 15
#define AIP_SUMMARY_NOTES 24

/* Device tasks of one name (kernels) or one name and direction (copies,
 * fills, maps), every process together. */
typedef struct aip__sum_tasks {
    const char *name;          /* into a process's string blob */
    size_t len;
    uint8_t kind, direction;   /* enum aip__task_kind, aip__copy_dir */
    uint64_t count, bytes;
    int64_t total_ns, max_ns;
} aip__sum_tasks;

/* One device of one process: its busy time is the union of its tasks'
 * intervals (tasks of several queues may run at once). */
typedef struct aip__sum_device {
    int64_t pid;
    uint32_t id;               /* raw device id: the N of NPU:N */
    uint8_t tag_type;          /* AIP_DEVICE_NPU or AIP_DEVICE_CUDA */
    const char *name;
    size_t len;
    uint64_t tasks, kernels, copies;
    size_t queues;             /* queues with tasks */
    int64_t busy_ns, first_ns, last_ns;
    int64_t error_ns;          /* alignment error bound, -1 = unknown */
} aip__sum_device;

/* mstx ranges of one domain and message, every process together
 * (summary_mstx.c). */
typedef struct aip__sum_range {
    const char *domain, *name; /* into a process's string blob */
    size_t dlen, nlen;
    uint64_t count;
    int64_t total_ns, max_ns;
} aip__sum_range;

/* Device memory of one device of one process (device_memory.h totals). */
typedef struct aip__sum_devmem {
    int64_t pid;
    uint32_t process, id;
    uint8_t tag_type;          /* AIP_DEVICE_NPU or AIP_DEVICE_CUDA */
    uint64_t records, allocations;
    int64_t peak;              /* of the live bytes the trace knows */
} aip__sum_devmem;

typedef struct aip__summary_data {
    const char *dir;
    const aip__model *m;
    const aip__profiler_info_data *info; /* &m->info */
    aip__op_stat *ops;         /* framework ops by self time, longest first */
    size_t n_ops;
    int64_t ops_self_total;   /* sum of every op's self time */
    int64_t *step_ns;         /* per ProfilerStep, step order */
    size_t n_steps;
    int64_t step_min, step_median, step_max, step_mean;
    /* the steps between the first and the last, which border the
     * profiler's start and stop (the seed's FAQ: their times include its
     * start-up and stop/save cost); with 3 steps or more */
    int64_t inner_median;
    int has_inner;
    char notes[AIP_SUMMARY_NOTES][320]; /* not collected / problems, plain text */
    size_t n_notes;
    aip__mem_timeline mem;     /* of the first device with records, if any */
    int has_mem;
    /* device activity (summary_device.c); n_devices 0 = none recorded */
    aip__sum_tasks *kernels;   /* by total device time, longest first */
    size_t n_kernels;
    aip__sum_tasks *copies;    /* copies, fills and maps, by total time */
    size_t n_copies;
    int64_t kernels_total_ns;
    aip__sum_device *devices;  /* by process, then device id */
    size_t n_devices;
    aip__sum_devmem *dev_mem;  /* by process, then device id */
    size_t n_dev_mem;
    aip__host_series *host;    /* per process (summary_host.c) */
    size_t n_host;
    aip__sum_range *mstx_ranges; /* by total time, longest first */
    size_t n_mstx_ranges;
    uint64_t mstx_marks, mstx_unended; /* marks; range starts without end */
    /* The "Advice" section (aiprof advise, src/insight/), given by the
     * caller that built the findings (reports.c); NULL: none.  A callback,
     * so that export does not depend on insight. */
    void (*advice_text)(const void *ctx, aip__out *o);
    void (*advice_html)(const void *ctx, aip__out *o);
    const void *advice_ctx;
} aip__summary_data;

/* aip__summary_build() : the facts of `dir`'s model (its info says which
 * switches were on). */
aip_status aip__summary_build(const char *dir, const aip__model *m, aip__summary_data *s);
/* aip__summary_note() : one more note (not collected / problems); past
 * AIP_SUMMARY_NOTES the rest are dropped. */
void aip__summary_note(aip__summary_data *s, const char *fmt, ...) AIP_PRINTF(2, 3);
void aip__summary_free(aip__summary_data *s);
/* summary_device.c : the device facts, their text and HTML sections. */
aip_status aip__summary_device_build(aip__summary_data *s);
void aip__summary_device_free(aip__summary_data *s);
void aip__summary_device_text(const aip__summary_data *s, aip__out *o);
void aip__summary_device_html(const aip__summary_data *s, aip__out *o);
/* summary_host.c : the host system facts (host_sys, sys_io), their notes,
 * text and HTML sections (with the CPU and RSS curves). */
aip_status aip__summary_host_build(aip__summary_data *s);
void aip__summary_host_free(aip__summary_data *s);
void aip__summary_host_text(const aip__summary_data *s, aip__out *o);
void aip__summary_host_html(const aip__summary_data *s, aip__out *o);
/* summary_mstx.c : the mstx ranges, their text and HTML sections. */
aip_status aip__summary_mstx_build(aip__summary_data *s);
void aip__summary_mstx_free(aip__summary_data *s);
void aip__summary_mstx_text(const aip__summary_data *s, aip__out *o);
void aip__summary_mstx_html(const aip__summary_data *s, aip__out *o);
/* The device memory peaks: text lines, or the rows of the HTML table. */
void aip__summary_devmem_text(const aip__summary_data *s, aip__out *o);
void aip__summary_devmem_html(const aip__summary_data *s, aip__out *o);
/* put_term() of summary.c: a recorded name for a terminal, at most `max`
 * characters, control bytes and invalid UTF-8 as '?'. */
void aip__summary_put_term(aip__out *o, const char *s, size_t n, size_t max);
/* A byte count in the unit that reads best: "512 B", "2.50 KiB", "3.50 MiB". */
void aip__summary_put_bytes(aip__out *o, int64_t b);

/* Terminal text: control characters in recorded names are neutralised. */
aip_status aip__summary_text(const aip__summary_data *s, aip__out *o);
aip_status aip__summary_html(const aip__summary_data *s, aip__out *o);

#endif
