/*
 * config_names.h — the one list of the names of aip_profiler_level and
 * aip_aic_metrics values, as X-macros.  config.c (aip_profiler_level_name,
 * aip_aic_metrics_name, validation messages), the profiler_config.json
 * parser (src/dynamic/dyn_config.c) and the profiler_info.json reader
 * expand them, so a level or metric added here is known to all three.
 *
 * AIP__PROFILER_LEVELS(X): X(value, name) with name as torch_npu's
 * ProfilerLevel spells it.  AIP__AIC_METRICS(X): X(value, name, acl) with
 * name as torch_npu's AiCMetrics spells it in profiler_config.json and acl
 * the ACL constant written to profiler_info.json.  AIP_AIC_DEFAULT has no
 * name: it means "the level's default" and is not listed.
 */
#ifndef AIP_CONFIG_NAMES_H
#define AIP_CONFIG_NAMES_H

#include "aiprof.h"

#define AIP__PROFILER_LEVELS(X)                                                          \
    X(AIP_LEVEL_NONE, "Level_none")                                                      \
    X(AIP_LEVEL0, "Level0")                                                              \
    X(AIP_LEVEL1, "Level1")                                                              \
    X(AIP_LEVEL2, "Level2")

#define AIP__AIC_METRICS(X)                                                              \
    X(AIP_AIC_NONE, "AiCoreNone", "ACL_AICORE_NONE")                                     \
    X(AIP_AIC_PIPE_UTILIZATION, "PipeUtilization", "ACL_AICORE_PIPE_UTILIZATION")        \
    X(AIP_AIC_ARITHMETIC_UTILIZATION, "ArithmeticUtilization",                           \
      "ACL_AICORE_ARITHMETIC_UTILIZATION")                                               \
    X(AIP_AIC_MEMORY, "Memory", "ACL_AICORE_MEMORY_BANDWIDTH")                           \
    X(AIP_AIC_MEMORY_L0, "MemoryL0", "ACL_AICORE_L0B_AND_WIDTH")                         \
    X(AIP_AIC_RESOURCE_CONFLICT_RATIO, "ResourceConflictRatio",                          \
      "ACL_AICORE_RESOURCE_CONFLICT_RATIO")                                              \
    X(AIP_AIC_MEMORY_UB, "MemoryUB", "ACL_AICORE_MEMORY_UB")                             \
    X(AIP_AIC_L2_CACHE, "L2Cache", "ACL_AICORE_L2_CACHE")                                \
    X(AIP_AIC_MEMORY_ACCESS, "MemoryAccess", "ACL_AICORE_MEMORY_ACCESS")

/* "Level_none, Level0, Level1, Level2" and "AiCoreNone, PipeUtilization,
 * ...": the allowed names as messages list them.  Each expands to a
 * literal with a leading ", " and points past it, so it is a
 * `const char *` (for a %s argument), not a literal to concatenate. */
#define AIP__LEVEL_LIST_ITEM(value, name) ", " name
#define AIP__AIC_LIST_ITEM(value, name, acl) ", " name
#define AIP__PROFILER_LEVEL_NAME_LIST (&AIP__PROFILER_LEVELS(AIP__LEVEL_LIST_ITEM)[2])
#define AIP__AIC_METRICS_NAME_LIST (&AIP__AIC_METRICS(AIP__AIC_LIST_ITEM)[2])

/* aip__same_word() : `a` equals `b` ignoring ASCII case (`b` in lower
 * case); not strcasecmp(): the answer must not depend on the locale the
 * profiled program set. */
int aip__same_word(const char *a, const char *b);

/* aip__profiler_level_parse() : "Level1", "ProfilerLevel.Level_none", ...;
 * @return 0 and *out, or -1 if unknown. */
int aip__profiler_level_parse(const char *text, aip_profiler_level *out);

/* aip__export_type_parse() : "text", "db", "ExportType.Text", ... -> bits, 0 if unknown. */
unsigned aip__export_type_parse(const char *text);

#endif
