/*
 * inputs.h — record_shapes' input descriptions (inputs.cpp), used by the
 * op callback (ops.cpp): one InputTexts per thread, no locks.
 */
#ifndef AIPROF_TORCH_INPUTS_H
#define AIPROF_TORCH_INPUTS_H

#include <aiprof.h>

#include <ATen/record_function.h>

#include <cstdint>

namespace aiprof_torch {

/* One (op, raw inputs) → its interned texts; ids 0 when the inputs could
 * not be described.  Two to a cache line. */
struct ShapeEntry {
    uint64_t hash; /* 0 = empty */
    aip_string_id name_id, shapes_id, dtypes_id;
    uint32_t key_off;
    uint16_t nkey; /* at most kKeyMax words */
    uint16_t pad;
    uint32_t last_pos; /* where the thread's sequence (ShapeCache) last had it */
};

/* The sequence of entries the thread found, the last kSeqLen of them. */
constexpr uint32_t kSeqLen = 8192;

struct ShapeCache {
    ShapeEntry *slots;
    uint32_t cap, used;
    int64_t *keys;
    uint32_t keys_used, keys_cap;
    /* A training loop describes the same ops in the same order at every
     * step.  Each op's entry (its slot + 1) is appended to `seq`; once an
     * entry found by its hash was seen within the last kSeqLen ops, the
     * entries that followed it then are predicted for the ops that follow
     * it now, one after the other, and checked key word by key word
     * before the key is hashed and the table probed.  An entry may appear
     * in several places of a step (a transpose, an empty): following the
     * sequence, not each entry's last successor, tells them apart. */
    uint32_t pos;       /* entries appended so far (wraps) */
    uint32_t cursor;    /* the place in seq that predicts the next op */
    bool follow;        /* cursor is valid */
    uint32_t seq[kSeqLen];
};

struct TextBuf {
    char *p;
    uint32_t len, cap;
};

/* A thread's cache and work buffers; zero-initialised means empty. */
struct InputTexts {
    ShapeCache shapes;
    int64_t *key;           /* the op's raw key being built */
    uint32_t nkey, key_cap;
    TextBuf shapes_text, dtypes_text;
};

/* The ids of the inputs' texts for op `name`, from the cache or made now;
 * NULL without memory. */
const ShapeEntry *describe_inputs(InputTexts &in, const at::RecordFunction &fn,
                                  aip_string_id name);

/* Frees the cache and buffers (a thread exits). */
void free_inputs(InputTexts &in);

} // namespace aiprof_torch

#endif
