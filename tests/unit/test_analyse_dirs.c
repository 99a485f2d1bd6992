/*
 * test_analyse_dirs.c — aip_analyse_dirs(): several result directories at
 * once, on threads and in forked processes: one bad directory among good
 * ones is reported on its own and the others are analysed; one worker and
 * several give byte-identical outputs; the progress callback sees every
 * directory start and finish; a cancel starts nothing more; the progress
 * bar; bad arguments.
 */
#include "aip_test.h"
#include "raw_builder.h"

#include "aiprof.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define N_DIRS 5
#define BAD 2 /* its FRAMEWORK/ holds something that is not raw data */

static void build_raw(rb_buf *b, int64_t pid)
{
    rb_header(b, 1, 0);
    rb_info(b, pid, "train", 1e9);
    const char *names[] = {"ProfilerStep#0", "aten::mm", "aten::add", "ProfilerStep#1"};
    rb_strings(b, 1, names, NULL, 4);
    rb_clock(b, 1000, 1000, 1700000000123456789ull);
    rb_buf e = {0};
    for (int s = 0; s < 2; s++) {
        uint64_t base = 10000 + (uint64_t)s * 100000;
        for (int i = 0; i < 40; i++) {
            ev_op(&e, 3, base + 1000 * i + 100, base + 1000 * i + 200);
            ev_op(&e, 2, base + 1000 * i + 50, base + 1000 * i + 700);
        }
        ev_annotation(&e, s ? 4 : 1, base, base + 90000);
    }
    rb_events(b, (uint64_t)pid, &e);
    rb_free(&e);
    rb_clock(b, 300000, 300000, 1700000000123456789ull + 299000);
    rb_end(b);
}

/* N_DIRS result directories under a fresh `root`, dirs[BAD] not raw data. */
static void make_set(char *root, char paths[N_DIRS][256], const char **dirs, const char *tag)
{
    rb_tempdir(root, 128, tag);
    rb_buf good = {0}, bad = {0};
    build_raw(&good, 4321);
    rb_put(&bad, "this is not aiprof raw data\n", 28);
    for (int i = 0; i < N_DIRS; i++) {
        snprintf(paths[i], 256, "%s/w%d_20250101000000000_ascend_pt", root, i);
        rb_result_dir(paths[i], 4321, i == BAD ? &bad : &good,
                      "{\"experimental_config\": {\"_export_type\": [\"text\"]}}");
        dirs[i] = paths[i];
    }
    rb_free(&good);
    rb_free(&bad);
}

static aip_analyse_options quiet(void)
{
    aip_analyse_options a;
    aip_analyse_options_init(&a);
    a.quiet = 1;
    return a;
}

typedef struct seen {
    int started[N_DIRS], finished[N_DIRS];
    size_t last_done;
    int order_ok;             /* done counts up by one at each DONE */
    int cancel_after;         /* return 1 at this DONE (0: never) */
    int dones;
} seen;

static int note(void *arg, unsigned event, size_t index, size_t done, size_t total)
{
    seen *s = arg;
    if (total != N_DIRS || (event != AIP_DIRS_WAITING && index >= N_DIRS))
        s->order_ok = 0;
    else if (event == AIP_DIRS_STARTED)
        s->started[index]++;
    else if (event == AIP_DIRS_DONE) {
        s->finished[index]++;
        if (done != s->last_done + 1)
            s->order_ok = 0;
        s->last_done = done;
        return ++s->dones == s->cancel_after;
    }
    return 0;
}

/* Every output of dirs[i] in set a equals set b's, byte for byte. */
static int same_outputs(const char *a, const char *b)
{
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/ASCEND_PROFILER_OUTPUT", a);
    DIR *d = opendir(pa);
    if (!d)
        return 0;
    int same = 1, files = 0;
    for (struct dirent *e; same && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(pa, sizeof pa, "%s/ASCEND_PROFILER_OUTPUT/%s", a, e->d_name);
        snprintf(pb, sizeof pb, "%s/ASCEND_PROFILER_OUTPUT/%s", b, e->d_name);
        size_t na = 0, nb = 0;
        char *x = aip_test_slurp(pa, &na), *y = aip_test_slurp(pb, &nb);
        same = x && y && na == nb && !memcmp(x, y, na);
        if (!same)
            fprintf(stderr, "%s differs from %s\n", pa, pb);
        free(x);
        free(y);
        files++;
    }
    closedir(d);
    return same && files >= 5; /* the trace, the CSVs, the databases */
}

