/*
 * test_cuda_translate.c — the CUDA back end's translation (cuda_translate.c)
 * fed CUPTI activity buffers built here from the public record structs, as
 * CUPTI hands them over, in a session recording device activity; the
 * result directory is analysed as `aiprof analyse` does and checked:
 *
 *   aten::mm     -> cudaLaunchKernel (corr 11) -> kernel "_Z6kernelPfi"
 *                   (demangled), stream 7, grid 4x2x1 block 128x1x1
 *   aten::add    -> cudaLaunchKernel (corr 12) -> "add_kernel", stream 13
 *   aten::copy_  -> cudaMemcpyAsync H2D (13), D2H (14), a peer copy (15),
 *                   cudaMemsetAsync (16)
 *   cudaMalloc (17) / cudaFree (18) -> device memory alloc / release
 * as the callback API reports calls: each runtime call with the driver
 * call inside it (not recorded again), a driver call of the program's own
 * (recorded), an exit whose enter was not seen (not recorded);
 * plus records the model has no place for (pinned host memory, a runtime
 * activity record, a synchronisation record) counted as ignored, and bad
 * input — a record with its end before its start, a cut record, a buffer
 * of garbage — counted as dropped, never read past.
 * And which API callbacks are enabled (cuda_callbacks.c), by name.
 * CUPTI's clock here is CLOCK_MONOTONIC (what the timestamp callback
 * makes it), sampled as the back end does (method same_clock).
 */
#include "aip_test.h"
#include "session_helpers.h"
#include "tmp_dir.h"
#include "clock.h"
#include "device.h"
#include "model.h"
#include "csv_read.h"
#include "own_profile.h"
#include "collect/cuda/cuda_int.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_DEV_OFFSET 0
#include "fake_device.h"

static char tmp[PATH_MAX];

/* ---- a CUPTI buffer ------------------------------------------------------ */

typedef struct cbuf {
    _Alignas(8) uint8_t b[8192];
    size_t n;
} cbuf;

static void *put(cbuf *c, CUpti_ActivityKind kind)
{
    size_t size = aip__cuda_record_size(kind);
    void *r = c->b + c->n;
    memset(r, 0, size);
    ((CUpti_Activity *)r)->kind = kind;
    c->n += (size + 7) & ~(size_t)7;
    return r;
}

