/*
 * test_device_model.c — device activity from the recording interface
 * (src/core/device.h) through the raw file to the analysis model: records
 * round-trip, device times are aligned to the host through the clock
 * samples, tasks link to their launching call and calls to the op open
 * around them, devices and queues are described in every trace, and
 * nothing device-related is recorded when no device activity was asked for.
 * With several threads launching at once, derive (which sorts and links
 * the device side on a second thread beside the host side) gives what a
 * plain search over the records gives.
 *
 * A fake back end stands for OpenCL: its "device clock" is CLOCK_MONOTONIC
 * plus a large fixed offset, so the exact expected alignment is known.
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "collector.h"
#include "device.h"
#include "model.h"
#include "model_helpers.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define FAKE_DEV_OFFSET 5000000000000ll /* device clock = monotonic + 5000 s */
#include "fake_device.h"

static char tmp[PATH_MAX];
static uint32_t dev;
static int started, stopped;

static void sample(void) { fake_device_sample(dev); }

static void fake_start(const aip_config *cfg) { started++; sample(); }
static void fake_stop(void) { stopped++; sample(); }
FAKE_COLLECTOR(fake, fake_start, fake_stop);

/* One launch inside op "aten::mm": API call, then the task it launched. */
static void launch(uint32_t queue, const char *kernel, uint64_t *dev_start, uint64_t *dev_end)
{
    aip_op_info op = {.name = "aten::mm", .sequence_number = -1};
    aip_op_begin(&op);
    uint64_t corr = aip__dev_correlation();
    uint64_t t = aip__dev_api_begin();
    spin_us(20);
    aip__dev_api_end("clEnqueueNDRangeKernel", t, corr, dev);
    *dev_start = device_now();
    spin_us(50);
    *dev_end = device_now();
    aip__dev_task_info ti = {.name = kernel, .device = dev, .queue = queue,
                             .kind = AIP_TASK_KERNEL, .correlation = corr,
                             .queued = *dev_start - 30000, .submit = *dev_start - 10000,
                             .start = *dev_start, .end = *dev_end,
                             .global = {1024, 1, 1}, .local = {64, 1, 1}};
    aip__dev_task(&ti);
    aip_op_end();
}

