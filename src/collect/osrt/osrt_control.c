/*
 * osrt_control.c — the OS runtime collector and the trace: the collector
 * aip__collector_osrt (src/core/collector.h).  A trace whose host_sys
 * names OSRT patches the GOT entries when it starts
 * (osrt_got.c) and restores them when it stops, so that a program profiled
 * without OSRT never runs a wrapper.
 *
 * The threshold (AIPROF_OSRT_THRESHOLD_NS, default 10 ms as MindStudio's
 * in-process OSRT tracer, msosrt, uses: MSOSRT_TRACE_THRESHOLD=10000000)
 * is read at each start.  What could not be done is said once per process
 * (statically linked program, libaiprof linked into the program, pages that
 * refused to become writable), and the rest of the profile goes on.
 */
#include "osrt_int.h"
#include "collector.h"
#include "raw_format.h"
#include "clock.h"
#include "error.h"
#include "session_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#define DEFAULT_THRESHOLD_NS 10000000ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int installed;
static int said_static, said_self, said_refused;
static uint64_t threshold_ns = DEFAULT_THRESHOLD_NS;

static uint64_t read_threshold(void)
{
    const char *v = getenv("AIPROF_OSRT_THRESHOLD_NS");
    if (!v || !*v)
        return DEFAULT_THRESHOLD_NS;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end || *v == '-') {
        aip__warn("AIPROF_OSRT_THRESHOLD_NS=\"%s\" is not a number of nanoseconds; using the "
                  "default, %llu ns", v, DEFAULT_THRESHOLD_NS);
        return DEFAULT_THRESHOLD_NS;
    }
    return n;
}

static void report(const aip__osrt_patch_stats *st)
{
    if (st->no_dynamic && !said_static) {
        said_static = 1;
        aip__warn("OS runtime (host_sys OSRT): the program is statically linked; its calls "
                  "cannot be intercepted and no OS runtime calls are recorded (the rest of "
                  "the profile is complete)");
    }
    if (st->self_in_program && !said_self) {
        said_self = 1;
        aip__warn("OS runtime (host_sys OSRT): libaiprof is linked statically into the "
                  "program, whose own calls are therefore not intercepted (link libaiprof.so "
                  "to record them); the libraries it loaded are");
    }
    if (st->refused && !said_refused) {
        said_refused = 1;
        aip__warn("OS runtime (host_sys OSRT): %zu object(s) refused to make their GOT "
                  "writable (mprotect); their calls are not recorded", st->refused);
    }
}

static void init_table(void) { aip__osrt_table_init(); }

/* A trace that records OSRT began (recording is on): patch the loaded
 * objects and start recording their calls. */
static void trace_started(const aip_config *cfg)
{
    pthread_once(&table_once, init_table);
    pthread_mutex_lock(&lock);
    if (!installed) {
        threshold_ns = read_threshold();
        aip__osrt_threshold_ticks =
            (uint64_t)((double)threshold_ns * aip__clock_ticks_per_second() / 1e9);
        aip__osrt_patch_stats st = {0};
        uint64_t t0 = aip__mono_ns();
        aip__osrt_patch_all(&st);
        uint64_t t1 = aip__mono_ns();
        report(&st);
        aip__log("INFO", "OS runtime calls: %zu GOT entries of %zu objects patched in %.3f ms "
                 "(%zu held another interposer's address and were left alone), threshold %llu "
                 "ns", st.slots, st.objects, (double)(t1 - t0) / 1e6, st.foreign,
                 (unsigned long long)threshold_ns);
        installed = 1;
        atomic_store_explicit(&aip__osrt_on, 1, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
}

void aip__osrt_after_dlopen(void)
{
    pthread_mutex_lock(&lock);
    if (installed) {
        aip__osrt_patch_stats st = {0};
        aip__osrt_patch_all(&st);
        report(&st);
    }
    pthread_mutex_unlock(&lock);
}

/* Before the trace ends, while recording is still on: stop recording and
 * restore every patched entry. */
static void trace_stopping(void)
{
    pthread_mutex_lock(&lock);
    if (installed) {
        atomic_store_explicit(&aip__osrt_on, 0, memory_order_release);
        uint64_t t0 = aip__mono_ns();
        size_t restored = aip__osrt_restore_all();
        installed = 0;
        aip__log("INFO", "OS runtime calls: %llu recorded in this process so far, %llu made "
                 "inside the recorder (by a signal handler) not recorded and counted as "
                 "dropped; %zu GOT entries restored in %.3f ms",
                 (unsigned long long)atomic_load(&aip__osrt_recorded),
                 (unsigned long long)atomic_load(&aip__osrt_skipped), restored,
                 (double)(aip__mono_ns() - t0) / 1e6);
    }
    pthread_mutex_unlock(&lock);
}

static int wanted(const aip_config *cfg) { return (cfg->host_sys & AIP_HOST_SYS_OSRT) != 0; }

const aip__collector aip__collector_osrt = {
    .name = "osrt",
    .wanted = wanted,
    .start = trace_started,
    .stop = trace_stopping,
    .record_kinds = 1ull << AIP_REC_OSRT,
};
