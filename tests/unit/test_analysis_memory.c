/*
 * test_analysis_memory.c — memory.c on records whose meaning is known
 * (rich_profile.h): time order, alloc/free pairs, the op each record is
 * attributed to, categories, peaks; and the corner cases: address reuse,
 * a second alloc without free, records on a thread without ops, several
 * devices.
 */
#include "aip_test.h"
#include "rich_profile.h"

#include "memory_timeline.h"
#include "model.h"

static char root[64];

static int load(const rb_buf *b, aip__model *m)
{
    char p[128];
    snprintf(p, sizeof p, "%s/aiprof_1.raw", root);
    rb_write_file(p, b->data, b->len);
    aip__model_init(m);
    return aip__model_load_raw(m, p) || aip__model_derive(m);
}

/* Index of the record of `addr` with the sign of `bytes`. */
static size_t find(const aip__process *p, uint64_t addr, int alloc)
{
    for (size_t i = 0; i < p->memory.n; i++)
        if (p->memory.v[i].address == addr && (p->memory.v[i].bytes > 0) == alloc)
            return i;
    return SIZE_MAX;
}

static const char *name_of(const aip__process *p, size_t e)
{
    size_t n;
    return aip__model_str(p, p->mem_info[e].name, &n);
}

static void test_rich_categories(void)
{
    rb_buf b = {0};
    rich_raw(&b);
    aip__model m;
    ASSERT_EQ(load(&b, &m), 0);
    rb_free(&b);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->memory.n, 10);
    for (size_t k = 1; k < p->memory.n; k++)
        ASSERT_TRUE(p->memory.v[p->mem_order[k - 1]].ts <= p->memory.v[p->mem_order[k]].ts);
    struct { uint64_t addr; unsigned cat; const char *name; int paired; } want[] = {
        {0x1000, AIP_MEMCAT_TEMPORARY, "aten::addmm", 1},
        {0x2000, AIP_MEMCAT_UNKNOWN, "aten::addmm", 1},
        {0x3000, AIP_MEMCAT_TEMPORARY, "aten::mm", 1},
        {0x4000, AIP_MEMCAT_AUTOGRAD_DETAIL, "aten::mm", 1},
        {0x5000, AIP_MEMCAT_UNKNOWN, "aten::mm", 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t a = find(p, want[i].addr, 1);
        ASSERT_TRUE(a != SIZE_MAX);
        ASSERT_EQ(p->mem_info[a].category, want[i].cat);
        ASSERT_STREQ(name_of(p, a), want[i].name);
        ASSERT_EQ(p->mem_info[a].pair >= 0, want[i].paired);
        if (want[i].paired)
            ASSERT_EQ(p->mem_info[p->mem_info[a].pair].pair, (int64_t)a);
    }
    ASSERT_EQ(p->mem_info[find(p, 0x4000, 1)].in_backward, 1);
    ASSERT_EQ(p->mem_info[find(p, 0x2000, 1)].in_backward, 0);
    size_t pre = find(p, 0x9000, 0);
    ASSERT_EQ(p->mem_info[pre].pair, -1);
    ASSERT_STREQ(name_of(p, pre), "Optimizer.step#SGD.step");
    /* the free at 90000 happens between ops: in the step annotation */
    ASSERT_STREQ(name_of(p, find(p, 0x2000, 0)), "ProfilerStep#1");
    ASSERT_EQ(m.n_mem_peaks, 1);
    ASSERT_EQ(m.mem_peaks[0].device_type, 0);
    ASSERT_EQ(m.mem_peaks[0].records, 10);
    ASSERT_EQ(m.mem_peaks[0].max_allocated, 8192 + 1024 + 2048 + 4096 + 512 + 256 - 1024);
    ASSERT_EQ(m.mem_peaks[0].max_reserved, 65536);
    aip__model_free(&m);
}

