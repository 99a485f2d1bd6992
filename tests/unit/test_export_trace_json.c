/*
 * test_export_trace_json.c — trace_view.json in both forms: torch_npu's
 * array (string ts of absolute µs, run facts in process_name args) and
 * Kineto's object (numeric ts relative to baseTimeNanoseconds, metadata
 * keys at the top); number formatting, hostile strings parsed back by
 * jansson, metadata, mstx, memory, GC, fwdbwd flows.
 */
#include "aip_test.h"
#include "export.h"
#include "raw_builder.h"
#include "text_escape.h"

#include <jansson.h>

static char dir[64];

#define R0 1700000000000000000LL

static void test_number_format(void)
{
    char b[64];
    *aip__fmt_us3(b, 0) = 0;
    ASSERT_STREQ(b, "0.000");
    *aip__fmt_us3(b, 7) = 0;
    ASSERT_STREQ(b, "0.007");
    *aip__fmt_us3(b, 999) = 0;
    ASSERT_STREQ(b, "0.999");
    *aip__fmt_us3(b, 1000) = 0;
    ASSERT_STREQ(b, "1.000");
    *aip__fmt_us3(b, 1234567) = 0;
    ASSERT_STREQ(b, "1234.567");
    *aip__fmt_us3(b, -1500) = 0;
    ASSERT_STREQ(b, "-1.500");
    *aip__fmt_us3(b, INT64_MAX) = 0;
    ASSERT_STREQ(b, "9223372036854775.807");
    *aip__fmt_u64(b, UINT64_MAX) = 0;
    ASSERT_STREQ(b, "18446744073709551615");
    *aip__fmt_i64(b, INT64_MIN) = 0;
    ASSERT_STREQ(b, "-9223372036854775808");
    for (uint64_t v = 1; v < UINT64_MAX / 7; v = v * 7 + 3) {
        char ref[32];
        snprintf(ref, sizeof ref, "%llu", (unsigned long long)v);
        *aip__fmt_u64(b, v) = 0;
        ASSERT_STREQ(b, ref);
    }
}

typedef struct lit {
    const char *s;
    uint32_t n;
} lit;
#define L(x) {x, sizeof(x) - 1}
#define FFFD "\xef\xbf\xbd"
static const lit hostile_lit[] = {
    L("quote\"back\\slash"), L("line1\nline2\r\ttab"), L("</script><script>alert(1)</script>"),
    L("bad\xff\xfe" "utf8"), L("overlong\xc0\xaf" "slash"), L("surrogate\xed\xa0\x80" "x"),
    L("trunc\xe2\x82"), L("nul\0inside"), L("ls\xe2\x80\xa8" "ps\xe2\x80\xa9"),
    L("ctl\x01\x1f\x7f"), L("ok \xc3\xbcn \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89")};
static const lit expected[] = {
    L("quote\"back\\slash"), L("line1\nline2\r\ttab"), L("</script><script>alert(1)</script>"),
    L("bad" FFFD FFFD "utf8"), L("overlong" FFFD FFFD "slash"), L("surrogate" FFFD FFFD FFFD "x"),
    L("trunc" FFFD FFFD), L("nul\0inside"), L("ls\xe2\x80\xa8" "ps\xe2\x80\xa9"),
    L("ctl\x01\x1f\x7f"), L("ok \xc3\xbcn \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89")};
static const char *hostile[11];
static uint32_t hostile_len[11];
#define N_HOSTILE 11

/* strings: 1..11 hostile, 12 "dom", 13 "fwd", 14 "bwd", 15 "mark", 16 "async", 17 thread,
 * 18 "local" */
