/*
 * result.h — working on a whole result directory: reading it into a model
 * (result_load.c), tidying it after an analysis (result_clean.c), the
 * record_op_args directory beside it (op_args.c), and the reports the
 * commands make from it (reports.c: memory timeline, summary).  The
 * analysis itself, aip_analyse_dir(), is analyse_dir.c.
 */
#ifndef AIP_RESULT_H
#define AIP_RESULT_H

#include "model.h"
#include "profiler_info.h"
#include "run_log.h"

#define AIP_OUTPUT_DIR "ASCEND_PROFILER_OUTPUT"

/* aip__result_load() : load every .raw file in FRAMEWORK/ of r->dir and
 * derive; m->info is a copy of *info (read by the caller), m->meta is read
 * from profiler_metadata.json.  On error the model is empty. */
aip_status aip__result_load(aip__run_log *r, const aip__profiler_info_data *info, aip__model *m);

/* aip__result_open() : check the path, read profiler_info, load.  The run
 * log is initialised in every case (free it). */
aip_status aip__result_open(const char *result_dir, int quiet, aip__run_log *r, aip__model *m);

/* aip__output_prune() : remove from ASCEND_PROFILER_OUTPUT every entry
 * whose name is not in `keep` (NULL-terminated): outputs of an earlier
 * analysis with other switches, temporary files of a killed one. */
aip_status aip__output_prune(aip__run_log *r, const char *const *keep);

/* aip__simplify() : data_simplification — remove everything at the top of
 * the result directory but what the seed keeps (profiler_*.json,
 * ASCEND_PROFILER_OUTPUT, FRAMEWORK, logs, PROF_*). */
aip_status aip__simplify(aip__run_log *r);

/* aip__remove_tree() : unlink `path` (a file, a symlink itself, or a
 * directory with its contents) without following symbolic links. */
aip_status aip__remove_tree(const char *path);

/* aip__write_op_args() : record_op_args — `{result_dir}_op_args/` beside
 * the result directory (op_args.c). */
aip_status aip__write_op_args(aip__run_log *r, const aip__model *m);

/* --- reports.c: the reports made straight from a result directory --- */
/* aip__summary() : load `result_dir`; the text to `fd` (-1: none) and, if
 * `html_path`, the page (summary.h).  aip_summarise() with a quiet switch. */
aip_status aip__summary(const char *result_dir, int fd, const char *html_path, int quiet);

/* aip__export_trace() : load `result_dir` and write its trace_view.json in
 * `trace_format` (aip_trace_format) to `path`.  aip_export_trace() with a
 * quiet switch. */
aip_status aip__export_trace(const char *result_dir, const char *path, unsigned trace_format,
                              int quiet);

/* aip__export_memory_timeline() : load `result_dir` and write `path` for
 * `device` (NULL: "cpu"; memory_timeline.h).  aip_export_memory_timeline()
 * with a quiet switch. */
aip_status aip__export_memory_timeline(const char *result_dir, const char *path,
                                       const char *device, int quiet, uint64_t *events);

#endif