static void test_round_trip_alignment_and_links(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    aip__collector_register(&fake);
    dev = aip__dev_device(AIP_BACKEND_OPENCL, 0x1234, "Fake GPU", "Acme", AIP_DEVKIND_GPU);
    ASSERT_TRUE(dev != AIP_DEV_NONE);
    ASSERT_EQ(aip__dev_device(AIP_BACKEND_OPENCL, 0x1234, "x", "y", 0), dev);
    uint32_t q = aip__dev_queue(dev, 0xabc, NULL);
    ASSERT_TRUE(q != AIP_DEV_NONE);
    ASSERT_EQ(aip__dev_queue(dev, 0xabc, NULL), q);

    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ(started, 1);
    uint64_t ds[3], de[3];
    for (int i = 0; i < 3; i++)
        launch(q, i == 1 ? "relu" : "matmul", &ds[i], &de[i]);
    aip__dev_memory(dev, 0xbeef, 4096, AIP_DEVMEM_BUFFER);
    aip__dev_memory(dev, 0xbeef, -4096, AIP_DEVMEM_BUFFER);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_EQ(stopped, 1);
    /* profiler_info.json names the device and how its clock was aligned */
    char info_path[PATH_MAX + 64];
    snprintf(info_path, sizeof info_path, "%s/profiler_info.json", aip_session_result_dir(s));
    char *info = aip_test_slurp(info_path, NULL);
    ASSERT_TRUE(info != NULL);
    int named = strstr(info, "\"name\": \"Fake GPU\"") != NULL &&
                strstr(info, "\"clock_sync\": \"device_and_host_timer\"") != NULL &&
                strstr(info, "\"clock_samples\": 2") != NULL &&
                strstr(info, "\"clock_error_bound_ns\": ") != NULL;
    free(info);
    ASSERT_TRUE(named);

    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    ASSERT_EQ(m.n_procs, 1);
    const aip__process *p = &m.procs[0];
    const aip__device *d = aip__model_device(p, dev);
    ASSERT_TRUE(d != NULL);
    ASSERT_STREQ(S(p, d->name), "Fake GPU");
    ASSERT_STREQ(S(p, d->vendor), "Acme");
    ASSERT_EQ(d->kind, AIP_DEVKIND_GPU);
    ASSERT_EQ(d->n_samples, 2);
    ASSERT_TRUE(d->error_ns >= 0 && d->error_ns < 1000000);
    ASSERT_EQ(d->tasks, 3);
    const aip__queue *qu = aip__model_queue(p, q);
    ASSERT_TRUE(qu != NULL);
    ASSERT_EQ(qu->device, dev);
    ASSERT_TRUE(!strncmp(S(p, qu->label), "queue ", 6));
    ASSERT_EQ(p->dev_tasks.n, 3);
    ASSERT_EQ(p->dev_api.n, 3);
    ASSERT_EQ(p->dev_memory.n, 2);
    ASSERT_EQ(p->dev_bad_records, 0);
    ASSERT_EQ(p->dev_unaligned_tasks, 0);
    /* Expected wall time of a device time: monotonic -> wall through the
     * first sync point, within the samples' error bound (+1 ns rounding). */
    int64_t mono_to_wall = (int64_t)(p->first_sync.realtime_ns - p->first_sync.monotonic_ns);
    int64_t bound = d->error_ns + 1 + 1000; /* + tick conversion rounding over the run */
    for (int i = 0; i < 3; i++) {
        const aip__device_task *t = &p->dev_tasks.v[i];
        ASSERT_STREQ(S(p, t->name), i == 1 ? "relu" : "matmul");
        int64_t want = (int64_t)ds[i] - FAKE_DEV_OFFSET + mono_to_wall;
        ASSERT_TRUE(llabs(t->start - want) <= bound);
        /* Durations are exact: one offset for both ends between samples
         * that agree (interpolation moves both by the same amount +-1). */
        ASSERT_EQ(t->end - t->start, (int64_t)(de[i] - ds[i]));
        ASSERT_TRUE(t->queued && t->queued < t->submit && t->submit < t->start);
        ASSERT_EQ(t->global[0], 1024);
        ASSERT_EQ(t->local[0], 64);
        /* launched by the i-th call, which sits inside the i-th aten::mm */
        ASSERT_TRUE(t->api >= 0);
        const aip__device_call *a = &p->dev_api.v[t->api];
        ASSERT_EQ(a->correlation, t->correlation);
        ASSERT_STREQ(S(p, a->name), "clEnqueueNDRangeKernel");
        ASSERT_TRUE(a->parent_span >= 0);
        const aip__span *op = &p->threads[a->parent_thread].spans[a->parent_span];
        ASSERT_STREQ(S(p, op->name), "aten::mm");
        ASSERT_TRUE(op->start <= a->start && a->end <= op->end);
        /* aligned: the kernel ran inside the op that launched it */
        ASSERT_TRUE(op->start <= t->start + bound && t->end <= op->end + bound);
        ASSERT_TRUE(a->end <= t->start + bound);
    }
    ASSERT_TRUE(p->dev_memory.v[0].bytes == 4096 && p->dev_memory.v[1].bytes == -4096);
    ASSERT_TRUE(m.first_ns <= p->dev_tasks.v[0].start && p->dev_tasks.v[2].end <= m.last_ns);
    aip__model_free(&m);

    /* A second trace describes the device and queue again. */
    ASSERT_EQ(aip_session_start(s), AIP_OK);
    launch(q, "softmax", &ds[0], &de[0]);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_EQ(load(s, &m), 0);
    p = &m.procs[0];
    ASSERT_TRUE(aip__model_device(p, dev) != NULL);
    ASSERT_TRUE(aip__model_queue(p, q) != NULL);
    ASSERT_EQ(p->dev_tasks.n, 1);
    aip__model_free(&m);
    aip_session_destroy(s);
}

/* ---- several threads launching: derive against plain searches ------- */

#define MT_THREADS 4
#define MT_LAUNCHES 40

static uint32_t mt_queue[MT_THREADS];

static void *mt_thread(void *arg)
{
    size_t i = (size_t)arg;
    for (int k = 0; k < MT_LAUNCHES; k++) {
        aip_op_info outer = {.name = "block", .sequence_number = -1};
        aip_op_begin(&outer);
        spin_us(2);
        uint64_t ds, de;
        launch(mt_queue[i], k % 2 ? "relu" : "matmul", &ds, &de);
        spin_us(2);
        aip_op_end();
    }
    return NULL;
}

/* The innermost op open on thread `ti` at `ts` (latest start, then
 * earliest end), or -1. */
static int64_t innermost_at(const aip__process *p, uint32_t ti, int64_t ts)
{
    const aip__thread *t = &p->threads[ti];
    int64_t best = -1;
    for (size_t i = 0; i < t->n_spans; i++) {
        const aip__span *sp = &t->spans[i];
        if (sp->kind != AIP_SPAN_OP || sp->start > ts || sp->end <= ts)
            continue;
        if (best < 0 || sp->start > t->spans[best].start ||
            (sp->start == t->spans[best].start && sp->end < t->spans[best].end))
            best = (int64_t)i;
    }
    return best;
}

