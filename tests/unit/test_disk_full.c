/*
 * test_disk_full.c — the raw file when the disk fills while recording
 * (simulated with RLIMIT_FSIZE, which fails writes the way a full disk
 * does): the program goes on, the file ends at its last whole chunk, and
 * what fit of the collected events is in it and readable.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "raw_count.h"
#include "session_helpers.h"

#include <signal.h>
#include <sys/resource.h>
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

static void setup(void) { make_tmpdir(tmp, sizeof tmp, "disk_full"); }
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_full_disk_keeps_what_fit), TEST_CASE(teardown))