static void put_kernel(cbuf *c, const char *name, uint32_t stream, uint32_t corr, uint64_t t0,
                       uint64_t t1, int gx, int gy, int bx)
{
    CUpti_ActivityKernel10 *k = put(c, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    k->name = name;
    k->deviceId = 0;
    k->streamId = stream;
    k->correlationId = corr;
    k->start = t0;
    k->end = t1;
    k->gridX = gx, k->gridY = gy, k->gridZ = 1;
    k->blockX = bx, k->blockY = 1, k->blockZ = 1;
}

static void put_memcpy(cbuf *c, uint8_t copy_kind, uint8_t src, uint8_t dst, uint64_t bytes,
                       uint32_t stream, uint32_t corr, uint64_t t0, uint64_t t1)
{
    CUpti_ActivityMemcpy6 *m = put(c, CUPTI_ACTIVITY_KIND_MEMCPY);
    m->copyKind = copy_kind, m->srcKind = src, m->dstKind = dst;
    m->bytes = bytes, m->streamId = stream, m->correlationId = corr;
    m->start = t0, m->end = t1;
}

static void put_memory(cbuf *c, int alloc, unsigned mem_kind, uint64_t addr, uint64_t bytes,
                       uint64_t ts, uint32_t corr)
{
    CUpti_ActivityMemory4 *m = put(c, CUPTI_ACTIVITY_KIND_MEMORY2);
    m->memoryOperationType = alloc ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                   : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m->memoryKind = (CUpti_ActivityMemoryKind)mem_kind;
    m->address = addr, m->bytes = bytes, m->timestamp = ts, m->correlationId = corr;
}

static char *test_demangle(const char *m)
{
    return !strcmp(m, "_Z6kernelPfi") ? strdup("kernel(float*, int)") : NULL;
}

static const char *test_device_name(uint32_t ord, char *buf, size_t cap)
{
    snprintf(buf, cap, "Test GPU %u", ord);
    return buf;
}

/* ---- the program's side --------------------------------------------------- */

/* A runtime call as the callback API reports it (CUPTI's versioned name),
 * with the driver call the runtime makes inside it, which is not recorded
 * again. */
static void api(const char *cupti_name, uint32_t corr)
{
    aip__cuda_on_api(1, 1, corr, cupti_name);
    spin_us(2);
    aip__cuda_on_api(0, 1, corr + 1000, "cuLaunchKernel");
    aip__cuda_on_api(0, 0, corr + 1000, "cuLaunchKernel");
    spin_us(1);
    aip__cuda_on_api(1, 0, corr, cupti_name);
}

static void op(const char *name, const char *calls[], const uint32_t corrs[], int n)
{
    aip_op_info o = {.name = name, .sequence_number = -1};
    aip_op_begin(&o);
    for (int i = 0; i < n; i++)
        api(calls[i], corrs[i]);
    aip_op_end();
}

static uint64_t t_base;
static uint64_t at_us(unsigned us) { return t_base + (uint64_t)us * 1000; }

/* Everything device 0 did, in one buffer; the times lie after the calls. */
static void device_buffer(cbuf *c)
{
    put_kernel(c, "_Z6kernelPfi", 7, 11, at_us(10), at_us(50), 4, 2, 128);
    put_kernel(c, "add_kernel", 13, 12, at_us(20), at_us(30), 64, 1, 256);
    put_memcpy(c, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4096, 7, 13, at_us(60), at_us(64));
    put_memcpy(c, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
               CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 2048, 7, 14, at_us(70), at_us(72));
    CUpti_ActivityMemcpyPtoP4 *p = put(c, CUPTI_ACTIVITY_KIND_MEMCPY2);
    p->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p->srcKind = p->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p->bytes = 1024, p->streamId = 13, p->correlationId = 15;
    p->start = at_us(74), p->end = at_us(75);
    CUpti_ActivityMemset4 *s = put(c, CUPTI_ACTIVITY_KIND_MEMSET);
    s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    s->bytes = 512, s->streamId = 7, s->correlationId = 16;
    s->start = at_us(80), s->end = at_us(81);
    put_memory(c, 1, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, 1 << 20, at_us(5), 17);
    put_memory(c, 0, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, 1 << 20, at_us(90), 18);
    /* the model has no place for these */
    put_memory(c, 1, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 0x1000, 4096, at_us(6), 19);
    CUpti_ActivityAPI *a = put(c, CUPTI_ACTIVITY_KIND_RUNTIME);
    a->start = at_us(1), a->end = at_us(2), a->correlationId = 11;
    put(c, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    /* impossible times: dropped */
    put_kernel(c, "backwards", 7, 0, at_us(100), at_us(99), 1, 1, 1);
}

static int row_of(const csv *c, const char *name)
{
    for (size_t r = 0; r < c->rows; r++)
        if (!strcmp(at(c, r, "Name"), name))
            return (int)r;
    return -1;
}

static void check_kernel_details(const char *dir, uint32_t dev)
{
    csv c;
    ASSERT_EQ(csv_read(&c, dir, "kernel_details.csv"), 0);
    ASSERT_EQ(c.rows, 6u); /* 2 kernels, 3 copies, 1 memset; not "backwards" */
    int k = row_of(&c, "kernel(float*, int)");
    int add = row_of(&c, "add_kernel");
    int h2d = row_of(&c, "Memcpy HtoD (Pageable -> Device)");
    int d2h = row_of(&c, "Memcpy DtoH (Device -> Pinned)");
    int p2p = row_of(&c, "Memcpy PtoP (Device -> Device)");
    int set = row_of(&c, "Memset (Device)");
    ASSERT_TRUE(k >= 0 && add >= 0 && h2d >= 0 && d2h >= 0 && p2p >= 0 && set >= 0);
    if (k < 0 || add < 0 || h2d < 0 || d2h < 0 || p2p < 0 || set < 0) {
        csv_free(&c);
        return;
    }
    char want[32];
    snprintf(want, sizeof want, "%u", dev);
    ASSERT_STREQ(at(&c, (size_t)k, "Device_id"), want);
    ASSERT_STREQ(at(&c, (size_t)k, "Accelerator Core"), "GPU");
    ASSERT_STREQ(at(&c, (size_t)k, "Duration(us)"), "40.000"); /* the device's own time */
    ASSERT_STREQ(at(&c, (size_t)add, "Duration(us)"), "10.000");
    ASSERT_STREQ(at(&c, (size_t)k, "Block Num"), "8");         /* grid 4 x 2 x 1 */
    ASSERT_STREQ(at(&c, (size_t)add, "Block Num"), "64");
    ASSERT_STREQ(at(&c, (size_t)h2d, "Type"), "MEMCPY_ASYNC");
    ASSERT_STREQ(at(&c, (size_t)h2d, "Duration(us)"), "4.000");
    /* Stream ID is the CUDA stream the buffer named, not aiprof's queue id */
    ASSERT_STREQ(at(&c, (size_t)k, "Stream ID"), "7");
    ASSERT_STREQ(at(&c, (size_t)h2d, "Stream ID"), "7");
    ASSERT_STREQ(at(&c, (size_t)d2h, "Stream ID"), "7");
    ASSERT_STREQ(at(&c, (size_t)set, "Stream ID"), "7");
    ASSERT_STREQ(at(&c, (size_t)add, "Stream ID"), "13");
    ASSERT_STREQ(at(&c, (size_t)p2p, "Stream ID"), "13");
    csv_free(&c);
}

/* The database's TASK.streamId and the timeline's "Physic Stream Id": the
 * CUDA streams too (4 tasks on stream 7, 2 on stream 13). */
static void check_stream_ids(const char *dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler.db", dir);
    sqlite3 *db = NULL;
    ASSERT_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT streamId, count(*) FROM TASK GROUP BY streamId "
                                     "ORDER BY streamId", -1, &st, NULL), SQLITE_OK);
    static const long long want[][2] = {{7, 4}, {13, 2}};
    size_t n = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        if (n < 2) {
            ASSERT_EQ(sqlite3_column_int64(st, 0), want[n][0]);
            ASSERT_EQ(sqlite3_column_int64(st, 1), want[n][1]);
        }
        n++;
    }
    ASSERT_EQ(n, 2u);
    sqlite3_finalize(st);
    sqlite3_close(db);

    snprintf(path, sizeof path, "%s/ASCEND_PROFILER_OUTPUT/trace_view.json", dir);
    size_t len = 0;
    char *trace = aip_test_slurp(path, &len);
    ASSERT_TRUE(trace != NULL);
    if (!trace)
        return;
    size_t on[2] = {0, 0}, other = 0;
    for (const char *q = trace; (q = strstr(q, "\"Physic Stream Id\":")) != NULL;) {
        q += strlen("\"Physic Stream Id\":");
        long v = strtol(q, NULL, 10);
        if (v == 7)
            on[0]++;
        else if (v == 13)
            on[1]++;
        else
            other++;
    }
    ASSERT_EQ(on[0], 4u);
    ASSERT_EQ(on[1], 2u);
    ASSERT_EQ(other, 0u);
    free(trace);
}

