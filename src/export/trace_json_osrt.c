/*
 * trace_json_osrt.c — the "OS Runtime API" layer of trace_view.json
 * (reference §2.1: msprof's OSRuntimeApiAssembler, sort index 13), for the
 * blocking calls host_sys OSRT recorded (src/collect/osrt, docs/OSRT.md).
 *
 * The process is pid (pid<<10)|(13<<5)|31 with label "CPU" (a host layer),
 * one thread per OS thread named "Thread <tid>" as msprof names them, and
 * one X event per call named by its function, args: the return value and,
 * for a failed call, its errno name ("EBADF") and number.  Calls of one
 * thread come one after the other (a wrapper records only the outermost
 * call, see osrt_wrap.c), so the slices never overlap.
 */
#include "trace_json_int.h"
#include "osrt_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_OS_RUNTIME_API 13

void aip__trace_osrt_layer(aip__tj *w, const aip__process *p)
{
    if (!p->osrt.n)
        return;
    int64_t opid = aip__tj_layer_pid(p->pid, SORT_OS_RUNTIME_API, AIP__TJ_HOST_DEVICE);
    aip__tj_layer_meta(w, opid, "OS Runtime API", "CPU", SORT_OS_RUNTIME_API);
    uint8_t *named = calloc(p->n_threads ? p->n_threads : 1, 1);
    if (!named) {
        if (!w->status)
            w->status = AIP_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < p->osrt.n; i++) {
        const aip__osrt_call *c = &p->osrt.v[i];
        uint64_t tid = p->threads[c->thread].tid;
        if (!named[c->thread]) {
            named[c->thread] = 1;
            aip__tj_thread_meta(w, opid, tid);
        }
        aip__tj_prefix(w, opid, tid);
        aip__tj_begin(w);
        AIP_OUT_LIT(w->o, "{\"ph\":\"X\",\"cat\":\"os_runtime\",\"name\":");
        aip__tj_put_id(w, c->name);
        aip__out_put(w->o, w->pfx, w->pfx_len);
        aip__tj_ts(w, c->start);
        AIP_OUT_LIT(w->o, ",\"dur\":");
        aip__tj_dur(w, c->start, c->end);
        AIP_OUT_LIT(w->o, ",\"args\":{\"Result\":");
        aip__out_i64(w->o, c->result);
        if (c->failed) {
            AIP_OUT_LIT(w->o, ",\"errno\":");
            aip__out_i64(w->o, c->error);
            const char *en = aip__osrt_errno_name(c->error);
            if (en) {
                AIP_OUT_LIT(w->o, ",\"errno name\":\"");
                aip__out_str(w->o, en);
                AIP_OUT_LIT(w->o, "\"");
            }
        }
        AIP_OUT_LIT(w->o, "}}");
    }
    free(named);
}
