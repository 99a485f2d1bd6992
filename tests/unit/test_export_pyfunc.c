/*
 * test_export_pyfunc.c — PYFUNC records (with_stack / with_modules Python
 * calls): python_function X events in trace_view.json with torch's args,
 * and nothing else changed by them: operator_details.csv and
 * op_statistic.csv are byte-identical with and without them, op and
 * annotation self times and memory attribution ignore them.
 */
#include "aip_test.h"
#include "export.h"
#include "raw_builder.h"

#include <jansson.h>
#include <math.h>

static char dir[64];

#define R0 1700000000000000000LL

enum { S_MM = 1, S_ADD, S_TRAIN, S_LINEAR, S_FORWARD, S_ANN };

static void ev_pyfunc(rb_buf *e, uint32_t name, uint64_t s, uint64_t t, uint32_t id,
                      uint32_t parent, uint32_t module)
{
    aip__rec_pyfunc r = {{AIP_REC_PYFUNC, 0, sizeof r, name}, s, t, id, parent, module, 0};
    rb_put(e, &r, sizeof r);
}

/* annotation [1000, 20000] > train.py [2000, 15000] > nn.Module: Linear_0
 * [3000, 14000] > model.py [3500, 13000] > aten::mm [4000, 8000] >
 * aten::add [5000, 6000]; aten::add [9000, 10000]; an allocation at 11000
 * inside model.py but in no op.  PYFUNC records come at their pops. */
static void build(rb_buf *b, int with_py)
{
    rb_header(b, 1, 1);
    rb_info(b, 77, "prog", 1e9);
    const char *s[] = {"aten::mm", "aten::add", "train.py(10): step", "nn.Module: Linear_0",
                       "model.py(3): forward", "my_annotation"};
    rb_strings(b, 1, s, NULL, 6);
    rb_clock(b, 0, 0, (uint64_t)R0);
    rb_buf e = {0};
    ev_op(&e, S_ADD, 5000, 6000);
    ev_op(&e, S_MM, 4000, 8000);
    ev_op(&e, S_ADD, 9000, 10000);
    ev_memory(&e, 11000, 4096, 512, 512, 1024, 20, 0);
    if (with_py) {
        ev_pyfunc(&e, S_FORWARD, 3500, 13000, 3, 2, 0);
        ev_pyfunc(&e, S_LINEAR, 3000, 14000, 2, 1, S_LINEAR);
        ev_pyfunc(&e, S_TRAIN, 2000, 15000, 1, 0, 0);
    }
    ev_annotation(&e, S_ANN, 1000, 20000);
    rb_events(b, 1000, &e);
    rb_free(&e);
    rb_end(b);
}

typedef aip_status (*exporter)(const aip__model *, aip__out *);

static char *export_one(const aip__model *m, exporter fn, const char *name)
{
    char out[200];
    snprintf(out, sizeof out, "%s/%s", dir, name);
    aip__out o;
    if (aip__out_open(&o, out))
        return NULL;
    aip_status s = fn(m, &o);
    if (aip__out_close(&o) || s)
        return NULL;
    return aip_test_slurp(out, NULL);
}

static int load(aip__model *m, int with_py)
{
    rb_buf b = {0};
    build(&b, with_py);
    char raw[200];
    snprintf(raw, sizeof raw, "%s/aiprof_77_%d.raw", dir, with_py);
    rb_write_file(raw, b.data, b.len);
    rb_free(&b);
    aip__model_init(m);
    return aip__model_load_raw(m, raw) == AIP_OK && aip__model_derive(m) == AIP_OK;
}

