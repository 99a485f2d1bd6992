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
    char notes[AIP_SUMMARY_NOTES][320]; /* not collected / problems, plain text */
    size_t n_notes;
    aip__mem_timeline mem;     /* of the first device with records, if any */
    int has_mem;
} aip__summary_data;

/* aip__summary_build() : the facts of `dir`'s model (its info says which
 * switches were on). */
aip_status aip__summary_build(const char *dir, const aip__model *m, aip__summary_data *s);
void aip__summary_free(aip__summary_data *s);
/* Terminal text: control characters in recorded names are neutralised. */
aip_status aip__summary_text(const aip__summary_data *s, aip__out *o);
aip_status aip__summary_html(const aip__summary_data *s, aip__out *o);

#endif
