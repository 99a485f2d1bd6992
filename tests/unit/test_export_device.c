/*
 * test_export_device.c — the device layers of trace_view.json and the
 * device tables of ascend_pytorch_profiler.db (trace_json_device.c,
 * db_device.c, device_tracks.c), from device activity recorded through the
 * device interface by a fake back end (its "device clock" is
 * CLOCK_MONOTONIC + 7000 s) with task times chosen here, so every duration
 * is known to the nanosecond:
 *
 *   device A (GPU), queue "qa" (out of order):
 *     aten::mm  -> clEnqueueNDRangeKernel -> mm_kernel  [0, 100) us
 *     aten::add -> clEnqueueNDRangeKernel -> add_kernel [20, 50) us  (overlaps mm_kernel)
 *   device A, queue "qb":
 *     aten::to  -> clEnqueueWriteBuffer   -> Memcpy HtoD [200, 210) us, 4096 B
 *     a marker with no launching call      [215, 216) us
 *   device B (CPU), queue "qc":
 *     aten::relu -> clEnqueueNDRangeKernel -> relu_kernel [30, 60) us
 *   clFinish (launches nothing)
 *
 * plus the pieces alone: lanes and task numbers of overlapping tasks, and
 * the overlap sections (Computing / Free).
 */
#include "aip_test.h"
#include "analysis_int.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "collector.h"
#include "device.h"
#include "device_tracks.h"

#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>

#define FAKE_DEV_OFFSET 7000000000000ull
#include "fake_device.h"
#define US 1000ull

static char tmp[PATH_MAX];
static uint32_t dev_a, dev_b;

static void sample_all(void)
{
    fake_device_sample(dev_a);
    fake_device_sample(dev_b);
}

static void fake_start(const aip_config *cfg) { sample_all(); }
FAKE_COLLECTOR(fake, fake_start, sample_all);

/* ---- the pieces alone -------------------------------------------------- */

static aip__device_task task(int64_t start, int64_t end, uint32_t queue, uint8_t kind)
{
    return (aip__device_task){.start = start, .end = end, .queue = queue, .kind = kind, .api = -1};
}

static void test_lanes_and_task_ids(void)
{
    aip__process p;
    memset(&p, 0, sizeof p);
    aip__queue qs[2] = {{.present = 1}, {.present = 1}};
    p.queues.v = qs;
    p.queues.n = 2;
    /* by start, as device_derive.c sorts them */
    aip__device_task t[] = {
        task(0, 100, 0, AIP_TASK_KERNEL),  /* lane 0 */
        task(10, 50, 0, AIP_TASK_KERNEL),  /* inside the first: lane 1 */
        task(20, 30, 1, AIP_TASK_KERNEL),  /* another queue: its lane 0 */
        task(50, 120, 0, AIP_TASK_KERNEL), /* touches lane 1's end: lane 1 */
        task(60, 70, 0, AIP_TASK_KERNEL),  /* overlaps both: lane 2 */
        task(100, 130, 0, AIP_TASK_KERNEL), /* touches lane 0's end: lane 0 */
        task(140, 150, UINT32_MAX, AIP_TASK_MARKER), /* no queue */
    };
    p.dev_tasks.v = t;
    p.dev_tasks.n = sizeof t / sizeof t[0];
    aip__dev_tracks tr;
    ASSERT_EQ(aip__dev_tracks_build(&p, &tr), AIP_OK);
    static const uint32_t lane[] = {0, 1, 0, 1, 2, 0, 0}, id[] = {0, 1, 0, 2, 3, 4, 0};
    for (size_t i = 0; i < p.dev_tasks.n; i++) {
        ASSERT_EQ(tr.lane[i], lane[i]);
        ASSERT_EQ(tr.task_id[i], id[i]);
    }
    ASSERT_EQ(tr.lanes[0], 3);
    ASSERT_EQ(tr.lanes[1], 1);
    ASSERT_EQ(tr.lanes[AIP_DEV_TRACK_NO_QUEUE], 1);
    ASSERT_EQ(aip__dev_task_queue_index(&t[6]), AIP_DEV_TRACK_NO_QUEUE);
    ASSERT_EQ(aip__dev_track_tid(0, 2), 2 * AIP_DEV_TRACK_LANE_STRIDE);
    aip__dev_tracks_free(&tr);
}

/* The Overlap Analysis sections are the step trace's device rows cut into
 * time: a row's Free sections sum to its Free (issue 26: they differed,
 * 107.8 vs 32.3 us, when Free sections spanned only first..last task). */
