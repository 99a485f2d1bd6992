/*
 * test_cluster_options.c — aip_cluster_options keeps the versioning
 * convention of the library's other option structs (issue 28 point 7):
 * - struct_size 0 (a struct that was never initialised) is refused with
 *   AIP_ERR_INVALID_ARG and a message naming aip_cluster_options_init, by
 *   aip_cluster_run and aip_cluster_run_mpi alike, before anything is read;
 * - a caller built against an older, shorter header (struct_size ending
 *   before `html`) gets the defaults of the fields it lacks: whatever lies
 *   past its struct_size (here html = 1) is not read, so no
 *   cluster_report.html; the same struct with the full size writes it;
 * - NULL options are the defaults.
 * It uses only the public header, as a caller of the library would.
 */
#include "aip_test.h"
#include "tmp_dir.h"

#include "aiprof.h"

#include <stddef.h>
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

/* A job of two analysed ranks under a new temporary directory `top`. */
static void two_ranks(char *top, size_t cap)
{
    char p[PATH_MAX];
    make_tmpdir(top, cap, "cluster_opts");
    for (int rank = 0; rank < 2; rank++) {
        snprintf(p, sizeof p, "%s/w%d_1_ascend_pt", top, rank);
        mkdir(p, 0750);
        snprintf(p, sizeof p, "%s/w%d_1_ascend_pt/ASCEND_PROFILER_OUTPUT", top, rank);
        mkdir(p, 0750);
        snprintf(p, sizeof p, "%s/w%d_1_ascend_pt/profiler_info_%d.json", top, rank, rank);
        put(p, "{}");
        snprintf(p, sizeof p, "%s/w%d_1_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                 top, rank);
        put(p, "Device_id,Step,Computing,Free\nhost,1,10.0,2.0\nhost,2,11.0,3.0\n");
    }
}

static int has_html(const char *top)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/cluster_analysis_output/cluster_report.html", top);
    return access(p, F_OK) == 0;
}

static void test_uninitialised_refused(void)
{
    char top[PATH_MAX];
    two_ranks(top, sizeof top);
    aip_cluster_options o;
    memset(&o, 0, sizeof o);
    o.report_fd = o.progress_fd = -1;
    size_t bad = 9;
    aip_status s = aip_cluster_run(top, &o, &bad);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", aip_last_error());
    int process = 7;
    aip_status s_mpi = aip_cluster_run_mpi(top, &o, &bad, "/nonexistent/plugin.so", &process);
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/cluster_analysis_output", top);
    int wrote = access(out, F_OK) == 0;
    rm_rf(top);
    ASSERT_EQ(s, AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(msg, "aip_cluster_options_init") != NULL);
    ASSERT_EQ(bad, 0);
    /* Refused before the plugin is looked for: not AIP_ERR_NOT_FOUND. */
    ASSERT_EQ(s_mpi, AIP_ERR_INVALID_ARG);
    ASSERT_EQ(wrote, 0);
}

static void test_older_struct_gets_defaults(void)
{
    char top[PATH_MAX];
    two_ranks(top, sizeof top);
    aip_cluster_options o;
    aip_cluster_options_init(&o);
    ASSERT_EQ(o.struct_size, sizeof o);
    o.quiet = 1;
    o.html = 1;
    o.struct_size = offsetof(aip_cluster_options, html); /* an older header's */
    size_t bad = 9;
    aip_status s_old = aip_cluster_run(top, &o, &bad);
    int html_old = has_html(top);
    o.struct_size = sizeof o;
    aip_status s_new = aip_cluster_run(top, &o, &bad);
    int html_new = has_html(top);
    rm_rf(top);
    ASSERT_EQ(s_old, AIP_OK);
    ASSERT_EQ(html_old, 0);
    ASSERT_EQ(s_new, AIP_OK);
    ASSERT_EQ(html_new, 1);
    ASSERT_EQ(bad, 0);
}

static void test_null_options_default(void)
{
    char top[PATH_MAX];
    two_ranks(top, sizeof top);
    size_t bad = 9;
    aip_status s = aip_cluster_run(top, NULL, &bad);
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/cluster_analysis_output/cluster_step_trace_time.csv", top);
    int csv = access(p, F_OK) == 0;
    int html = has_html(top);
    rm_rf(top);
    ASSERT_EQ(s, AIP_OK);
    ASSERT_EQ(bad, 0);
    ASSERT_EQ(csv, 1);
    ASSERT_EQ(html, 0);
}

int main(void)
{
    static const aip_test_case cases[] = {
        TEST_CASE(test_uninitialised_refused),
        TEST_CASE(test_older_struct_gets_defaults),
        TEST_CASE(test_null_options_default),
    };
    return aip_test_run(cases, sizeof cases / sizeof *cases);
}
