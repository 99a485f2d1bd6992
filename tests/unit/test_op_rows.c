/*
 * test_op_rows.c — aip_result_op_rows() (src/result/op_rows.c) and torch's
 * rules it applies (op_rows_tree.c): nesting by thread, folding of an only
 * child of the same name, self times, memory attribution, the final start
 * order, exact nanoseconds; filtered names and errors on a real result
 * directory (tests/golden/input).
 */
#include "aip_test.h"
#include "op_rows.h"

#include <stdlib.h>
#include <string.h>

#define US 1000
enum { STEP, MEAN, SUM, DIV, MM, EMPTY, OUTER, MEMORY, N_NAMES };
static const char *names[N_NAMES] = {"ProfilerStep#1", "aten::mean", "aten::sum", "aten::div_",
                                     "aten::mm", "aten::empty", "outer", "[memory]"};
static size_t lens[N_NAMES];
static const aip__ostrings strs = {names, lens, N_NAMES};

static aip__orow row(int32_t name, int64_t tid, int64_t start, int64_t dur, uint8_t kind)
{
    return (aip__orow){.r = {.start_ns = start, .dur_ns = dur, .tid = tid, .sequence_nr = -1,
                             .parent = -1, .name = name, .shapes = -1, .types = -1, .stack = -1,
                             .module = -1, .kind = kind}};
}

/* Rows through the tree with base 0; *out malloc'd. */
static size_t tree(aip__orow *in, size_t n, aip__omem *m, size_t nm, aip_op_row **out)
{
    for (size_t i = 0; i < N_NAMES; i++)
        lens[i] = strlen(names[i]);
    aip__orow *v = calloc(n + nm + 1, sizeof *v);
    memcpy(v, in, n * sizeof *v);
    size_t k = 0;
    if (aip__op_rows_tree(v, n, m, nm, MEMORY, &strs, 0, out, &k))
        abort();
    free(v);
    return k;
}

static void test_nesting_self_time_and_folding(void)
{
    aip__orow in[] = {
        row(STEP, 7, 0, 100 * US, AIP_OP_ROW_ANNOTATION),
        row(MEAN, 7, 10 * US, 50 * US, AIP_OP_ROW_OP),
        row(MEAN, 7, 11 * US, 48 * US, AIP_OP_ROW_OP), /* only child, same name: folded */
        row(SUM, 7, 12 * US, 10 * US, AIP_OP_ROW_OP),
        row(DIV, 7, 30 * US, 20 * US, AIP_OP_ROW_OP),
        row(MM, 8, 5 * US, 5 * US, AIP_OP_ROW_OP), /* another thread */
    };
    aip_op_row *r;
    size_t n = tree(in, 6, NULL, 0, &r);
    ASSERT_EQ(n, 5);
    int32_t order[] = {STEP, MM, MEAN, SUM, DIV};
    for (size_t i = 0; i < 5; i++)
        ASSERT_EQ(r[i].name, order[i]);
    ASSERT_EQ(r[0].self_ns, 50 * US);                  /* 100 - mean's 50 */
    ASSERT_EQ(r[2].parent, 0);
    ASSERT_EQ(r[2].self_ns, (50 - 10 - 20) * US);
    ASSERT_EQ(r[3].parent, 2);                         /* reparented to the outer mean */
    ASSERT_EQ(r[4].parent, 2);
    ASSERT_EQ(r[1].parent, -1);
    ASSERT_EQ(r[1].tid, 8);
    free(r);
}

