/*
 * nvtx_inject.c — libaiprof as an NVTX tool.  NVTX v3 (header-only, compiled
 * into every program or library that uses it) looks at its first call for
 * NVTX_INJECTION64_PATH, loads that library and calls its
 * InitializeInjectionNvtx2(); we answer by writing nvtx_calls.c's functions
 * into the CORE (default domain) and CORE2 (named domains) slots.  Each copy
 * of NVTX in the process (the program's, the `nvtx` Python package's, NCCL's)
 * initialises on its own and calls us once.
 *
 * NVTX decides once, at its first call, so the variable must be set before
 * it: `aiprof run` sets it for the program, and libaiprof sets it in its own
 * process when the first session that records mstx starts (a program
 * linked with it, `import aiprof`), unless the user set it (another tool:
 * NVTX has one) or AIPROF_NVTX=0.  Loading libaiprof changes no
 * environment: a process that never profiles mstx keeps
 * NVTX_INJECTION64_PATH as it found it.  A copy of NVTX that made its first
 * call before that start stays a no-op for the life of the process
 * (docs/NVTX.md).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nvtx_int.h"
#include "collector.h"
#include "raw_format.h"

#define AIP_NVTX_VERSION 3

static void fill(const aip_nvtx_callbacks_table *cb, int module, const aip__nvtx_slot *slots,
                 size_t count)
{
    aip_nvtx_table table = NULL;
    unsigned int size = 0;
    if (!cb->get_module_function_table(module, &table, &size) || !table)
        return;
    for (size_t i = 0; i < count; i++)
        if (slots[i].id < size && table[slots[i].id])
            *table[slots[i].id] = slots[i].fn;
}

/* Called by NVTX with its export-table getter; nonzero: we attached. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(aip_nvtx_get_export_table get)
{
    if (!get)
        return 0;
    const aip_nvtx_callbacks_table *cb = get(AIP_NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_function_table)
        return 0;
    const aip_nvtx_version_table *ver = get(AIP_NVTX_ETID_VERSIONINFO);
    if (ver && ver->struct_size >= sizeof *ver && ver->set_injection_version)
        ver->set_injection_version(AIP_NVTX_VERSION);
    fill(cb, AIP_NVTX_MODULE_CORE, aip__nvtx_core_slots, aip__nvtx_core_count);
    fill(cb, AIP_NVTX_MODULE_CORE2, aip__nvtx_core2_slots, aip__nvtx_core2_count);
    return 1;
}

/* Point NVTX at this library, when it is a shared libaiprof (a static link
 * cannot be dlopen'ed: naming the program would make NVTX fail to load and
 * turn itself off) and nobody chose another tool. */
static void arm_nvtx_injection(void)
{
    const char *off = getenv("AIPROF_NVTX");
    if ((off && strcmp(off, "0") == 0) || getenv("NVTX_INJECTION64_PATH"))
        return;
    Dl_info info;
    if (!dladdr((void *)InitializeInjectionNvtx2, &info) || !info.dli_fname)
        return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    char abs[PATH_MAX];
    if (strncmp(base, "libaiprof.so", 12) != 0 || !realpath(info.dli_fname, abs))
        return;
    setenv("NVTX_INJECTION64_PATH", abs, 0);
}

/* A session that records mstx started (before its schedule's first
 * trace, so NVTX calls in its unrecorded steps find the tool too): the
 * first time, point NVTX_INJECTION64_PATH at this shared libaiprof;
 * later calls do nothing. */
static void session_started(const aip_config *cfg)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, arm_nvtx_injection);
}

/* mstx (Level_none forces it on, torch_npu's _ExperimentalConfig). */
static int wanted(const aip_config *cfg)
{
    return cfg->mstx || cfg->profiler_level == AIP_LEVEL_NONE;
}

/* No start or stop: NVTX calls record through the mstx calls, which the
 * trace's record mask lets through or not.  `aiprof run` names this
 * library in NVTX_INJECTION64_PATH for the program it launches. */
const aip__collector aip__collector_nvtx = {
    .name = "nvtx",
    .wanted = wanted,
    .session_started = session_started,
    .inject_var = "NVTX_INJECTION64_PATH",
    .inject_off = "AIPROF_NVTX",
    .record_kinds = (1ull << AIP_REC_RANGE) | (1ull << AIP_REC_RANGE_START) |
                    (1ull << AIP_REC_RANGE_END) | (1ull << AIP_REC_MARK),
};