static void build(rb_buf *b, const char *program)
{
    for (int i = 0; i < N_HOSTILE; i++) {
        hostile[i] = hostile_lit[i].s;
        hostile_len[i] = hostile_lit[i].n;
    }
    rb_header(b, 1, 0);
    rb_info(b, 77, program, 1e9);
    rb_strings(b, 1, hostile, hostile_len, N_HOSTILE);
    const char *more[] = {"dom", "fwd", "bwd", "mark", "async", "worker \"one\"", "local"};
    rb_strings(b, 12, more, NULL, 7);
    rb_clock(b, 0, 0, (uint64_t)R0);
    rb_buf e = {0};
    ev_thread_name(&e, 17, 0);
    for (uint32_t i = 0; i < N_HOSTILE; i++)
        ev_op(&e, i + 1, 1000 * (i + 1), 1000 * (i + 1) + 500);
    ev_op_full(&e, 13, 100000, 101000, AIP_OPF_SEQ | AIP_OPF_SHAPES | AIP_OPF_STACK, 42, 0, 1, 2,
               3, 0);
    ev_range(&e, 15, 12, 110000, 111000);
    ev_mark(&e, 15, 0, 112000);
    ev_range_start(&e, 16, 12, 113000, 5);
    ev_memory(&e, 114000, 4096, 1024, 1024, 2048, 20, 0);
    ev_gc(&e, 115000, 117500);
    ev_range_start(&e, 18, 12, 118000, 6); /* begun and ended on this thread */
    ev_range_end(&e, 118250, 6);
    ev_op(&e, 16, 300123, 301500); /* not whole µs: ts "...300.123" */
    rb_events(b, 1000, &e);
    rb_free(&e);
    ev_op_full(&e, 14, 200000, 201000, AIP_OPF_SEQ | AIP_OPF_FWD, 42, 1000, 0, 0, 0, 0);
    ev_range_end(&e, 202000, 5);
    rb_events(b, 2000, &e);
    rb_free(&e);
    rb_end(b);
}

/* profiler_metadata.json as the reader gives it: (key, JSON text) pairs. */
static void add_meta(aip__model *m)
{
    static const char *const kv[][2] = {
        {"user_key", "\"a<b>&c\""},
        {"distributed_args", "{\"tensor_model_parallel_size\": 2, \"rank\": 0}"},
        {"traceEvents", "[]"},          /* would repeat a header key: skipped */
        {"ENV_VARIABLES", "{\"A\": \"1\"}"}}; /* torch_npu's own: skipped */
    size_t n = sizeof kv / sizeof kv[0];
    m->meta.keys = calloc(n, sizeof *m->meta.keys);
    m->meta.values = calloc(n, sizeof *m->meta.values);
    for (size_t i = 0; i < n; i++) {
        m->meta.keys[i] = strdup(kv[i][0]);
        m->meta.values[i] = strdup(kv[i][1]);
    }
    m->meta.n = n;
    m->meta.found = 1;
}

static json_t *export_and_parse(const char *program, unsigned format, char **text,
                                size_t *text_len)
{
    rb_buf b = {0};
    build(&b, program);
    char raw[200], out[200];
    snprintf(raw, sizeof raw, "%s/aiprof_77.raw", dir);
    snprintf(out, sizeof out, "%s/trace_view.json", dir);
    rb_write_file(raw, b.data, b.len);
    rb_free(&b);
    aip__model m;
    aip__model_init(&m);
    if (aip__model_load_raw(&m, raw) || aip__model_derive(&m))
        return NULL;
    aip__out o;
    m.info.rank = 3; /* as profiler_info.json would say */
    m.info.has_config = 1;
    m.info.record_shapes = 1;
    m.trace_format = format;
    add_meta(&m);
    if (aip__out_open(&o, out))
        return NULL;
    aip_status s = aip__export_trace_json(&m, &o);
    if (aip__out_close(&o) || s)
        return NULL;
    aip__model_free(&m);
    *text = aip_test_slurp(out, text_len);
    json_error_t err;
    json_t *root = json_load_file(out, JSON_ALLOW_NUL, &err);
    if (!root)
        fprintf(stderr, "parse error line %d: %s\n", err.line, err.text);
    return root;
}

static json_t *find_event(json_t *events, const char *ph, const char *key, json_t *value)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        if (ph && strcmp(json_string_value(json_object_get(ev, "ph")), ph) != 0)
            continue;
        if (json_equal(json_object_get(ev, key), value))
            return ev;
    }
    return NULL;
}

