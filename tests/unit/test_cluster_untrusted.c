/*
 * test_cluster_untrusted.c — `aiprof cluster` reads rank directories
 * anybody in the job could have written (issue 27, defects 1 and 10): each
 * case builds a small job under /tmp and runs aip_cluster_run() on it, in
 * this process, so the sanitizer builds see every byte.
 * - distributed_args with tensor parallel 2^62 + 1, pipeline 4, data 2^20,
 *   world 2^22 (tp * pp * dp wraps to the world size): once a heap
 *   overflow, now refused with the rank and the field named; sizes each in
 *   range whose product is not, refused too;
 * - a Step cell and a column name holding a comma, quotes and a line
 *   break (RFC 4180 quoted in the rank's CSV) come through whole and
 *   quoted in cluster_step_trace_time.csv;
 * - a directory named with an escape sequence, BEL and a line break that
 *   forges a verdict line reaches the report as '?'s on its own line;
 * - a rank whose ASCEND_PROFILER_OUTPUT, or whose step_trace_time.csv, is
 *   a symbolic link is not read through it, and says so;
 * - a rank numbered LONG_MAX beside ranks 0 and 2: rank 1 named missing,
 *   no overflow counting the ranks expected.
 */
#include "aip_test.h"
#include "tmp_dir.h"

#include "aiprof.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void mkdirs(const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0750);
            *s = '/';
        }
    mkdir(p, 0750);
}

/* A rank directory top/wR_1_ascend_pt with the step_trace_time.csv `csv`
 * (NULL: two plain steps) and profiler_metadata.json `meta` (NULL: none).
 * Its path in `dir`. */
static void rank_dir(const char *top, int rank, const char *csv, const char *meta, char *dir)
{
    char p[PATH_MAX];
    snprintf(dir, PATH_MAX, "%s/w%d_1_ascend_pt", top, rank);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", dir);
    mkdirs(p);
    snprintf(p, sizeof p, "%s/profiler_info_%d.json", dir, rank);
    put(p, "{}");
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", dir);
    put(p, csv ? csv : "Device_id,Step,Computing,Free\nhost,1,10.0,2.0\nhost,2,11.0,3.0\n");
    if (meta) {
        snprintf(p, sizeof p, "%s/profiler_metadata.json", dir);
        put(p, meta);
    }
}

/* aip_cluster_run on `top`; the report (fd output) in a malloc'd `*text`. */
static aip_status run(const char *top, char **text, size_t *bad)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s.log", top);
    int fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
    aip_cluster_options o;
    aip_cluster_options_init(&o);
    o.quiet = 1;
    o.report_fd = fd;
    aip_status s = aip_cluster_run(top, &o, bad);
    off_t n = lseek(fd, 0, SEEK_END);
    *text = calloc((size_t)n + 1, 1);
    if (*text && pread(fd, *text, (size_t)n, 0) != n)
        (*text)[0] = 0;
    close(fd);
    unlink(log);
    return s;
}

static char *slurp(const char *path) { return aip_test_slurp(path, NULL); }

static void check_args(const char *args, const char *want)
{
    char top[PATH_MAX], dir[PATH_MAX], meta[512], *text = NULL;
    size_t bad = 9;
    make_tmpdir(top, sizeof top, "cluster_args");
    snprintf(meta, sizeof meta, "{\"distributed_args\": {%s}}", args);
    rank_dir(top, 0, NULL, meta, dir);
    rank_dir(top, 1, NULL, meta, dir);
    aip_status s = run(top, &text, &bad);
    int found = text && strstr(text, want);
    if (!found)
        fprintf(stderr, "report:\n%s\nwanted: %s\n", text ? text : "(none)", want);
    free(text);
    char csv[PATH_MAX];
    snprintf(csv, sizeof csv, "%s/cluster_analysis_output/cluster_step_trace_time.csv", top);
    char *out = slurp(csv);
    int no_index = out && !strstr(out, "DP Index");
    free(out);
    rm_rf(top);
    ASSERT_EQ(s, AIP_OK);
    ASSERT_EQ(bad, 0);
    ASSERT_TRUE(found);
    ASSERT_TRUE(no_index);
}

static void test_parallel_sizes_overflow(void)
{
    check_args("\"tensor_model_parallel_size\": 4611686018427387905, "
               "\"pipeline_model_parallel_size\": 4, \"data_parallel_size\": 1048576, "
               "\"world_size\": 4194304",
               "distributed_args not used (no DP/PP/TP Index): rank 0's profiler_metadata.json "
               "distributed_args.tensor_model_parallel_size 4611686018427387905 is out of range "
               "[0, 16777216]");
}

static void test_parallel_product_overflow(void)
{
    /* each size in range, their product 2^48 is not */
    check_args("\"tensor_model_parallel_size\": 16777216, "
               "\"pipeline_model_parallel_size\": 16777216, \"data_parallel_size\": 1, "
               "\"world_size\": 16777216",
               "rank 0's profiler_metadata.json distributed_args: world_size 16777216 is not "
               "tensor 16777216 x pipeline 16777216 x data 1 parallel (at most 16777216)");
    check_args("\"context_parallel_size\": -3, \"world_size\": 2",
               "distributed_args.context_parallel_size -3 is out of range");
}