static void test_overlap_sections(void)
{
    aip__process p;
    memset(&p, 0, sizeof p);
    aip__device_task t[] = {
        task(1000, 1100, 0, AIP_TASK_KERNEL),
        task(1020, 1050, 0, AIP_TASK_KERNEL), /* inside: one section */
        task(1100, 1110, 1, AIP_TASK_KERNEL), /* touching: merged */
        task(1120, 1130, 0, AIP_TASK_MEMCPY), /* a copy is not computing */
        task(1140, 1150, 0, AIP_TASK_KERNEL),
        task(1160, 1200, 0, AIP_TASK_MARKER),
        task(1500, 1600, 0, AIP_TASK_KERNEL), /* another device */
    };
    t[6].device = 1;
    p.dev_tasks.v = t;
    p.dev_tasks.n = sizeof t / sizeof t[0];
    aip__model m;
    memset(&m, 0, sizeof m);
    m.procs = &p;
    m.n_procs = 1;
    m.first_ns = 900; /* no steps: one window per device, the whole profile */
    m.last_ns = 1300;
    ASSERT_EQ(aip__device_steps(&m), AIP_OK);
    ASSERT_EQ(m.n_step_rows, 2);
    aip__overlap_section *s;
    size_t n;
    ASSERT_EQ(aip__device_overlap(&m, 0, &s, &n), AIP_OK);
    static const int64_t want[][3] = {{900, 1000, AIP_OVERLAP_FREE},
                                      {1000, 1110, AIP_OVERLAP_COMPUTE},
                                      {1110, 1140, AIP_OVERLAP_FREE},
                                      {1140, 1150, AIP_OVERLAP_COMPUTE},
                                      {1150, 1300, AIP_OVERLAP_FREE}};
    ASSERT_EQ(n, 5);
    int64_t free_ns = 0, comp_ns = 0;
    for (size_t i = 0; i < n && n == 5; i++) {
        ASSERT_EQ(s[i].start, want[i][0]);
        ASSERT_EQ(s[i].end, want[i][1]);
        ASSERT_EQ(s[i].type, want[i][2]);
        free_ns += s[i].type == AIP_OVERLAP_FREE ? s[i].end - s[i].start : 0;
        comp_ns += s[i].type == AIP_OVERLAP_COMPUTE ? s[i].end - s[i].start : 0;
    }
    ASSERT_EQ(free_ns, m.step_rows[0].free); /* one definition, both outputs */
    ASSERT_EQ(comp_ns, m.step_rows[0].computing);
    free(s);
    ASSERT_EQ(aip__device_overlap(&m, 1, &s, &n), AIP_OK);
    ASSERT_TRUE(n == 2 && s[1].type == AIP_OVERLAP_COMPUTE && s[1].end - s[1].start == 100 &&
                s[0].type == AIP_OVERLAP_FREE && s[0].end - s[0].start == m.step_rows[1].free);
    free(s);
    ASSERT_EQ(aip__device_overlap(&m, 5, &s, &n), AIP_OK); /* no tasks: nothing */
    ASSERT_TRUE(n == 0 && s == NULL);
    free(m.step_rows);
}

/* The derived model's shared device results (dev_share.c): the trace
 * JSON and the database ask for the same device's sections and the same
 * process's task tracks from two threads of the export pool; each gets its
 * own copy of exactly what computing them afresh gives, and a device of no
 * tasks gets no sections. */
typedef struct overlap_ask {
    const aip__model *m;
    aip__overlap_section *s[3];
    size_t n[3];
    aip_status st[3];
    aip__dev_tracks t;
    aip_status st_t;
} overlap_ask;

static void *ask_overlap(void *arg)
{
    overlap_ask *a = arg;
    static const uint32_t dev[3] = {0, 1, 5};
    for (int i = 0; i < 3; i++)
        a->st[i] = aip__device_overlap(a->m, dev[i], &a->s[i], &a->n[i]);
    a->st_t = aip__dev_tracks_of(a->m, &a->m->procs[0], &a->t);
    return NULL;
}

static void test_overlap_shared(void)
{
    aip__process p;
    memset(&p, 0, sizeof p);
    aip__device_task t[] = {task(1000, 1100, 0, AIP_TASK_KERNEL),
                            task(1120, 1130, 0, AIP_TASK_MEMCPY),
                            task(1140, 1150, 0, AIP_TASK_KERNEL),
                            task(1500, 1600, 0, AIP_TASK_KERNEL)};
    t[3].device = 1;
    p.dev_tasks.v = t;
    p.dev_tasks.n = sizeof t / sizeof t[0];
    aip__model m;
    memset(&m, 0, sizeof m);
    m.procs = &p;
    m.n_procs = 1;
    m.first_ns = 900;
    m.last_ns = 1300;
    ASSERT_EQ(aip__device_steps(&m), AIP_OK);
    aip__overlap_section *want[2];
    size_t n_want[2];
    for (uint32_t d = 0; d < 2; d++)
        ASSERT_EQ(aip__device_overlap_compute(&m, d, &want[d], &n_want[d]), AIP_OK);
    ASSERT_TRUE(n_want[0] == 5 && n_want[1] == 2);
    m.dev_share = aip__dev_share_new(m.n_procs);
    ASSERT_TRUE(m.dev_share != NULL);
    overlap_ask a[2] = {{.m = &m}, {.m = &m}};
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, ask_overlap, &a[1]), 0);
    ask_overlap(&a[0]);
    pthread_join(th, NULL);
    for (int k = 0; k < 2; k++) {
        for (int d = 0; d < 2; d++) {
            ASSERT_EQ(a[k].st[d], AIP_OK);
            ASSERT_EQ(a[k].n[d], n_want[d]);
            for (size_t i = 0; i < n_want[d] && a[k].n[d] == n_want[d]; i++)
                ASSERT_TRUE(a[k].s[d][i].start == want[d][i].start &&
                            a[k].s[d][i].end == want[d][i].end &&
                            a[k].s[d][i].type == want[d][i].type);
        }
        ASSERT_TRUE(a[k].st[2] == AIP_OK && a[k].n[2] == 0 && a[k].s[2] == NULL);
    }
    ASSERT_TRUE(a[0].s[0] != a[1].s[0]); /* each asker frees its own */
    aip__dev_tracks want_t; /* the task numbers and lanes: the same */
    ASSERT_EQ(aip__dev_tracks_build(&p, &want_t), AIP_OK);
    for (int k = 0; k < 2; k++) {
        ASSERT_EQ(a[k].st_t, AIP_OK);
        ASSERT_EQ(a[k].t.n_queues, want_t.n_queues);
        ASSERT_TRUE(!memcmp(a[k].t.task_id, want_t.task_id, p.dev_tasks.n * sizeof *want_t.task_id) &&
                    !memcmp(a[k].t.lane, want_t.lane, p.dev_tasks.n * sizeof *want_t.lane) &&
                    !memcmp(a[k].t.lanes, want_t.lanes, want_t.n_queues * sizeof *want_t.lanes));
        aip__dev_tracks_free(&a[k].t);
    }
    ASSERT_TRUE(want_t.task_id[1] == 1 && want_t.task_id[3] == 3); /* one queue, start order */
    aip__dev_tracks_free(&want_t);
    for (int k = 0; k < 2; k++)
        for (int d = 0; d < 3; d++)
            free(a[k].s[d]);
    free(want[0]);
    free(want[1]);
    aip__dev_share_free(m.dev_share);
    free(m.step_rows);
}

