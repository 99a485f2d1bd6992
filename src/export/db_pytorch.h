/*
 * db_pytorch.h — ascend_pytorch_profiler[_{rank}].db and analysis.db.
 *
 * Tables follow the seed's DDL (reference §2.4–2.5) and are written by
 * topic: framework APIs (db_pytorch_api.c), memory (db_pytorch_memory.c),
 * the small per-profile tables (db_pytorch.c), the device tables
 * (db_device.c: TASK, COMPUTE_TASK_INFO, CANN_API, MEMCPY_INFO, ... when a
 * device back end recorded activity), analysis.db (db_analysis.c).
 * The two exporters themselves are declared with the others in export.h.
 * COMMUNICATION_OP (db_comm.c) and MSTX_EVENTS (db_mstx.c) are msprof's
 * tables, filled from the host's records (docs/DATABASES.md).
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
/* db_comm.c : COMMUNICATION_OP when communication ops were recorded
 * (strings in msprof's range, as the device tables). */
int aip__db_has_comm(const aip__model *m);
aip_status aip__db_write_comm(aip__db *d, const aip__model *m, aip__db_strings *dev_strings);
/* db_mstx.c : MSTX_EVENTS and ENUM_MSTX_EVENT_TYPE when mstx marks or
 * ranges were recorded (messages from the API strings).  A mark and a
 * start/end range link to their PYTORCH_API row (db_pytorch_api.c) by
 * connection id AIP__MSTX_CONN_START + k, k counting them over the model's
 * processes in order, marks first, then the ranges that ended (both
 * writers count the same way: aip__mstx_linked()); push/pop ranges carry
 * msprof's unlinked AIP__MSTX_CONN_DEFAULT. */
#define AIP__MSTX_CONN_DEFAULT INT64_C(4000000000)
#define AIP__MSTX_CONN_START (AIP__MSTX_CONN_DEFAULT + 1)
/* aip__mstx_linked() : how many of process p's mstx events are linked:
 * its marks, then its range starts that have an end. */
size_t aip__mstx_linked(const aip__process *p);
aip_status aip__db_write_mstx(aip__db *d, const aip__model *m, aip__db_strings *api_strings);
/* db_host.c : CPU_USAGE, HOST_MEM_USAGE, HOST_DISK_USAGE,
 * HOST_NETWORK_USAGE, NIC and ROCE from the host samples (host_sys,
 * sys_io); nothing without them. */
aip_status aip__db_write_host(aip__db *d, const aip__model *m);
/* aip__db_has_device() : any runtime call or device task in m. */
int aip__db_has_device(const aip__model *m);
/* aip__db_write_device() : the device tables, after the API tables (it adds
 * rows to ENUM_API_TYPE); nothing without device activity. */
aip_status aip__db_write_device(aip__db *d, const aip__model *m, aip__db_strings *dev_strings);

#endif
