/*
 * summary.h — `aiprof summary`: what a profile says at a glance — top ops
 * by self time, step times, memory peaks, dropped events and raw-data
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

typedef struct aip_summary {
    const char *dir;
    const aip_model *m;
    const aip_profiler_info *info; /* &m->info */
    aip_op_stat *ops;         /* framework ops by self time, longest first */
    size_t n_ops;
    int64_t ops_self_total;   /* sum of every op's self time */
    int64_t *step_ns;         /* per ProfilerStep, step order */
    size_t n_steps;
    int64_t step_min, step_median, step_max, step_mean;
    char notes[AIP_SUMMARY_NOTES][320]; /* not collected / problems, plain text */
    size_t n_notes;
    aip_mem_timeline mem;     /* of the first device with records, if any */
    int has_mem;
} aip_summary;

/* aip__summary_build() : the facts of `dir`'s model (its info says which
 * switches were on). */
aip_status aip__summary_build(const char *dir, const aip_model *m, aip_summary *s);
void aip__summary_free(aip_summary *s);
/* Terminal text: control characters in recorded names are neutralised. */
aip_status aip__summary_text(const aip_summary *s, aip_out *o);
aip_status aip__summary_html(const aip_summary *s, aip_out *o);

#endif
