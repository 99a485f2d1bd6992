/*
 * export.h — the output formats analysis writes into ASCEND_PROFILER_OUTPUT.
 * Every exporter has one shape, aip__export_fn: it reads a derived model
 * (raw data plus what profiler_info / profiler_metadata said) and writes
 * one file through an aip__out; none of them changes the model.  The
 * driver, src/result/analyse_dir.c, runs them from one table.  Streamed
 * formats put bytes into the aip__out; the databases are built by SQLite at
 * the aip__out's path (aip__out_target, outbuf.h).
 */
#ifndef AIP_EXPORT_H
#define AIP_EXPORT_H

#include "model.h"
#include "outbuf.h"

typedef aip_status (*aip__export_fn)(const aip__model *m, aip__out *o);

/* trace_json.c : trace_view.json (Chrome trace events with Kineto's
 * metadata keys; rank and config flags from m->info). */
aip_status aip__export_trace_json(const aip__model *m, aip__out *o);

/* trace_perfetto.c : trace.perfetto-trace, the same timeline in Perfetto's
 * protobuf TrackEvent format (written when m->trace_format is
 * AIP_TRACE_PERFETTO). */
aip_status aip__export_trace_perfetto(const aip__model *m, aip__out *o);

/* csv_operator_details.c : operator_details.csv, one row per framework op. */
aip_status aip__export_operator_details(const aip__model *m, aip__out *o);

/* csv_kernel_details.c : kernel_details.csv, one row per device task. */
aip_status aip__export_kernel_details(const aip__model *m, aip__out *o);

/* csv_step_trace.c : step_trace_time.csv from m->step_rows. */
aip_status aip__export_step_trace(const aip__model *m, aip__out *o);

/* json_comm.c : communication.json and communication_matrix.json (when
 * communication ops were recorded; src/analysis/comm_derive.c). */
aip_status aip__export_communication(const aip__model *m, aip__out *o);
aip_status aip__export_communication_matrix(const aip__model *m, aip__out *o);
/* csv_nic.c : nic.csv / roce.csv, the host's interfaces and RDMA ports
 * (sys_io, docs/HOST_SYS.md). */
aip_status aip__export_nic_csv(const aip__model *m, aip__out *o);
aip_status aip__export_roce_csv(const aip__model *m, aip__out *o);

/* csv_memory.c : memory_record.csv and operator_memory.csv (profile_memory). */
aip_status aip__export_memory_record(const aip__model *m, aip__out *o);
aip_status aip__export_operator_memory(const aip__model *m, aip__out *o);
/* aip__fmt_device_tag() : "CPU", "NPU:0", "CUDA:1" (at most 24 bytes). */
char *aip__fmt_device_tag(char *d, uint8_t type, int8_t index);

/* csv_statistic.c : op_statistic.csv (device tasks, Core Type the device's
 * kind; without them framework ops, Core Type CPU) and api_statistic.csv
 * (Level1/Level2; host APIs and device runtime calls). */
aip_status aip__export_op_statistic(const aip__model *m, aip__out *o);
aip_status aip__export_api_statistic(const aip__model *m, aip__out *o);

/* db_pytorch.c : ascend_pytorch_profiler[_{rank}].db at o->path (an
 * aip__out_target); db_analysis.c : analysis.db the same way. */
aip_status aip__export_pytorch_db(const aip__model *m, aip__out *o);
aip_status aip__export_analysis_db(const aip__model *m, aip__out *o);
/* aip__db_name() : "ascend_pytorch_profiler.db" (rank -1) or
 * "ascend_pytorch_profiler_{rank}.db". */
void aip__db_name(int64_t rank, char *out, size_t cap);

/* The first line of each CSV file, exactly as the seed spells it. */
/* operator_details.csv: always the seed's nine columns, so readers that
 * index them by name find every one; the four Device cells are empty for
 * an op that launched no device task. */
#define AIP_OPERATOR_DETAILS_HEADER                                                       \
    "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),"        \
    "Device Self Duration(us),Device Total Duration(us),"                                 \
    "Device Self Duration With AICore(us),Device Total Duration With AICore(us)"
#define AIP_STEP_TRACE_HEADER                                                             \
    "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"    \
    "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing"

#define AIP_MEMORY_RECORD_HEADER                                                          \
    "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),"     \
    "Stream Ptr,Device Type"
#define AIP_OPERATOR_MEMORY_HEADER                                                        \
    "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),"         \
    "Duration(us),Active Duration(us),Allocation Total Allocated(MB),"                    \
    "Allocation Total Reserved(MB),Allocation Total Active(MB),"                          \
    "Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),"   \
    "Stream Ptr,Device Type"
#define AIP_OP_STATISTIC_HEADER                                                           \
    "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),"         \
    "Max Time(us),Ratio(%)"
#define AIP_API_STATISTIC_HEADER                                                          \
    "Device_id,Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance"

#endif