static void test_hostile_strings(void)
{
    char *text;
    size_t len;
    json_t *root = export_and_parse("prog", AIP_TRACE_TORCH_NPU, &text, &len);
    ASSERT_TRUE(root != NULL);
    ASSERT_TRUE(strstr(text, "</script>") == NULL);
    ASSERT_TRUE(strstr(text, "\xff") == NULL);
    json_t *events = root; /* torch_npu's form: the array itself */
    ASSERT_TRUE(json_is_array(events));
    for (int i = 0; i < N_HOSTILE; i++) {
        char tsbuf[32];
        snprintf(tsbuf, sizeof tsbuf, "17000000000000%02d.000", i + 1);
        json_t *ts = json_string(tsbuf);
        json_t *ev = find_event(events, "X", "ts", ts);
        json_decref(ts);
        ASSERT_TRUE(ev != NULL);
        json_t *name = json_object_get(ev, "name");
        ASSERT_EQ(json_string_length(name), expected[i].n);
        ASSERT_TRUE(memcmp(json_string_value(name), expected[i].s, expected[i].n) == 0);
        ASSERT_STREQ(json_string_value(json_object_get(ev, "cat")), "cpu_op");
    }
    json_t *tn = json_string("thread_name");
    json_t *meta = find_event(events, "M", "name", tn);
    json_decref(tn);
    ASSERT_TRUE(meta != NULL);
    ASSERT_STREQ(json_string_value(json_object_get(json_object_get(meta, "args"), "name")),
                 "worker \"one\"");
    /* exact text of the first op: a string of absolute µs with 3 decimals,
     * dur a number; the op off a whole µs keeps its ns */
    ASSERT_TRUE(strstr(text, ",\"pid\":77,\"tid\":1000,\"ts\":\"1700000000000001.000\","
                             "\"dur\":0.500}") != NULL);
    ASSERT_TRUE(strstr(text, "\"ts\":\"1700000000000300.123\",\"dur\":1.377}") != NULL);
    /* every ts is such a string: digits, '.', exactly 3 digits */
    size_t i;
    json_t *ev;
    int with_ts = 0;
    json_array_foreach(events, i, ev) {
        json_t *ts = json_object_get(ev, "ts");
        if (!ts)
            continue;
        with_ts++;
        ASSERT_TRUE(json_is_string(ts));
        const char *t = json_string_value(ts);
        size_t n = strlen(t);
        ASSERT_TRUE(n > 4 && t[n - 4] == '.' && strspn(t, "0123456789") == n - 4 &&
                    strspn(t + n - 3, "0123456789") == 3);
        json_t *dur = json_object_get(ev, "dur");
        ASSERT_TRUE(!dur || json_is_number(dur));
    }
    ASSERT_TRUE(with_ts > N_HOSTILE + 8);
    /* no Kineto header and no metadata keys in this form */
    ASSERT_TRUE(strstr(text, "baseTimeNanoseconds") == NULL);
    ASSERT_TRUE(strstr(text, "user_key") == NULL);
    free(text);
    json_decref(root);
}

static json_t *args_of(json_t *ev) { return json_object_get(ev, "args"); }

/* The run facts: Kineto's header keys, or the first process_name's args. */
static void check_run_facts(json_t *o)
{
    ASSERT_STREQ(json_string_value(json_object_get(o, "hostname")), "testhost");
    ASSERT_EQ(json_integer_value(json_object_get(o, "rank")), 3);
    ASSERT_EQ(json_integer_value(json_object_get(o, "record_shapes")), 1);
    json_t *ai = json_object_get(o, "aiprof");
    ASSERT_EQ(json_integer_value(json_object_get(ai, "droppedEvents")), 0);
    ASSERT_STREQ(json_string_value(json_object_get(ai, "version")), aip_version());
}