/* String id `id` of p as a C string (a copy, for the assertions). */
static const char *str(const aip__process *p, uint32_t id)
{
    static char b[4][256];
    static int i;
    char *o = b[i++ % 4];
    size_t n = 0;
    const char *s = aip__model_str(p, id, &n);
    snprintf(o, 256, "%.*s", s ? (int)n : 0, s ? s : "");
    return o;
}

/* Each task's launching call and the op open around it (device_derive.c). */
static void check_links(const aip__model *m)
{
    const aip__process *p = &m->procs[0];
    ASSERT_EQ(p->dev_tasks.n, 6u);
    ASSERT_EQ(p->dev_api.n, 9u); /* 8 runtime calls, cuCtxSynchronize */
    int driver = 0;
    for (size_t i = 0; i < p->dev_api.n; i++) {
        const char *n = str(p, p->dev_api.v[i].name);
        ASSERT_TRUE(strcmp(n, "cuLaunchKernel") != 0 && strcmp(n, "cudaDeviceSynchronize") != 0);
        driver += !strcmp(n, "cuCtxSynchronize");
    }
    ASSERT_EQ(driver, 1);
    static const struct { const char *task, *call, *op; } want[] = {
        {"kernel(float*, int)", "cudaLaunchKernel", "aten::mm"},
        {"add_kernel", "cudaLaunchKernel", "aten::add"},
        {"Memcpy HtoD (Pageable -> Device)", "cudaMemcpyAsync", "aten::copy_"},
        {"Memcpy DtoH (Device -> Pinned)", "cudaMemcpyAsync", "aten::copy_"},
        {"Memcpy PtoP (Device -> Device)", "cudaMemcpyPeerAsync", "aten::copy_"},
        {"Memset (Device)", "cudaMemsetAsync", "aten::copy_"},
    };
    for (size_t i = 0; i < p->dev_tasks.n; i++) {
        const aip__device_task *t = &p->dev_tasks.v[i];
        const char *name = str(p, t->name);
        size_t w = 0;
        while (w < 6 && strcmp(want[w].task, name))
            w++;
        ASSERT_TRUE(w < 6);
        ASSERT_TRUE(t->api >= 0);
        if (w == 6 || t->api < 0)
            continue;
        const aip__device_call *call = &p->dev_api.v[t->api];
        ASSERT_STREQ(str(p, call->name), want[w].call);
        ASSERT_TRUE(call->parent_span >= 0);
        if (call->parent_span >= 0) {
            const aip__span *sp = &p->threads[call->parent_thread].spans[call->parent_span];
            ASSERT_STREQ(str(p, sp->name), want[w].op);
        }
        if (!strcmp(name, "kernel(float*, int)")) {
            ASSERT_EQ(t->global[0], 512u); /* grid x block */
            ASSERT_EQ(t->local[0], 128u);
            ASSERT_EQ(t->global[1], 2u);
        }
        if (t->kind == AIP_TASK_MEMCPY)
            ASSERT_EQ(t->direction, !strncmp(name, "Memcpy HtoD", 11)   ? AIP_COPY_H2D
                                    : !strncmp(name, "Memcpy DtoH", 11) ? AIP_COPY_D2H
                                                                        : AIP_COPY_D2D);
    }
    /* device memory: the 1 MiB allocation and its release, not the pinned */
    ASSERT_EQ(p->dev_memory.n, 2u);
    if (p->dev_memory.n == 2) {
        ASSERT_EQ(p->dev_memory.v[0].bytes, 1 << 20);
        ASSERT_EQ(p->dev_memory.v[1].bytes, -(1 << 20));
        ASSERT_TRUE(p->dev_memory.v[0].ts < p->dev_memory.v[1].ts);
        ASSERT_EQ(p->dev_memory.v[0].mem_kind, AIP_DEVMEM_BUFFER);
    }
}