/* One run over a fresh set; its callback record in *s. */
static aip_status run_set(char *root, char paths[N_DIRS][256], const char **dirs, long workers,
                          int processes, seen *s, aip_dir_result *res)
{
    make_set(root, paths, dirs, processes ? "dirs_p" : "dirs_t");
    aip_analyse_options a = quiet();
    aip_analyse_dirs_options o;
    aip_analyse_dirs_options_init(&o);
    o.analyse = &a;
    o.workers = workers;
    o.processes = processes;
    o.progress = note;
    o.progress_arg = s;
    s->order_ok = 1;
    return aip_analyse_dirs(dirs, N_DIRS, &o, res);
}

static void check_outcomes(const char *const *dirs, const aip_dir_result *res, const seen *s,
                           aip_status st)
{
    ASSERT_EQ(st, AIP_ERR_FORMAT); /* the bad one's */
    ASSERT_TRUE(strncmp(aip_last_error(), dirs[BAD], strlen(dirs[BAD])) == 0);
    ASSERT_TRUE(s->order_ok);
    ASSERT_EQ(s->last_done, N_DIRS);
    for (int i = 0; i < N_DIRS; i++) {
        ASSERT_EQ(s->started[i], 1);
        ASSERT_EQ(s->finished[i], 1);
        ASSERT_EQ(res[i].signal, 0);
        if (i == BAD) {
            ASSERT_EQ(res[i].status, AIP_ERR_FORMAT);
            ASSERT_TRUE(res[i].message[0] != 0);
        } else {
            ASSERT_EQ(res[i].status, AIP_OK);
            ASSERT_STREQ(res[i].message, "");
        }
    }
    struct stat st_;
    char p[400];
    snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", dirs[BAD]);
    ASSERT_TRUE(stat(p, &st_) != 0); /* nothing written for it */
}

/* One worker in line, four threads, four processes: the same outcomes and
 * the same bytes. */
static void test_bad_among_good_same_outputs(void)
{
    char roots[3][128], paths[3][N_DIRS][256];
    const char *dirs[3][N_DIRS];
    aip_dir_result res[3][N_DIRS];
    const long workers[3] = {1, 4, 4};
    const int processes[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) {
        seen s = {0};
        aip_status st = run_set(roots[k], paths[k], dirs[k], workers[k], processes[k], &s, res[k]);
        int before = aip_test_failed_asserts;
        check_outcomes(dirs[k], res[k], &s, st);
        if (aip_test_failed_asserts != before)
            fprintf(stderr, "  (run %d: workers %ld, processes %d)\n", k, workers[k],
                    processes[k]);
    }
    for (int k = 1; k < 3; k++)
        for (int i = 0; i < N_DIRS; i++)
            if (i != BAD)
                ASSERT_TRUE(same_outputs(dirs[0][i], dirs[k][i]));
    for (int i = 1; i < N_DIRS; i++) /* the same raw data in each good directory */
        if (i != BAD && i - 1 != BAD)
            ASSERT_TRUE(same_outputs(dirs[0][0], dirs[0][i]));
    for (int k = 0; k < 3; k++)
        rb_rmtree(roots[k]);
}

/* A cancel at the first finished directory: with one worker, nothing
 * after it starts, and the rest say so. */
