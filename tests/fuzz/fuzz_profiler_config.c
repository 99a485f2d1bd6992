/*
 * fuzz_profiler_config.c — libFuzzer target for the profiler_config.json
 * parser (src/dynamic/dyn_config.c), the file any user of dynamic
 * profiling edits while training runs: every input is parsed as the
 * watcher and each process parse it, and what comes back is checked.
 * A rejected input must leave a message and nothing to free; an accepted
 * one must be a config aip_config_validate() accepts, with the dynamic
 * keys in range (flight_recorder's included).
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_profiler_config
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 */
#include "dyn_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A broken invariant is a crash, so libFuzzer keeps the input. */
#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz_profiler_config: %s failed\n", #cond);               \
            abort();                                                                   \
        }                                                                              \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        setenv("AIPROF_QUIET", "1", 1);
        quiet = 1;
    }
    aip__dyn_config c;
    char error[512], warning[512];
    aip_status st = aip__dyn_config_parse((const char *)data, size, &c, error, sizeof error,
                                         warning, sizeof warning);
    CHECK(memchr(error, '\0', sizeof error) && memchr(warning, '\0', sizeof warning));
    if (st != AIP_OK) {
        CHECK(error[0]);
        CHECK(!c.rank_list && !c.metadata && !c.include && !c.exclude);
        return 0;
    }
    CHECK(!error[0]);
    CHECK(aip_config_validate(&c.cfg) == AIP_OK);
    CHECK(c.active > 0 && c.warmup >= 0 && c.start_step >= -1);
    CHECK(c.cfg.dir_name == c.prof_dir && c.prof_dir[0]);
    CHECK(!c.n_ranks || c.rank_list);
    /* flight_recorder: armed with a window > 0 and no schedule, or off */
    CHECK(c.cfg.flight_recorder_seconds >= 0);
    CHECK(!aip__dyn_config_flight(&c) || !c.cfg.has_schedule);
    CHECK(!c.cfg.flight_ring_dir || (c.cfg.flight_ring_dir == c.flight_ring_dir &&
                                     c.flight_ring_dir[0]));
    for (size_t i = 0; i < c.n_ranks; i++) {
        CHECK(c.rank_list[i] >= 0);
        if (c.rank_list[i] <= INT32_MAX)
            CHECK(aip__dyn_config_selects_rank(&c, (int)c.rank_list[i]));
    }
    CHECK(aip__dyn_config_selects_rank(&c, -1) == !c.is_rank);
    for (char **l = c.include; l && *l; l++)
        CHECK(**l);
    for (char **l = c.exclude; l && *l; l++)
        CHECK(**l);
    aip__dyn_config_free(&c);
    return 0;
}