static void test_buffer_into_outputs(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_CUDA;
    c.export_type = AIP_EXPORT_TEXT | AIP_EXPORT_DB;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    t_base = aip__mono_ns();
    op("aten::mm", (const char *[]){"cudaLaunchKernel_v7000"}, (const uint32_t[]){11}, 1);
    op("aten::add", (const char *[]){"cudaLaunchKernel_v7000"}, (const uint32_t[]){12}, 1);
    op("aten::copy_",
       (const char *[]){"cudaMemcpyAsync_v3020", "cudaMemcpyAsync_v3020",
                        "cudaMemcpyPeerAsync_v4000", "cudaMemsetAsync_v3020"},
       (const uint32_t[]){13, 14, 15, 16}, 4);
    api("cudaMalloc_v3020", 17);
    api("cudaFree_v3020", 18);
    /* a driver call the program made itself: recorded */
    aip__cuda_on_api(0, 1, 30, "cuCtxSynchronize");
    aip__cuda_on_api(0, 0, 30, "cuCtxSynchronize");
    /* an exit whose enter was not seen (callbacks enabled mid-call): not */
    aip__cuda_on_api(1, 0, 99, "cudaDeviceSynchronize_v3020");
    spin_us(100); /* the device times lie within the trace */

    static cbuf b;
    b.n = 0;
    device_buffer(&b);
    aip__cuda_tctx t;
    aip__cuda_tctx_init(&t);
    t.demangle = test_demangle;
    t.device_name = test_device_name;
    aip__cuda_translate_buffer(&t, b.b, b.n, aip__cuda_packed_next);
    ASSERT_EQ(t.n.kernels, 2u);
    ASSERT_EQ(t.n.copies, 3u);
    ASSERT_EQ(t.n.sets, 1u);
    ASSERT_EQ(t.n.memory, 2u);
    ASSERT_EQ(t.n.ignored, 3u); /* pinned memory, runtime record, synchronisation */
    ASSERT_EQ(t.n.dropped, 1u); /* "backwards" */
    ASSERT_EQ(t.n.no_device, 0u);
    ASSERT_TRUE(t.dev_ids[0] != 0);
    uint32_t dev = t.dev_ids[0] - 1;
    /* CUPTI's clock is ours (the timestamp callback): the back end's samples */
    for (int i = 0; i < 2; i++) {
        uint64_t t0 = aip__ticks(), ns = aip__mono_ns(), t1 = aip__ticks();
        aip__dev_clock(dev, t0, t1, ns, AIP_SYNC_SAME_CLOCK);
    }
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    aip__model m;
    ASSERT_EQ(load_own_raw(dir, &m), 0);
    if (dir && m.n_procs == 1) {
        check_kernel_details(dir, dev);
        check_stream_ids(dir);
        check_links(&m);
        const aip__device *d = aip__model_device(&m.procs[0], dev);
        ASSERT_TRUE(d != NULL);
        if (d) {
            ASSERT_STREQ(str(&m.procs[0], d->name), "Test GPU 0");
            ASSERT_EQ(d->backend, AIP_BACKEND_CUDA);
        }
    }
    aip__model_free(&m);
    aip_session_destroy(s);
}

