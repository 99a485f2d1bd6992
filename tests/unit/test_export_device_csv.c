/*
 * test_export_device_csv.c — the CSV files of a profile with device
 * activity, checked column by column against what was recorded: a fake
 * back end (device clock = CLOCK_MONOTONIC + a fixed offset) records
 * through src/core/device.h what an OpenCL back end records, in a session
 * with a schedule, and the result directory is analysed as `aiprof
 * analyse` does.
 *
 * Per step (ProfilerStep#0, #1), on the main thread:
 *   aten::matmul (shapes, dtypes)  -> aten::mm -> "mm" kernel, queue 0, 64 groups
 *                                  -> "add" kernel, queue 1, local size unset
 *   aten::view                     (no device work)
 *   aten::copy_                    -> "Memcpy HtoD", queue 0
 *   clFinish                       (launches nothing)
 * Durations are the device's own, so every Duration(us) and every device
 * sum must equal the recorded values exactly (to the ns, 3 decimals);
 * times that depend on clock alignment are compared with the model.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "collector.h"
#include "device.h"
#include "model.h"
#include "csv_read.h"
#include "own_profile.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_DEV_OFFSET 7000000000000ll
#include "fake_device.h"
#define STEPS 2

static char tmp[PATH_MAX];
static uint32_t dev, q0, q1;

static void sample(void) { fake_device_sample(dev); }

static void fake_start(const aip_config *cfg) { sample(); }
FAKE_COLLECTOR(fake, fake_start, sample);

/* What one launch recorded. */
typedef struct launch_rec {
    const char *name;
    int step;
    uint32_t queue;
    int64_t dur;
} launch_rec;

static launch_rec rec[64];
static int n_rec;

/* The call `api` launching task `name` that runs `us` on `queue`. */
static void launch(int step, const char *name, uint8_t kind, uint32_t queue, unsigned us,
                   uint32_t local)
{
    uint64_t corr = aip__dev_correlation();
    uint64_t t = aip__dev_api_begin();
    spin_us(2);
    aip__dev_api_end(kind == AIP_TASK_KERNEL ? "clEnqueueNDRangeKernel" : "clEnqueueWriteBuffer",
                     t, corr, dev);
    uint64_t start = device_now();
    spin_us(us);
    uint64_t end = device_now();
    aip__dev_task_info ti = {.name = name, .device = dev, .queue = queue, .kind = kind,
                             .direction = kind == AIP_TASK_MEMCPY ? AIP_COPY_H2D : 0,
                             .correlation = corr, .start = start, .end = end,
                             .bytes = kind == AIP_TASK_MEMCPY ? 4096 : 0};
    if (kind == AIP_TASK_KERNEL) {
        ti.global[0] = 4096;
        ti.global[1] = ti.global[2] = 1;
        ti.local[0] = local;
        ti.local[1] = ti.local[2] = local ? 1 : 0;
    }
    aip__dev_task(&ti);
    rec[n_rec++] = (launch_rec){name, step, queue, (int64_t)(end - start)};
}

static void op_begin(const char *name, const char *shapes, const char *dtypes)
{
    aip_op_info op = {.name = name, .sequence_number = -1, .input_shapes = shapes,
                      .input_dtypes = dtypes};
    aip_op_begin(&op);
}

