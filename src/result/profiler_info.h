/*
 * profiler_info.h — reading the result directory's JSON files into the
 * model's aip__profiler_info_data and aip__metadata (model.h says what they hold):
 * profiler_info[_{rank}].json (profiler_info.c) and profiler_metadata.json
 * (profiler_metadata.c).  A missing or unreadable file is normal (the
 * program may have crashed before writing it): defaults are used and the
 * reason is kept in `problem`.
 */
#ifndef AIP_PROFILER_INFO_H
#define AIP_PROFILER_INFO_H

#include "aiprof.h"
#include "config_names.h" /* the parsers of level and export type */
#include "model.h"

/* aip__profiler_info_read() : fill *out from `result_dir`; always AIP_OK
 * except for running out of memory. */
aip_status aip__profiler_info_read(const char *result_dir, aip__profiler_info_data *out);

/* aip__metadata_read() : AIP_OK unless out of memory; a missing or broken
 * file leaves md->found 0 and the reason in md->problem.  Free with
 * aip__metadata_free() (model.c; aip__model_free frees the model's). */
aip_status aip__metadata_read(const char *result_dir, aip__metadata *md);

#endif
