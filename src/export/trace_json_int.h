/*
 * trace_json_int.h — what trace_json.c (the events of trace_view.json) and
 * trace_json_header.c (the keys around them) share.  Nothing outside these
 * two files includes it.
 */
#ifndef AIP_TRACE_JSON_INT_H
#define AIP_TRACE_JSON_INT_H

#include "model.h"
#include "outbuf.h"

/* aip__trace_put_cstr() : `s` as a JSON string, escaped like every other
 * string of the trace (text_escape.h). */
void aip__trace_put_cstr(aip__out *o, const char *s);

/* aip__trace_run_facts() : the run-wide facts as `"key":value,...` without
 * braces: Kineto's header keys, or the first process_name's args in
 * torch_npu's form (an array has no top-level keys). */
void aip__trace_run_facts(aip__out *o, const aip__model *m);

/* aip__trace_kineto_header() : everything of Kineto's form up to and
 * including `"traceEvents":[`; `base` is baseTimeNanoseconds. */
void aip__trace_kineto_header(aip__out *o, const aip__model *m, int64_t base);

#endif
