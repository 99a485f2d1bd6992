/*
 * rich_profile.h — a small result directory that exercises every output:
 * two steps, nested ops with shapes/stacks/sequence numbers, a backward
 * pass, mstx ranges and marks, memory records of every kind the analyser
 * distinguishes, GC, two threads, hostile names, and profiler_info.json /
 * profiler_metadata.json with every switch on.  Built with raw_builder.h
 * (no recording core involved).  Times are ns from R0 (ticks = ns).
 *
 * Memory records (addresses) and what the analysis must make of them:
 *   0x1000 1024 B  alloc 4000 / free 14000 inside aten::linear   TEMPORARY
 *   0x2000 2048 B  alloc 5000 / free 90000 (after linear)        UNKNOWN
 *   0x3000 4096 B  alloc 33000 / free 45000 inside the bwd op    TEMPORARY
 *   0x4000  512 B  alloc 34000 in backward, free 55000 before
 *                  the next forward top-level op (60000)         AUTOGRAD_DETAIL
 *   0x5000  256 B  alloc 35000 in backward, never freed          UNKNOWN
 *   0x9000 8192 B  freed at 61000, allocated before the trace    PREEXISTING
 */
#ifndef AIP_RICH_PROFILE_H
#define AIP_RICH_PROFILE_H

#include "raw_builder.h"

#define RICH_R0 1700000000000000000ull
#define RICH_PID 4242
#define RICH_TID 4242
#define RICH_TID2 4250

enum {
    S_STEP1 = 1, S_STEP2, S_LINEAR, S_ADDMM, S_EMPTY, S_EVAL, S_ADDMM_BWD, S_MM, S_SHAPES,
    S_DTYPES, S_STACK, S_MODULE, S_DOMAIN, S_LOADER, S_MARK, S_THREAD, S_HOSTILE, S_BADUTF8,
    S_OPTIM, S_RANGE2, S_COUNT
};

static const char *const rich_strings[S_COUNT - 1] = {
    "ProfilerStep#1", "ProfilerStep#2", "aten::linear", "aten::addmm", "aten::empty",
    "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm",
    "[[2, 3], [3, 4]]", "[float, float]", "train.py(10): step;\nmodel.py(5): forward",
    "nn.Module: MLP_0", "io", "dataloader", "mark,here", "main thread",
    "quote\"comma,=cmd\n</script><b>&amp;", "bad\xff\xfeutf8", "Optimizer.step#SGD.step",
    "cross-thread"};

typedef struct rich_mem {
    int64_t allocated, reserved;
} rich_mem;

static inline void rich_mem_ev(rb_buf *e, rich_mem *st, uint64_t ts, uint64_t addr, int64_t bytes)
{
    st->allocated += bytes;
    if (st->allocated > st->reserved)
        st->reserved = (st->allocated + 65535) / 65536 * 65536;
    ev_memory(e, ts, addr, bytes, st->allocated, st->reserved, 0, -1);
}

