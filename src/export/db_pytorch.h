/*
 * db_pytorch.h — ascend_pytorch_profiler[_{rank}].db and analysis.db.
 *
 * Tables follow the seed's DDL (reference §2.4–2.5) and are written by
 * topic: framework APIs (db_pytorch_api.c), memory (db_pytorch_memory.c),
 * the small per-profile tables (db_pytorch.c), analysis.db (db_analysis.c).
 * The two exporters themselves are declared with the others in export.h.
 * Device and communication tables (TASK, COMPUTE_TASK_INFO, CANN_API,
 * COMMUNICATION_*, NPU_*, ...) come from a device back end; aiprof has none,
 * so they are never created (docs/DATABASES.md).
 */
#ifndef AIP_DB_PYTORCH_H
#define AIP_DB_PYTORCH_H

#include "db.h"
#include "db_strings.h"
#include "export.h"
#include "model.h"

extern const aip__db_table aip__tbl_pytorch_api, aip__tbl_connection_ids, aip__tbl_callchains,
    aip__tbl_enum_api_type;

/* Parts (each writes its tables into an open database). */
aip_status aip__db_write_api(aip__db *d, const aip__model *m, aip__db_strings *api_strings);
aip_status aip__db_write_memory(aip__db *d, const aip__model *m, aip__db_strings *mem_strings);

#endif
