/*
 * test_export_csv.c — CSV cell quoting and the exact bytes of
 * operator_details.csv and step_trace_time.csv for hand-made profiles.
 */
#include "aip_test.h"
#include "export.h"
#include "raw_builder.h"
#include "text_escape.h"

static char dir[64];

static void cell_is(const char *in, size_t n, const char *want, int *ok)
{
    char out[256];
    size_t k = aip__csv_cell(in, n, out);
    out[k] = 0;
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "csv cell of \"%s\": got [%s], want [%s]\n", in, out, want);
        *ok = 0;
    }
}

static void test_cells(void)
{
    int ok = 1;
#define C(in, want) cell_is(in, sizeof(in) - 1, want, &ok)
    C("aten::mm", "aten::mm");
    C("", "");
    C("a,b", "\"a,b\"");
    C("say \"hi\"", "\"say \"\"hi\"\"\"");
    C("two\nlines", "\"two\nlines\"");
    C("cr\rx", "\"cr\rx\"");
    C("=SUM(A1:A9)", "'=SUM(A1:A9)");
    C("+cmd", "'+cmd");
    C("-cmd|' /C calc'!A0", "'-cmd|' /C calc'!A0");
    C("@foo", "'@foo");
    C("=1,2", "\"'=1,2\"");
    C("-1.5", "-1.5");
    C("+3", "+3");
    C("-2e-3", "-2e-3");
    C("-", "'-");
    C("-e5", "'-e5");
    C("bad\xff", "bad\xef\xbf\xbd");
    C("nul\0x", "nul\xef\xbf\xbdx");
    C("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac");
#undef C
    ASSERT_TRUE(ok);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Thread 1: ProfilerStep#1 [0,100] ⊃ A[10,60] ⊃ {B[20,30], C[35,50] ⊃ R[36,40]},
 * D[70,90]; ProfilerStep#2 [100,200] ⊃ H[120,130].  Thread 2: E[5,95],
 * F[150,180], G[190,210].  Times in ns. */
static void load_tree(aip__model *m, int with_steps, int hostile)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    const char *names[] = {"ProfilerStep#1", hostile ? "=HYPERLINK(\"x\")" : "A", "B", "C", "R",
                           "D", "ProfilerStep#2", "H", "E", "F", "G", "[[2, 3], [3]]",
                           "a.py(1): f;\nb.py(2): \"g\"", "-1"};
    rb_strings(&b, 1, names, NULL, 14);
    rb_clock(&b, 0, 0, 0);
    ev_op(&e, 3, 20, 30);
    ev_range(&e, 5, 0, 36, 40);
    ev_op_full(&e, 4, 35, 50, AIP_OPF_SHAPES | AIP_OPF_STACK, 0, 0, 12, 0, 13, 0);
    ev_op(&e, 2, 10, 60);
    ev_op(&e, hostile ? 14 : 6, 70, 90);
    if (with_steps)
        ev_annotation(&e, 1, 0, 100);
    ev_op(&e, 8, 120, 130);
    if (with_steps)
        ev_annotation(&e, 7, 100, 200);
    rb_events(&b, 1, &e);
    rb_free(&e);
    ev_op(&e, 9, 5, 95);
    ev_op(&e, 10, 150, 180);
    ev_op(&e, 11, 190, 210);
    rb_events(&b, 2, &e);
    rb_free(&e);
    char path[200];
    snprintf(path, sizeof path, "%s/tree.raw", dir);
    rb_write_file(path, b.data, b.len);
    rb_free(&b);
    aip__model_init(m);
    if (aip__model_load_raw(m, path) || aip__model_derive(m))
        abort();
}

static const char *export_csv(aip__model *m, int details)
{
    char path[200];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    aip__out o;
    if (aip__out_open(&o, path))
        return NULL;
    aip_status s = details ? aip__export_operator_details(m, &o) : aip__export_step_trace(m, &o);
    if (aip__out_close(&o) || s)
        return NULL;
    return slurp(path);
}

