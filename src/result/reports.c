/*
 * reports.c — the reports made straight from a result directory, without
 * an analysis: aip_summarise() (`aiprof summary`: text and HTML page,
 * summary.c / summary_html.c), aip_export_memory_timeline() (`aiprof
 * memory`, torch's export_memory_timeline: memory_timeline.c) and
 * aip_export_trace() (export_chrome_trace in the form the result directory
 * does not hold: trace_json.c).  Each opens the directory (result_load.c),
 * builds its report and writes it.
 */
#include "result.h"
#include "export.h"
#include "memory_timeline.h"
#include "summary.h"
#include "insight.h"
#include "error.h"
#include "fs.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

aip_status aip__summary(const char *result_dir, int fd, const char *html_path, int quiet)
{
    aip_status st = AIP_OK;
    if (html_path && (st = aip__path_usable(html_path, "HTML report path")))
        return st;
    aip__run_log r;
    aip__model m;
    st = aip__result_open(result_dir, quiet, &r, &m);
    aip__summary_data s;
    if (!st)
        st = aip__summary_build(result_dir, &m, &s);
    if (!st) {
        aip__advise_ctx adv; /* the "Advice" section: aiprof advise's findings */
        st = aip__advise_build(&m, &adv);
        if (!st) {
            s.advice_text = aip__advise_summary_text;
            s.advice_html = aip__advise_summary_html;
            s.advice_ctx = &adv;
        }
        aip__out o;
        if (!st && fd >= 0 && !aip__out_init_fd(&o, fd)) {
            aip__summary_text(&s, &o);
            st = aip__out_close(&o);
        }
        if (!st && html_path && !(st = aip__out_open(&o, html_path)))
            st = aip__out_finish(&o, aip__summary_html(&s, &o));
        if (s.advice_ctx)
            aip__advise_free(&adv);
        aip__summary_free(&s);
    }
    aip__model_free(&m);
    aip__runlog_free(&r);
    return st;
}

aip_status aip_summarise(const char *result_dir, int fd, const char *html_path)
{
    return aip__summary(result_dir, fd, html_path, 0);
}

static aip_status make_parent(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return AIP_OK;
    size_t n = (size_t)(slash - path);
    if (n >= sizeof dir)
        return aip__fail(AIP_ERR_PATH, "path too long: %s", path);
    memcpy(dir, path, n);
    dir[n] = 0;
    return aip__mkdirs(dir);
}

aip_status aip__export_trace(const char *result_dir, const char *path, unsigned trace_format,
                              int quiet)
{
    if (!result_dir || !path)
        return aip__fail(AIP_ERR_INVALID_ARG, "result directory and output path are required");
    if (trace_format > AIP_TRACE_PERFETTO)
        return aip__fail(AIP_ERR_INVALID_ARG, "trace_format %u is not an aip_trace_format value "
                         "(0 torch_npu, 1 kineto, 2 perfetto)", trace_format);
    aip_status s = aip__path_usable(path, "output path");
    if (s)
        return s;
    aip__run_log r;
    aip__model m;
    s = aip__result_open(result_dir, quiet, &r, &m);
    if (!s)
        s = make_parent(path);
    if (!s) {
        m.trace_format = trace_format;
        aip__out o;
        s = aip__out_open(&o, path);
        if (!s)
            s = aip__out_finish(&o, trace_format == AIP_TRACE_PERFETTO
                                        ? aip__export_trace_perfetto(&m, &o)
                                        : aip__export_trace_json(&m, &o));
    }
    aip__model_free(&m);
    aip__runlog_free(&r);
    return s;
}

aip_status aip_export_trace(const char *result_dir, const char *path, unsigned trace_format)
{
    sigset_t xfsz; /* past `ulimit -f`: EFBIG and an error, not SIGXFSZ (aip_analyse_dir) */
    aip__xfsz_block(&xfsz);
    aip_status s = aip__export_trace(result_dir, path, trace_format, 0);
    aip__xfsz_restore(&xfsz);
    return s;
}

aip_status aip__export_memory_timeline(const char *result_dir, const char *path,
                                       const char *device, int quiet, uint64_t *events)
{
    if (!result_dir || !path)
        return aip__fail(AIP_ERR_INVALID_ARG, "result directory and output path are required");
    aip_status s = aip__path_usable(path, "output path");
    uint8_t type;
    int index;
    if (!s && !(device && !strcasecmp(device, "auto"))) /* "auto": chosen from the data */
        s = aip__device_parse(device ? device : "cpu", &type, &index);
    if (s)
        return s;
    aip__run_log r;
    aip__model m;
    s = aip__result_open(result_dir, quiet, &r, &m);
    aip__mem_timeline t;
    if (!s)
        s = aip__mem_timeline_build(&m, device, &t);
    if (!s) {
        if (events)
            *events = t.records;
        s = make_parent(path);
        if (!s)
            s = aip__mem_timeline_write(&t, path);
        aip__mem_timeline_free(&t);
    }
    aip__model_free(&m);
    aip__runlog_free(&r);
    return s;
}

aip_status aip_export_memory_timeline(const char *result_dir, const char *path, const char *device,
                                      uint64_t *records)
{
    sigset_t xfsz; /* past `ulimit -f`: EFBIG and an error, not SIGXFSZ (aip_analyse_dir) */
    aip__xfsz_block(&xfsz);
    aip_status s = aip__export_memory_timeline(result_dir, path, device, 0, records);
    aip__xfsz_restore(&xfsz);
    return s;
}
