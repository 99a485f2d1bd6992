/*
 * fuzz_result_info.c — libFuzzer target for the result directory's JSON
 * readers that `aiprof analyse` (and Python's analyse()) runs first:
 * profiler_info_{rank}.json (src/result/profiler_info.c) and
 * profiler_metadata.json (profiler_metadata.c).  The directory may come
 * from another machine or a crashed program, so anything may be there.
 * The input is cut into the two files (fuzz_files.h); a reader must always
 * return AIP_OK (it keeps the reason of a broken file in `problem`) and
 * leave text it can print.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_result_info
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_result_info.py.
 */
#include "fuzz_files.h"
#include "profiler_info.h"

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_result_info: %s failed\n", #cond);                           \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

static const char *const SLOTS[] = {"profiler_info_3.json", "profiler_metadata.json",
                                    "profiler_info.json"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *root = fuzz_dir("aip_fuzz_result_info");
    fuzz_write_parts(root, SLOTS, sizeof SLOTS / sizeof SLOTS[0], data, size);
    aip__profiler_info_data info;
    memset(&info, 0, sizeof info);
    CHECK(aip__profiler_info_read(root, &info) == AIP_OK);
    CHECK(memchr(info.problem, 0, sizeof info.problem) && memchr(info.file, 0, sizeof info.file));
    CHECK(!info.found || info.file[0]);
    aip__metadata md;
    memset(&md, 0, sizeof md);
    CHECK(aip__metadata_read(root, &md) == AIP_OK);
    CHECK(memchr(md.problem, 0, sizeof md.problem));
    CHECK(!md.n || (md.found && md.keys && md.values));
    for (size_t i = 0; i < md.n; i++) /* the META_DATA rows: text, touched whole */
        CHECK(strlen(md.keys[i]) + strlen(md.values[i]) < ((size_t)1 << 40));
    aip__metadata_free(&md);
    return 0;
}