static void test_structure(void)
{
    char *text;
    size_t len;
    json_t *root = export_and_parse("Python", AIP_TRACE_TORCH_NPU, &text, &len);
    ASSERT_TRUE(root != NULL);
    free(text);
    ASSERT_TRUE(json_is_array(root));
    json_t *events = root;

    json_t *v = json_string("process_name");
    json_t *pn = find_event(events, "M", "name", v);
    json_decref(v);
    ASSERT_STREQ(json_string_value(json_object_get(args_of(pn), "name")), "Python");
    ASSERT_EQ(json_integer_value(json_object_get(pn, "pid")), 77);
    ASSERT_EQ(json_integer_value(json_object_get(pn, "tid")), 0);
    check_run_facts(args_of(pn));

    /* the op with shapes and stack */
    v = json_string("fwd");
    json_t *op = find_event(events, "X", "name", v);
    json_decref(v);
    ASSERT_TRUE(op != NULL);
    json_t *a = args_of(op);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Sequence number")), 42);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Fwd thread id")), 0);
    ASSERT_STREQ(json_string_value(json_object_get(a, "Input Dims")), hostile[0]);
    ASSERT_TRUE(json_object_get(a, "Input type") != NULL);
    ASSERT_TRUE(json_object_get(a, "Call stack") != NULL);
    ASSERT_TRUE(json_object_get(a, "Module Hierarchy") == NULL);

    /* fwdbwd flow: s on the forward op, f (bp e) on the backward op */
    v = json_string("s");
    json_t *s = find_event(events, NULL, "ph", v);
    json_decref(v);
    v = json_string("f");
    json_t *f = find_event(events, NULL, "ph", v);
    json_decref(v);
    ASSERT_TRUE(s && f);
    ASSERT_STREQ(json_string_value(json_object_get(s, "cat")), "fwdbwd");
    ASSERT_STREQ(json_string_value(json_object_get(f, "bp")), "e");
    ASSERT_STREQ(json_string_value(json_object_get(s, "bp")), "e"); /* as torch_npu */
    ASSERT_TRUE(json_equal(json_object_get(s, "id"), json_object_get(f, "id")));
    ASSERT_EQ(json_integer_value(json_object_get(s, "tid")), 1000);
    ASSERT_EQ(json_integer_value(json_object_get(f, "tid")), 2000);
    ASSERT_STREQ(json_string_value(json_object_get(s, "ts")), "1700000000000100.000");
    ASSERT_STREQ(json_string_value(json_object_get(f, "ts")), "1700000000000200.000");

    /* mstx: push/pop range, mark, cross-thread start/end */
    v = json_string("mark");
    json_t *rng = find_event(events, "X", "name", v);
    json_t *mark = find_event(events, "i", "name", v);
    json_decref(v);
    ASSERT_TRUE(rng && mark);
    ASSERT_STREQ(json_string_value(json_object_get(rng, "cat")), "mstx");
    ASSERT_STREQ(json_string_value(json_object_get(args_of(rng), "domain")), "dom");
    ASSERT_STREQ(json_string_value(json_object_get(args_of(mark), "domain")), "default");
    ASSERT_STREQ(json_string_value(json_object_get(mark, "s")), "t");
    v = json_string("b");
    json_t *ab = find_event(events, NULL, "ph", v);
    json_decref(v);
    v = json_string("e");
    json_t *ae = find_event(events, NULL, "ph", v);
    json_decref(v);
    ASSERT_TRUE(ab && ae);
    ASSERT_TRUE(json_equal(json_object_get(ab, "id"), json_object_get(ae, "id")));
    ASSERT_STREQ(json_string_value(json_object_get(ae, "name")), "async");
    ASSERT_EQ(json_integer_value(json_object_get(ae, "tid")), 2000);
    /* start/end on one thread: a slice on its track (the only b/e pair is
     * the cross-thread one above) */
    v = json_string("local");
    json_t *loc = find_event(events, "X", "name", v);
    json_decref(v);
    ASSERT_TRUE(loc != NULL);
    ASSERT_STREQ(json_string_value(json_object_get(loc, "cat")), "mstx");
    ASSERT_EQ(json_integer_value(json_object_get(loc, "tid")), 1000);
    ASSERT_STREQ(json_string_value(json_object_get(args_of(loc), "domain")), "dom");
    size_t n_b = 0;
    for (size_t k = 0; k < json_array_size(events); k++)
        n_b += !strcmp(json_string_value(json_object_get(json_array_get(events, k), "ph"))
                           ? json_string_value(json_object_get(json_array_get(events, k), "ph"))
                           : "",
                       "b");
    ASSERT_EQ(n_b, 1);

    /* memory: instant with Kineto's args, and a counter */
    v = json_string("[memory]");
    json_t *mem = find_event(events, "i", "name", v);
    json_decref(v);
    ASSERT_TRUE(mem != NULL);
    a = args_of(mem);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Bytes")), 1024);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Total Allocated")), 1024);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Total Reserved")), 2048);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Addr")), 4096);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Device Type")), 20);
    ASSERT_EQ(json_integer_value(json_object_get(a, "Device Id")), 0);
    v = json_string("Memory (NPU:0)");
    json_t *ctr = find_event(events, "C", "name", v);
    json_decref(v);
    ASSERT_TRUE(ctr != NULL);
    ASSERT_EQ(json_integer_value(json_object_get(args_of(ctr), "Total Reserved")), 2048);

    /* GC in its own process */
    v = json_string("GC");
    json_t *gc = find_event(events, "X", "cat", v);
    json_decref(v);
    ASSERT_TRUE(gc != NULL);
    json_int_t gpid = (77 << 10) | (1 << 5) | 31;
    ASSERT_EQ(json_integer_value(json_object_get(gc, "pid")), gpid);
    ASSERT_TRUE(json_real_value(json_object_get(gc, "dur")) == 2.5);
    size_t i;
    json_t *ev;
    int gc_named = 0, gc_sorted = 0, gc_thread_sorted = 0;
    json_array_foreach(events, i, ev) {
        if (json_integer_value(json_object_get(ev, "pid")) != gpid)
            continue;
        const char *n = json_string_value(json_object_get(ev, "name"));
        if (!strcmp(n, "process_name"))
            gc_named = !strcmp(json_string_value(json_object_get(args_of(ev), "name")), "Python GC");
        if (!strcmp(n, "process_sort_index"))
            gc_sorted = json_integer_value(json_object_get(args_of(ev), "sort_index")) == 1;
        if (!strcmp(n, "thread_sort_index"))
            gc_thread_sorted = json_integer_value(json_object_get(args_of(ev), "sort_index")) ==
                               json_integer_value(json_object_get(ev, "tid"));
    }
    ASSERT_TRUE(gc_named && gc_sorted && gc_thread_sorted);
    json_decref(root);
}