/* The raw file; memory records are added in time order to keep totals right. */
static inline void rich_raw(rb_buf *b)
{
    rb_header(b, 1, 0);
    rb_info(b, RICH_PID, "Python", 1e9);
    uint32_t lens[S_COUNT - 1];
    for (int i = 0; i < S_COUNT - 1; i++)
        lens[i] = (uint32_t)strlen(rich_strings[i]);
    rb_strings(b, 1, rich_strings, lens, S_COUNT - 1);
    rb_clock(b, 0, 0, RICH_R0);
    rb_buf e = {0}, e2 = {0};
    rich_mem st = {8192, 65536}; /* 0x9000 exists before the trace */
    ev_thread_name(&e, S_THREAD, 10);
    ev_annotation(&e, S_STEP1, 1000, 100000);
    ev_op_full(&e, S_LINEAR, 2000, 20000, AIP_OPF_SEQ | AIP_OPF_SHAPES | AIP_OPF_STACK, 1, 0,
               S_SHAPES, S_DTYPES, S_STACK, S_MODULE);
    ev_op_full(&e, S_ADDMM, 3000, 15000, AIP_OPF_SHAPES | AIP_OPF_STACK, 0, 0, S_SHAPES,
               S_DTYPES, S_STACK, 0);
    rich_mem_ev(&e, &st, 4000, 0x1000, 1024);
    rich_mem_ev(&e, &st, 5000, 0x2000, 2048);
    rich_mem_ev(&e, &st, 14000, 0x1000, -1024);
    ev_op(&e, S_HOSTILE, 21000, 22000);
    ev_op(&e, S_BADUTF8, 22000, 22500);
    ev_range(&e, S_LOADER, S_DOMAIN, 23000, 24000);
    ev_mark(&e, S_MARK, 0, 25000);
    ev_range_start(&e, S_RANGE2, 0, 26000, 77);
    ev_op(&e, S_EVAL, 30000, 50000);
    ev_op_full(&e, S_ADDMM_BWD, 31000, 49000, AIP_OPF_SEQ | AIP_OPF_FWD | AIP_OPF_BACKWARD, 1,
               RICH_TID, 0, 0, 0, 0);
    ev_op(&e, S_MM, 32000, 40000);
    rich_mem_ev(&e, &st, 33000, 0x3000, 4096);
    rich_mem_ev(&e, &st, 34000, 0x4000, 512);
    rich_mem_ev(&e, &st, 35000, 0x5000, 256);
    rich_mem_ev(&e, &st, 45000, 0x3000, -4096);
    rich_mem_ev(&e, &st, 55000, 0x4000, -512);
    ev_op(&e, S_OPTIM, 60000, 70000);
    rich_mem_ev(&e, &st, 61000, 0x9000, -8192);
    rich_mem_ev(&e, &st, 90000, 0x2000, -2048);
    ev_annotation(&e, S_STEP2, 100000, 200000);
    ev_op_full(&e, S_EMPTY, 110000, 120000, AIP_OPF_SEQ, 2, 0, 0, 0, 0, 0);
    ev_gc(&e, 130000, 131000);
    rb_events(b, RICH_TID, &e);
    ev_op(&e2, S_MM, 40000, 45000);
    ev_range_end(&e2, 46000, 77);
    rb_events(b, RICH_TID2, &e2);
    rb_free(&e);
    rb_free(&e2);
    rb_stats1(b, RICH_TID, 40, 0);
    rb_clock(b, 300000, 300000, RICH_R0 + 300000);
    rb_end(b);
}

static const char rich_info_json[] =
    "{\"config\": {\"common_config\": {\"activities\": [\"ProfilerActivity.CPU\", "
    "\"ProfilerActivity.NPU\"], \"schedule\": {\"wait\": 0, \"active\": 2, \"warmup\": 0, "
    "\"repeat\": 1, \"skip_first\": 0}, \"record_shapes\": true, \"profile_memory\": true, "
    "\"with_stack\": true, \"with_flops\": false, \"with_modules\": true}, "
    "\"experimental_config\": {\"_profiler_level\": \"Level1\", \"_data_simplification\": true, "
    "\"record_op_args\": true, \"_export_type\": [\"text\"], \"_gc_detect_threshold\": 1.0, "
    "\"_mstx\": true, \"_host_sys\": []}}, \"rank_id\": -1}";

static const char rich_metadata_json[] =
    "{\"ENV_VARIABLES\": {\"HCCL_ALGO\": \"ring\", \"ASCEND_GLOBAL_LOG_LEVEL\": \"\"}, "
    "\"key1\": \"v1\", \"nested\": {\"a\": [1, 2], \"u\": \"\xe6\x97\xa5\", \"q\": \"'\\\"\"}}";

/* dir/FRAMEWORK/aiprof_4242.raw, profiler_info.json, profiler_metadata.json;
 * info/metadata NULL to leave them out. */
static inline void rich_dir(const char *dir, const char *info, const char *metadata)
{
    rb_buf b = {0};
    rich_raw(&b);
    rb_result_dir(dir, RICH_PID, &b, info);
    rb_free(&b);
    if (metadata) {
        char p[512];
        snprintf(p, sizeof p, "%s/profiler_metadata.json", dir);
        rb_write_file(p, metadata, strlen(metadata));
    }
}

#endif
