/*
 * test_insight.c — `aiprof advise` and `aiprof compare` (src/insight/) on
 * result directories built record by record (raw_builder.h), so every
 * figure is known exactly: a GC storm ranked first with its worst pause
 * and where it happened, the whole profile as one window without steps,
 * and a planted regression (one op slower, one op added, a bigger memory
 * peak) named by compare at the top of its sections with the exact
 * change, while an identical run shows nothing.
 */
#include "aip_test.h"
#include "raw_builder.h"
#include "rich_profile.h"

#include "insight.h"
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[256];
/* the added op's name (test_compare_html_escapes plants a hostile one) */
static const char *added_name = "aten::added";

#define MS 1000000ull
/* string ids */
enum { T_STEP1 = 1, T_CONV = 11, T_RELU, T_ADDED, T_SHAPES };

static void strings(rb_buf *b)
{
    const char *steps[10];
    char names[10][32];
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "ProfilerStep#%d", i + 1);
        steps[i] = names[i];
    }
    rb_strings(b, T_STEP1, steps, NULL, 10);
    const char *t[] = {"aten::conv2d", "aten::relu", added_name, "[[8, 3, 32, 32]]"};
    rb_strings(b, T_CONV, t, NULL, 4);
}

/* 10 steps of 10 ms; per step conv (conv_ms, shapes), relu 1 ms, an added
 * op (added_ms, 0: none), a temporary of peak_mib inside conv, and GC
 * passes of gc_ms per step (step 4's: 5 ms). */
static void make_dir(const char *dir, int steps, unsigned conv_ms, unsigned added_ms,
                     unsigned peak_mib, unsigned gc_ms)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 9, "prog", 1e9);
    rb_clock(&b, 0, 0, RICH_R0);
    strings(&b);
    for (int s = 0; s < steps; s++) {
        uint64_t t0 = (uint64_t)s * 10 * MS + MS;
        if (steps > 1)
            ev_annotation(&e, T_STEP1 + (uint32_t)s, t0, t0 + 10 * MS);
        ev_op_full(&e, T_CONV, t0, t0 + conv_ms * MS, AIP_OPF_SHAPES, 0, 0, T_SHAPES, 0, 0, 0);
        int64_t bytes = (int64_t)peak_mib << 20;
        ev_memory(&e, t0 + 1, 0x1000, bytes, bytes, bytes, 0, -1);
        ev_memory(&e, t0 + conv_ms * MS - 1, 0x1000, -bytes, 0, bytes, 0, -1);
        uint64_t t = t0 + conv_ms * MS;
        ev_op(&e, T_RELU, t, t + MS);
        t += MS;
        if (added_ms) {
            ev_op(&e, T_ADDED, t, t + added_ms * MS);
            t += added_ms * MS;
        }
        if (gc_ms)
            ev_gc(&e, t, t + (s == 3 ? 5 : gc_ms) * MS);
    }
    rb_events(&b, 9, &e);
    rb_end(&b);
    rb_result_dir(dir, 9, &b, "{\"config\": {\"common_config\": {\"profile_memory\": true}}}");
    rb_free(&b);
    rb_free(&e);
}

