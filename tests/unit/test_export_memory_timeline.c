/*
 * test_export_memory_timeline.c — the memory timeline files for a profile
 * whose records are known (rich_profile.h): the coalesced JSON and the raw
 * events byte for byte, gzip round trip, the HTML page (self-contained,
 * escaped), device selection, bad arguments, and the summary (its mstx
 * ranges section included).
 */
#include "aip_test.h"
#include "rich_profile.h"

#include "memory_timeline.h"
#include "result.h"
#include "summary.h"

#include <zlib.h>

static char root[64], dir[256];

static char *gunzip(const char *path)
{
    gzFile g = gzopen(path, "rb");
    if (!g)
        return NULL;
    static char buf[1 << 16];
    int n = gzread(g, buf, sizeof buf - 1);
    gzclose(g);
    if (n < 0)
        return NULL;
    buf[n] = 0;
    return strdup(buf);
}

static const char want_coalesced[] =
    "[[1700000000000004, 1700000000000004, 1700000000000005, 1700000000000014, "
    "1700000000000033, 1700000000000034, 1700000000000035, 1700000000000045, 1700000000000055, "
    "1700000000000061, 1700000000000090], [[0, 0, 0, 0, 0, 0, 0, 0, 8192], "
    "[0, 0, 0, 0, 1024, 0, 0, 0, 8192], [0, 0, 0, 0, 1024, 0, 0, 0, 10240], "
    "[0, 0, 0, 0, 0, 0, 0, 0, 10240], [0, 0, 0, 0, 4096, 0, 0, 0, 10240], "
    "[0, 0, 0, 0, 4096, 0, 0, 512, 10240], [0, 0, 0, 0, 4096, 0, 0, 512, 10496], "
    "[0, 0, 0, 0, 0, 0, 0, 512, 10496], [0, 0, 0, 0, 0, 0, 0, 0, 10496], "
    "[0, 0, 0, 0, 0, 0, 0, 0, 2304], [0, 0, 0, 0, 0, 0, 0, 0, 256]]]";

static const char want_raw[] =
    "[[-1, 1, 8192, 7], [1700000000000004000, 2, 1024, 3], [1700000000000005000, 2, 2048, 7], "
    "[1700000000000014000, 4, -1024, 3], [1700000000000033000, 2, 4096, 3], "
    "[1700000000000034000, 2, 512, 6], [1700000000000035000, 2, 256, 7], "
    "[1700000000000045000, 4, -4096, 3], [1700000000000055000, 4, -512, 6], "
    "[1700000000000061000, 4, -8192, 7], [1700000000000090000, 4, -2048, 7]]";

static void test_json_files(void)
{
    char p[400];
    uint64_t n = 0;
    snprintf(p, sizeof p, "%s/out/tl.json", root); /* parent created */
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "cpu", 1, &n), AIP_OK);
    ASSERT_EQ(n, 10);
    char *s = aip_test_slurp(p, NULL);
    ASSERT_STREQ(s, want_coalesced);
    free(s);
    snprintf(p, sizeof p, "%s/out/tl.json.gz", root);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, NULL, 1, NULL), AIP_OK);
    s = gunzip(p);
    ASSERT_STREQ(s, want_coalesced);
    free(s);
    snprintf(p, sizeof p, "%s/out/tl.raw.json.gz", root);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "CPU:0", 1, NULL), AIP_OK);
    s = gunzip(p);
    ASSERT_STREQ(s, want_raw);
    free(s);
    /* another device: no records, valid empty files */
    snprintf(p, sizeof p, "%s/out/npu.json", root);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "npu:0", 1, &n), AIP_OK);
    ASSERT_EQ(n, 0);
    s = aip_test_slurp(p, NULL);
    ASSERT_STREQ(s, "[[], []]");
    free(s);
}

static void test_html_page(void)
{
    char p[400];
    snprintf(p, sizeof p, "%s/out/tl.html", root);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "cpu", 1, NULL), AIP_OK);
    char *s = aip_test_slurp(p, NULL);
    ASSERT_TRUE(s != NULL);
    ASSERT_TRUE(strstr(s, "<svg") && strstr(s, "id=\"memory-timeline\""));
    ASSERT_TRUE(strstr(s, "Time (ms)") && strstr(s, "Memory (GB)"));
    ASSERT_TRUE(strstr(s, "Max memory allocated: <b>0.00 GiB</b> (15104 bytes)"));
    ASSERT_TRUE(strstr(s, "Max memory reserved: <b>0.00 GiB</b> (65536 bytes)"));
    for (int c = 0; c < AIP_MEMCAT_COUNT; c++)
        ASSERT_TRUE(strstr(s, c == AIP_MEMCAT_UNKNOWN ? "Unknown" : aip__mem_category_name(c)));
    /* self-contained: no script, nothing fetched */
    ASSERT_TRUE(strstr(s, "<script") == NULL && strstr(s, "src=") == NULL &&
                strstr(s, "href=") == NULL);
    int polygons = 0;
    for (char *q = s; (q = strstr(q, "<polygon")); q++)
        polygons++;
    ASSERT_EQ(polygons, AIP_MEMCAT_COUNT);
    free(s);
}

