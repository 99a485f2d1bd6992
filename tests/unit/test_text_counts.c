/*
 * test_text_counts.c — texts the profiler changes are counted, never
 * changed silently: a name longer than 64 KiB is cut when recorded (at a
 * character boundary) and counted (aip__strings_cut, profiler_info.json's
 * aiprof.texts_cut, the warning, analyse.log and the summary); a name with
 * invalid UTF-8, whose bad bytes the exporters write as U+FFFD, is counted
 * when first recorded (profiler_info.json's aiprof.texts_invalid_utf8, the
 * trace log) and by the analysis (analyse.log and the summary).  A clean profile reports 0 and 0, an
 * unsaved one "unknown" for the cut count.
 */
#include "aip_test.h"
#include "aiprof.h"
#include "intern.h"
#include "result.h"
#include "session_helpers.h"
#include "tmp_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <unistd.h>

static char tmp[PATH_MAX];

static void test_intern_counts_cuts(void)
{
    uint64_t before = aip__strings_cut();
    size_t big = AIP_STRING_MAX_LEN + 10;
    char *s = malloc(big + 1);
    ASSERT_TRUE(s != NULL);
    memset(s, 'y', big);
    s[big] = '\0';
    aip_intern(s);
    aip_intern(s); /* each text cut counts: it is one more recorded text */
    s[AIP_STRING_MAX_LEN] = '\0';
    aip_intern(s); /* exactly at the limit: not cut */
    free(s);
    ASSERT_EQ(aip__strings_cut() - before, 2);
}

/* A cut never splits a character: 'x' then two-byte characters puts a
 * character's second byte at the limit; the cut ends before its first. */
static void test_cut_keeps_characters_whole(void)
{
    size_t big = AIP_STRING_MAX_LEN + 9;
    char *s = malloc(big + 1);
    ASSERT_TRUE(s != NULL);
    s[0] = 'x';
    for (size_t i = 1; i + 1 < big; i += 2) {
        s[i] = (char)0xC3; /* U+00E9 */
        s[i + 1] = (char)0xA9;
    }
    s[big] = '\0';
    ASSERT_EQ(((unsigned char)s[AIP_STRING_MAX_LEN] & 0xC0), 0x80);
    uint64_t invalid = aip__strings_invalid_utf8();
    uint32_t len = 0;
    const char *text = aip__string_text(aip_intern(s), &len);
    free(s);
    ASSERT_TRUE(text != NULL);
    ASSERT_EQ(len, AIP_STRING_MAX_LEN - 1);
    ASSERT_EQ(aip__strings_invalid_utf8(), invalid); /* the cut text is valid */
    aip_intern("bad\xc3(");
    aip_intern("bad\xc3("); /* once per distinct text */
    ASSERT_EQ(aip__strings_invalid_utf8() - invalid, 1);
}

/* The result directory (the only *_ascend_pt) under `dir`. */
static int result_dir(const char *dir, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, "_ascend_pt")) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            n++;
        }
    if (d)
        closedir(d);
    return n == 1;
}

static json_t *profiler_info(const char *rdir)
{
    DIR *d = opendir(rdir);
    struct dirent *e;
    json_t *j = NULL;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, "profiler_info", 13) == 0) {
            char p[PATH_MAX * 2];
            snprintf(p, sizeof p, "%s/%s", rdir, e->d_name);
            j = json_load_file(p, 0, NULL);
        }
    if (d)
        closedir(d);
    return j;
}

/* One trace with `long_names` ops named by a 70 000-byte text and
 * `bad_names` ops named with invalid UTF-8; analysed, summarised. */
static void run_profile(const char *tag, int long_names, int bad_names, char *rdir,
                        size_t cap)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", tmp, tag);
    aip_config c;
    base_config(&c, dir);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    char *big = malloc(70001);
    ASSERT_TRUE(big != NULL);
    for (int i = 0; i < long_names; i++) {
        memset(big, 'a' + i, 70000);
        big[70000] = '\0';
        aip_op_info op = {.name = big, .sequence_number = -1};
        aip_op_begin(&op);
        aip_op_end();
    }
    free(big);
    for (int i = 0; i < bad_names; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad\xff\xfe_%d", i);
        aip_op_info op = {.name = name, .sequence_number = -1};
        aip_op_begin(&op);
        aip_op_end();
    }
    aip_op_info ok = {.name = "fine_op", .sequence_number = -1};
    aip_op_begin(&ok);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
    ASSERT_TRUE(result_dir(dir, rdir, cap));
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    ASSERT_EQ(aip_analyse_dir(rdir, &o), AIP_OK);
}

static char *summary_text(const char *rdir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/summary_test.txt", tmp);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    if (fd < 0)
        return NULL;
    aip_status st = aip__summary(rdir, fd, NULL, 1);
    close(fd);
    return st ? NULL : aip_test_slurp(p, NULL);
}

