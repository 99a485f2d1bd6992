/*
 * fuzz_cluster_wire.c — libFuzzer target for the wire format of `aiprof
 * cluster --mpi` (src/cluster/cluster_wire.c): what process 0 unpacks from
 * the other processes' messages.  They are the same build, but a message
 * cut by a failing transport or a process that wrote garbage must end in
 * AIP_ERR_CORRUPT (or the mismatch errors), never a crash, an over-read,
 * or an "out of memory" for a short message.
 *
 * The first byte chooses: even, one rank directory (aip__rank_dir_unpack),
 * which, when it unpacks, must pack again to bytes that unpack and pack to
 * the same bytes (nothing lost or changed on the way); odd, a process's
 * whole share (aip__cluster_unpack_share) into a cluster of three
 * directories split over two processes.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_cluster_wire
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_cluster_wire.py (through
 * tests/fuzz/wire_seed.c, which packs real rank directories).
 */
#include "cluster.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_cluster_wire: %s failed\n", #cond);                          \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* A message this small cannot run a reader out of memory. */
#define SMALL (1u << 20)

static void one_rank(const uint8_t *data, size_t size)
{
    aip__rank_dir r;
    size_t used = 0;
    aip_status s = aip__rank_dir_unpack(data, size, &used, &r);
    if (s != AIP_OK) {
        CHECK(s == AIP_ERR_CORRUPT || (s == AIP_ERR_NOMEM && size > SMALL));
        return;
    }
    CHECK(used <= size);
    unsigned char *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0, used2 = 0;
    CHECK(aip__rank_dir_pack(&r, &b1, &n1) == AIP_OK);
    aip__rank_dir r2;
    CHECK(aip__rank_dir_unpack(b1, n1, &used2, &r2) == AIP_OK);
    CHECK(used2 == n1);
    CHECK(aip__rank_dir_pack(&r2, &b2, &n2) == AIP_OK);
    CHECK(n1 == n2 && !memcmp(b1, b2, n1));
    free(b1);
    free(b2);
    aip__rank_dir_free(&r);
    aip__rank_dir_free(&r2);
}

static void share(const uint8_t *data, size_t size)
{
    aip__cluster c;
    memset(&c, 0, sizeof c);
    static const char *const paths[] = {"job/a_1_ascend_pt", "job/b_2_ascend_pt",
                                        "job/c_3_ascend_pt"};
    c.dir = "job";
    c.fd = -1;
    c.quiet = 1;
    c.parts = 2;
    c.n = c.cap = 3;
    CHECK((c.r = calloc(3, sizeof *c.r)) != NULL);
    for (size_t i = 0; i < 3; i++) {
        CHECK((c.r[i].path = strdup(paths[i])) != NULL);
        c.r[i].rank = -1;
    }
    aip_status s = aip__cluster_unpack_share(&c, 1, data, size);
    /* any status: a process may report its own failure, with its code */
    CHECK(s == AIP_OK || aip_last_error()[0]);
    for (size_t i = 0; i < 3; i++) {
        CHECK(c.r[i].path && !strcmp(c.r[i].path, paths[i])); /* never swapped for another */
        aip__rank_dir_free(&c.r[i]);
    }
    free(c.r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    if (data[0] & 1)
        share(data + 1, size - 1);
    else
        one_rank(data + 1, size - 1);
    return 0;
}