/* What torch 2.x readers look up besides the events (perfetto_hta_kineto.md):
 * deviceProperties ([] without devices), distributedInfo with the rank
 * written as json.dumps() does (HTA takes a file's rank from the first line
 * matching `"rank":\s+(\d+)`, and the metadata entry distributed_args
 * holds `"rank": 0`: distributedInfo's must come first), traceName last,
 * and every op's External id unique. */
static void check_kineto_keys(json_t *root, const char *text)
{
    json_t *devs = json_object_get(root, "deviceProperties");
    ASSERT_TRUE(json_is_array(devs) && json_array_size(devs) == 0);
    json_t *di = json_object_get(root, "distributedInfo");
    ASSERT_EQ(json_integer_value(json_object_get(di, "rank")), 3);
    const char *r = strstr(text, "\"rank\": ");
    ASSERT_TRUE(r && r[8] == '3' && r < strstr(text, "\"distributed_args\""));
    ASSERT_TRUE(strstr(text, "\"traceEvents\":[") < strstr(text, "\"traceName\":\"trace_view.json\"}"));
    json_t *events = json_object_get(root, "traceEvents");
    size_t i, n_ops = 0;
    json_t *ev;
    json_int_t seen[64] = {0};
    json_array_foreach(events, i, ev) {
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (!cat || strcmp(cat, "cpu_op"))
            continue;
        json_int_t ext = json_integer_value(json_object_get(args_of(ev), "External id"));
        ASSERT_TRUE(ext > 0);
        ASSERT_EQ(json_integer_value(json_object_get(args_of(ev), "Ev Idx")), ext - 1);
        for (size_t k = 0; k < n_ops; k++)
            ASSERT_TRUE(seen[k] != ext);
        ASSERT_TRUE(n_ops < 64);
        seen[n_ops++] = ext;
    }
    ASSERT_TRUE(n_ops >= 13);
}