/* ---- recorded, analysed ----------------------------------------------- */

/* Inside op `op`: runtime call `api` launching `name` on `queue`, run at
 * [base + s_us, base + e_us) on the device clock. */
static void launch(const char *op, const char *api, const char *name, uint32_t device,
                   uint32_t queue, uint8_t kind, uint8_t dir, uint64_t base, uint64_t s_us,
                   uint64_t e_us, uint64_t bytes)
{
    aip_op_info info = {.name = op, .sequence_number = -1};
    aip_op_begin(&info);
    uint64_t corr = aip__dev_correlation();
    uint64_t t = aip__dev_api_begin();
    aip__dev_api_end(api, t, corr, device);
    aip__dev_task_info ti = {.name = name, .device = device, .queue = queue, .kind = kind,
                             .direction = dir, .correlation = corr, .start = base + s_us * US,
                             .end = base + e_us * US, .bytes = bytes};
    if (kind == AIP_TASK_KERNEL) {
        ti.global[0] = 1000;
        ti.global[1] = ti.global[2] = 1;
        ti.local[0] = 64; /* 16 work-groups, the last one partial */
        ti.local[1] = ti.local[2] = 1;
    }
    aip__dev_task(&ti);
    aip_op_end();
}

static char result[PATH_MAX];

static void record(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip__collector_register(&fake);
    dev_a = aip__dev_device(AIP_BACKEND_OPENCL, 0xa, "Fake GPU", "Acme", AIP_DEVKIND_GPU);
    dev_b = aip__dev_device(AIP_BACKEND_OPENCL, 0xb, "Fake CPU", "Acme", AIP_DEVKIND_CPU);
    uint32_t qa = aip__dev_queue(dev_a, 0x100, "qa");
    uint32_t qb = aip__dev_queue(dev_a, 0x101, "qb");
    uint32_t qc = aip__dev_queue(dev_b, 0x102, "qc");
    aip_session *s = start_new(&c);
    if (!s)
        return;
    uint64_t base = device_now();
    launch("aten::mm", "clEnqueueNDRangeKernel", "mm_kernel", dev_a, qa, AIP_TASK_KERNEL, 0,
           base, 0, 100, 0);
    launch("aten::add", "clEnqueueNDRangeKernel", "add_kernel", dev_a, qa, AIP_TASK_KERNEL, 0,
           base, 20, 50, 0);
    launch("aten::to", "clEnqueueWriteBuffer", "Memcpy HtoD", dev_a, qb, AIP_TASK_MEMCPY,
           AIP_COPY_H2D, base, 200, 210, 4096);
    aip__dev_task_info marker = {.name = "marker", .device = dev_a, .queue = qb,
                                 .kind = AIP_TASK_MARKER, .start = base + 215 * US,
                                 .end = base + 216 * US};
    aip__dev_task(&marker);
    launch("aten::relu", "clEnqueueNDRangeKernel", "relu_kernel", dev_b, qc, AIP_TASK_KERNEL, 0,
           base, 30, 60, 0);
    uint64_t t = aip__dev_api_begin();
    aip__dev_api_end("clFinish", t, 0, dev_a);
    if (aip_session_stop(s) == AIP_OK)
        snprintf(result, sizeof result, "%s", aip_session_result_dir(s));
    aip_session_destroy(s);
}

