/*
 * profiler_info.h — what analysis takes from profiler_info[_{rank}].json:
 * the export type, the rank, the config flags shown in trace metadata, and
 * the start clock sync (used only when the raw file lost its CLOCK chunks).
 * A missing or unreadable file is normal (the program may have crashed
 * before writing it): defaults are used and the reason is kept in `problem`.
 */
#ifndef AIP_PROFILER_INFO_H
#define AIP_PROFILER_INFO_H

#include "aiprof.h"
#include "raw_format.h"

typedef struct aip_profiler_info {
    int found;                /* a file was read and parsed */
    char file[64];            /* its name */
    unsigned export_type;     /* AIP_EXPORT_* from _export_type; 0 = not given */
    int64_t rank;             /* rank_id; -1 = none */
    int has_config;
    int record_shapes, profile_memory, with_stack, with_flops, with_modules;
    int has_start_sync;
    aip_clock_sync start_sync;
    char problem[256];        /* why nothing (or not everything) was read */
} aip_profiler_info;

/* aip__profiler_info_read() : fill *out from `result_dir`; always AIP_OK
 * except for running out of memory. */
aip_status aip__profiler_info_read(const char *result_dir, aip_profiler_info *out);

/* aip__export_type_parse() : "text", "db", "ExportType.Text", ... → bits, 0 if unknown. */
unsigned aip__export_type_parse(const char *text);

#endif