static void test_reuse_and_lost_frees(void)
{
    rb_buf b = {0}, e = {0}, e2 = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 5, "p", 1e9);
    const char *names[] = {"op"};
    rb_strings(&b, 1, names, NULL, 1);
    rb_clock(&b, 0, 0, RICH_R0);
    ev_op(&e, 1, 100, 1000);
    /* 0x10 reused: alloc, free, alloc, free; 0x20 allocated twice (the
     * first free was dropped): the free releases the second allocation */
    ev_memory(&e, 200, 0x10, 64, 64, 64, 0, -1);
    ev_memory(&e, 300, 0x10, -64, 0, 64, 0, -1);
    ev_memory(&e, 400, 0x10, 32, 32, 64, 0, -1);
    ev_memory(&e, 500, 0x20, 16, 48, 64, 0, -1);
    ev_memory(&e, 600, 0x20, 16, 64, 64, 0, -1);
    ev_memory(&e, 700, 0x20, -16, 48, 64, 0, -1);
    /* same address on another device is another block */
    ev_memory(&e, 800, 0x10, -128, 0, 0, AIP_DEVICE_NPU, 1);
    ev_memory(&e, 1200, 0x10, -32, 16, 64, 0, -1);
    rb_events(&b, 5, &e);
    /* a thread with records and no op */
    ev_memory(&e2, 250, 0x30, 8, 8, 8, 0, -1);
    rb_events(&b, 6, &e2);
    rb_end(&b);
    aip__model m;
    ASSERT_EQ(load(&b, &m), 0);
    rb_free(&b);
    rb_free(&e);
    rb_free(&e2);
    const aip__process *p = &m.procs[0];
    const aip__thread *t0 = &p->threads[0];
    ASSERT_EQ(t0->tid, 5);
    /* indices in file order (thread 5's chunk first) */
    ASSERT_EQ(p->mem_info[0].pair, 1);
    ASSERT_EQ(p->mem_info[2].pair, 7);
    ASSERT_EQ(p->mem_info[3].pair, -1);
    ASSERT_EQ(p->mem_info[4].pair, 5);
    ASSERT_EQ(p->mem_info[6].pair, -1); /* NPU free: allocated before the trace */
    ASSERT_EQ(p->mem_info[0].category, AIP_MEMCAT_TEMPORARY);
    ASSERT_EQ(p->mem_info[2].category, AIP_MEMCAT_UNKNOWN); /* freed after the op */
    ASSERT_EQ(p->mem_info[8].name, 0);
    ASSERT_EQ(p->mem_info[8].category, AIP_MEMCAT_UNKNOWN);
    ASSERT_EQ(m.n_mem_peaks, 2);
    ASSERT_EQ(m.mem_peaks[0].device_type, AIP_DEVICE_CPU);
    ASSERT_EQ(m.mem_peaks[1].device_type, AIP_DEVICE_NPU);
    ASSERT_EQ(m.mem_peaks[1].device_index, 1);
    ASSERT_STREQ(aip__mem_category_name(AIP_MEMCAT_AUTOGRAD_DETAIL), "AUTOGRAD_DETAIL");
    ASSERT_STREQ(aip__mem_category_name(99), "UNKNOWN");
    aip__model_free(&m);
}

/* The proposed MEMORY_CATEGORY record (docs/MEMORY.md): kind 10, 40 bytes. */
static void ev_label(rb_buf *e, uint64_t ts, uint64_t addr, int64_t bytes, uint8_t cat)
{
    uint8_t r[40] = {AIP_REC_MEMORY_CATEGORY_PROPOSED, 0, 40, 0};
    memcpy(r + 8, &ts, 8);
    memcpy(r + 16, &addr, 8);
    memcpy(r + 24, &bytes, 8);
    r[32] = AIP_DEVICE_CPU;
    r[33] = 0xff; /* index -1 */
    r[34] = cat;
    rb_put(e, r, sizeof r);
}