/* Kineto's form: an object, numeric ts relative to baseTimeNanoseconds,
 * profiler_metadata.json's entries as top-level keys (not the reserved ones). */
static void test_kineto_form(void)
{
    char *text;
    size_t len;
    json_t *root = export_and_parse("Python", AIP_TRACE_KINETO, &text, &len);
    ASSERT_TRUE(root != NULL);
    ASSERT_TRUE(json_is_object(root));
    ASSERT_EQ(json_integer_value(json_object_get(root, "schemaVersion")), 1);
    ASSERT_EQ(json_integer_value(json_object_get(root, "baseTimeNanoseconds")), R0);
    ASSERT_STREQ(json_string_value(json_object_get(root, "displayTimeUnit")), "ms");
    check_run_facts(root);
    ASSERT_STREQ(json_string_value(json_object_get(root, "user_key")), "a<b>&c");
    ASSERT_TRUE(strstr(text, "a\\u003cb\\u003e\\u0026c") != NULL); /* escaped like every string */
    json_t *dist = json_object_get(root, "distributed_args");
    ASSERT_EQ(json_integer_value(json_object_get(dist, "tensor_model_parallel_size")), 2);
    ASSERT_TRUE(json_object_get(root, "ENV_VARIABLES") == NULL);
    json_t *events = json_object_get(root, "traceEvents");
    ASSERT_TRUE(json_is_array(events) && json_array_size(events) > 10);
    /* "traceEvents" appears once: the metadata entry of that name was skipped */
    ASSERT_TRUE(strstr(strstr(text, "\"traceEvents\"") + 1, "\"traceEvents\"") == NULL);
    /* Kineto's ids on every op and annotation: "External id" from 1, "Ev Idx" one less */
    ASSERT_TRUE(strstr(text, ",\"pid\":77,\"tid\":1000,\"ts\":1.000,\"dur\":0.500,"
                             "\"args\":{\"External id\":1,\"Ev Idx\":0}}") != NULL);
    check_kineto_keys(root, text);
    /* 300123 ns and 301500 ns as 2^-10 µs units: 307326 and 308736, so ts
     * 307326/1024 µs and dur (308736 - 307326)/1024 µs, both exact doubles
     * whose sum is the end's ts exactly (speedscope adds them). */
    ASSERT_TRUE(strstr(text, "\"ts\":300.123046875,\"dur\":1.376953125,\"args\"") != NULL);
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        json_t *ts = json_object_get(ev, "ts");
        ASSERT_TRUE(!ts || json_is_number(ts));
    }
    json_t *v = json_string("s");
    json_t *s = find_event(events, NULL, "ph", v);
    json_decref(v);
    ASSERT_TRUE(s && json_object_get(s, "bp") == NULL); /* Kineto: bp only on "f" */
    ASSERT_TRUE(json_real_value(json_object_get(s, "ts")) == 100.0);
    v = json_string("process_name");
    json_t *pn = find_event(events, "M", "name", v);
    json_decref(v);
    ASSERT_TRUE(json_object_get(args_of(pn), "aiprof") == NULL); /* facts are at the top */
    free(text);
    json_decref(root);
}

static void test_escape_functions(void)
{
    char out[512];
    size_t n = aip__json_quote("a<b>&c", 6, out);
    out[n] = 0;
    ASSERT_STREQ(out, "\"a\\u003cb\\u003e\\u0026c\"");
    n = aip__json_quote("\x01", 1, out);
    out[n] = 0;
    ASSERT_STREQ(out, "\"\\u0001\"");
    /* the worst case bound holds */
    char worst[64];
    memset(worst, 1, sizeof worst);
    ASSERT_TRUE(aip__json_quote(worst, sizeof worst, out) <= AIP_JSON_ESC_MAX(sizeof worst));
}

static void setup(void) { rb_tempdir(dir, sizeof dir, "tjson"); }
static void teardown(void) { rb_rmtree(dir); }

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_number_format), TEST_CASE(test_hostile_strings),
          TEST_CASE(test_structure), TEST_CASE(test_kineto_form), TEST_CASE(test_escape_functions),
          TEST_CASE(teardown))
