/*
 * fuzz_dyn_shared.c — libFuzzer target for the reader of dynamic
 * profiling's shared segment (/dev/shm/aiprof_dp_{uid}_{hash},
 * src/dynamic/dyn_watch.c): what each process reads from the segment the
 * watcher publishes edits in (aip__dyn_watch_generation, then
 * aip__dyn_watch_read, through the descriptor), and the config thread's
 * parse of what it read (dyn_parse.c's parse_edit).  The segment is a file
 * another process writes and may truncate: the length, the verdict, the
 * message and the text may be anything, and none of it may be read past.
 *
 * The input is the segment's whole content, in a memfd of exactly its
 * size (a short one is a truncated segment).  The seqlock (at offset 32 of
 * struct aip__dyn_shared, version 1) is forced even: an odd value only
 * makes the reader wait (1000 times 100 us) and give up, which tells
 * nothing and would slow the fuzzer.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_dyn_shared
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_dyn_shared.py.
 */
#include "dyn_config.h"
#include "dyn_watch.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
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

enum { SEQ_AT = 32 }; /* offsetof(struct aip__dyn_shared, seq) */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        setenv("AIPROF_QUIET", "1", 1);
        CHECK((fd = memfd_create("aip_fuzz_dyn_shared", MFD_CLOEXEC)) >= 0);
    }
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(pwrite(fd, data, size, 0) == (ssize_t)size);
    if (size >= SEQ_AT + 4) {
        uint32_t seq;
        memcpy(&seq, data + SEQ_AT, 4);
        seq &= ~1u;
        CHECK(pwrite(fd, &seq, 4, SEQ_AT) == 4);
    }

    aip__dyn_watch w;
    memset(&w, 0, sizeof w);
    w.fd = fd;
    w.attached = 1;
    (void)aip__dyn_watch_generation(&w);
    char *text = NULL, message[512];
    size_t len = 0;
    int valid = 0;
    memset(message, 'x', sizeof message);
    if (aip__dyn_watch_read(&w, &text, &len, &valid, message, sizeof message) != 0) {
        CHECK(!text && w.broken); /* a truncated segment: said, nothing read */
        return 0;
    }
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