static void test_gc_storm_first(void)
{
    char d[300];
    snprintf(d, sizeof d, "%s/gc_ascend_pt", root);
    make_dir(d, 10, 2, 0, 1, 3);
    aip__run_log r;
    aip__model m;
    ASSERT_EQ(aip__result_open(d, 1, &r, &m), AIP_OK);
    aip__advise_ctx c;
    ASSERT_EQ(aip__advise_build(&m, &c), AIP_OK);
    ASSERT_EQ(c.n_steps, 10);
    ASSERT_EQ(c.mean_step_ns, 10 * MS);
    ASSERT_TRUE(c.n >= 1);
    ASSERT_STREQ(c.f[0].rule, "gc");
    ASSERT_EQ(c.f[0].severity, AIP_SEVERITY_HIGH);
    ASSERT_EQ(c.f[0].ns_per_step, (9 * 3 + 5) * MS / 10); /* 3.2 ms */
    ASSERT_TRUE(strstr(c.f[0].evidence, "10 GC passes") != NULL);
    ASSERT_TRUE(strstr(c.f[0].evidence, "worst pause 5.000 ms") != NULL);
    /* where to look: the worst pause first, step 4 (index 3) after its ops */
    ASSERT_EQ(c.f[0].where_ns[0], (int64_t)(RICH_R0 + 3 * 10 * MS + MS + 3 * MS));
    ASSERT_EQ(c.f[0].where_dur[0], 5 * MS);
    /* the memory peak is there but info: a steady peak is no problem */
    int mem = 0;
    for (size_t i = 0; i < c.n; i++)
        if (!strcmp(c.f[i].rule, "memory_peak"))
            mem = c.f[i].severity == AIP_SEVERITY_INFO;
    ASSERT_TRUE(mem);
    aip__advise_free(&c);
    aip__model_free(&m);
    aip__runlog_free(&r);
}

/* Without ProfilerStep#N the whole profile is the one window. */
static void test_no_steps_whole_window(void)
{
    char d[300];
    snprintf(d, sizeof d, "%s/whole_ascend_pt", root);
    make_dir(d, 1, 2, 0, 1, 3);
    aip__run_log r;
    aip__model m;
    ASSERT_EQ(aip__result_open(d, 1, &r, &m), AIP_OK);
    aip__advise_ctx c;
    ASSERT_EQ(aip__advise_build(&m, &c), AIP_OK);
    ASSERT_EQ(c.n_steps, 1);
    ASSERT_TRUE(c.steps != m.steps);
    ASSERT_STREQ(c.f[0].rule, "gc");
    ASSERT_EQ(c.f[0].ns_per_step, 3 * MS);
    ASSERT_EQ(c.mean_step_ns, 6 * MS); /* conv 2 + relu 1 + gc 3 */
    aip__advise_free(&c);
    aip__model_free(&m);
    aip__runlog_free(&r);
}

static const aip__cmp_row *row(const aip__cmp *c, const char *section, size_t k, double thr)
{
    size_t seen = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->rows[i].section, section) && aip__compare_shown(c, &c->rows[i], thr) &&
            seen++ == k)
            return &c->rows[i];
    return NULL;
}

static void load2(const char *a, const char *b, aip__model m[2], aip__run_log r[2])
{
    aip__result_open(a, 1, &r[0], &m[0]);
    aip__result_open(b, 1, &r[1], &m[1]);
}

static void free2(aip__model m[2], aip__run_log r[2])
{
    for (int k = 0; k < 2; k++) {
        aip__model_free(&m[k]);
        aip__runlog_free(&r[k]);
    }
}

