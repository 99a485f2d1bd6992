/*
 * test_device_queue_raw.c — DEVICE_QUEUE records of every size the reader
 * must take (docs/RAW_FORMAT.md "Device records"), built byte by byte:
 * a 1.5 file's 16-byte record (no native id: the outputs' stream id is
 * aiprof's queue id, as before), a 1.6 record of 24 bytes with and without
 * a native id (the CUDA stream id the outputs show), and a longer record a
 * later minor version may write (its extra bytes skipped).  The records
 * after each must still be read in step, and none counted as bad.
 */
#include "aip_test.h"
#include "device_tracks.h"
#include "model.h"
#include "raw_builder.h"
#include "tmp_dir.h"

#include <stdio.h>
#include <string.h>

static char tmp[512];

/* A DEVICE_QUEUE of `size` bytes (16: the 1.4/1.5 layout, no native id). */
static void ev_queue(rb_buf *e, uint16_t size, uint32_t label, uint32_t queue,
                     uint64_t native_id1)
{
    uint8_t r[32] = {0};
    aip__rec_device_queue q = {{AIP_REC_DEVICE_QUEUE, 0, size, label}, 0, queue, native_id1};
    memcpy(r, &q, size < sizeof q ? size : sizeof q);
    rb_put(e, r, size);
}

static void ev_device_api(rb_buf *e, uint32_t name, uint64_t start, uint64_t corr)
{
    aip__rec_device_api a = {{AIP_REC_DEVICE_API, 0, sizeof a, name}, start, start + 5, corr,
                             0, 0};
    rb_put(e, &a, sizeof a);
}

/* A file of version 1.`minor` with a device, the queue records `queues`
 * put there, and a runtime call after them; loaded into *m. */
static int load_file(const char *name, uint16_t minor, const rb_buf *queues, aip__model *m)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, minor);
    rb_info(&b, 4242, "prog", 1e9);
    rb_clock(&b, 0, 0, 1000000000000ull);
    static const char *const names[] = {"GPU", "queue 0", "stream 7", "clEnqueue"};
    rb_strings(&b, 1, names, NULL, 4);
    aip__rec_device d = {{AIP_REC_DEVICE, 0, sizeof d, 1}, 0, 0, AIP_DEVKIND_GPU,
                         AIP_BACKEND_CUDA, 0, 0};
    rb_put(&e, &d, sizeof d);
    rb_put(&e, queues->data, queues->len);
    ev_device_api(&e, 4, 100, 1); /* read in step after the queues */
    rb_events(&b, 10, &e);
    rb_end(&b);
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    int rc = rb_write_file(path, b.data, b.len);
    rb_free(&b);
    rb_free(&e);
    aip__model_init(m);
    return rc || aip__model_load_raw(m, path) != AIP_OK || m->n_procs != 1;
}

/* A 1.5 file: the 16-byte record loads, without a native id. */
static void test_old_size_loads(void)
{
    rb_buf q = {0};
    ev_queue(&q, AIP_REC_DEVICE_QUEUE_SIZE_1_4, 2, 3, 0);
    aip__model m;
    ASSERT_EQ(load_file("v15.raw", 5, &q, &m), 0);
    rb_free(&q);
    if (m.n_procs == 1) {
        const aip__process *p = &m.procs[0];
        ASSERT_EQ(p->dev_bad_records, 0u);
        ASSERT_EQ(p->queues.n, 4u);
        if (p->queues.n == 4) {
            ASSERT_EQ(p->queues.v[3].present, 1);
            ASSERT_EQ(p->queues.v[3].device, 0u);
            ASSERT_EQ(p->queues.v[3].label, 2u);
            ASSERT_EQ(p->queues.v[3].has_native, 0);
        }
        ASSERT_EQ(aip__queue_stream_id(p, 3), 3u); /* aiprof's id, as in 1.5 */
        ASSERT_EQ(p->dev_api.n, 1u);
    }
    aip__model_free(&m);
}

/* A 1.6 file: a native id (stream 7 on queue 1; stream 0, the default
 * stream, on queue 4), none (queue 2), and a longer record (queue 3,
 * stream 13) whose trailing bytes a 1.6 reader does not know. */
static void test_native_ids(void)
{
    rb_buf q = {0};
    ev_queue(&q, sizeof(aip__rec_device_queue), 3, 1, 7 + 1);
    ev_queue(&q, sizeof(aip__rec_device_queue), 2, 2, 0);
    ev_queue(&q, 32, 3, 3, 13 + 1);
    ev_queue(&q, sizeof(aip__rec_device_queue), 3, 4, 0 + 1);
    aip__model m;
    ASSERT_EQ(load_file("v16.raw", 6, &q, &m), 0);
    rb_free(&q);
    if (m.n_procs == 1) {
        const aip__process *p = &m.procs[0];
        ASSERT_EQ(p->dev_bad_records, 0u);
        ASSERT_EQ(p->queues.n, 5u);
        ASSERT_EQ(p->dev_api.n, 1u);
        ASSERT_EQ(aip__queue_stream_id(p, 1), 7u);
        ASSERT_EQ(aip__queue_stream_id(p, 2), 2u);
        ASSERT_EQ(aip__queue_stream_id(p, 3), 13u);
        ASSERT_EQ(aip__queue_stream_id(p, 4), 0u);
        /* queue 0 was never described, 99 lies beyond the table: their ids */
        ASSERT_EQ(aip__queue_stream_id(p, 0), 0u);
        ASSERT_EQ(aip__queue_stream_id(p, 99), 99u);
    }
    aip__model_free(&m);
}

int main(void)
{
    make_tmpdir(tmp, sizeof tmp, "device_queue_raw");
    static const aip_test_case cases[] = {
        TEST_CASE(test_old_size_loads),
        TEST_CASE(test_native_ids),
    };
    int rc = aip_test_run(cases, sizeof cases / sizeof cases[0]);
    rm_rf(tmp);
    return rc;
}