static void test_memory_attribution(void)
{
    aip__orow in[] = {row(OUTER, 1, 0, 100 * US, AIP_OP_ROW_ANNOTATION),
                      row(EMPTY, 1, 10 * US, 5 * US, AIP_OP_ROW_OP)};
    aip__omem m[] = {{1, 64, 12 * US},   /* inside empty (and outer) */
                     {1, -16, 50 * US},  /* inside outer only */
                     {1, 8, 500 * US},   /* outside everything: a MEMORY row */
                     {2, 32, 12 * US}};  /* a thread without rows */
    aip_op_row *r;
    size_t n = tree(in, 2, m, 4, &r);
    ASSERT_EQ(n, 4);
    ASSERT_EQ(r[0].name, OUTER);
    ASSERT_EQ(r[0].memory, 48);
    ASSERT_EQ(r[0].self_memory, -16);
    ASSERT_EQ(r[1].name, EMPTY);
    ASSERT_EQ(r[1].memory, 64);
    ASSERT_EQ(r[1].self_memory, 64);
    ASSERT_EQ(r[2].kind, AIP_OP_ROW_MEMORY); /* by start: thread 2's at 12 µs */
    ASSERT_EQ(r[2].tid, 2);
    ASSERT_EQ(r[2].memory, 32);
    ASSERT_EQ(r[3].kind, AIP_OP_ROW_MEMORY);
    ASSERT_EQ(r[3].start_ns, 500 * US);
    ASSERT_EQ(r[3].dur_ns, 0);
    ASSERT_EQ(r[3].self_memory, 8);
    ASSERT_EQ(r[3].name, MEMORY);
    free(r);
}

/* Epoch ns near 1.8e18: a float64 of µs would make `inner` seem to end with
 * `outer`; it ends 1 ns later and is no child of it. */
static void test_exact_nanoseconds(void)
{
    int64_t x = 1795490263408585262;
    aip__orow in[] = {row(OUTER, 7, x, 10000, AIP_OP_ROW_ANNOTATION),
                      row(SUM, 7, x + 1, 10000, AIP_OP_ROW_OP),
                      row(MM, 7, x, 9999, AIP_OP_ROW_OP)};
    aip_op_row *r;
    size_t n = tree(in, 3, NULL, 0, &r);
    ASSERT_EQ(n, 3);
    ASSERT_EQ(r[0].name, OUTER);
    ASSERT_EQ(r[1].name, MM);
    ASSERT_EQ(r[1].parent, 0);
    ASSERT_EQ(r[2].name, SUM);
    ASSERT_EQ(r[2].parent, -1);
    ASSERT_EQ(r[0].self_ns, 1);
    free(r);
}

#define GOLDEN AIP_SOURCE_DIR "/tests/golden/input/golden_ascend_pt"

static int has_name(const aip_op_rows *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++) {
        int32_t s = o->rows[i].name;
        if (o->string_lens[s] == strlen(name) && !memcmp(o->strings[s], name, strlen(name)))
            return 1;
    }
    return 0;
}

static void test_result_directory(void)
{
    aip_op_rows o;
    ASSERT_EQ(aip_result_op_rows(GOLDEN, NULL, 0, 1, &o), AIP_OK);
    ASSERT_TRUE(o.n > 0);
    ASSERT_EQ(o.base_ns % 1000000000, 0);
    for (size_t i = 0; i < o.n; i++) {
        ASSERT_TRUE(o.rows[i].parent < (int32_t)i);
        ASSERT_TRUE(o.rows[i].name >= 0 && (size_t)o.rows[i].name < o.n_strings);
        ASSERT_TRUE(i == 0 || o.rows[i].start_ns >= o.rows[i - 1].start_ns);
    }
    char first[256];
    int32_t s = o.rows[0].name;
    snprintf(first, sizeof first, "%.*s", (int)o.string_lens[s], o.strings[s]);
    ASSERT_TRUE(has_name(&o, first));
    aip_op_rows_free(&o);
    const char *filtered[] = {"not a name", first};
    ASSERT_EQ(aip_result_op_rows(GOLDEN, filtered, 2, 1, &o), AIP_OK);
    ASSERT_TRUE(!has_name(&o, first));
    ASSERT_TRUE(o.n > 0); /* more, or fewer: its memory records become MEMORY rows */
    aip_op_rows_free(&o);
    ASSERT_TRUE(aip_result_op_rows(AIP_SOURCE_DIR "/no/such_ascend_pt", NULL, 0, 1, &o) != AIP_OK);
    ASSERT_EQ(o.n, 0);
    aip_op_rows_free(&o);
    ASSERT_EQ(aip_result_op_rows(NULL, NULL, 0, 1, &o), AIP_ERR_INVALID_ARG);
    aip_op_rows_free(&o);
}

TEST_MAIN(TEST_CASE(test_nesting_self_time_and_folding), TEST_CASE(test_memory_attribution),
          TEST_CASE(test_exact_nanoseconds), TEST_CASE(test_result_directory))
