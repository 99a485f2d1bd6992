/*
 * export.h — the output formats.  Each exporter reads a derived model and
 * streams one file through an aip_out; none of them changes the model.
 */
#ifndef AIP_EXPORT_H
#define AIP_EXPORT_H

#include "model.h"
#include "outbuf.h"
#include "profiler_info.h"

/* trace_json.c : ASCEND_PROFILER_OUTPUT/trace_view.json (Chrome trace
 * events with Kineto's metadata keys).  `info` may be NULL. */
aip_status aip__export_trace_json(const aip_model *m, const aip_profiler_info *info, aip_out *o);

/* csv_operator_details.c : operator_details.csv, one row per framework op. */
aip_status aip__export_operator_details(const aip_model *m, aip_out *o);

/* csv_step_trace.c : step_trace_time.csv from m->step_rows. */
aip_status aip__export_step_trace(const aip_model *m, aip_out *o);

/* The first line of each CSV file, exactly as the seed spells it. */
#define AIP_OPERATOR_DETAILS_HEADER                                                       \
    "Name,Input Shapes,Call Stack,Host Self Duration(us),Host Total Duration(us),"        \
    "Device Self Duration(us),Device Total Duration(us),"                                 \
    "Device Self Duration With AICore(us),Device Total Duration With AICore(us)"
#define AIP_STEP_TRACE_HEADER                                                             \
    "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,"    \
    "Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing"

#endif