/* Bad buffers: counted, never read past their end. */
static void test_bad_buffers(void)
{
    aip__cuda_tctx t;
    aip__cuda_tctx_init(&t);
    static cbuf b;
    /* garbage: an unknown kind at the start -> the buffer cannot be walked */
    memset(b.b, 0xA5, sizeof b.b);
    aip__cuda_translate_buffer(&t, b.b, 256, aip__cuda_packed_next);
    ASSERT_EQ(t.n.dropped, 1u);
    ASSERT_EQ(t.n.kernels, 0u);
    /* a kernel record cut by the buffer's end: the walker refuses it */
    b.n = 0;
    put_kernel(&b, "k", 1, 1, 10, 20, 1, 1, 1);
    aip__cuda_translate_buffer(&t, b.b, b.n - 16, aip__cuda_packed_next);
    ASSERT_EQ(t.n.dropped, 2u);
    /* ... and a record handed over with less room than its fields need */
    aip__cuda_translate(&t, (const CUpti_Activity *)b.b, 24);
    ASSERT_EQ(t.n.dropped, 3u);
    /* an empty buffer, a NULL one: nothing */
    aip__cuda_translate_buffer(&t, b.b, 0, aip__cuda_packed_next);
    aip__cuda_translate_buffer(&t, NULL, 100, aip__cuda_packed_next);
    ASSERT_EQ(t.n.dropped, 3u);
    /* a valid record whose kind the back end ignores, then garbage: one
     * ignored, one dropped */
    b.n = 0;
    put(&b, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    memset(b.b + b.n, 0xFF, 64);
    aip__cuda_translate_buffer(&t, b.b, b.n + 64, aip__cuda_packed_next);
    ASSERT_EQ(t.n.ignored, 1u);
    ASSERT_EQ(t.n.dropped, 4u);
    /* a device ordinal beyond the table: not recorded, counted */
    b.n = 0;
    put_kernel(&b, "k", 1, 1, 10, 20, 1, 1, 1);
    ((CUpti_ActivityKernel10 *)b.b)->deviceId = 1000;
    aip__cuda_translate_buffer(&t, b.b, b.n, aip__cuda_packed_next);
    ASSERT_EQ(t.n.no_device, 1u);
}

static void test_names(void)
{
    ASSERT_STREQ(aip__cuda_api_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
    const char *a = aip__cuda_api_name("cudaMalloc_v3020");
    static const char v[] = "cudaMalloc_v3020";
    ASSERT_TRUE(aip__cuda_api_name(v) == aip__cuda_api_name(v)); /* cached per pointer */
    ASSERT_STREQ(a, "cudaMalloc");
    ASSERT_STREQ(aip__cuda_api_name("cuLaunchKernel"), "cuLaunchKernel");
    ASSERT_STREQ(aip__cuda_api_name("odd_v"), "odd_v");
    ASSERT_STREQ(aip__cuda_api_name("_v1"), "_v1");
    ASSERT_STREQ(aip__cuda_api_name(NULL), "cudaUnknown");
    ASSERT_STREQ(aip__cuda_copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), "DtoD");
    ASSERT_STREQ(aip__cuda_copy_kind_name(99), "Unknown");
    ASSERT_STREQ(aip__cuda_mem_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED), "Managed");
    ASSERT_STREQ(aip__cuda_mem_kind_name(1000), "Unknown");
}

/* A runtime call open when a trace stopped (its exit never delivered)
 * does not hide the program's driver calls in the next trace. */
