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

/* The ids of an op's input texts; 0 when the inputs could not be
 * described. */
struct InputIds {
    aip_string_id shapes_id, dtypes_id;
};

/* One (op, raw inputs) → its interned texts.  Two to a cache line. */
struct ShapeEntry {
    uint64_t hash; /* 0 = empty */
    aip_string_id name_id;
    InputIds ids;
    uint32_t key_off;
    uint16_t nkey; /* at most kKeyMax words */
    uint16_t pad;
    uint32_t last_pos; /* where the thread's sequence (ShapeCache) last has it */
};

/* An op of the thread's sequence: what a repeat needs, without its entry. */
struct SeqRec {
    uint32_t slot; /* the entry's slot + 1 */
    aip_string_id name_id;
    InputIds ids;
    uint32_t key_off;
    uint32_t nkey;
};

constexpr uint32_t kSeqLen = 8192;

struct ShapeCache {
    ShapeEntry *slots;
    uint32_t cap, used;
    int64_t *keys;
    uint32_t keys_used, keys_cap;
    /* A training loop describes the same ops in the same order at every
     * step.  The thread learns its sequence of ops (up to kSeqLen of them,
     * repeats included), and afterwards replays it: once an op found by its
     * hash is in the sequence, the ops that followed it there are predicted
     * for the ops that follow now, one after the other, and each is checked
     * key word by key word (against the key arena, in the order the keys
     * were first seen) before any hash or table slot is touched.  A repeat
     * reads only the sequence and the arena, both in order; an entry that
     * appears at several places of a step (a transpose, an empty) is told
     * apart by its place.  Too many misses (a loop that changed) and the
     * sequence is learnt again. */
    SeqRec *seq;      /* kSeqLen records, or NULL until needed */
    uint32_t len;     /* records learnt */
    uint32_t cursor;  /* the record predicting the next op, when follow */
    bool follow;
    uint32_t ops, misses; /* since the sequence was full: to relearn */
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
const InputIds *describe_inputs(InputTexts &in, const at::RecordFunction &fn,
                                  aip_string_id name);

/* Frees the cache and buffers (a thread exits). */
void free_inputs(InputTexts &in);

} // namespace aiprof_torch

#endif
