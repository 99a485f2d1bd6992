/*
 * test_export_out_buffer.c — the buffered output stream: content, all-or-nothing
 * files, write errors (disk full) with and without the writer thread.
 */
#include "aip_test.h"
#include "outbuf.h"
#include "raw_builder.h"

#include <errno.h>
#include <sys/stat.h>

static char dir[64];

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

static int count_entries(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ls -A %s | wc -l", dir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        pclose(f);
    }
    return n;
}

static void fill(aip__out *o, size_t bytes, uint64_t *sum)
{
    char line[64];
    for (size_t done = 0; done < bytes;) {
        int n = snprintf(line, sizeof line, "%zu,", done);
        aip__out_put(o, line, (size_t)n);
        for (int i = 0; i < n; i++)
            *sum += (unsigned char)line[i];
        done += (size_t)n;
    }
}

static void test_file_content(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    ASSERT_TRUE(!exists(path)); /* only the temporary exists while writing */
    uint64_t sum = 0;
    fill(&o, 3u << 20, &sum);
    static char big[AIP_OUT_CAP];
    memset(big, 'z', sizeof big);
    aip__out_put(&o, big, sizeof big); /* larger than half the buffer: written through */
    sum += 'z' * (uint64_t)sizeof big;
    aip__out_u64(&o, 42);
    sum += '4' + '2';
    uint64_t expect_total = o.total + o.len;
    ASSERT_EQ(aip__out_close(&o), AIP_OK);
    ASSERT_EQ(o.total, expect_total);
    FILE *f = fopen(path, "rb");
    ASSERT_TRUE(f != NULL);
    uint64_t got = 0, n = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        got += (unsigned char)c;
        n++;
    }
    fclose(f);
    ASSERT_EQ(n, expect_total);
    ASSERT_EQ(got, sum);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_mode & 0137, 0);
    ASSERT_EQ(count_entries(), 1); /* no temporary left */
    unlink(path);
}

static void test_abort_leaves_nothing(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/aborted.txt", dir);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    uint64_t sum = 0;
    fill(&o, 1u << 20, &sum);
    aip__out_abort(&o);
    ASSERT_TRUE(!exists(path));
    ASSERT_EQ(count_entries(), 0);
}

static void test_disk_full(void)
{
    /* inline writer on an fd */
    int full = open("/dev/full", O_WRONLY);
    ASSERT_TRUE(full >= 0);
    aip__out o;
    ASSERT_EQ(aip__out_init_fd(&o, full), AIP_OK);
    uint64_t sum = 0;
    fill(&o, 1u << 20, &sum);
    ASSERT_EQ(aip__out_close(&o), AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), "No space left") != NULL);
    /* file with the writer thread: the temporary's fd now points to /dev/full */
    char path[128];
    snprintf(path, sizeof path, "%s/full.txt", dir);
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    ASSERT_TRUE(dup2(full, o.fd) == o.fd);
    fill(&o, 2u << 20, &sum);
    ASSERT_EQ(aip__out_close(&o), AIP_ERR_IO);
    ASSERT_TRUE(strstr(aip_last_error(), "No space left") != NULL);
    ASSERT_TRUE(!exists(path));
    ASSERT_EQ(count_entries(), 0);
    close(full);
}

static void test_refuses_symlink(void)
{
    char path[128], target[128];
    snprintf(path, sizeof path, "%s/link.txt", dir);
    snprintf(target, sizeof target, "%s/target.txt", dir);
    rb_write_file(target, "keep", 4);
    ASSERT_EQ(symlink(target, path), 0);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    aip__out_str(&o, "x");
    ASSERT_EQ(aip__out_close(&o), AIP_ERR_SYMLINK);
    FILE *f = fopen(target, "r");
    char buf[8] = {0};
    ASSERT_TRUE(f && fread(buf, 1, 7, f) == 4);
    fclose(f);
    ASSERT_STREQ(buf, "keep");
    unlink(path);
    unlink(target);
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "outbuf"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_file_content), TEST_CASE(test_abort_leaves_nothing),
          TEST_CASE(test_disk_full), TEST_CASE(test_refuses_symlink), TEST_CASE(teardown))