static void test_compare_names_the_regression(void)
{
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/base_ascend_pt", root);
    snprintf(b, sizeof b, "%s/new_ascend_pt", root);
    make_dir(a, 10, 2, 0, 4, 0);
    make_dir(b, 10, 4, 1, 8, 0); /* conv +2 ms, an added 1 ms op, peak 4 -> 8 MiB */
    aip__model m[2];
    aip__run_log r[2];
    load2(a, b, m, r);
    aip__cmp c;
    ASSERT_EQ(aip__compare_build(&m[0], &m[1], &c), AIP_OK);
    const aip__cmp_row *x = row(&c, "op", 0, 0.01);
    ASSERT_TRUE(x != NULL);
    ASSERT_STREQ(x->name, "aten::conv2d");
    ASSERT_STREQ(x->shapes, "[[8, 3, 32, 32]]");
    ASSERT_EQ((int64_t)x->diff, 2 * MS);
    ASSERT_EQ(x->count[0], 10);
    ASSERT_EQ(x->count[1], 10);
    x = row(&c, "op", 1, 0.01);
    ASSERT_TRUE(x != NULL);
    ASSERT_STREQ(x->name, "aten::added");
    ASSERT_EQ(x->count[0], 0);
    ASSERT_EQ((int64_t)x->diff, 1 * MS);
    ASSERT_TRUE(row(&c, "op", 2, 0.01) == NULL); /* relu did not change */
    x = row(&c, "memory", 0, 0.01);
    ASSERT_TRUE(x != NULL);
    ASSERT_EQ((int64_t)x->diff, 4 << 20);
    /* text and CSV name them, in that order */
    char path[400];
    snprintf(path, sizeof path, "%s/cmp.csv", root);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    aip__compare_csv(&c, 0.01, &o);
    ASSERT_EQ(aip__out_close(&o), AIP_OK);
    char *csv = aip_test_slurp(path, NULL);
    ASSERT_TRUE(csv != NULL);
    char *conv = strstr(csv, "op,1,aten::conv2d,\"[[8, 3, 32, 32]]\",ms/step,2.000000,10,"
                             "4.000000,10,2.000000,2.000000");
    char *added = strstr(csv, "op,2,aten::added,,ms/step,0.000000,0,1.000000,10,1.000000,inf");
    ASSERT_TRUE(conv != NULL);
    ASSERT_TRUE(added != NULL && added > conv);
    free(csv);
    aip__compare_free(&c);
    free2(m, r);
}

static void test_compare_same_run_shows_nothing(void)
{
    char a[300];
    snprintf(a, sizeof a, "%s/base_ascend_pt", root);
    make_dir(a, 10, 2, 0, 4, 0);
    aip__model m[2];
    aip__run_log r[2];
    load2(a, a, m, r);
    aip__cmp c;
    ASSERT_EQ(aip__compare_build(&m[0], &m[1], &c), AIP_OK);
    ASSERT_TRUE(c.n > 0);
    for (size_t i = 0; i < c.n; i++)
        ASSERT_TRUE(!aip__compare_shown(&c, &c.rows[i], 0));
    aip__compare_free(&c);
    free2(m, r);
}


/* --html: a recorded name that is markup stays text (no tag, no entity
 * broken), and each row shown has the text's figures in its cells. */
static void test_compare_html_escapes(void)
{
    char a[300], b[300], path[400];
    snprintf(a, sizeof a, "%s/hbase_ascend_pt", root);
    snprintf(b, sizeof b, "%s/hnew_ascend_pt", root);
    added_name = "<script>alert(\"x&y\")</script>'\x1b[31m";
    make_dir(a, 10, 2, 0, 4, 0);
    make_dir(b, 10, 4, 1, 8, 0);
    added_name = "aten::added";
    aip__model m[2];
    aip__run_log r[2];
    load2(a, b, m, r);
    aip__cmp c;
    ASSERT_EQ(aip__compare_build(&m[0], &m[1], &c), AIP_OK);
    snprintf(path, sizeof path, "%s/cmp.html", root);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    aip__compare_html(&c, 0.01, "<b>base</b>", b, &o);
    ASSERT_EQ(aip__out_close(&o), AIP_OK);
    char *html = aip_test_slurp(path, NULL);
    ASSERT_TRUE(html != NULL);
    ASSERT_TRUE(strstr(html, "<script") == NULL);
    ASSERT_TRUE(strstr(html, "<b>base") == NULL);
    ASSERT_TRUE(strstr(html, "\x1b") == NULL);
    ASSERT_TRUE(strstr(html, "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;") !=
                NULL);
    ASSERT_TRUE(strstr(html, "&lt;b&gt;base&lt;/b&gt;") != NULL);
    /* the conv row: 10 calls 2 ms -> 10 calls 4 ms per step, +2, ratio 2 */
    ASSERT_TRUE(strstr(html, "<td class=\"name\">aten::conv2d</td><td class=\"shape\">"
                             "[[8, 3, 32, 32]]</td><td class=\"n\">10</td><td class=\"n\">"
                             "2.000</td><td class=\"n\">10</td><td class=\"n\">4.000</td>"
                             "<td class=\"n d\">+2.000</td><td class=\"n\">2.00</td>") != NULL);
    /* the added op: new, 1 ms per step; memory +4 MiB */
    ASSERT_TRUE(strstr(html, "<td class=\"n\">0</td><td class=\"n\">0.000</td><td class=\"n\">"
                             "10</td><td class=\"n\">1.000</td><td class=\"n d\">+1.000</td>"
                             "<td class=\"n\">new</td>") != NULL);
    ASSERT_TRUE(strstr(html, "<td class=\"n d\">+4.000</td>") != NULL);
    free(html);
    aip__compare_free(&c);
    free2(m, r);
}