static void test_stale_call_forgotten(void)
{
    aip_config c;
    base_config(&c, tmp);
    c.activities = AIP_ACTIVITY_CPU | AIP_ACTIVITY_CUDA;
    aip_session *s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    aip__cuda_api_new_trace();
    aip__cuda_on_api(1, 1, 200, "cudaStreamSynchronize_v3020"); /* the stop comes first */
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    aip_session_destroy(s);
    s = start_new(&c);
    ASSERT_TRUE(s != NULL);
    if (!s)
        return;
    aip__cuda_api_new_trace();
    aip__cuda_on_api(0, 1, 201, "cuCtxSynchronize");
    aip__cuda_on_api(0, 0, 201, "cuCtxSynchronize");
    ASSERT_EQ(aip_session_stop(s), AIP_OK);
    const char *dir = analysed_dir(s);
    ASSERT_TRUE(dir != NULL);
    aip__model m;
    ASSERT_EQ(load_own_raw(dir, &m), 0);
    if (m.n_procs == 1) {
        const aip__process *p = &m.procs[0];
        ASSERT_EQ(p->dev_api.n, 1u);
        if (p->dev_api.n == 1)
            ASSERT_STREQ(str(p, p->dev_api.v[0].name), "cuCtxSynchronize");
    }
    aip__model_free(&m);
    aip_session_destroy(s);
}

/* The callbacks enabled (cuda_callbacks.c): launches, copies, fills,
 * memory and waits of both domains, by name, every version and variant;
 * not the calls torch makes thousands of a step. */
static CUptiResult names_of(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
    static const char *const rt[] = {NULL, "cudaGetDevice_v3020", "cudaLaunchKernel_v7000",
                                     "cudaStreamIsCapturing_v10000",
                                     "cudaMemcpyAsync_ptsz_v7000"};
    static const char *const drv[] = {NULL, "cuCtxGetCurrent", "cuLaunchKernel_ptsz"};
    const char *const *t = d == CUPTI_CB_DOMAIN_RUNTIME_API ? rt : drv;
    uint32_t n = d == CUPTI_CB_DOMAIN_RUNTIME_API ? 5 : 3;
    *name = cbid < n ? t[cbid] : NULL;
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

static void test_callbacks_chosen(void)
{
    static const char *const yes[] = {
        "cudaLaunchKernel_v7000", "__cudaLaunchKernel_ptsz_v13000", "cudaGraphLaunch_v10000",
        "cudaMemcpyAsync_v3020", "cudaMemsetAsync_ptsz_v7000", "cudaMalloc_v3020",
        "cudaFreeAsync_v11020", "cudaStreamSynchronize_v3020", "cudaDeviceSynchronize_v3020",
        "cudaEventSynchronize_v3020", "cudaStreamWaitEvent_v3020", "cudaEventRecord_v3020"};
    static const char *const no[] = {"cudaGetDevice_v3020", "cudaGetLastError_v3020",
                                     "cudaStreamIsCapturing_v10000", "cudaEventQuery_v3020",
                                     "cudaSetDevice_v3020", "cudaStreamCreate_v3020"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        ASSERT_TRUE(aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_RUNTIME_API, yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        ASSERT_TRUE(!aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_RUNTIME_API, no[i]));
    ASSERT_TRUE(aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_DRIVER_API, "cuLaunchKernelEx"));
    ASSERT_TRUE(aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_DRIVER_API, "cuMemcpyHtoDAsync_v2"));
    ASSERT_TRUE(!aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_DRIVER_API, "cuCtxGetCurrent"));
    ASSERT_TRUE(!aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_DRIVER_API, "cuMemGetInfo_v2"));
    ASSERT_TRUE(!aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_RUNTIME_API, "cuLaunchKernel"));
    ASSERT_TRUE(!aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_RESOURCE, "cudaLaunchKernel_v7000"));
    ASSERT_TRUE(!aip__cuda_callback_wanted(CUPTI_CB_DOMAIN_RUNTIME_API, NULL));
    uint32_t ids[8];
    ASSERT_EQ(aip__cuda_callback_ids(names_of, CUPTI_CB_DOMAIN_RUNTIME_API, ids, 8), 2);
    ASSERT_EQ(ids[0], 2);
    ASSERT_EQ(ids[1], 4);
    ASSERT_EQ(aip__cuda_callback_ids(names_of, CUPTI_CB_DOMAIN_DRIVER_API, ids, 8), 1);
    ASSERT_EQ(ids[0], 2);
    ASSERT_EQ(aip__cuda_callback_ids(names_of, CUPTI_CB_DOMAIN_RUNTIME_API, ids, 1), 1);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "cuda_translate");
    static const aip_test_case cases[] = {
        TEST_CASE(test_names),
        TEST_CASE(test_bad_buffers),
        TEST_CASE(test_buffer_into_outputs),
        TEST_CASE(test_stale_call_forgotten),
        TEST_CASE(test_callbacks_chosen),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
