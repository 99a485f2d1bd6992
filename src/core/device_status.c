/*
 * device_status.c — what the device back ends (the collectors with a
 * `backend`, collector.h) say of device data: why the open trace records
 * none (profiler_info.json's aiprof.device_status, the trace log), and the
 * public queries aip_device_status() and aip_supported_activities().
 */
#include "collector.h"
#include "device.h"
#include "session_log.h"

#include <stdio.h>

#define MAX_BACKENDS 64

int aip__dev_wanted(const aip_config *cfg)
{
    return (cfg->activities & AIP_ACTIVITY_DEVICES) || cfg->use_cuda;
}

/* The device back ends among the collectors, into out[0..cap). */
static size_t backends_now(const aip__collector **out, size_t cap)
{
    size_t n = 0, i = 0;
    for (const aip__collector *c; (c = aip__collector_each(&i)) && n < cap;)
        if (c->backend)
            out[n++] = c;
    return n;
}

/* Why the open trace, which asked for device activity, gets none ("" =
 * it gets some, or did not ask): written into its profiler_info.json
 * (aip__dev_trace_status) and, once per process, into its log
 * (collect/README.md; the Python package warns once on stderr, from
 * aip_device_status). */
static char trace_why[600];
static int status_logged;

/* trace_why from the back ends' words now; logged (once per process)
 * only at the trace's stop: a back end may start during the trace (CUDA
 * at the program's cuInit, through the driver's injection), and a log
 * saying "no device data" at the start would then be false. */
static void say_why_nothing(int log)
{
    char why[512] = "";
    const aip__collector *list[MAX_BACKENDS];
    size_t len = 0, n = backends_now(list, MAX_BACKENDS);
    int working = 0;
    for (size_t i = 0; i < n; i++) {
        const aip__collector *b = list[i];
        const char *st = b->status ? b->status() : NULL;
        if (!st) {
            working = 1;
            continue;
        }
        len += (size_t)snprintf(why + len, len < sizeof why ? sizeof why - len : 0, "%s%s: %s",
                                len ? "; " : "", b->name, st);
    }
    trace_why[0] = 0;
    if (working)
        return;
    if (!n)
        snprintf(trace_why, sizeof trace_why,
                 "this libaiprof has no device back end (built without OpenCL/CUDA headers)");
    else
        snprintf(trace_why, sizeof trace_why, "no device data can be collected (%s)", why);
    if (!log || status_logged)
        return;
    status_logged = 1;
    aip__log("INFO", "device activity requested, but %s; only host data is collected",
             trace_why);
}

const char *aip__dev_trace_status(void)
{
    return trace_why[0] ? trace_why : NULL;
}

void aip__dev_trace_started(int device_requested)
{
    trace_why[0] = 0;
    if (device_requested)
        say_why_nothing(0);
}

void aip__dev_trace_stopping(void)
{
    if (aip__dev_recording())
        say_why_nothing(1);
}

/* ---- what this machine can collect (aiprof.h) ----------------------- */

int aip__dev_status_of(const aip__collector *const *b, size_t n, char *buf, size_t cap)
{
    size_t len = 0;
    int working = 0;
    char none[1];
    if (!buf || !cap) { /* only the count is wanted */
        buf = none;
        cap = sizeof none;
    }
    buf[0] = 0;
    if (!n)
        snprintf(buf, cap, "this libaiprof has no device back end built in: OpenCL or CUDA "
                           "headers were missing when it was built");
    for (size_t i = 0; i < n; i++) {
        const char *st = b[i]->status ? b[i]->status() : NULL;
        working += !st;
        if (len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s: %s", len ? "; " : "",
                                    b[i]->name, st ? st : "device found");
    }
    return working;
}

unsigned aip__dev_activities_of(const aip__collector *const *b, size_t n)
{
    unsigned bits = AIP_ACTIVITY_CPU;
    for (size_t i = 0; i < n; i++) {
        const char *(*why)(void) = b[i]->probe ? b[i]->probe : b[i]->status;
        if (why && why())
            continue;
        bits |= AIP_ACTIVITY_NPU | b[i]->activities;
    }
    return bits;
}

int aip_device_status(char *buf, size_t cap)
{
    const aip__collector *list[MAX_BACKENDS];
    return aip__dev_status_of(list, backends_now(list, MAX_BACKENDS), buf, cap);
}

unsigned aip_supported_activities(void)
{
    const aip__collector *list[MAX_BACKENDS];
    return aip__dev_activities_of(list, backends_now(list, MAX_BACKENDS));
}