static void test_csv_unchanged(void)
{
    aip__model a, b;
    ASSERT_TRUE(load(&a, 0));
    ASSERT_TRUE(load(&b, 1));
    static const struct {
        exporter fn;
        const char *name;
    } files[] = {{aip__export_operator_details, "operator_details.csv"},
                 {aip__export_op_statistic, "op_statistic.csv"},
                 {aip__export_api_statistic, "api_statistic.csv"}};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *x = export_one(&a, files[i].fn, files[i].name);
        char *y = export_one(&b, files[i].fn, files[i].name);
        ASSERT_TRUE(x && y);
        ASSERT_STREQ(x, y);
        ASSERT_TRUE(strstr(x, "aten::mm") != NULL);
        ASSERT_TRUE(strstr(y, "train.py") == NULL && strstr(y, "nn.Module") == NULL);
        free(x);
        free(y);
    }
    /* self times: aten::mm keeps 3000 (minus its child add), the annotation
     * loses only its ops' time */
    const aip__thread *t = &b.procs[0].threads[0];
    ASSERT_EQ(t->n_spans, 7);
    int checked = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        const aip__span *s = &t->spans[i];
        if (s->name == S_MM) {
            ASSERT_EQ(t->self_ns[i], 3000);
            ASSERT_TRUE(s->top_op);
            checked++;
        } else if (s->name == S_ANN) {
            ASSERT_EQ(t->self_ns[i], 19000 - 4000 - 1000);
            checked++;
        } else if (s->kind == AIP_SPAN_PYFUNC) {
            ASSERT_TRUE(!s->top_op);
        }
    }
    ASSERT_EQ(checked, 2);
    /* the allocation in model.py belongs to the annotation, not the frame */
    ASSERT_EQ(b.procs[0].memory.n, 1);
    ASSERT_EQ(b.procs[0].mem_info[0].name, S_ANN);
    ASSERT_EQ(a.procs[0].mem_info[0].name, S_ANN);
    aip__model_free(&a);
    aip__model_free(&b);
}

static json_t *arg(json_t *ev, const char *key)
{
    return json_object_get(json_object_get(ev, "args"), key);
}

static void test_trace_events(void)
{
    aip__model m;
    ASSERT_TRUE(load(&m, 1));
    char out[200];
    snprintf(out, sizeof out, "%s/trace_view.json", dir);
    aip__out o;
    ASSERT_EQ(aip__out_open(&o, out), AIP_OK);
    ASSERT_EQ(aip__export_trace_json(&m, &o), AIP_OK); /* no profiler_info: rank -1 */
    ASSERT_EQ(aip__out_close(&o), AIP_OK);
    aip__model_free(&m);
    json_error_t err;
    json_t *root = json_load_file(out, 0, &err);
    ASSERT_TRUE(root != NULL);
    json_t *events = json_is_array(root) ? root : json_object_get(root, "traceEvents");
    ASSERT_TRUE(json_is_array(events));
    size_t i;
    json_t *ev;
    int n_py = 0, n_ops = 0, n_ann = 0;
    json_t *op_tid = NULL;
    json_array_foreach(events, i, ev) {
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (!cat)
            continue;
        if (!strcmp(cat, "cpu_op")) {
            n_ops++;
            op_tid = json_object_get(ev, "tid");
        }
        n_ann += !strcmp(cat, "user_annotation");
    }
    ASSERT_EQ(n_ops, 3);
    ASSERT_EQ(n_ann, 1);
    json_array_foreach(events, i, ev) {
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (!cat || strcmp(cat, "python_function"))
            continue;
        n_py++;
        ASSERT_STREQ(json_string_value(json_object_get(ev, "ph")), "X");
        ASSERT_TRUE(json_equal(json_object_get(ev, "tid"), op_tid));
        const char *name = json_string_value(json_object_get(ev, "name"));
        json_int_t id = json_integer_value(arg(ev, "Python id"));
        json_int_t parent = json_integer_value(arg(ev, "Python parent id"));
        ASSERT_TRUE(json_is_integer(arg(ev, "Python parent id")));
        if (!strcmp(name, "train.py(10): step")) {
            ASSERT_EQ(id, 1);
            ASSERT_EQ(parent, 0);
            ASSERT_TRUE(arg(ev, "Python module id") == NULL);
            ASSERT_TRUE(fabs(json_number_value(json_object_get(ev, "dur")) - 13.0) < 1e-9);
        } else if (!strcmp(name, "nn.Module: Linear_0")) {
            ASSERT_EQ(id, 2);
            ASSERT_EQ(parent, 1);
            ASSERT_EQ(json_integer_value(arg(ev, "Python module id")), S_LINEAR);
        } else {
            ASSERT_STREQ(name, "model.py(3): forward");
            ASSERT_EQ(id, 3);
            ASSERT_EQ(parent, 2);
            ASSERT_TRUE(arg(ev, "Python module id") == NULL);
        }
    }
    ASSERT_EQ(n_py, 3);
    json_decref(root);
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "tpyf"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_csv_unchanged), TEST_CASE(test_trace_events),
          TEST_CASE(teardown))
