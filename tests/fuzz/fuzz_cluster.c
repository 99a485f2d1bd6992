/*
 * fuzz_cluster.c — libFuzzer target for `aiprof cluster`'s readers: every
 * file it reads from a rank directory (profiler_info_{rank}.json,
 * profiler_metadata.json with distributed_args and parallel_group_info,
 * step_trace_time.csv, communication.json, communication_matrix.json) is
 * the job's, so untrusted.  One input is three rank directories
 * (fuzz_files.h cuts it into the files of SLOTS), and the whole pass runs
 * on them as the command does (aip_cluster_run, --html too, the verdict to
 * /dev/null): the readers, the parallel groups, the communication pass and
 * every writer behind them.
 *
 * Build with libFuzzer:  tests/fuzz/run_libfuzzer.sh fuzz_cluster
 * Without libFuzzer, replay_main.c replays the corpus (a ctest).
 * The corpus: tests/fuzz/make_corpus_cluster.py.
 */
#include "aiprof.h"
#include "fuzz_files.h"

#define R(d, n) d "/" n
#define RANK(d, n)                                                                             \
    R(d, "profiler_info_" #n ".json"), R(d, "profiler_metadata.json"),                        \
        R(d, "ASCEND_PROFILER_OUTPUT/step_trace_time.csv"),                                    \
        R(d, "ASCEND_PROFILER_OUTPUT/communication.json"),                                     \
        R(d, "ASCEND_PROFILER_OUTPUT/communication_matrix.json")

/* Two ranks of one job (a duplicate of rank 1 from an older run beside
 * them: msprof-analyze keeps the newer). */
static const char *const SLOTS[] = {
    RANK("job/host_1000_ascend_pt", 0),
    RANK("job/host_1001_ascend_pt", 1),
    RANK("job/old/host_900_ascend_pt", 1),
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int devnull = -1;
    if (devnull < 0)
        devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    const char *root = fuzz_dir("aip_fuzz_cluster");
    fuzz_write_parts(root, SLOTS, sizeof SLOTS / sizeof SLOTS[0], data, size);
    char job[PATH_MAX];
    snprintf(job, sizeof job, "%s/job", root);
    aip_cluster_options o;
    aip_cluster_options_init(&o);
    o.quiet = 1;
    o.report_fd = devnull;
    o.html = 1;
    size_t bad = 0;
    aip_status s = aip_cluster_run(job, &o, &bad);
    if (s != AIP_OK && !aip_last_error()[0]) {
        fprintf(stderr, "fuzz_cluster: status %d without a message\n", (int)s);
        abort();
    }
    if (bad > 3) {
        fprintf(stderr, "fuzz_cluster: %zu directories not used of 3\n", bad);
        abort();
    }
    return 0;
}