static void test_threads_derive_as_searched(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    for (size_t i = 0; i < MT_THREADS; i++) {
        mt_queue[i] = aip__dev_queue(dev, 0x5000 + i, NULL);
        ASSERT_TRUE(mt_queue[i] != AIP_DEV_NONE);
    }
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    pthread_t th[MT_THREADS];
    for (size_t i = 0; i < MT_THREADS; i++)
        ASSERT_EQ(pthread_create(&th[i], NULL, mt_thread, (void *)i), 0);
    for (size_t i = 0; i < MT_THREADS; i++)
        pthread_join(th[i], NULL);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->dev_tasks.n, MT_THREADS * MT_LAUNCHES);
    ASSERT_EQ(p->dev_api.n, MT_THREADS * MT_LAUNCHES);
    int ok = 1;
    for (size_t i = 1; i < p->dev_tasks.n; i++) /* tasks by start */
        ok &= p->dev_tasks.v[i - 1].start <= p->dev_tasks.v[i].start;
    for (size_t i = 1; i < p->dev_api.n; i++) { /* calls by thread, then start */
        const aip__device_call *a = &p->dev_api.v[i - 1], *b = &p->dev_api.v[i];
        ok &= a->thread < b->thread || (a->thread == b->thread && a->start <= b->start);
    }
    ASSERT_TRUE(ok);
    for (size_t i = 0; i < p->dev_api.n; i++) { /* each call inside its aten::mm */
        const aip__device_call *a = &p->dev_api.v[i];
        int64_t want = innermost_at(p, a->thread, a->start);
        ok &= want >= 0 && a->parent_thread == a->thread && a->parent_span == want &&
              !strcmp(S(p, p->threads[a->thread].spans[want].name), "aten::mm");
    }
    ASSERT_TRUE(ok);
    for (size_t i = 0; i < p->dev_tasks.n; i++) { /* each task's call by correlation */
        const aip__device_task *t = &p->dev_tasks.v[i];
        int64_t want = -1;
        for (size_t a = 0; a < p->dev_api.n && want < 0; a++)
            if (p->dev_api.v[a].correlation == t->correlation)
                want = (int64_t)a;
        ok &= want >= 0 && t->api == want && t->step == -1;
    }
    ASSERT_TRUE(ok);
    /* the step trace is the device's (no steps: one row over the profile) */
    ASSERT_EQ(m.n_step_rows, 1);
    ASSERT_EQ(m.step_rows[0].device, (int32_t)dev);
    ASSERT_TRUE(m.step_rows[0].computing > 0);
    ASSERT_EQ(aip__model_queue(p, mt_queue[0])->tasks, MT_LAUNCHES);
    aip__model_free(&m);
    aip_session_destroy(s);
}

static void test_host_only_records_no_device_data(void)
{
    aip_config c;
    base_config(&c, tmp); /* activities = CPU */
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    ASSERT_TRUE(!aip__dev_recording());
    int before = started;
    uint64_t ds, de;
    launch(0, "matmul", &ds, &de);
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    ASSERT_EQ(started, before); /* back ends are not started */
    aip__model m;
    ASSERT_EQ(load(s, &m), 0);
    ASSERT_EQ(m.procs[0].dev_tasks.n, 0);
    ASSERT_EQ(m.procs[0].dev_api.n, 0);
    ASSERT_EQ(m.procs[0].n_threads, 1); /* the op is still there */
    aip__model_free(&m);
    aip_session_destroy(s);
}

static void test_registry_bounds(void)
{
    ASSERT_EQ(aip__dev_queue(AIP_DEV_MAX_DEVICES + 5, 1, "x"), AIP_DEV_NONE);
    uint32_t a = aip__dev_queue(dev, 0x777, "mine");
    aip__dev_queue_forget(0x777);
    uint32_t b = aip__dev_queue(dev, 0x777, "mine again");
    ASSERT_TRUE(a != AIP_DEV_NONE && b != AIP_DEV_NONE && a != b);
    /* nothing records: every call returns at once */
    ASSERT_EQ(aip__dev_api_begin(), 0);
    aip__dev_api_end("clFinish", 0, 0, dev);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "device_model");
    static const aip_test_case cases[] = {
        TEST_CASE(test_round_trip_alignment_and_links),
        TEST_CASE(test_threads_derive_as_searched),
        TEST_CASE(test_host_only_records_no_device_data),
        TEST_CASE(test_registry_bounds),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
