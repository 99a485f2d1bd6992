/*
 * db_pytorch.h — ascend_pytorch_profiler[_{rank}].db and analysis.db.
 *
 * Tables follow the seed's DDL (reference §2.4–2.5) and are written by
 * topic: framework APIs (db_pytorch_api.c), memory (db_pytorch_memory.c),
 * the small per-profile tables (db_pytorch.c), analysis.db (db_analysis.c).
 * Device and communication tables (TASK, COMPUTE_TASK_INFO, CANN_API,
 * COMMUNICATION_*, NPU_*, ...) come from a device back end; aiprof has none,
 * so they are never created (docs/DATABASES.md).
 */
#ifndef AIP_DB_PYTORCH_H
#define AIP_DB_PYTORCH_H

#include "db.h"
#include "db_strings.h"
#include "model.h"
#include "profiler_info.h"

extern const aip_db_table aip__tbl_pytorch_api, aip__tbl_connection_ids, aip__tbl_callchains,
    aip__tbl_enum_api_type;

/* What a database export was given besides the model. */
typedef struct aip_db_inputs {
    const aip_model *m;
    const aip_profiler_info *info;
    const aip_metadata *meta;
} aip_db_inputs;

/* aip__db_name() : "ascend_pytorch_profiler.db" (rank -1) or
 * "ascend_pytorch_profiler_{rank}.db". */
void aip__db_name(int64_t rank, char *out, size_t cap);

/* aip__export_pytorch_db() : the whole database at `path`. */
aip_status aip__export_pytorch_db(const aip_db_inputs *in, const char *path);
/* aip__export_analysis_db() : analysis.db (StepTraceTime) at `path`. */
aip_status aip__export_analysis_db(const aip_model *m, const char *path);

/* Parts (each writes its tables into an open database). */
aip_status aip__db_write_api(aip_db *d, const aip_model *m, const aip_profiler_info *info,
                             aip_db_strings *api_strings);
aip_status aip__db_write_memory(aip_db *d, const aip_model *m, const aip_profiler_info *info,
                                aip_db_strings *mem_strings);

#endif