static void test_cancel(void)
{
    for (int processes = 0; processes < 2; processes++) {
        char root[128], paths[N_DIRS][256];
        const char *dirs[N_DIRS];
        aip_dir_result res[N_DIRS];
        seen s = {.cancel_after = 1};
        aip_status st = run_set(root, paths, dirs, 1, processes, &s, res);
        ASSERT_EQ(st, AIP_ERR_CANCELLED);
        ASSERT_EQ(res[0].status, AIP_OK);
        ASSERT_EQ(s.started[0], 1);
        for (int i = 1; i < N_DIRS; i++) {
            ASSERT_EQ(res[i].status, AIP_ERR_CANCELLED);
            ASSERT_EQ(s.started[i], 0);
            char p[400];
            struct stat st_;
            snprintf(p, sizeof p, "%s/ASCEND_PROFILER_OUTPUT", dirs[i]);
            ASSERT_TRUE(stat(p, &st_) != 0);
        }
        rb_rmtree(root);
    }
}

/* A cancel with three threads: how many directories had started by then
 * is the scheduler's business; each started one finished and was reported,
 * each other one says it was cancelled. */
static void test_cancel_threads(void)
{
    char root[128], paths[N_DIRS][256];
    const char *dirs[N_DIRS];
    aip_dir_result res[N_DIRS];
    seen s = {.cancel_after = 1};
    aip_status st = run_set(root, paths, dirs, 3, 0, &s, res);
    ASSERT_TRUE(st == AIP_ERR_CANCELLED || st == AIP_ERR_FORMAT);
    for (int i = 0; i < N_DIRS; i++) {
        ASSERT_EQ(s.started[i], s.finished[i]);
        ASSERT_EQ(s.started[i], res[i].status != AIP_ERR_CANCELLED);
    }
    ASSERT_TRUE(s.order_ok);
    rb_rmtree(root);
}

/* The bar on a file: every directory counted, the failure named above it. */
static void test_progress_bar(void)
{
    char root[128], paths[N_DIRS][256];
    const char *dirs[N_DIRS];
    make_set(root, paths, dirs, "dirs_bar");
    char bar[200];
    snprintf(bar, sizeof bar, "%s/bar.txt", root);
    int fd = open(bar, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_TRUE(fd >= 0);
    aip_analyse_options a = quiet();
    aip_analyse_dirs_options o;
    aip_analyse_dirs_options_init(&o);
    o.analyse = &a;
    o.workers = 2;
    o.processes = 1;
    o.progress_fd = fd;
    aip_dir_result res[N_DIRS];
    ASSERT_EQ(aip_analyse_dirs(dirs, N_DIRS, &o, res), AIP_ERR_FORMAT);
    close(fd);
    char *text = aip_test_slurp(bar, NULL);
    ASSERT_TRUE(text != NULL);
    char want[400];
    snprintf(want, sizeof want, "FAILED %s\n", dirs[BAD]);
    ASSERT_TRUE(strstr(text, want) != NULL);
    ASSERT_TRUE(strstr(text, "\r[##############################] 100%  5/5 analysed, 1 failed\n"));
    ASSERT_TRUE(strstr(text, "\r[..............................]   0%  0/5 analysed"));
    free(text);
    rb_rmtree(root);
}

static void test_arguments(void)
{
    aip_dir_result r;
    const char *d = "/nonexistent_dir_ascend_pt";
    ASSERT_EQ(aip_analyse_dirs(NULL, 1, NULL, &r), AIP_ERR_INVALID_ARG);
    ASSERT_EQ(aip_analyse_dirs(&d, 1, NULL, NULL), AIP_ERR_INVALID_ARG);
    ASSERT_EQ(aip_analyse_dirs(NULL, 0, NULL, NULL), AIP_OK); /* nothing to do */
    aip_analyse_dirs_options o;
    aip_analyse_dirs_options_init(&o);
    o.struct_size = 0;
    ASSERT_EQ(aip_analyse_dirs(&d, 1, &o, &r), AIP_ERR_INVALID_ARG);
    /* NULL options: the defaults; a missing directory is its own error */
    ASSERT_EQ(aip_analyse_dirs(&d, 1, NULL, &r), r.status);
    ASSERT_TRUE(r.status != AIP_OK);
    ASSERT_TRUE(strstr(r.message, "nonexistent_dir") != NULL);
}

TEST_MAIN(TEST_CASE(test_bad_among_good_same_outputs), TEST_CASE(test_cancel), TEST_CASE(test_cancel_threads),
          TEST_CASE(test_progress_bar), TEST_CASE(test_arguments))