static void test_operator_details(void)
{
    aip__model m;
    load_tree(&m, 1, 0);
    const char *got = export_csv(&m, 1);
    ASSERT_TRUE(got != NULL);
    ASSERT_STREQ(got,
                 AIP_OPERATOR_DETAILS_HEADER "\r\n"
                 "A,,,0.025,0.050,,,,\r\n"
                 "B,,,0.010,0.010,,,,\r\n"
                 "C,\"[[2, 3], [3]]\",\"a.py(1): f;\nb.py(2): \"\"g\"\"\",0.011,0.015,,,,\r\n"
                 "D,,,0.020,0.020,,,,\r\n"
                 "H,,,0.010,0.010,,,,\r\n"
                 "E,,,0.090,0.090,,,,\r\n"
                 "F,,,0.030,0.030,,,,\r\n"
                 "G,,,0.020,0.020,,,,\r\n");
    aip__model_free(&m);
    load_tree(&m, 1, 1);
    got = export_csv(&m, 1);
    ASSERT_TRUE(got != NULL);
    ASSERT_TRUE(strstr(got, "\r\n\"'=HYPERLINK(\"\"x\"\")\",,,0.025,0.050,,,,\r\n") != NULL);
    ASSERT_TRUE(strstr(got, "\r\n-1,,,0.020,0.020,,,,\r\n") != NULL);
    aip__model_free(&m);
}

/* record_function / user scopes are rows of the op tree as in torch_npu's
 * (ProfilerStep#N excluded, mstx ranges are not scopes): ProfilerStep#1
 * [0,100] ⊃ U[10,60] ⊃ {A[20,30], R[40,50] (mstx)}; V[110,120] with no step.
 * Self time is the total less the children, an mstx range too (as for ops). */
static void test_operator_details_scopes(void)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    const char *names[] = {"ProfilerStep#1", "U", "A", "R", "V"};
    rb_strings(&b, 1, names, NULL, 5);
    rb_clock(&b, 0, 0, 0);
    ev_op(&e, 3, 20, 30);
    ev_range(&e, 4, 0, 40, 50);
    ev_annotation(&e, 2, 10, 60);
    ev_annotation(&e, 1, 0, 100);
    ev_annotation(&e, 5, 110, 120);
    rb_events(&b, 1, &e);
    rb_free(&e);
    char path[200];
    snprintf(path, sizeof path, "%s/scopes.raw", dir);
    rb_write_file(path, b.data, b.len);
    rb_free(&b);
    aip__model m;
    aip__model_init(&m);
    ASSERT_EQ(aip__model_load_raw(&m, path), AIP_OK);
    ASSERT_EQ(aip__model_derive(&m), AIP_OK);
    const char *got = export_csv(&m, 1);
    ASSERT_TRUE(got != NULL);
    ASSERT_STREQ(got, AIP_OPERATOR_DETAILS_HEADER "\r\n"
                      "U,,,0.030,0.050,,,,\r\n"
                      "A,,,0.010,0.010,,,,\r\n"
                      "V,,,0.010,0.010,,,,\r\n");
    aip__model_free(&m);
}

static void test_step_trace(void)
{
    aip__model m;
    load_tree(&m, 1, 0);
    const char *got = export_csv(&m, 0);
    ASSERT_TRUE(got != NULL);
    /* step 1: Computing = |[5,95]| = 90, Free = 10, Stage = 100, Preparing = 5
     * step 2: Computing = 10 + 30 + 10 (G clipped), Free = 50, Preparing = 20 */
    ASSERT_STREQ(got, AIP_STEP_TRACE_HEADER "\r\n"
                      "host,1,0.090,0.000,0.000,0.000,0.010,0.100,0.000,0.000,0.005\r\n"
                      "host,2,0.050,0.000,0.000,0.000,0.050,0.100,0.000,0.000,0.020\r\n");
    aip__model_free(&m);
    load_tree(&m, 0, 0);
    got = export_csv(&m, 0);
    ASSERT_TRUE(got != NULL);
    /* no steps: one row over [5, 210]; Computing = 90 + 10 + 30 + 20 */
    ASSERT_STREQ(got, AIP_STEP_TRACE_HEADER "\r\n"
                      "host,,0.150,0.000,0.000,0.000,0.055,0.205,0.000,0.000,0.000\r\n");
    aip__model_free(&m);
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "csv"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_cells), TEST_CASE(test_operator_details),
          TEST_CASE(test_operator_details_scopes),
          TEST_CASE(test_step_trace), TEST_CASE(teardown))
