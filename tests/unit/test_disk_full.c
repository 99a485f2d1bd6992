/*
 * test_disk_full.c — the raw file when the disk fills while recording
 * (simulated with RLIMIT_FSIZE, which fails writes the way a full disk
 * does): the program goes on, the file ends at its last whole chunk, and
 * what fit of the collected events is in it and readable.  Under a file
 * size limit with SIGXFSZ at its default action (which kills), whether the
 * limit was there at start (enforced before it is hit) or set while
 * recording (the writes get EFBIG), the program goes on and recorded +
 * dropped == emitted.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "raw_count.h"
#include "session_helpers.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp[PATH_MAX];

#define LIMIT_BYTES (256u * 1024u)
#define EVENTS 200000 /* some 4.8 MB of annotations: far past the limit */

/* In a child (the limit is per process): record, stop; 0 if the program
 * got through it, whatever the writes did. */
static int record_past_the_limit(void)
{
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
    struct rlimit rl = {LIMIT_BYTES, LIMIT_BYTES};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    if (!s)
        return 3;
    aip_string_id name = aip_intern("work");
    for (int i = 0; i < EVENTS; i++) {
        aip_annotation_push_id(name);
        aip_annotation_pop();
    }
    aip_session_stop(s); /* reports the write error; the program goes on */
    aip_session_destroy(s);
    return 0;
}

static void test_full_disk_keeps_what_fit(void)
{
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0)
        _exit(record_past_the_limit());
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);

    char dir[PATH_MAX + 64], raw[PATH_MAX];
    FILE *ls = NULL;
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "ls -d %s/*_ascend_pt", tmp);
    ls = popen(cmd, "r");
    ASSERT_TRUE(ls != NULL);
    ASSERT_TRUE(fgets(dir, sizeof dir, ls) != NULL);
    pclose(ls);
    dir[strcspn(dir, "\n")] = '\0';
    ASSERT_TRUE(raw_find(dir, raw, sizeof raw));
    raw_counts rc = raw_count_file(raw, NULL);
    ASSERT_TRUE(rc.ok);
    ASSERT_EQ(rc.corrupt, 0);   /* no chunk cut short: the file ends at a whole one */
    ASSERT_EQ(rc.truncated, 0);
    /* An annotation is 24 bytes: most of the 256 KiB that fit is events. */
    ASSERT_TRUE(rc.by_kind[AIP_REC_ANNOTATION] > LIMIT_BYTES / 24 / 2);
    ASSERT_TRUE(rc.by_kind[AIP_REC_ANNOTATION] < EVENTS);
}

/* In a child: record EVENTS annotations under a LIMIT_BYTES file size
 * limit set before the start or after it, SIGXFSZ left at its default. */
static int record_with_default_sigxfsz(const char *dir, int limit_after_start)
{
    struct rlimit rl = {LIMIT_BYTES, LIMIT_BYTES};
    if (!limit_after_start && setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    aip_config c;
    base_config(&c, dir);
    aip_session *s = start_new(&c);
    if (!s)
        return 3;
    if (limit_after_start && setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    aip_string_id name = aip_intern("work");
    for (int i = 0; i < EVENTS; i++) {
        aip_annotation_push_id(name);
        aip_annotation_pop();
    }
    aip_session_stop(s);
    aip_session_destroy(s);
    /* the program's own disposition and mask are as they were */
    struct sigaction sa;
    sigset_t mask;
    if (sigaction(SIGXFSZ, NULL, &sa) != 0 || sa.sa_handler != SIG_DFL)
        return 4;
    if (pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0 || sigismember(&mask, SIGXFSZ))
        return 5;
    return 0;
}

static void check_default_sigxfsz(int limit_after_start)
{
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/%s", tmp, limit_after_start ? "after" : "before");
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0)
        _exit(record_with_default_sigxfsz(dir, limit_after_start));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        printf("  killed by signal %d\n", WTERMSIG(status));
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);

    char cmd[PATH_MAX + 64], res[PATH_MAX + 64], raw[PATH_MAX];
    snprintf(cmd, sizeof cmd, "ls -d %s/*_ascend_pt", dir);
    FILE *ls = popen(cmd, "r");
    ASSERT_TRUE(ls != NULL);
    ASSERT_TRUE(fgets(res, sizeof res, ls) != NULL);
    pclose(ls);
    res[strcspn(res, "\n")] = '\0';
    ASSERT_TRUE(raw_find(res, raw, sizeof raw));
    raw_counts rc = raw_count_file(raw, NULL);
    ASSERT_TRUE(rc.ok);
    ASSERT_EQ(rc.corrupt, 0);
    ASSERT_EQ(rc.truncated, 0);
    printf("  limit %s start: recorded %llu, dropped %llu of %d\n",
           limit_after_start ? "after" : "before", (unsigned long long)rc.stats_recorded,
           (unsigned long long)rc.stats_dropped, EVENTS);
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], rc.stats_recorded);
    ASSERT_TRUE(rc.stats_dropped > 0);
    ASSERT_EQ(rc.stats_recorded + rc.stats_dropped, EVENTS);
}

static void test_file_size_limit_at_start_keeps_program_alive(void) { check_default_sigxfsz(0); }
static void test_file_size_limit_while_recording_keeps_program_alive(void)
{
    check_default_sigxfsz(1);
}

/* max_raw_bytes: the file stays under the cap, the rest is counted. */
static void test_size_cap_stops_writing_and_counts(void)
{
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s/capped", tmp);
    aip_config c;
    base_config(&c, dir);
    c.max_raw_bytes = 1u << 20;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    aip_string_id name = aip_intern("work");
    for (int i = 0; i < EVENTS * 2; i++) { /* 9.6 MB of annotations */
        aip_annotation_push_id(name);
        aip_annotation_pop();
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK); /* a cap is no error */
    char raw[PATH_MAX];
    ASSERT_TRUE(raw_find(aip_session_result_dir(s), raw, sizeof raw));
    struct stat st;
    ASSERT_EQ(stat(raw, &st), 0);
    ASSERT_TRUE((uint64_t)st.st_size <= c.max_raw_bytes);
    ASSERT_TRUE((uint64_t)st.st_size > c.max_raw_bytes / 2);
    raw_counts rc = raw_count_file(raw, NULL);
    ASSERT_TRUE(rc.clean_end);
    ASSERT_EQ(rc.by_kind[AIP_REC_ANNOTATION], rc.stats_recorded);
    ASSERT_TRUE(rc.stats_dropped > 0);
    ASSERT_EQ(rc.stats_recorded + rc.stats_dropped, 2 * EVENTS);
    ASSERT_EQ(aip_session_dropped_events(s), rc.stats_dropped);
    aip_session_destroy(s);

    c.max_raw_bytes = 4096; /* under 1 MiB: refused, naming the field */
    ASSERT_EQ(aip_session_create(&c, &s), AIP_ERR_INVALID_ARG);
    ASSERT_TRUE(strstr(aip_last_error(), "max_raw_bytes") != NULL);
}

static void setup(void) { make_tmpdir(tmp, sizeof tmp, "disk_full"); }
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_full_disk_keeps_what_fit),
          TEST_CASE(test_file_size_limit_at_start_keeps_program_alive),
          TEST_CASE(test_file_size_limit_while_recording_keeps_program_alive),
          TEST_CASE(test_size_cap_stops_writing_and_counts),
          TEST_CASE(teardown))
