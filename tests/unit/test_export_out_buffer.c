/*
 * test_export_out_buffer.c — the buffered output stream: content, all-or-nothing
 * files, write errors (disk full) with and without the writer thread.
 */
#include "aip_test.h"
#include "outbuf.h"
#include "raw_builder.h"

#include <errno.h>
#include <string.h>
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

/* The cached µs formatter writes aip__fmt_us3's bytes for every value:
 * runs of nearby epoch times (the cache kept, and changed at a carry into
 * the kept digits), times below 10 ms (nothing to keep), negative and
 * extreme values, in one stream, with the 25-byte bound. */
static void test_us3_cached_same_bytes(void)
{
    static const int64_t fixed[] = {0, 1, 999, 1000, 9999999, 10000000, 10000001, -1, -1000,
                                    -123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1,
                                    1700000000000009999, 1700000000000010000,
                                    1699999999999999999, 1700000000000000000};
    aip__us3_cache c = {0};
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < 200000 + sizeof fixed / sizeof fixed[0]; i++) {
        int64_t ns;
        if (i < sizeof fixed / sizeof fixed[0]) {
            ns = fixed[i];
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* mostly a walk over epoch ns, sometimes a jump anywhere */
            ns = x % 50 ? 1700000000000000000ll + (int64_t)(i * 35791) % 100000000000ll
                        : (int64_t)x;
        }
        char a[40], b[40];
        memset(a, 'x', sizeof a);
        memset(b, 'x', sizeof b);
        char *ea = aip__fmt_us3(a, ns), *eb = aip__fmt_us3_cached(&c, b, ns);
        ASSERT_EQ(ea - a, eb - b);
        ASSERT_TRUE(memcmp(a, b, (size_t)(ea - a)) == 0);
        for (size_t k = 25; k < sizeof b; k++)
            ASSERT_EQ(b[k], 'x');
    }
}

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_us3_cached_same_bytes), TEST_CASE(test_file_content), TEST_CASE(test_abort_leaves_nothing),
          TEST_CASE(test_disk_full), TEST_CASE(test_refuses_symlink), TEST_CASE(teardown))
