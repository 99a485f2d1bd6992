/*
 * osrt_export.h — the OS runtime calls (host_sys OSRT, docs/OSRT.md) in
 * the outputs: trace_view.json's "OS Runtime API" layer
 * (trace_json_osrt.c), the
 * OSRT_API table of ascend_pytorch_profiler.db (db_osrt.c), and the
 * "OS runtime" section of `aiprof summary` and its HTML page
 * (summary_osrt.c).
 */
#ifndef AIP_OSRT_EXPORT_H
#define AIP_OSRT_EXPORT_H

#include "db.h"
#include "db_strings.h"
#include "model.h"
#include "outbuf.h"

struct aip__tj;
struct aip__summary_data;

/* aip__trace_osrt_layer() : p's calls as the "OS Runtime API" process;
 * nothing without calls. */
void aip__trace_osrt_layer(struct aip__tj *w, const aip__process *p);

/* aip__db_write_osrt() : the OSRT_API table (msprof's columns name,
 * globalTid, startNs, endNs; name an id into STRING_IDS through `strs`),
 * written when a call was recorded or host_sys named OSRT. */
aip_status aip__db_write_osrt(aip__db *d, const aip__model *m, aip__db_strings *strs);

/* One function's calls, every process together (summary_osrt.c). */
typedef struct aip__osrt_stat {
    const char *name;          /* into a process's string blob */
    size_t len;
    uint64_t calls, failed;
    int64_t total_ns, max_ns;
} aip__osrt_stat;

/* aip__osrt_stats() : per function, by total time (longest first);
 * *out NULL and *n 0 without calls.  The caller frees *out. */
aip_status aip__osrt_stats(const aip__model *m, aip__osrt_stat **out, size_t *n);

/* The summary's "OS runtime" section: terminal text, HTML. */
void aip__summary_osrt_text(const struct aip__summary_data *s, aip__out *o);
void aip__summary_osrt_html(const struct aip__summary_data *s, aip__out *o);

/* aip__osrt_errno_name() : "EBADF" for EBADF, NULL when unknown. */
const char *aip__osrt_errno_name(int error);

#endif
