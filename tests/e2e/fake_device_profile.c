/*
 * fake_device_profile.c — writes a result directory with device activity
 * without any device: a fake back end records through src/core/device.h
 * exactly what an OpenCL back end records (API calls, kernels, copies in
 * two queues, device memory, clock samples), with a "device clock" that
 * is CLOCK_MONOTONIC + 1000 s.  Tests of the device outputs (CSV, JSON,
 * databases) analyse it where no OpenCL device exists, and know its exact
 * shape:
 *
 *   per step (N = 0..steps-1; ProfilerStep#N spans only with `schedule`),
 *   on the main thread:
 *     aten::to       -> clEnqueueWriteBuffer -> "Memcpy HtoD" (1 MiB, queue 0)
 *     aten::matmul   -> clEnqueueNDRangeKernel -> "matmul"  (queue 0, 100 us)
 *     aten::relu     -> clEnqueueNDRangeKernel -> "relu"    (queue 1, 30 us)
 *     aten::view     (no device work)
 *     aten::softmax  -> clEnqueueNDRangeKernel -> "softmax" (queue 0, 50 us)
 *     aten::item     -> clEnqueueReadBuffer -> "Memcpy DtoH" (4 KiB, queue 0)
 *                    -> clFinish (launches nothing)
 *   device memory: 1 MiB buffer allocated before the steps, freed after
 *   the last one's clFinish.
 *
 * Usage: fake_device_profile DIR [STEPS [schedule]]   (prints the result
 * directory).  With `schedule` the session has schedule(wait=0, active=
 * STEPS, repeat=1): the steps are ProfilerStep#0.. (torch's numbering) and
 * the trace is saved at the last step; without it, no ProfilerStep# spans
 * (torch's default schedule).
 */
#include "aiprof.h"
#include "clock.h"
#include "collector.h"
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_DEV_OFFSET 1000000000000ull
#include "fake_device.h"

static uint32_t dev, q0, q1;

static void sample(void) { fake_device_sample(dev); }

static void fake_start(const aip_config *cfg) { sample(); }
FAKE_COLLECTOR(fake, fake_start, sample);

/* Inside op `op`: the call `api` launching a task of `kind` that runs
 * `us` microseconds on `queue` (the device runs it right after the call:
 * the fake device executes synchronously). */
static void launch(const char *op, const char *api, const char *task, uint8_t kind,
                   uint8_t dir, uint32_t queue, unsigned us, uint64_t bytes)
{
    aip_op_info info = {.name = op, .sequence_number = -1};
    aip_op_begin(&info);
    spin_us(5);
    uint64_t corr = aip__dev_correlation();
    uint64_t t = aip__dev_api_begin();
    spin_us(3);
    aip__dev_api_end(api, t, corr, dev);
    uint64_t queued = device_now();
    spin_us(2);
    uint64_t start = device_now();
    spin_us(us);
    uint64_t end = device_now();
    aip__dev_task_info ti = {.name = task, .device = dev, .queue = queue, .kind = kind,
                             .direction = dir, .correlation = corr, .queued = queued,
                             .submit = queued + 1000, .start = start, .end = end,
                             .bytes = bytes};
    if (kind == AIP_TASK_KERNEL) {
        ti.global[0] = 4096;
        ti.global[1] = ti.global[2] = 1;
        ti.local[0] = 64;
        ti.local[1] = ti.local[2] = 1;
    }
    aip__dev_task(&ti);
    aip_op_end();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fake_device_profile DIR [STEPS [schedule]]\n");
        return 2;
    }
    int steps = argc > 2 ? atoi(argv[2]) : 3;
    aip__collector_register(&fake);
    dev = aip__dev_device(AIP_BACKEND_OPENCL, 1, "Fake Device", "aiprof tests", AIP_DEVKIND_GPU);
    q0 = aip__dev_queue(dev, 100, "queue 0");
    q1 = aip__dev_queue(dev, 101, "queue 1");

    aip_config c;
    aip_config_init(&c);
    c.dir_name = argv[1];
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_NPU;
    c.record_shapes = 1;
    c.profile_memory = 1;
    if (argc > 3 && !strcmp(argv[3], "schedule")) {
        c.has_schedule = 1;
        c.schedule = (aip_schedule){.wait = 0, .active = steps, .repeat = 1};
    }
    aip_session *s;
    if (aip_session_create(&c, &s) || aip_session_start(s)) {
        fprintf(stderr, "fake_device_profile: %s\n", aip_last_error());
        return 1;
    }
    aip__dev_memory(dev, 0x10000, 1 << 20, AIP_DEVMEM_BUFFER);
    for (int i = 0; i < steps; i++) {
        launch("aten::to", "clEnqueueWriteBuffer", "Memcpy HtoD", AIP_TASK_MEMCPY, AIP_COPY_H2D,
               q0, 20, 1 << 20);
        launch("aten::matmul", "clEnqueueNDRangeKernel", "matmul", AIP_TASK_KERNEL, 0, q0, 100, 0);
        launch("aten::relu", "clEnqueueNDRangeKernel", "relu", AIP_TASK_KERNEL, 0, q1, 30, 0);
        aip_op_info view = {.name = "aten::view", .sequence_number = -1};
        aip_op_begin(&view);
        spin_us(4);
        aip_op_end();
        launch("aten::softmax", "clEnqueueNDRangeKernel", "softmax", AIP_TASK_KERNEL, 0, q0, 50,
               0);
        launch("aten::item", "clEnqueueReadBuffer", "Memcpy DtoH", AIP_TASK_MEMCPY, AIP_COPY_D2H,
               q0, 10, 4096);
        uint64_t t = aip__dev_api_begin();
        spin_us(2);
        aip__dev_api_end("clFinish", t, 0, dev);
        if (i == steps - 1) /* a schedule saves the trace at the last step */
            aip__dev_memory(dev, 0x10000, -(1 << 20), AIP_DEVMEM_BUFFER);
        aip_session_step(s);
    }
    if (aip_session_stop(s)) {
        fprintf(stderr, "fake_device_profile: %s\n", aip_last_error());
        return 1;
    }
    printf("%s\n", aip_session_result_dir(s));
    aip_session_destroy(s);
    return 0;
}