static json_t *analysed(unsigned format)
{
    aip_analyse_options o;
    aip_analyse_options_init(&o);
    o.quiet = 1;
    o.trace_format = format;
    if (aip_analyse_dir(result, &o) != AIP_OK)
        return NULL;
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", result);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root)
        fprintf(stderr, "%s: %s (line %d)\n", path, err.text, err.line);
    if (root && json_is_object(root)) { /* Kineto's form */
        json_t *ev = json_incref(json_object_get(root, "traceEvents"));
        json_decref(root);
        root = ev;
    }
    return root;
}

/* A time of the trace in ns: torch_npu's "<µs>.<3 digits>" string or
 * Kineto's binary-fraction µs (exact in a double). */
static int64_t ns_of(json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v), *dot = strchr(s, '.');
        return strtoll(s, NULL, 10) * 1000 + (dot ? strtoll(dot + 1, NULL, 10) : 0);
    }
    double us = json_number_value(v);
    return (int64_t)(us * 1000.0 + (us >= 0 ? 0.5 : -0.5));
}

static const char *str_of(json_t *ev, const char *key)
{
    return json_string_value(json_object_get(ev, key));
}

static json_int_t int_of(json_t *ev, const char *key)
{
    return json_integer_value(json_object_get(ev, key));
}

/* The pid of the process named `name` whose label is `label` (NULL: any). */
static json_int_t process_pid(json_t *evs, const char *name, const char *label, int *count)
{
    size_t i, j;
    json_t *e, *f;
    json_int_t pid = -1;
    *count = 0;
    json_array_foreach(evs, i, e) {
        if (strcmp(str_of(e, "ph"), "M") || strcmp(str_of(e, "name"), "process_name") ||
            strcmp(json_string_value(json_object_get(json_object_get(e, "args"), "name")), name))
            continue;
        json_array_foreach(evs, j, f) {
            if (!strcmp(str_of(f, "ph"), "M") && !strcmp(str_of(f, "name"), "process_labels") &&
                int_of(f, "pid") == int_of(e, "pid") &&
                (!label || !strcmp(json_string_value(json_object_get(
                                       json_object_get(f, "args"), "labels")), label))) {
                (*count)++;
                pid = int_of(e, "pid");
            }
        }
    }
    return pid;
}

/* The X event on pid named `name`. */
static json_t *x_named(json_t *evs, json_int_t pid, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e)
        if (!strcmp(str_of(e, "ph"), "X") && int_of(e, "pid") == pid &&
            !strcmp(str_of(e, "name"), name))
            return e;
    return NULL;
}

static const char *thread_name(json_t *evs, json_int_t pid, json_int_t tid)
{
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e)
        if (!strcmp(str_of(e, "ph"), "M") && !strcmp(str_of(e, "name"), "thread_name") &&
            int_of(e, "pid") == pid && int_of(e, "tid") == tid)
            return json_string_value(json_object_get(json_object_get(e, "args"), "name"));
    return NULL;
}

/* Slices of one (pid, tid) nest or are disjoint (check_nesting.py's rule). */
static int mis_nested(json_t *evs, json_int_t pid)
{
    size_t i, j;
    json_t *a, *b;
    int bad = 0;
    json_array_foreach(evs, i, a) {
        if (strcmp(str_of(a, "ph"), "X") || int_of(a, "pid") != pid)
            continue;
        int64_t as = ns_of(json_object_get(a, "ts")), ae = as + ns_of(json_object_get(a, "dur"));
        json_array_foreach(evs, j, b) {
            if (strcmp(str_of(b, "ph"), "X") || int_of(b, "pid") != pid ||
                int_of(b, "tid") != int_of(a, "tid"))
                continue;
            int64_t bs = ns_of(json_object_get(b, "ts")), be = bs + ns_of(json_object_get(b, "dur"));
            bad += as < bs && bs < ae && ae < be;
        }
    }
    return bad;
}