static void test_bad_arguments(void)
{
    char p[400];
    snprintf(p, sizeof p, "%s/out/tl.txt", root);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "cpu", 1, NULL), AIP_ERR_INVALID_ARG);
    snprintf(p, sizeof p, "%s/out/tl.json", root);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "tpu:0", 1, NULL), AIP_ERR_INVALID_ARG);
    ASSERT_EQ(aip__export_memory_timeline(dir, p, "npu:x", 1, NULL), AIP_ERR_INVALID_ARG);
    ASSERT_EQ(aip__export_memory_timeline(dir, "/tmp/a b.json", "cpu", 1, NULL), AIP_ERR_PATH);
    snprintf(p, sizeof p, "%s/nothing", root);
    ASSERT_EQ(aip__export_memory_timeline(p, "/tmp/x.json", "cpu", 1, NULL), AIP_ERR_NOT_FOUND);
    char link[400];
    snprintf(link, sizeof link, "%s/link.json", root);
    ASSERT_EQ(symlink("/tmp/elsewhere.json", link), 0);
    ASSERT_EQ(aip__export_memory_timeline(dir, link, "cpu", 1, NULL), AIP_ERR_SYMLINK);
    uint8_t type;
    int index;
    ASSERT_EQ(aip__device_parse("cuda:3", &type, &index), AIP_OK);
    ASSERT_EQ(type, AIP_DEVICE_CUDA);
    ASSERT_EQ(index, 3);
    ASSERT_EQ(aip__device_parse("npu", &type, &index), AIP_OK);
    ASSERT_EQ(index, -1);
}

static void test_summary(void)
{
    char p[400];
    snprintf(p, sizeof p, "%s/out/summary.txt", root);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    ASSERT_TRUE(fd >= 0);
    char html[400];
    snprintf(html, sizeof html, "%s/out/summary.html", root);
    ASSERT_EQ(aip__summary(dir, fd, html, 1), AIP_OK);
    close(fd);
    char *t = aip_test_slurp(p, NULL);
    ASSERT_TRUE(t != NULL);
    ASSERT_TRUE(strstr(t, "Top 9 of 9 ops by self time:"));
    ASSERT_TRUE(strstr(t, "Steps: 2  min 0.099 ms  median 0.100 ms  max 0.100 ms"));
    ASSERT_TRUE(strstr(t, "peak allocated 14.75 KiB, peak reserved 64.00 KiB (10 records)"));
    ASSERT_TRUE(strstr(t, "NPU activity requested, but no device activity was recorded"));
    /* terminal safety: the newline inside a name does not start a line */
    ASSERT_TRUE(strstr(t, "quote\"comma,=cmd?</script>") != NULL);
    ASSERT_TRUE(strstr(t, "bad??utf8") != NULL);
    /* mstx: the cross-thread start/end range and the push/pop one, by total */
    ASSERT_TRUE(strstr(t, "\nmstx ranges: 2 in 2 (domain, message) groups, 1 mark(s), "
                          "0 start(s) without end\n"));
    ASSERT_TRUE(strstr(t, "  0.020        1        0.020        0.020  default        "
                          "cross-thread\n         0.001        1        0.001        0.001  io"
                          "             dataloader\n"));
    free(t);
    char *h = aip_test_slurp(html, NULL);
    ASSERT_TRUE(h != NULL);
    ASSERT_TRUE(strstr(h, "id=\"step-chart\"") && strstr(h, "id=\"memory-chart\"") &&
                strstr(h, "id=\"top-ops\"") && strstr(h, "<table id=\"mstx-ranges\">"));
    ASSERT_TRUE(strstr(h, "quote&quot;comma,=cmd\n&lt;/script&gt;&lt;b&gt;&amp;amp;"));
    ASSERT_TRUE(strstr(h, "</script>") == NULL && strstr(h, "<b>&amp;") == NULL);
    ASSERT_TRUE(strstr(h, "bad\xef\xbf\xbd\xef\xbf\xbdutf8") != NULL);
    free(h);
}

static void setup(void)
{
    rb_tempdir(root, sizeof root, "mtl");
    snprintf(dir, sizeof dir, "%s/rich_ascend_pt", root);
    rich_dir(dir, rich_info_json, rich_metadata_json);
}
static void teardown(void) { if (!getenv("KEEP")) rb_rmtree(root); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_json_files), TEST_CASE(test_html_page),
          TEST_CASE(test_bad_arguments), TEST_CASE(test_summary), TEST_CASE(teardown))
