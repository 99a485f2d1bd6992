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
    /* What the seed makes outputs depend on (defaults when absent). */
    unsigned activities;      /* AIP_ACTIVITY_* named in common_config; 0 = not given */
    int has_schedule;         /* a non-empty schedule object */
    aip_profiler_level profiler_level;  /* _profiler_level; Level0 when absent */
    int data_simplification;  /* _data_simplification; 1 when absent */
    int record_op_args;       /* record_op_args */
    int mstx;                 /* _mstx or _msprof_tx */
    int gc_detect;            /* _gc_detect_threshold is a number (not null) */
    unsigned host_sys;        /* AIP_HOST_SYS_* named in _host_sys */
    int l2_cache, sys_io, sys_interconnection, op_attr;
    int has_start_sync;
    aip_clock_sync start_sync;
    char problem[256];        /* why nothing (or not everything) was read */
} aip_profiler_info;

/* aip__profiler_info_read() : fill *out from `result_dir`; always AIP_OK
 * except for running out of memory. */
aip_status aip__profiler_info_read(const char *result_dir, aip_profiler_info *out);

/* aip__profiler_level_parse() : "Level1", "ProfilerLevel.Level_none", ...;
 * @return 0 and *out, or -1 if unknown. */
int aip__profiler_level_parse(const char *text, aip_profiler_level *out);

/* aip__export_type_parse() : "text", "db", "ExportType.Text", ... → bits, 0 if unknown. */
unsigned aip__export_type_parse(const char *text);

/* profiler_metadata.json as (key, JSON text) pairs (profiler_metadata.c). */
typedef struct aip_metadata {
    int found;
    size_t n;
    char **keys;
    char **values;            /* json.dumps()-style text of each value */
    char problem[160];        /* why nothing was read, "" if read */
} aip_metadata;

/* aip__metadata_read() : AIP_OK unless out of memory; a missing or broken
 * file leaves md->found 0 and the reason in md->problem. */
aip_status aip__metadata_read(const char *result_dir, aip_metadata *md);
void aip__metadata_free(aip_metadata *md);

#endif