static void check_trace(unsigned format)
{
    /* Kineto's ts and dur are multiples of 2^-10 µs, each end rounded on
     * its own: a duration read back in ns may be 1 ns off; torch_npu's
     * 3-decimal µs are ns exactly. */
    int64_t tol = format == AIP_TRACE_KINETO;
    json_t *evs = analysed(format);
    ASSERT_TRUE(evs != NULL);
    char la[16], lb[16];
    snprintf(la, sizeof la, "NPU %u", dev_a);
    snprintf(lb, sizeof lb, "NPU %u", dev_b);
    int n;
    json_int_t hw_a = process_pid(evs, "Ascend Hardware", la, &n);
    ASSERT_EQ(n, 1);
    json_int_t hw_b = process_pid(evs, "Ascend Hardware", lb, &n);
    ASSERT_EQ(n, 1);
    process_pid(evs, "Ascend Hardware", NULL, &n);
    ASSERT_EQ(n, 2); /* one per device */
    json_int_t cann = process_pid(evs, "CANN", "CPU", &n);
    ASSERT_EQ(n, 1);
    json_int_t ov_a = process_pid(evs, "Overlap Analysis", la, &n);
    ASSERT_EQ(n, 1);

    /* one X per task, durations exact, on its queue's thread; the task
     * that overlaps another on the out-of-order queue on a sibling lane */
    static const struct { const char *name; int dev; int64_t dur_us; const char *thread; } tasks[] = {
        {"mm_kernel", 0, 100, "qa"}, {"add_kernel", 0, 30, "qa (2)"},
        {"Memcpy HtoD", 0, 10, "qb"}, {"marker", 0, 1, "qb"}, {"relu_kernel", 1, 30, "qc"}};
    size_t i;
    json_t *e;
    int x_on_devices = 0;
    json_array_foreach(evs, i, e)
        x_on_devices += !strcmp(str_of(e, "ph"), "X") &&
                        (int_of(e, "pid") == hw_a || int_of(e, "pid") == hw_b);
    ASSERT_EQ(x_on_devices, 5);
    for (size_t k = 0; k < 5; k++) {
        json_t *x = x_named(evs, tasks[k].dev ? hw_b : hw_a, tasks[k].name);
        ASSERT_TRUE(x != NULL);
        ASSERT_TRUE(llabs(ns_of(json_object_get(x, "dur")) - tasks[k].dur_us * (int64_t)US) <= tol);
        ASSERT_STREQ(thread_name(evs, int_of(x, "pid"), int_of(x, "tid")), tasks[k].thread);
    }
    json_t *mm = x_named(evs, hw_a, "mm_kernel"), *args = json_object_get(mm, "args");
    ASSERT_STREQ(str_of(args, "Task Type"), "GPU");
    ASSERT_STREQ(str_of(args, "Global Work Size"), "1000,1,1");
    ASSERT_EQ(int_of(args, "Task Id"), 0);
    args = json_object_get(x_named(evs, hw_a, "add_kernel"), "args");
    ASSERT_EQ(int_of(args, "Task Id"), 1); /* numbered on its queue */
    args = json_object_get(x_named(evs, hw_a, "Memcpy HtoD"), "args");
    ASSERT_STREQ(str_of(args, "Task Type"), "MEMCPY_ASYNC");
    ASSERT_EQ(int_of(args, "size(B)"), 4096);
    ASSERT_STREQ(str_of(args, "operation"), "host to device");
    ASSERT_STREQ(str_of(json_object_get(x_named(evs, hw_b, "relu_kernel"), "args"), "Task Type"),
                 "CPU");
    ASSERT_EQ(mis_nested(evs, hw_a) + mis_nested(evs, hw_b) + mis_nested(evs, cann), 0);
    ASSERT_TRUE(x_named(evs, cann, "Runtime@clFinish") != NULL);

    /* flows: 4 launches, each an async_npu and a HostToDevice pair; every
     * start inside its op (or on its call), every end at its task */
    int pairs[2] = {0, 0};
    json_array_foreach(evs, i, e) {
        if (strcmp(str_of(e, "ph"), "s"))
            continue;
        int h2d = !strcmp(str_of(e, "cat"), "HostToDevice");
        ASSERT_TRUE(h2d || !strcmp(str_of(e, "cat"), "async_npu"));
        size_t j;
        json_t *f, *end = NULL;
        json_array_foreach(evs, j, f)
            if (!strcmp(str_of(f, "ph"), "f") && !strcmp(str_of(f, "cat"), str_of(e, "cat")) &&
                json_equal(json_object_get(f, "id"), json_object_get(e, "id")))
                end = f;
        ASSERT_TRUE(end != NULL);
        ASSERT_STREQ(str_of(end, "bp"), "e");
        json_t *task = NULL, *from = NULL;
        int64_t ts = ns_of(json_object_get(e, "ts")), te = ns_of(json_object_get(end, "ts"));
        json_array_foreach(evs, j, f) {
            if (strcmp(str_of(f, "ph"), "X"))
                continue;
            int64_t s = ns_of(json_object_get(f, "ts")), d = ns_of(json_object_get(f, "dur"));
            if (int_of(f, "pid") == int_of(end, "pid") && int_of(f, "tid") == int_of(end, "tid") &&
                s == te)
                task = f;
            if (int_of(f, "pid") == int_of(e, "pid") && int_of(f, "tid") == int_of(e, "tid") &&
                s <= ts && ts <= s + d && (!from || s >= ns_of(json_object_get(from, "ts"))))
                from = f; /* the innermost slice around the start */
        }
        ASSERT_TRUE(task != NULL && from != NULL);
        const char *op = str_of(from, "name"), *k = str_of(task, "name");
        if (h2d) {
            ASSERT_EQ(int_of(e, "pid"), cann);
            ASSERT_TRUE(!strncmp(op, "Runtime@clEnqueue", 17));
        } else {
            ASSERT_TRUE((!strcmp(op, "aten::mm") && !strcmp(k, "mm_kernel")) ||
                        (!strcmp(op, "aten::add") && !strcmp(k, "add_kernel")) ||
                        (!strcmp(op, "aten::to") && !strcmp(k, "Memcpy HtoD")) ||
                        (!strcmp(op, "aten::relu") && !strcmp(k, "relu_kernel")));
        }
        pairs[h2d]++;
    }
    ASSERT_EQ(pairs[0], 4);
    ASSERT_EQ(pairs[1], 4);

    /* Overlap Analysis of device A: Computing = mm_kernel's 100 us (with
     * add_kernel inside), Free = the rest of [first start, last end] (the
     * copy and the marker are not computing; each start is aligned on its
     * own, so the span is not exactly the 216 us of the device clock) */
    int64_t comp = 0, free_ns = 0, first = INT64_MAX, last = INT64_MIN, sections = 0;
    json_array_foreach(evs, i, e) {
        if (strcmp(str_of(e, "ph"), "X") || int_of(e, "pid") != hw_a)
            continue;
        int64_t s = ns_of(json_object_get(e, "ts")), d = ns_of(json_object_get(e, "dur"));
        first = s < first ? s : first;
        last = s + d > last ? s + d : last;
    }
    json_array_foreach(evs, i, e) {
        if (strcmp(str_of(e, "ph"), "X") || int_of(e, "pid") != ov_a)
            continue;
        int64_t d = ns_of(json_object_get(e, "dur"));
        sections++;
        if (!strcmp(str_of(e, "name"), "Computing") && int_of(e, "tid") == 0)
            comp += d;
        else if (!strcmp(str_of(e, "name"), "Free") && int_of(e, "tid") == 3)
            free_ns += d;
        else
            ASSERT_TRUE(0);
    }
    ASSERT_TRUE(llabs(comp - 100 * (int64_t)US) <= tol);
    /* Free is the step trace's (one definition: test_database_device_tables
     * checks the sections against StepTraceTime).  Without steps its window
     * is the whole profile, which the host's events may widen beyond the
     * device's span when the host runs slowly (8 us more seen under ASan):
     * the gaps inside the device span are free in any case. */
    ASSERT_TRUE(free_ns >= last - first - 100 * (int64_t)US - 3 * tol * sections);
    ASSERT_TRUE(free_ns > 115 * (int64_t)US);
    ASSERT_STREQ(thread_name(evs, ov_a, 2), "Communication(Not Overlapped)");
    json_decref(evs);
}