static const char *us3(int64_t ns)
{
    static char b[8][40];
    static int i;
    char *s = b[i++ % 8];
    snprintf(s, 40, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
    return s;
}

/* ---- the profile --------------------------------------------------------- */

static void record_steps(aip_session *s)
{
    for (int st = 0; st < STEPS; st++) {
        op_begin("aten::matmul", "[[2, 3], [3, 4]]", "[float, float]");
        op_begin("aten::mm", NULL, NULL);
        launch(st, "mm", AIP_TASK_KERNEL, q0, 40, 64);
        aip_op_end();
        launch(st, "add", AIP_TASK_KERNEL, q1, 20, 0);
        aip_op_end();
        op_begin("aten::view", NULL, NULL);
        spin_us(3);
        aip_op_end();
        op_begin("aten::copy_", NULL, NULL);
        launch(st, "Memcpy HtoD", AIP_TASK_MEMCPY, q0, 10, 0);
        aip_op_end();
        uint64_t t = aip__dev_api_begin();
        spin_us(1);
        aip__dev_api_end("clFinish", t, 0, dev);
        ASSERT_EQ(aip_session_step(s), AIP_OK);
    }
}

static void check_kernel_details(const char *dir, const aip__model *m)
{
    csv c;
    ASSERT_EQ(csv_read(&c, dir, "kernel_details.csv"), 0);
    static const char *const header[] = {
        "Step Id", "Device_id", "Model ID", "Task ID", "Stream ID", "Name", "Type", "OP State",
        "Accelerator Core", "Start Time(us)", "Duration(us)", "Wait Time(us)", "Block Num",
        "Mix Block Num", "HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats",
        "Output Shapes", "Output Data Types", "Output Formats"};
    ASSERT_EQ(c.cols, sizeof header / sizeof header[0]);
    for (size_t i = 0; i < c.cols; i++)
        ASSERT_STREQ(c.cell[i], header[i]);
    ASSERT_EQ(c.rows, (size_t)n_rec); /* one row per launch */
    const aip__process *p = &m->procs[0];
    ASSERT_EQ(p->dev_tasks.n, (size_t)n_rec);
    int64_t queue_end[2] = {INT64_MIN, INT64_MIN};
    unsigned on_queue[8] = {0}; /* tasks seen per queue: the Task ID */
    for (size_t r = 0; r < c.rows; r++) {
        /* the fake device runs each task right after its launch: file
         * order = launch order */
        const launch_rec *l = &rec[r];
        const aip__device_task *t = &p->dev_tasks.v[r];
        char want[64];
        snprintf(want, sizeof want, "%d", l->step);
        ASSERT_STREQ(at(&c, r, "Step Id"), want);
        snprintf(want, sizeof want, "%u", dev);
        ASSERT_STREQ(at(&c, r, "Device_id"), want);
        snprintf(want, sizeof want, "%u", on_queue[l->queue % 8]++);
        ASSERT_STREQ(at(&c, r, "Task ID"), want);
        snprintf(want, sizeof want, "%u", l->queue);
        ASSERT_STREQ(at(&c, r, "Stream ID"), want);
        ASSERT_STREQ(at(&c, r, "Name"), l->name);
        int kernel = strcmp(l->name, "Memcpy HtoD") != 0;
        ASSERT_STREQ(at(&c, r, "Type"), kernel ? l->name : "MEMCPY_ASYNC");
        ASSERT_STREQ(at(&c, r, "Accelerator Core"), "GPU");
        /* durations: exactly the device's */
        ASSERT_STREQ(at(&c, r, "Duration(us)"), us3(l->dur));
        snprintf(want, sizeof want, "%s\t", us3(t->start));
        ASSERT_STREQ(at(&c, r, "Start Time(us)"), want);
        /* Wait Time: since the previous task of the queue ended */
        int64_t *qe = &queue_end[l->queue == q1];
        ASSERT_STREQ(at(&c, r, "Wait Time(us)"),
                     us3(*qe == INT64_MIN || t->start < *qe ? 0 : t->start - *qe));
        *qe = t->end;
        int is_mm = !strcmp(l->name, "mm");
        ASSERT_STREQ(at(&c, r, "Block Num"), is_mm ? "64" : "N/A"); /* add: local unset */
        int is_add = !strcmp(l->name, "add");
        /* shapes of the launching op: only aten::matmul has them (add) */
        ASSERT_STREQ(at(&c, r, "Input Shapes"), is_add ? "[[2, 3], [3, 4]]" : "N/A");
        ASSERT_STREQ(at(&c, r, "Input Data Types"), is_add ? "[float, float]" : "N/A");
        /* kernels are "static" (msprof's advisor reads no static op as "all
         * dynamic shape"); copies have no state */
        ASSERT_STREQ(at(&c, r, "OP State"), kernel ? "static" : "N/A");
        static const char *const na[] = {"Model ID", "Mix Block Num",
                                         "HF32 Eligible", "Input Formats", "Output Shapes",
                                         "Output Data Types", "Output Formats"};
        for (size_t k = 0; k < sizeof na / sizeof na[0]; k++)
            ASSERT_STREQ(at(&c, r, na[k]), "N/A");
    }
    csv_free(&c);
}

static void check_operator_details(const char *dir)
{
    csv c;
    ASSERT_EQ(csv_read(&c, dir, "operator_details.csv"), 0);
    ASSERT_EQ(c.cols, 9);
    ASSERT_EQ(c.rows, (size_t)(4 * STEPS));
    for (size_t r = 0; r < c.rows; r++) {
        int st = (int)(r / 4);
        const launch_rec *l = &rec[3 * st]; /* mm, add, copy of this step */
        const char *name = at(&c, r, "Name");
        const char *self = at(&c, r, "Device Self Duration(us)");
        const char *total = at(&c, r, "Device Total Duration(us)");
        if (!strcmp(name, "aten::matmul")) { /* add itself; mm via aten::mm */
            ASSERT_STREQ(self, us3(l[1].dur));
            ASSERT_STREQ(total, us3(l[0].dur + l[1].dur));
        } else if (!strcmp(name, "aten::mm")) {
            ASSERT_STREQ(self, us3(l[0].dur));
            ASSERT_STREQ(total, us3(l[0].dur));
        } else if (!strcmp(name, "aten::copy_")) {
            ASSERT_STREQ(self, us3(l[2].dur));
            ASSERT_STREQ(total, us3(l[2].dur));
        } else {
            ASSERT_STREQ(name, "aten::view"); /* no device work: empty, not 0 */
            ASSERT_STREQ(self, "");
            ASSERT_STREQ(total, "");
            ASSERT_STREQ(at(&c, r, "Device Self Duration With AICore(us)"), "");
            ASSERT_STREQ(at(&c, r, "Device Total Duration With AICore(us)"), "");
            continue;
        }
        ASSERT_STREQ(at(&c, r, "Device Self Duration With AICore(us)"), "N/A");
        ASSERT_STREQ(at(&c, r, "Device Total Duration With AICore(us)"), "N/A");
    }
    csv_free(&c);
}

static void check_op_statistic(const char *dir)
{
    csv c;
    ASSERT_EQ(csv_read(&c, dir, "op_statistic.csv"), 0);
    ASSERT_EQ(c.cols, 9);
    ASSERT_EQ(c.rows, 3); /* mm, add, MEMCPY_ASYNC */
    int64_t total[3] = {0}, min[3] = {INT64_MAX, INT64_MAX, INT64_MAX}, max[3] = {0};
    for (int i = 0; i < n_rec; i++) {
        int k = i % 3;
        total[k] += rec[i].dur;
        min[k] = rec[i].dur < min[k] ? rec[i].dur : min[k];
        max[k] = rec[i].dur > max[k] ? rec[i].dur : max[k];
    }
    static const char *const type[3] = {"mm", "add", "MEMCPY_ASYNC"};
    for (size_t r = 0; r < c.rows; r++) {
        int k = 0;
        while (k < 3 && strcmp(at(&c, r, "OP Type"), type[k]))
            k++;
        ASSERT_TRUE(k < 3);
        if (k == 3)
            break;
        char want[32];
        snprintf(want, sizeof want, "%u", dev);
        ASSERT_STREQ(at(&c, r, "Device_id"), want);
        ASSERT_STREQ(at(&c, r, "Core Type"), "GPU");
        ASSERT_STREQ(at(&c, r, "Count"), STEPS == 2 ? "2" : "?");
        ASSERT_STREQ(at(&c, r, "Total Time(us)"), us3(total[k]));
        ASSERT_STREQ(at(&c, r, "Min Time(us)"), us3(min[k]));
        ASSERT_STREQ(at(&c, r, "Max Time(us)"), us3(max[k]));
        ASSERT_STREQ(at(&c, r, "Avg Time(us)"), us3(total[k] / STEPS));
    }
    for (size_t r = 1; r < c.rows; r++) /* longest first */
        ASSERT_TRUE(atof(at(&c, r - 1, "Total Time(us)")) >= atof(at(&c, r, "Total Time(us)")));
    csv_free(&c);
}

static void check_api_statistic(const char *dir)
{
    csv c;
    ASSERT_EQ(csv_read(&c, dir, "api_statistic.csv"), 0);
    int kernels = 0, writes = 0, finish = 0;
    for (size_t r = 0; r < c.rows; r++) {
        if (strcmp(at(&c, r, "Level"), "runtime"))
            continue;
        ASSERT_STREQ(at(&c, r, "Device_id"), "host");
        const char *api = at(&c, r, "API Name"), *n = at(&c, r, "Count");
        if (!strcmp(api, "clEnqueueNDRangeKernel"))
            kernels = atoi(n);
        else if (!strcmp(api, "clEnqueueWriteBuffer"))
            writes = atoi(n);
        else if (!strcmp(api, "clFinish"))
            finish = atoi(n);
    }
    ASSERT_EQ(kernels, 2 * STEPS);
    ASSERT_EQ(writes, STEPS);
    ASSERT_EQ(finish, STEPS);
    csv_free(&c);
}

static void check_step_trace(const char *dir, const aip__model *m)
{
    csv c;
    ASSERT_EQ(csv_read(&c, dir, "step_trace_time.csv"), 0);
    ASSERT_EQ(c.cols, 11);
    ASSERT_EQ(c.rows, (size_t)STEPS);
    ASSERT_EQ(m->n_steps, (size_t)STEPS);
    ASSERT_EQ(m->n_step_rows, (size_t)STEPS);
    const aip__process *p = &m->procs[0];
    for (size_t r = 0; r < c.rows; r++) {
        char want[32];
        snprintf(want, sizeof want, "%u", dev);
        ASSERT_STREQ(at(&c, r, "Device_id"), want);
        snprintf(want, sizeof want, "%zu", r);
        ASSERT_STREQ(at(&c, r, "Step"), want);
        /* the fake device runs one task at a time: Computing is the sum
         * of the step's kernel durations, exactly */
        const launch_rec *l = &rec[3 * r];
        int64_t computing = l[0].dur + l[1].dur;
        ASSERT_STREQ(at(&c, r, "Computing"), us3(computing));
        const aip__step *st = &m->steps[r];
        int64_t end = st->end;
        for (int k = 0; k < 3; k++)
            if (p->dev_tasks.v[3 * r + (size_t)k].end > end)
                end = p->dev_tasks.v[3 * r + (size_t)k].end;
        ASSERT_STREQ(at(&c, r, "Free"), us3(end - st->start - computing));
        ASSERT_STREQ(at(&c, r, "Stage"), us3(end - st->start));
        ASSERT_STREQ(at(&c, r, "Preparing"), us3(p->dev_tasks.v[3 * r].start - st->start));
        ASSERT_STREQ(at(&c, r, "Communication"), "0.000");
        ASSERT_STREQ(at(&c, r, "Bubble"), "0.000");
        /* the model's rows are what analysis.db's StepTraceTime prints */
        ASSERT_EQ(m->step_rows[r].device, (int32_t)dev);
        ASSERT_EQ(m->step_rows[r].computing, computing);
    }
    csv_free(&c);
}

static void test_device_csv_columns(void)
{
    aip_config c;
    scheduled_config(&c, tmp, (aip_schedule){.wait = 0, .active = STEPS, .repeat = 1});
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    c.record_shapes = 1;
    c.profiler_level = AIP_LEVEL1;
    n_rec = 0;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    record_steps(s);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    aip__model m;
    ASSERT_EQ(load_own_raw(dir, &m), 0);
    if (dir && m.n_procs == 1) {
        check_kernel_details(dir, &m);
        check_operator_details(dir);
        check_op_statistic(dir);
        check_api_statistic(dir);
        check_step_trace(dir, &m);
    }
    aip__model_free(&m);
    aip_session_destroy(s);
}

/* Without a schedule: no Step Id column, one step-trace row per device
 * spanning the whole profile. */
static void test_device_csv_without_steps(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    n_rec = 0;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    op_begin("aten::mm", NULL, NULL);
    launch(-1, "mm", AIP_TASK_KERNEL, q0, 30, 64);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    csv k, st;
    ASSERT_EQ(csv_read(&k, dir, "kernel_details.csv"), 0);
    ASSERT_EQ(col(&k, "Step Id"), -1);
    ASSERT_STREQ(k.cell[0], "Device_id");
    ASSERT_EQ(k.rows, 1);
    ASSERT_STREQ(at(&k, 0, "Duration(us)"), us3(rec[0].dur));
    ASSERT_EQ(csv_read(&st, dir, "step_trace_time.csv"), 0);
    ASSERT_EQ(st.rows, 1);
    ASSERT_STREQ(at(&st, 0, "Step"), "");
    ASSERT_STREQ(at(&st, 0, "Computing"), us3(rec[0].dur));
    aip__model m;
    ASSERT_EQ(load_own_raw(dir, &m), 0);
    ASSERT_EQ(m.n_step_rows, 1);
    if (m.n_step_rows == 1 && m.n_procs == 1) {
        const aip__device_task *t = &m.procs[0].dev_tasks.v[0];
        ASSERT_STREQ(at(&st, 0, "Preparing"), us3(t->start - m.first_ns));
        ASSERT_STREQ(at(&st, 0, "Free"), us3(m.last_ns - m.first_ns - rec[0].dur));
    }
    aip__model_free(&m);
    csv_free(&k);
    csv_free(&st);
    aip_session_destroy(s);
}

/* Overlapping kernels on two queues count once in Computing; a task on an
 * out-of-order queue that starts before the previous one ended waited 0;
 * a kernel name with CSV syntax and a formula stays one cell. */
static void test_overlapping_tasks(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    op_begin("aten::mm", NULL, NULL);
    uint64_t base = device_now();
    /* device times given outright: [0, 100) on q0, [50, 150) on q1,
     * [60, 80) on q0 again (out of order) */
    const uint64_t span[3][2] = {{0, 100000}, {50000, 150000}, {60000, 80000}};
    const uint32_t queue[3] = {q0, q1, q0};
    for (int i = 0; i < 3; i++) {
        uint64_t corr = aip__dev_correlation();
        uint64_t t = aip__dev_api_begin();
        aip__dev_api_end("clEnqueueNDRangeKernel", t, corr, dev);
        /* a hostile kernel name: quoted, and kept from spreadsheets */
        aip__dev_task_info ti = {.name = i == 1 ? "=k,\"x\"" : "k", .device = dev,
                                 .queue = queue[i],
                                 .kind = AIP_TASK_KERNEL, .correlation = corr,
                                 .start = base + span[i][0], .end = base + span[i][1]};
        aip__dev_task(&ti);
    }
    spin_us(200);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    aip__model m;
    ASSERT_EQ(load_own_raw(dir, &m), 0);
    csv k;
    ASSERT_EQ(csv_read(&k, dir, "kernel_details.csv"), 0);
    ASSERT_EQ(k.rows, 3);
    if (m.n_procs == 1 && m.procs[0].dev_tasks.n == 3 && k.rows == 3) {
        const aip__device_task *t = m.procs[0].dev_tasks.v;
        ASSERT_STREQ(at(&k, 2, "Wait Time(us)"), "0.000"); /* started inside task 0 */
        ASSERT_STREQ(at(&k, 2, "Duration(us)"), "20.000");
        ASSERT_STREQ(at(&k, 1, "Duration(us)"), "100.000");
        ASSERT_STREQ(at(&k, 1, "Name"), "'=k,\"x\"");
        ASSERT_STREQ(at(&k, 1, "Type"), "'=k,\"x\"");
        ASSERT_STREQ(at(&k, 2, "Block Num"), "N/A"); /* no work sizes given */
        /* Computing: the union [0, 150) in aligned times */
        ASSERT_EQ(m.n_step_rows, 1);
        ASSERT_EQ(m.step_rows[0].computing, t[1].end - t[0].start);
        /* = 150 us within the alignment's error (starts are mapped through
         * an offset interpolated between the samples) */
        int64_t d = m.step_rows[0].computing - 150000;
        int64_t bound = 2 * aip__model_device(&m.procs[0], dev)->error_ns + 2;
        ASSERT_TRUE(d >= -bound && d <= bound);
        /* aten::mm launched all three: total = the sum, not the union */
        csv o;
        ASSERT_EQ(csv_read(&o, dir, "operator_details.csv"), 0);
        ASSERT_STREQ(at(&o, 0, "Device Total Duration(us)"), "220.000");
        ASSERT_STREQ(at(&o, 0, "Device Self Duration(us)"), "220.000");
        csv_free(&o);
    }
    csv_free(&k);
    aip__model_free(&m);
    aip_session_destroy(s);
}

/* Two devices: op_statistic groups the same kernel name per device (Ratio
 * per device, Core Type each device's kind), and step_trace_time has a row
 * for every device and step, also where a device had no work. */
static void test_two_devices(void)
{
    uint32_t cpu = aip__dev_device(AIP_BACKEND_OPENCL, 0x78, "Fake CPU", "aiprof tests",
                                   AIP_DEVKIND_CPU);
    uint32_t qc = aip__dev_queue(cpu, 0x200, "cpu queue");
    ASSERT_TRUE(cpu != AIP_DEV_NONE && qc != AIP_DEV_NONE && cpu != dev);
    aip_config c;
    scheduled_config(&c, tmp, (aip_schedule){.wait = 0, .active = 2, .repeat = 1});
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    for (int st = 0; st < 2; st++) {
        op_begin("aten::mm", NULL, NULL);
        /* step 0: "mm" on both devices; step 1: only on the GPU */
        for (int k = 0; k < (st == 0 ? 2 : 1); k++) {
            uint64_t corr = aip__dev_correlation();
            uint64_t t = aip__dev_api_begin();
            aip__dev_api_end("clEnqueueNDRangeKernel", t, corr, k ? cpu : dev);
            spin_us(5); /* well after the step began, beyond the alignment error */
            uint64_t at = device_now();
            aip__dev_task_info ti = {.name = "mm", .device = k ? cpu : dev,
                                     .queue = k ? qc : q0, .kind = AIP_TASK_KERNEL,
                                     .correlation = corr, .start = at,
                                     .end = at + (k ? 70000 : 30000)};
            aip__dev_task(&ti);
        }
        aip_op_end();
        ASSERT_EQ(aip_session_step(s), AIP_OK);
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    csv os, st;
    ASSERT_EQ(csv_read(&os, dir, "op_statistic.csv"), 0);
    ASSERT_EQ(os.rows, 2);
    char gpu_id[16], cpu_id[16];
    snprintf(gpu_id, sizeof gpu_id, "%u", dev);
    snprintf(cpu_id, sizeof cpu_id, "%u", cpu);
    for (size_t r = 0; r < os.rows; r++) {
        int is_cpu = !strcmp(at(&os, r, "Device_id"), cpu_id);
        ASSERT_TRUE(is_cpu || !strcmp(at(&os, r, "Device_id"), gpu_id));
        ASSERT_STREQ(at(&os, r, "OP Type"), "mm");
        ASSERT_STREQ(at(&os, r, "Core Type"), is_cpu ? "CPU" : "GPU");
        ASSERT_STREQ(at(&os, r, "Count"), is_cpu ? "1" : "2");
        ASSERT_STREQ(at(&os, r, "Total Time(us)"), is_cpu ? "70.000" : "60.000");
        ASSERT_STREQ(at(&os, r, "Ratio(%)"), "100.00");
    }
    ASSERT_EQ(csv_read(&st, dir, "step_trace_time.csv"), 0);
    ASSERT_EQ(st.rows, 4); /* 2 devices x 2 steps, devices by id */
    const char *first = dev < cpu ? gpu_id : cpu_id, *second = dev < cpu ? cpu_id : gpu_id;
    for (size_t r = 0; r < st.rows && st.rows == 4; r++) {
        ASSERT_STREQ(at(&st, r, "Device_id"), r < 2 ? first : second);
        ASSERT_STREQ(at(&st, r, "Step"), r % 2 ? "1" : "0");
        int is_cpu = !strcmp(at(&st, r, "Device_id"), cpu_id);
        const char *want = is_cpu ? (r % 2 ? "0.000" : "70.000") : "30.000";
        ASSERT_STREQ(at(&st, r, "Computing"), want);
        if (is_cpu && r % 2) /* idle device: the whole step is Free */
            ASSERT_STREQ(at(&st, r, "Free"), at(&st, r, "Stage"));
    }
    csv_free(&os);
    csv_free(&st);
    aip_session_destroy(s);
}

/* A host-only profile keeps its host-only files: no kernel_details.csv,
 * Device_id host, empty device cells. */
static void test_host_only_unchanged(void)
{
    aip_config c;
    base_config(&c, tmp);
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    op_begin("aten::mm", NULL, NULL);
    spin_us(5);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/kernel_details.csv", dir);
    ASSERT_TRUE(access(path, F_OK) != 0);
    csv st, o, os;
    ASSERT_EQ(csv_read(&st, dir, "step_trace_time.csv"), 0);
    ASSERT_STREQ(at(&st, 0, "Device_id"), "host");
    ASSERT_EQ(csv_read(&o, dir, "operator_details.csv"), 0);
    ASSERT_STREQ(at(&o, 0, "Device Total Duration(us)"), "");
    ASSERT_EQ(csv_read(&os, dir, "op_statistic.csv"), 0);
    ASSERT_STREQ(at(&os, 0, "Device_id"), "host");
    ASSERT_STREQ(at(&os, 0, "Core Type"), "CPU");
    csv_free(&st);
    csv_free(&o);
    csv_free(&os);
    aip_session_destroy(s);
}

static void setup(void)
{
    make_tmpdir(tmp, sizeof tmp, "device_csv");
    aip__collector_register(&fake);
    dev = aip__dev_device(AIP_BACKEND_OPENCL, 0x77, "Fake GPU", "aiprof tests", AIP_DEVKIND_GPU);
    q0 = aip__dev_queue(dev, 0x100, "queue 0");
    q1 = aip__dev_queue(dev, 0x101, "queue 1");
}

/* Input Shapes / Input Data Types are the task's own inputs (the seed's
 * kernel_details table): a kernel that is the only task of its op has the
 * op's; the two kernels of one op, and a copy, have none (N/A).  Before,
 * every task carried its launching op's shapes. */
static void test_kernel_input_shapes(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    c.record_shapes = 1;
    n_rec = 0;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    op_begin("aten::addmm", "[[4], [2, 3], [3, 4]]", "[float, float, float]");
    launch(-1, "gemm", AIP_TASK_KERNEL, q0, 10, 64);
    launch(-1, "bias", AIP_TASK_KERNEL, q0, 10, 64);
    aip_op_end();
    op_begin("aten::copy_", "[[1024], [1024]]", "[float, float]");
    launch(-1, "Memcpy HtoD", AIP_TASK_MEMCPY, q0, 10, 0);
    aip_op_end();
    op_begin("aten::relu", "[[2, 4]]", "[float]");
    launch(-1, "relu", AIP_TASK_KERNEL, q0, 10, 64);
    aip_op_end();
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    csv k;
    ASSERT_EQ(csv_read(&k, dir, "kernel_details.csv"), 0);
    ASSERT_EQ(k.rows, 4);
    for (size_t r = 0; r < k.rows && k.rows == 4; r++) {
        int relu = !strcmp(at(&k, r, "Name"), "relu");
        ASSERT_STREQ(at(&k, r, "Input Shapes"), relu ? "[[2, 4]]" : "N/A");
        ASSERT_STREQ(at(&k, r, "Input Data Types"), relu ? "[float]" : "N/A");
    }
    csv_free(&k);
    aip_session_destroy(s);
}

int main(void)
{
    setup();
    static const aip_test_case cases[] = {
        TEST_CASE(test_device_csv_columns),
        TEST_CASE(test_device_csv_without_steps),
        TEST_CASE(test_overlapping_tasks),
        TEST_CASE(test_two_devices),
        TEST_CASE(test_host_only_unchanged),
        TEST_CASE(test_kernel_input_shapes),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
