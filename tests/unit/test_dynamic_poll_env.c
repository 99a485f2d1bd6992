/*
 * test_dynamic_poll_env.c — AIPROF_DP_POLL_MS that cannot be used (below
 * 10 ms, above 50 s, not a number) is ignored with one warning on stderr
 * per process, naming the value and the default used (issue 27, defect 10);
 * a usable one is taken silently.
 */
#include "aip_test.h"
#include "dyn_watch.h"
#include "tmp_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp[PATH_MAX];

/* Calls aip__dyn_default_poll_ms() `n` times with stderr in a file; the
 * file's text into `out`. */
static uint32_t poll_ms_seen(int n, char *out, size_t cap)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/stderr", tmp);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    dup2(fd, 2);
    uint32_t ms = 0;
    for (int i = 0; i < n; i++)
        ms = aip__dyn_default_poll_ms();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t got = pread(fd, out, cap - 1, 0);
    out[got > 0 ? got : 0] = '\0';
    close(fd);
    return ms;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p++)
        n++;
    return n;
}

static void test_too_small_is_said_once(void)
{
    char err[4096];
    setenv("AIPROF_DP_POLL_MS", "5", 1);
    ASSERT_EQ(poll_ms_seen(3, err, sizeof err), 2000);
    ASSERT_EQ(count(err, "AIPROF_DP_POLL_MS=\"5\" is not a number of milliseconds from 10 to "
                         "50000; ignored"), 1);
    setenv("AIPROF_DP_POLL_MS", "soon", 1); /* once a process, whatever the value */
    ASSERT_EQ(poll_ms_seen(2, err, sizeof err), 2000);
    ASSERT_EQ(count(err, "AIPROF_DP_POLL_MS"), 0);
}

static void test_usable_value_is_silent(void)
{
    char err[4096];
    setenv("AIPROF_DP_POLL_MS", "10", 1);
    ASSERT_EQ(poll_ms_seen(2, err, sizeof err), 10);
    ASSERT_STREQ(err, "");
}

static void setup(void)
{
    make_tmpdir(tmp, sizeof tmp, "dp_poll_env");
    unsetenv("AIPROF_QUIET"); /* the warning goes to stderr */
}
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_too_small_is_said_once),
          TEST_CASE(test_usable_value_is_silent), TEST_CASE(teardown))