/* The "args" member `key` of the X event named `name` on pid. */
static json_int_t arg_of(json_t *evs, json_int_t pid, const char *name, const char *key)
{
    json_t *x = x_named(evs, pid, name);
    return x ? int_of(json_object_get(x, "args"), key) : -1;
}

/* The X event on (pid, tid) whose slice holds ts, the innermost. */
static json_t *innermost(json_t *evs, json_int_t pid, json_int_t tid, int64_t ts)
{
    size_t i;
    json_t *e, *best = NULL;
    json_array_foreach(evs, i, e) {
        if (strcmp(str_of(e, "ph"), "X") || int_of(e, "pid") != pid || int_of(e, "tid") != tid)
            continue;
        int64_t s = ns_of(json_object_get(e, "ts")), d = ns_of(json_object_get(e, "dur"));
        if (s <= ts && ts <= s + d && (!best || s >= ns_of(json_object_get(best, "ts"))))
            best = e;
    }
    return best;
}

/* Kineto's form: device activity laid out as Kineto lays out CUPTI's, so
 * that HTA and the TensorBoard plugin find it: every event with a `cat`,
 * tasks on pid = device id, tid = stream, args device / stream /
 * correlation / External id; runtime calls `cuda_runtime` on the calling
 * thread; one ac2g flow per launch, from the call to the task, its id the
 * correlation both carry; no torch_npu layer. */
