/*
 * fuzz_dyn_shared.c — libFuzzer target for the reader of dynamic
 * profiling's shared segment (/dev/shm/aiprof_dp_{uid}_{hash},
 * src/dynamic/dyn_watch.c): what each process reads from the segment the
 * watcher publishes edits in (aip__dyn_watch_generation, then
 * aip__dyn_watch_read), and the config thread's parse of what it read
 * (dyn_parse.c's parse_edit).  The segment is memory another process
 * writes: the length, the verdict, the message and the text may be
 * anything, and none of it may be read past.
 *
 * The input is laid over a zeroed segment of the real size (the mirror of
 * struct aip__dyn_shared below; a change there must be made here too, and
 * the harness only uses its size and the seqlock's place).  The seqlock is
 * forced even: an odd value only makes the reader wait (1000 times
 * 100 us) and give up, which tells nothing and would slow the fuzzer.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_dyn_shared
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_dyn_shared.py.
 */
#include "dyn_config.h"
#include "dyn_watch.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_dyn_shared: %s failed\n", #cond);                            \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* Mirror of dyn_watch.c's struct aip__dyn_shared (version 1). */
typedef struct segment {
    uint32_t magic, version, watcher_pid, poll_ms;
    uint64_t heartbeat_ns, generation;
    uint32_t seq;
    int32_t valid;
    uint32_t len, ever_had_client;
    uint32_t clients[256];
    char error[512];
    char payload[AIP_DYN_CONFIG_MAX_BYTES + 1];
} segment;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static segment *seg;
    static size_t dirty;
    if (!seg) {
        setenv("AIPROF_QUIET", "1", 1);
        CHECK((seg = calloc(1, sizeof *seg)) != NULL);
    }
    memset(seg, 0, dirty);
    dirty = size < sizeof *seg ? size : sizeof *seg;
    memcpy(seg, data, dirty);
    seg->seq &= ~1u;

    aip__dyn_watch w;
    memset(&w, 0, sizeof w);
    w.fd = -1;
    w.shm = (aip__dyn_shared *)seg;
    (void)aip__dyn_watch_generation(&w);
    char *text = NULL, message[512];
    size_t len = 0;
    int valid = 0;
    memset(message, 'x', sizeof message);
    CHECK(aip__dyn_watch_read(&w, &text, &len, &valid, message, sizeof message) == 0);
    CHECK(text && len <= AIP_DYN_CONFIG_MAX_BYTES && text[len] == '\0');
    CHECK(memchr(message, 0, sizeof message));
    if (valid) {
        aip__dyn_config c;
        char err[512], warn[512];
        aip_status st = aip__dyn_config_parse(text, len, &c, err, sizeof err, warn, sizeof warn);
        CHECK(memchr(err, 0, sizeof err) && memchr(warn, 0, sizeof warn));
        if (st == AIP_OK)
            aip__dyn_config_free(&c);
        else
            CHECK(err[0]);
    }
    free(text);
    return 0;
}
