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
 * not be described. */
struct ShapeEntry {
    uint64_t hash; /* 0 = empty */
    aip_string_id name_id, shapes_id, dtypes_id;
    uint32_t key_off;
    uint32_t nkey;
};

struct ShapeCache {
    ShapeEntry *slots;
    uint32_t cap, used;
    int64_t *keys;
    uint32_t keys_used, keys_cap;
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