static void test_trace_device_layers_kineto(void)
{
    json_t *evs = analysed(AIP_TRACE_KINETO);
    ASSERT_TRUE(evs != NULL);
    int n;
    process_pid(evs, "CANN", NULL, &n);
    ASSERT_EQ(n, 0);
    process_pid(evs, "Ascend Hardware", NULL, &n);
    ASSERT_EQ(n, 0);
    process_pid(evs, "Overlap Analysis", NULL, &n);
    ASSERT_EQ(n, 0);
    char na[32];
    snprintf(na, sizeof na, "GPU %u", dev_a);
    ASSERT_EQ(process_pid(evs, na, "Fake GPU", &n), (json_int_t)dev_a);
    ASSERT_EQ(n, 1);
    snprintf(na, sizeof na, "Device %u (CPU)", dev_b);
    ASSERT_EQ(process_pid(evs, na, "Fake CPU", &n), (json_int_t)dev_b);
    static const struct { const char *name, *cat; uint32_t *dev; } tasks[] = {
        {"mm_kernel", "kernel", &dev_a}, {"add_kernel", "kernel", &dev_a},
        {"Memcpy HtoD", "gpu_memcpy", &dev_a}, {"marker", "device_task", &dev_a},
        {"relu_kernel", "kernel", &dev_b}};
    for (size_t k = 0; k < 5; k++) {
        json_t *x = x_named(evs, *tasks[k].dev, tasks[k].name);
        ASSERT_TRUE(x != NULL);
        ASSERT_STREQ(str_of(x, "cat"), tasks[k].cat);
        json_t *a = json_object_get(x, "args");
        ASSERT_EQ(int_of(a, "device"), (json_int_t)*tasks[k].dev);
        json_int_t stream = int_of(a, "stream");
        ASSERT_TRUE(stream > 0 && (int_of(x, "tid") & 0xffffffff) == stream);
        char tn[48];
        snprintf(tn, sizeof tn, int_of(x, "tid") >> 32 ? "stream %lld (2)" : "stream %lld",
                 (long long)stream);
        ASSERT_STREQ(thread_name(evs, *tasks[k].dev, int_of(x, "tid")), tn);
        ASSERT_EQ(int_of(a, "correlation") > 0, strcmp(tasks[k].name, "marker") != 0);
    }
    /* the overlapping kernel on a sibling thread of its stream */
    ASSERT_TRUE(int_of(x_named(evs, dev_a, "add_kernel"), "tid") >> 32 == 1);
    ASSERT_EQ(arg_of(evs, dev_a, "Memcpy HtoD", "bytes"), 4096);
    json_t *mm_args = json_object_get(x_named(evs, dev_a, "mm_kernel"), "args");
    ASSERT_EQ(json_integer_value(json_array_get(json_object_get(mm_args, "grid"), 0)), 16);
    ASSERT_EQ(json_integer_value(json_array_get(json_object_get(mm_args, "block"), 0)), 64);
    ASSERT_EQ(mis_nested(evs, dev_a) + mis_nested(evs, dev_b), 0);
    size_t i, j;
    json_t *e, *f;
    int flows = 0, calls = 0;
    json_array_foreach(evs, i, e) {
        ASSERT_TRUE(strcmp(str_of(e, "ph"), "X") || str_of(e, "cat") != NULL);
        if (!strcmp(str_of(e, "ph"), "X") && !strcmp(str_of(e, "cat"), "cuda_runtime")) {
            calls++;
            ASSERT_TRUE(!strncmp(str_of(e, "name"), "cl", 2));
        }
        if (strcmp(str_of(e, "ph"), "s"))
            continue;
        ASSERT_STREQ(str_of(e, "cat"), "ac2g");
        json_t *end = NULL;
        json_array_foreach(evs, j, f)
            if (!strcmp(str_of(f, "ph"), "f") && !strcmp(str_of(f, "cat"), "ac2g") &&
                json_equal(json_object_get(f, "id"), json_object_get(e, "id")))
                end = f;
        ASSERT_TRUE(end != NULL);
        ASSERT_STREQ(str_of(end, "bp"), "e");
        json_t *call = innermost(evs, int_of(e, "pid"), int_of(e, "tid"),
                                 ns_of(json_object_get(e, "ts")));
        json_t *task = innermost(evs, int_of(end, "pid"), int_of(end, "tid"),
                                 ns_of(json_object_get(end, "ts")));
        ASSERT_TRUE(call && task);
        ASSERT_STREQ(str_of(call, "cat"), "cuda_runtime");
        json_t *ca = json_object_get(call, "args"), *ta = json_object_get(task, "args");
        ASSERT_EQ(int_of(ca, "correlation"), int_of(e, "id"));
        ASSERT_EQ(int_of(ta, "correlation"), int_of(e, "id"));
        /* the launching op: the op around the call, the same External id */
        json_t *op = NULL;
        json_array_foreach(evs, j, f)
            if (!strcmp(str_of(f, "ph"), "X") && str_of(f, "cat") &&
                !strcmp(str_of(f, "cat"), "cpu_op") &&
                int_of(json_object_get(f, "args"), "External id") == int_of(ta, "External id"))
                op = f;
        ASSERT_TRUE(op != NULL && int_of(ta, "External id") == int_of(ca, "External id"));
        ASSERT_TRUE(ns_of(json_object_get(op, "ts")) <= ns_of(json_object_get(call, "ts")));
        flows++;
    }
    ASSERT_EQ(flows, 4);
    ASSERT_EQ(calls, 5); /* four launches and clFinish */
    json_decref(evs);
}

static void test_trace_device_layers(void) { check_trace(AIP_TRACE_TORCH_NPU); }

static sqlite3 *open_db(void)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db", result);
    sqlite3 *db;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return NULL;
    return db;
}

static long long q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The table's columns, "a,b,c". */
static void columns(sqlite3 *db, const char *table, char *out, size_t cap)
{
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
    sqlite3_stmt *st;
    out[0] = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "," : "",
                 (const char *)sqlite3_column_text(st, 1));
    sqlite3_finalize(st);
}

