/*
 * fuzz_cuda_translate.c — libFuzzer target for the CUDA back end's
 * translation of CUPTI activity buffers into the device model
 * (src/collect/cuda/cuda_translate.c), through the recorder into a result
 * directory, which is then analysed as `aiprof analyse` does.  CUPTI's
 * records are laid out by CUPTI, but nothing in them is trusted (kinds,
 * enums, ordinals, stream ids, times, grid sizes, cut records): every
 * record must end counted exactly once, as a kernel, copy, memset, memory
 * event, ignored, dropped or without a device.
 *
 * The input is a buffer in the packed layout of the unit tests
 * (aip__cuda_packed_next).  A kernel record's `name` is a pointer CUPTI
 * owns; the harness replaces it (before translating) with one of NAMES,
 * chosen by the pointer's low bits, or NULL.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_cuda_translate
 * (needs the CUPTI headers, as the back end does; skipped without them).
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_cuda_translate.py.
 */
#include "collect/cuda/cuda_int.h"
#include "clock.h"
#include "fuzz_files.h"

#include "aiprof.h"

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_cuda_translate: %s failed\n", #cond);                        \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

static const char *const NAMES[] = {
    "_Z6kernelPfi", "add_kernel", "", "_ZN2at6native29vectorized_elementwise_kernelILi4E",
    "bad\n\"name\"\x01,<tag>&", "\xff\xfe not utf-8", "_Z6kernelPfi", NULL,
};

static char *demangle(const char *m)
{
    return !strcmp(m, "_Z6kernelPfi") ? strdup("kernel(float*, int)") : NULL;
}

static const char *device_name(uint32_t ord, char *buf, size_t cap)
{
    if (ord == 3)
        return NULL; /* "CUDA device 3" */
    snprintf(buf, cap, "Fuzz GPU %u \"%s\"", ord, ord == 5 ? "\n<x>" : "");
    return buf;
}

/* Walks the records as the translation will; names fixed, records counted.
 * @return 1 when the walk ended early (the translation counts it dropped). */
static int prepare(uint8_t *buf, size_t n, uint64_t *records)
{
    CUpti_Activity *rec = NULL;
    for (;;) {
        CUptiResult r = aip__cuda_packed_next(buf, n, &rec);
        if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
            return 0;
        if (r != CUPTI_SUCCESS)
            return 1;
        (*records)++;
        if (rec->kind == CUPTI_ACTIVITY_KIND_KERNEL ||
            rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)rec;
            uintptr_t pick;
            memcpy(&pick, &k->name, sizeof pick);
            k->name = NAMES[pick % (sizeof NAMES / sizeof NAMES[0])];
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int devnull = -1;
    if (devnull < 0)
        devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    const char *root = fuzz_dir("aip_fuzz_cuda");
    /* 8-byte aligned, exactly `size` long: an over-read hits ASan's redzone */
    uint8_t *buf = aligned_alloc(8, (size + 7) & ~(size_t)7);
    CHECK(buf != NULL || !size);
    memcpy(buf, data, size);
    uint64_t records = 0;
    int cut = prepare(buf, size, &records);

    aip_config cfg;
    aip_config_init(&cfg);
    cfg.dir_name = root;
    cfg.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_CUDA;
    cfg.export_type = AIP_EXPORT_TEXT | AIP_EXPORT_DB;
    aip_session *s = NULL;
    CHECK(aip_session_create(&cfg, &s) == AIP_OK);
    CHECK(aip_session_start(s) == AIP_OK);
    aip__cuda_tctx t;
    aip__cuda_tctx_init(&t);
    t.demangle = demangle;
    t.device_name = device_name;
    /* the CUPTI buffer's times are whatever the input says; the host's
     * clock is CUPTI's (the timestamp callback) */
    aip__cuda_translate_buffer(&t, buf, size, aip__cuda_packed_next);
    for (uint32_t ord = 0; ord < AIP_CUDA_MAX_ORDINALS; ord++)
        if (t.dev_ids[ord]) {
            uint64_t t0 = aip__ticks(), ns = aip__mono_ns(), t1 = aip__ticks();
            aip__dev_clock(t.dev_ids[ord] - 1, t0, t1, ns, AIP_SYNC_SAME_CLOCK);
        }
    aip__cuda_counts *c = &t.n;
    uint64_t counted = c->kernels + c->copies + c->sets + c->memory + c->ignored + c->dropped +
                       c->no_device;
    if (counted != records + (uint64_t)cut) {
        fprintf(stderr, "fuzz_cuda_translate: %llu records (%s), %llu counted\n",
                (unsigned long long)records, cut ? "cut" : "whole", (unsigned long long)counted);
        abort();
    }
    CHECK(aip_session_stop(s) == AIP_OK);
    const char *dir = aip_session_result_dir(s);
    if (dir && dir[0]) {
        aip_analyse_options o;
        aip_analyse_options_init(&o);
        o.quiet = 1;
        aip_status st = aip_analyse_dir(dir, &o);
        CHECK(st == AIP_OK);
    }
    aip_session_destroy(s);
    free(buf);
    return 0;
}
