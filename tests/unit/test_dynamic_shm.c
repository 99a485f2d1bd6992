/*
 * test_dynamic_shm.c — dynamic profiling's shared-memory segment against
 * another local user (issue 27, defect 3; src/dynamic/dyn_watch.c): a
 * segment that already exists is used only if it is this user's, closed
 * to group and others and of the right size, and refused with a message
 * naming the problem otherwise (the program keeps running: aip_dynamic_init
 * returns the error); one truncated while attached makes reads fail, said
 * in the log, and never raises SIGBUS.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "dyn_log.h"
#include "dyn_watch.h"
#include "tmp_dir.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[PATH_MAX];

/* A config directory `sub` and its segment's name, no segment left. */
static void config_dir(const char *sub, char *dir, char *name)
{
    snprintf(dir, PATH_MAX, "%s/%s", tmp, sub);
    mkdir(dir, 0750);
    aip__dyn_watch_name(dir, name, 96);
    shm_unlink(name);
}

/* Pre-create the segment as another process would: mode, owner, size. */
static void plant(const char *name, mode_t mode, uid_t owner, off_t size)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ(fchmod(fd, mode), 0);
    if (owner != geteuid())
        ASSERT_EQ(fchown(fd, owner, owner), 0);
    ASSERT_EQ(ftruncate(fd, size), 0);
    close(fd);
}

static void expect_refused(const char *dir, const char *name, const char *why)
{
    ASSERT_EQ(aip_dynamic_init(dir), AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), why) != NULL);
    ASSERT_TRUE(strstr(aip_last_error(), name) != NULL);
    ASSERT_EQ(aip_dynamic_get_state(), AIP_DYN_UNINITIALIZED);
    struct stat st; /* left as it was: it may be someone else's */
    char path[160];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    ASSERT_EQ(stat(path, &st), 0);
    shm_unlink(name);
}

static void test_world_writable_segment_is_refused(void)
{
    char dir[PATH_MAX], name[96];
    config_dir("open", dir, name);
    plant(name, 0666, geteuid(), 0);
    expect_refused(dir, name, "is open to other users (mode 0666");
}

static void test_other_users_segment_is_refused(void)
{
    if (geteuid() != 0) {
        printf("  (skipped: planting a segment owned by another user needs root)\n");
        return;
    }
    char dir[PATH_MAX], name[96];
    config_dir("owner", dir, name);
    plant(name, 0600, 4242, 0);
    expect_refused(dir, name, "belongs to uid 4242, not to this user");
}

static void test_wrong_size_is_refused(void)
{
    char dir[PATH_MAX], name[96];
    config_dir("size", dir, name);
    plant(name, 0600, geteuid(), 100);
    expect_refused(dir, name, "has 100 bytes, not the");
}

static int log_says(const char *dir, const char *what)
{
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "grep -rqF '%s' %s/log", what, dir);
    return system(cmd) == 0;
}

static void test_truncated_segment_raises_no_sigbus(void)
{
    char dir[PATH_MAX], name[96];
    config_dir("trunc", dir, name);
    aip__dyn_log log;
    ASSERT_EQ(aip__dyn_log_open(&log, dir, "dp", "test"), 0);
    aip__dyn_watch w;
    ASSERT_EQ(aip__dyn_watch_attach(&w, dir, &log), AIP_OK);
    uint64_t gen = aip__dyn_watch_generation(&w);
    int fd = shm_open(name, O_RDWR, 0);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ(ftruncate(fd, 0), 0); /* what the other process did */
    close(fd);
    ASSERT_EQ(aip__dyn_watch_generation(&w), gen); /* the last one read */
    char *text = NULL, message[256];
    size_t len = 0;
    int valid = 0;
    ASSERT_EQ(aip__dyn_watch_read(&w, &text, &len, &valid, message, sizeof message), -1);
    ASSERT_TRUE(text == NULL);
    aip__dyn_watch_set_poll_ms(&w, 1000);
    aip__dyn_watch_detach(&w);
    ASSERT_TRUE(log_says(dir, "was truncated or cannot be read"));
    shm_unlink(name);
}

/* A segment this user made, mode 0600, still empty (its creator has not
 * sized it yet): used. */
static void test_own_empty_segment_is_used(void)
{
    char dir[PATH_MAX], name[96];
    config_dir("empty", dir, name);
    plant(name, 0600, geteuid(), 0);
    ASSERT_EQ(aip_dynamic_init(dir), AIP_OK);
    ASSERT_EQ(aip_dynamic_step(), AIP_OK);
    aip_dynamic_shutdown();
    shm_unlink(name);
}

static void setup(void)
{
    make_tmpdir(tmp, sizeof tmp, "dynamic_shm");
    setenv("AIPROF_DP_POLL_MS", "100", 1);
}
static void teardown(void) { rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_world_writable_segment_is_refused),
          TEST_CASE(test_other_users_segment_is_refused), TEST_CASE(test_wrong_size_is_refused),
          TEST_CASE(test_truncated_segment_raises_no_sigbus),
          TEST_CASE(test_own_empty_segment_is_used), TEST_CASE(teardown))