static void test_csv_names_quoted(void)
{
    char top[PATH_MAX], dir[PATH_MAX], *text = NULL;
    size_t bad = 9;
    make_tmpdir(top, sizeof top, "cluster_csv");
    const char *csv = "Device_id,Step,\"Comp,\"\"uting\"\"\",Free\r\n"
                      "host,\"a,\"\"b\"\"\nc\",10.0,2.0\r\nhost,2,11.0,3.0\r\n";
    rank_dir(top, 0, csv, NULL, dir);
    rank_dir(top, 1, csv, NULL, dir);
    aip_status s = run(top, &text, &bad);
    free(text);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cluster_analysis_output/cluster_step_trace_time.csv", top);
    char *out = slurp(path);
    rm_rf(top);
    ASSERT_EQ(s, AIP_OK);
    ASSERT_EQ(bad, 0);
    ASSERT_TRUE(out != NULL);
    ASSERT_STREQ(out, "Step,Type,Index,\"Comp,\"\"uting\"\"\",Free\n"
                      "\"a,\"\"b\"\"\nc\",rank,0,10.0,2.0\n2,rank,0,11.0,3.0\n"
                      "\"a,\"\"b\"\"\nc\",rank,1,10.0,2.0\n2,rank,1,11.0,3.0\n");
    free(out);
}

static void test_verdict_escaped(void)
{
    char top[PATH_MAX], dir[PATH_MAX], evil[PATH_MAX], *text = NULL;
    size_t bad = 0;
    make_tmpdir(top, sizeof top, "cluster_term");
    rank_dir(top, 0, NULL, NULL, dir);
    rank_dir(top, 1, NULL, NULL, dir);
    snprintf(evil, sizeof evil, "%s/x\033]0;owned\a\033[2J\nslow rank: 7 \x9b_ascend_pt", top);
    mkdir(evil, 0750);
    aip_status s = run(top, &text, &bad);
    rm_rf(top);
    ASSERT_EQ(s, AIP_OK);
    ASSERT_EQ(bad, 1);
    ASSERT_TRUE(text != NULL);
    int raw = 0;
    for (const char *p = text; *p; p++)
        raw |= (*p > 0 && *p < 0x20 && *p != '\n') || *p == 0x7f;
    if (raw || strstr(text, "\nslow rank: 7") || !strstr(text, "x?]0;owned??[2J?slow rank: 7 ?_ascend_pt"))
        fprintf(stderr, "report:\n%s\n", text);
    ASSERT_TRUE(!raw);
    ASSERT_TRUE(!strstr(text, "\nslow rank: 7"));
    ASSERT_TRUE(strstr(text, "x?]0;owned??[2J?slow rank: 7 ?_ascend_pt: no profiler_info") != NULL);
    free(text);
}

/* A rank number is whatever digits profiler_info_N.json's name holds:
 * LONG_MAX must not overflow the count of the ranks expected (UBSan). */
static void test_huge_rank_number(void)
{
    char top[PATH_MAX], dir[PATH_MAX], p[PATH_MAX], *text = NULL;
    size_t bad = 9;
    make_tmpdir(top, sizeof top, "cluster_huge");
    rank_dir(top, 0, NULL, NULL, dir);
    rank_dir(top, 2, NULL, NULL, dir);
    rank_dir(top, 3, NULL, NULL, dir);
    snprintf(p, sizeof p, "%s/profiler_info_3.json", dir);
    char q[PATH_MAX];
    snprintf(q, sizeof q, "%s/profiler_info_9223372036854775807.json", dir);
    ASSERT_EQ(rename(p, q), 0);
    aip_status s = run(top, &text, &bad);
    rm_rf(top);
    if (!text || !strstr(text, "missing rank: 1 (no result directory found)"))
        fprintf(stderr, "report:\n%s\n", text ? text : "(none)");
    ASSERT_EQ(s, AIP_OK);
    ASSERT_TRUE(strstr(text, "job incomplete: 3 ranks expected (rank 2 found); 1 missing") != NULL);
    free(text);
}

static void test_symlinked_inputs(void)
{
    char top[PATH_MAX], dir[PATH_MAX], other[PATH_MAX], p[PATH_MAX], q[PATH_MAX], *text = NULL;
    size_t bad = 0;
    make_tmpdir(top, sizeof top, "cluster_link");
    rank_dir(top, 0, NULL, NULL, dir);
    /* rank 1: its ASCEND_PROFILER_OUTPUT a link to a real one elsewhere */
    rank_dir(top, 1, NULL, NULL, dir);
    snprintf(other, sizeof other, "%s.elsewhere", top);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", dir);
    ASSERT_EQ(rename(p, other), 0);
    ASSERT_EQ(symlink(other, p), 0);
    /* rank 2: its step_trace_time.csv a link */
    rank_dir(top, 2, NULL, NULL, dir);
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT/step_trace_time.csv", dir);
    snprintf(q, sizeof q, "%s/step_trace_time.csv", other);
    unlink(p);
    ASSERT_EQ(symlink(q, p), 0);
    aip_status s = run(top, &text, &bad);
    rm_rf(top);
    rm_rf(other);
    if (!text || !strstr(text, "(rank 1): ASCEND_PROFILER_OUTPUT is a symbolic link: not followed") ||
        !strstr(text, "(rank 2): refusing to read") || !strstr(text, "step_trace_time.csv: it is a symbolic link"))
        fprintf(stderr, "report:\n%s\n", text ? text : "(none)");
    ASSERT_EQ(s, AIP_OK);
    ASSERT_EQ(bad, 2);
    ASSERT_TRUE(strstr(text, "(rank 1): ASCEND_PROFILER_OUTPUT is a symbolic link: not followed") !=
                NULL);
    ASSERT_TRUE(strstr(text, "(rank 2): refusing to read") != NULL);
    free(text);
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_parallel_sizes_overflow),
        TEST_CASE(test_parallel_product_overflow),
        TEST_CASE(test_csv_names_quoted),
        TEST_CASE(test_verdict_escaped),
        TEST_CASE(test_symlinked_inputs),
        TEST_CASE(test_huge_rank_number),
    };
    return aip_test_run(cases, sizeof cases / sizeof *cases);
}