/* Two jobs of two ranks each (no rank ids: matched by order): rank #1 of
 * the new job has the regression; its top changes name conv2d first and
 * the added op, rank #0's show nothing; the CSV has a Rank column. */
static void test_compare_two_jobs(void)
{
    char d[400], jb[300], jn[300];
    snprintf(jb, sizeof jb, "%s/jobbase", root);
    snprintf(jn, sizeof jn, "%s/jobnew", root);
    const char *const names[] = {"r0_ascend_pt", "r1_ascend_pt"};
    mkdir(jb, 0750);
    mkdir(jn, 0750);
    for (int k = 0; k < 2; k++) {
        snprintf(d, sizeof d, "%s/%s", jb, names[k]);
        make_dir(d, 10, 2, 0, 4, 0);
        snprintf(d, sizeof d, "%s/%s", jn, names[k]);
        if (k)
            make_dir(d, 10, 4, 1, 8, 0);
        else
            make_dir(d, 10, 2, 0, 4, 0);
    }
    aip__cmp_job j;
    ASSERT_EQ(aip__compare_job_build(jb, jn, 1, &j), AIP_OK);
    ASSERT_EQ(j.n, 2);
    ASSERT_TRUE(j.ranks[0].compared && j.ranks[1].compared);
    size_t idx[16];
    ASSERT_EQ(aip__compare_top(&j.ranks[0].cmp, 0.01, 5, idx), 0);
    size_t n = aip__compare_top(&j.ranks[1].cmp, 0.01, 5, idx);
    ASSERT_EQ(n, 3); /* conv2d, the added op, the memory peak */
    ASSERT_STREQ(j.ranks[1].cmp.rows[idx[0]].name, "aten::conv2d");
    ASSERT_STREQ(j.ranks[1].cmp.rows[idx[1]].name, "aten::added");
    ASSERT_STREQ(j.ranks[1].cmp.rows[idx[2]].section, "memory");
    char path[400];
    snprintf(path, sizeof path, "%s/job.csv", root);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, path), AIP_OK);
    aip__compare_job_csv(&j, 0.01, &o);
    ASSERT_EQ(aip__out_close(&o), AIP_OK);
    char *csv = aip_test_slurp(path, NULL);
    ASSERT_TRUE(csv != NULL);
    ASSERT_TRUE(!strncmp(csv, "Rank,Section,Top,Operator Name,", 31));
    ASSERT_TRUE(strstr(csv, "-2,op,1,aten::conv2d,") != NULL); /* rank #1: key -1 - 1 */
    ASSERT_TRUE(strstr(csv, "-1,op,") == NULL);                  /* rank #0: no change */
    free(csv);
    aip__compare_job_free(&j);
}

int main(void)
{
    rb_tempdir(root, sizeof root, "insight");
    static const aip_test_case cases[] = {
        TEST_CASE(test_gc_storm_first),
        TEST_CASE(test_no_steps_whole_window),
        TEST_CASE(test_compare_names_the_regression),
        TEST_CASE(test_compare_same_run_shows_nothing),
        TEST_CASE(test_compare_html_escapes),
        TEST_CASE(test_compare_two_jobs),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof *cases);
    rb_rmtree(root);
    return rc;
}