static void test_database_device_tables(void)
{
    json_t *evs = analysed(AIP_TRACE_TORCH_NPU);
    ASSERT_TRUE(evs != NULL);
    json_decref(evs);
    sqlite3 *db = open_db();
    ASSERT_TRUE(db != NULL);
    char cols[512];
    columns(db, "TASK", cols, sizeof cols);
    ASSERT_STREQ(cols, "startNs,endNs,deviceId,connectionId,globalTaskId,globalPid,taskType,"
                       "contextId,streamId,taskId,modelId");
    columns(db, "COMPUTE_TASK_INFO", cols, sizeof cols);
    ASSERT_STREQ(cols, "name,globalTaskId,blockNum,mixBlockNum,taskType,opType,inputFormats,"
                       "inputDataTypes,inputShapes,outputFormats,outputDataTypes,outputShapes,"
                       "attrInfo,opState,hf32Eligible,gridDim,blockDim");
    columns(db, "CANN_API", cols, sizeof cols);
    ASSERT_STREQ(cols, "startNs,endNs,type,globalTid,connectionId,name");
    columns(db, "MEMCPY_INFO", cols, sizeof cols);
    ASSERT_STREQ(cols, "globalTaskId,size,memcpyOperation");
    /* types and keys as msprof declares them: every column INTEGER (texts
     * are STRING_IDS ids); CANN_API.connectionId and
     * COMPUTE_TASK_INFO.globalTaskId primary keys */
    ASSERT_EQ(q1(db, "SELECT count(*) FROM pragma_table_info('TASK') WHERE type != 'INTEGER'"), 0);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM pragma_table_info('COMPUTE_TASK_INFO') "
                     "WHERE type != 'INTEGER'"), 0);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM pragma_table_info('CANN_API') WHERE type != 'INTEGER'"),
              0);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM pragma_table_info('MEMCPY_INFO') "
                     "WHERE type != 'INTEGER'"), 0);
    ASSERT_EQ(q1(db, "SELECT name = 'connectionId' FROM pragma_table_info('CANN_API') WHERE pk"), 1);
    ASSERT_EQ(q1(db, "SELECT name = 'globalTaskId' FROM pragma_table_info('COMPUTE_TASK_INFO') "
                     "WHERE pk"), 1);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM TASK"), 5);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM CANN_API"), 5);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM COMPUTE_TASK_INFO"), 3);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM MEMCPY_INFO WHERE size = 4096 AND memcpyOperation = 1"), 1);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM RANK_DEVICE_MAP WHERE deviceId >= 0"), 2);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM NPU_INFO"), 2);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM ENUM_API_TYPE WHERE id = 5000 AND name = 'runtime'"), 1);
    /* exact durations, and the marker has no launching call */
    ASSERT_EQ(q1(db, "SELECT endNs - startNs FROM TASK t JOIN COMPUTE_TASK_INFO c "
                     "USING (globalTaskId) JOIN STRING_IDS s ON s.id = c.name "
                     "WHERE s.value = 'add_kernel'"), 30 * (long long)US);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM TASK WHERE connectionId IS NULL"), 1);
    /* work-groups: ceil(1000 / 64) = 16 */
    ASSERT_EQ(q1(db, "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN STRING_IDS g ON g.id = "
                     "c.gridDim WHERE c.blockNum = 16 AND g.value = '16,1,1'"), 3);
    /* torch op -> CONNECTION_IDS -> CANN_API -> TASK names the kernel */
    ASSERT_EQ(q1(db, "SELECT count(*) FROM PYTORCH_API a JOIN STRING_IDS n ON n.id = a.name "
                     "JOIN CONNECTION_IDS ci ON ci.id = a.connectionId "
                     "JOIN CANN_API c ON c.connectionId = ci.connectionId "
                     "JOIN TASK t ON t.connectionId = c.connectionId "
                     "JOIN COMPUTE_TASK_INFO k ON k.globalTaskId = t.globalTaskId "
                     "JOIN STRING_IDS kn ON kn.id = k.name "
                     "WHERE n.value = 'aten::mm' AND kn.value = 'mm_kernel'"), 1);
    ASSERT_EQ(q1(db, "SELECT count(*) FROM CONNECTION_IDS"), 4);
    /* taskId counts per queue; streams are the queues */
    ASSERT_EQ(q1(db, "SELECT count(DISTINCT streamId) FROM TASK"), 3);
    ASSERT_EQ(q1(db, "SELECT max(taskId) FROM TASK"), 1);
    /* Free sections: the step trace's Free, one definition for both */
    char apath[PATH_MAX + 64];
    snprintf(apath, sizeof apath, "%s/ASCEND_PROFILER_OUTPUT/analysis.db", result);
    sqlite3 *adb = NULL;
    ASSERT_EQ(sqlite3_open_v2(apath, &adb, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ASSERT_EQ(q1(db, "SELECT sum(endNs - startNs) FROM OVERLAP_ANALYSIS WHERE type = 3"),
              q1(adb, "SELECT CAST(round(sum(free) * 1000) AS INTEGER) FROM StepTraceTime "
                      "WHERE deviceId >= 0"));
    sqlite3_close(adb);
    ASSERT_EQ(q1(db, "SELECT sum(endNs - startNs) FROM OVERLAP_ANALYSIS WHERE type = 0"),
              130 * (long long)US); /* mm_kernel on A, relu_kernel on B */
    sqlite3_close(db);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "export_device");
    record();
    static const aip_test_case cases[] = {
        TEST_CASE(test_lanes_and_task_ids),
        TEST_CASE(test_overlap_sections),
        TEST_CASE(test_overlap_shared),
        TEST_CASE(test_trace_device_layers),
        TEST_CASE(test_trace_device_layers_kineto),
        TEST_CASE(test_database_device_tables),
    };
    int rc = result[0] ? aip_test_run(cases, sizeof cases / sizeof cases[0]) : 1;
    if (!result[0])
        fprintf(stderr, "recording failed: %s\n", aip_last_error());
    rm_rf(tmp);
    return rc;
}