static void test_framework_labels(void)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 0);
    rb_info(&b, 5, "p", 1e9);
    const char *names[] = {"op"};
    rb_strings(&b, 1, names, NULL, 1);
    rb_clock(&b, 0, 0, RICH_R0);
    /* a parameter allocated before the trace, labelled, never freed */
    ev_label(&e, 50, 0xA0, 4096, AIP_MEMCAT_PARAMETER);
    /* an allocation labelled GRADIENT after it happened, freed later */
    ev_op(&e, 1, 100, 200);
    ev_memory(&e, 150, 0xB0, 64, 64, 64, 0, -1);
    ev_memory(&e, 190, 0xB0, -64, 0, 64, 0, -1); /* would be TEMPORARY */
    ev_label(&e, 160, 0xB0, 64, AIP_MEMCAT_GRADIENT);
    /* optimizer state from before the trace, freed in it */
    ev_label(&e, 60, 0xC0, 512, AIP_MEMCAT_OPTIMIZER_STATE);
    ev_memory(&e, 300, 0xC0, -512, -512, 64, 0, -1);
    /* an unknown category value is not a label */
    ev_label(&e, 70, 0xD0, 8, 200);
    rb_events(&b, 5, &e);
    rb_end(&b);
    aip__model m;
    ASSERT_EQ(load(&b, &m), 0);
    rb_free(&b);
    rb_free(&e);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->mem_labels.n, 3);
    size_t a = find(p, 0xB0, 1);
    ASSERT_EQ(p->mem_info[a].category, AIP_MEMCAT_GRADIENT);
    ASSERT_EQ(p->mem_info[a].labeled, 1);
    size_t f = find(p, 0xC0, 0);
    ASSERT_EQ(p->mem_info[f].pair, -1);
    ASSERT_EQ(p->mem_info[f].category, AIP_MEMCAT_OPTIMIZER_STATE);
    aip__mem_timeline t;
    ASSERT_EQ(aip__mem_timeline_build(&m, "cpu", &t), AIP_OK);
    /* PREEXISTING: the freed optimizer state (from its free), then the parameter */
    ASSERT_EQ(t.n, 5);
    ASSERT_EQ(t.ev[0].action, AIP_MT_PREEXISTING);
    ASSERT_EQ(t.ev[0].category, AIP_MEMCAT_OPTIMIZER_STATE);
    ASSERT_EQ(t.ev[0].bytes, 512);
    ASSERT_EQ(t.ev[1].action, AIP_MT_PREEXISTING);
    ASSERT_EQ(t.ev[1].category, AIP_MEMCAT_PARAMETER);
    ASSERT_EQ(t.ev[1].bytes, 4096);
    ASSERT_EQ(t.ev[2].category, AIP_MEMCAT_GRADIENT);
    ASSERT_EQ(t.ev[3].action, AIP_MT_DESTROY);
    ASSERT_EQ(t.ev[3].category, AIP_MEMCAT_GRADIENT);
    ASSERT_EQ(t.ev[4].category, AIP_MEMCAT_OPTIMIZER_STATE);
    /* the end state: only the parameter remains */
    ASSERT_EQ(t.sizes[t.n_points - 1][AIP_MEMCAT_PARAMETER + 1], 4096);
    int64_t sum = 0;
    for (int c = 0; c <= AIP_MEMCAT_COUNT; c++)
        sum += t.sizes[t.n_points - 1][c];
    ASSERT_EQ(sum, 4096);
    aip__mem_timeline_free(&t);
    aip__model_free(&m);
}

static void setup(void) { rb_tempdir(root, sizeof root, "mem"); }
static void teardown(void) { if (!getenv("KEEP")) rb_rmtree(root); }

/* Made in forward, released inside a backward-scope op: what the forward
 * pass saved for backward → ACTIVATION.  Freed in forward again → not. */
static void test_activation(void)
{
    rb_buf b = {0}, e = {0};
    rb_header(&b, 1, 1);
    rb_info(&b, 7, "Python", 1e9);
    const char *names[] = {"aten::relu", "ReluBackward0", "aten::add"};
    uint32_t lens[] = {10, 13, 9};
    rb_strings(&b, 1, names, lens, 3);
    rb_clock(&b, 0, 0, 1700000000000000000ull);
    ev_op(&e, 1, 1000, 2000);                    /* forward op */
    ev_memory(&e, 1500, 0xA000, 4096, 4096, 8192, 0, -1);
    ev_memory(&e, 1600, 0xB000, 1024, 5120, 8192, 0, -1);
    ev_op(&e, 3, 3000, 4000);                    /* another forward op frees 0xB000 */
    ev_memory(&e, 3500, 0xB000, -1024, 4096, 8192, 0, -1);
    ev_op_full(&e, 2, 5000, 6000, AIP_OPF_BACKWARD, 0, 0, 0, 0, 0, 0);
    ev_memory(&e, 5500, 0xA000, -4096, 0, 8192, 0, -1);
    rb_events(&b, 7, &e);
    rb_free(&e);
    aip__model m;
    ASSERT_EQ(load(&b, &m), 0);
    rb_free(&b);
    const aip__process *p = &m.procs[0];
    ASSERT_EQ(p->mem_info[find(p, 0xA000, 1)].category, AIP_MEMCAT_ACTIVATION);
    ASSERT_EQ(p->mem_info[find(p, 0xB000, 1)].category, AIP_MEMCAT_UNKNOWN);
    aip__model_free(&m);
}

TEST_MAIN(TEST_CASE(setup), TEST_CASE(test_activation), TEST_CASE(test_rich_categories), TEST_CASE(test_reuse_and_lost_frees),
          TEST_CASE(test_framework_labels), TEST_CASE(teardown))