static void test_counts_reach_info_log_and_summary(void)
{
    char rdir[PATH_MAX], p[PATH_MAX + 32];
    run_profile("counted", 3, 2, rdir, sizeof rdir);
    json_t *info = profiler_info(rdir);
    ASSERT_TRUE(info != NULL);
    json_t *cut = json_object_get(json_object_get(info, "aiprof"), "texts_cut");
    ASSERT_TRUE(json_is_integer(cut));
    ASSERT_EQ(json_integer_value(cut), 3);
    json_t *bad = json_object_get(json_object_get(info, "aiprof"), "texts_invalid_utf8");
    ASSERT_TRUE(json_is_integer(bad));
    ASSERT_EQ(json_integer_value(bad), 2);
    json_decref(info);
    snprintf(p, sizeof p, "%s/logs/aiprof_%d.log", rdir, (int)getpid());
    char *trace_log = aip_test_slurp(p, NULL);
    ASSERT_TRUE(trace_log != NULL);
    ASSERT_TRUE(strstr(trace_log, "2 new text(s) are not valid UTF-8") != NULL);
    free(trace_log);
    snprintf(p, sizeof p, "%s/logs/analyse.log", rdir);
    char *log = aip_test_slurp(p, NULL);
    ASSERT_TRUE(log != NULL);
    ASSERT_TRUE(strstr(log, "texts cut at 65536 bytes when recorded: 3; texts with invalid "
                            "UTF-8 (each bad byte written as U+FFFD): 2") != NULL);
    free(log);
    char *sum = summary_text(rdir);
    ASSERT_TRUE(sum != NULL);
    ASSERT_TRUE(strstr(sum, "3 text(s) longer than 65536 bytes") != NULL);
    ASSERT_TRUE(strstr(sum, "2 recorded text(s) are not valid UTF-8") != NULL);
    free(sum);
}

static void test_clean_profile_reports_zero(void)
{
    char rdir[PATH_MAX], p[PATH_MAX + 32];
    run_profile("clean", 0, 0, rdir, sizeof rdir);
    json_t *info = profiler_info(rdir);
    ASSERT_TRUE(info != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(info, "aiprof"), "texts_cut")),
              0);
    ASSERT_EQ(json_integer_value(json_object_get(json_object_get(info, "aiprof"),
                                                 "texts_invalid_utf8")), 0);
    json_decref(info);
    snprintf(p, sizeof p, "%s/logs/analyse.log", rdir);
    char *log = aip_test_slurp(p, NULL);
    ASSERT_TRUE(log != NULL);
    ASSERT_TRUE(strstr(log, "when recorded: 0; texts with invalid UTF-8 (each bad byte written "
                            "as U+FFFD): 0") != NULL);
    free(log);
    char *sum = summary_text(rdir);
    ASSERT_TRUE(sum != NULL);
    ASSERT_TRUE(strstr(sum, "text(s) longer than") == NULL);
    ASSERT_TRUE(strstr(sum, "not valid UTF-8") == NULL);
    free(sum);
}

/* A program killed before saving leaves profiler_info.json as written at
 * the start, without the count: the log says it is unknown, not 0. */
static void test_unsaved_trace_reports_unknown(void)
{
    char rdir[PATH_MAX], p[PATH_MAX + 32];
    run_profile("unsaved", 1, 0, rdir, sizeof rdir);
    DIR *d = opendir(rdir);
    struct dirent *e;
    char info_path[PATH_MAX * 2] = "";
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, "profiler_info", 13) == 0)
            snprintf(info_path, sizeof info_path, "%s/%s", rdir, e->d_name);
    if (d)
        closedir(d);
    json_t *info = json_load_file(info_path, 0, NULL);
    ASSERT_TRUE(info != NULL);
    json_object_del(json_object_get(info, "aiprof"), "texts_cut");
    ASSERT_EQ(json_dump_file(info, info_path, 0), 0);
    json_decref(info);
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    ASSERT_EQ(aip_analyse_dir(rdir, &o), AIP_OK);
    snprintf(p, sizeof p, "%s/logs/analyse.log", rdir);
    char *log = aip_test_slurp(p, NULL);
    ASSERT_TRUE(log != NULL);
    ASSERT_TRUE(strstr(log, "when recorded: unknown (the trace was not saved)") != NULL);
    free(log);
}

static void setup(void) { make_tmpdir(tmp, sizeof tmp, "text_counts"); }
static void teardown(void) { if (!getenv("AIP_KEEP_TMP")) rm_rf(tmp); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_intern_counts_cuts),
          TEST_CASE(test_cut_keeps_characters_whole),
          TEST_CASE(test_counts_reach_info_log_and_summary),
          TEST_CASE(test_clean_profile_reports_zero),
          TEST_CASE(test_unsaved_trace_reports_unknown), TEST_CASE(teardown))
