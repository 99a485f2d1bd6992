/*
 * inputs.cpp — record_shapes: an op's "Input Dims" and "Input type" texts,
 * in torch's convention, made and interned once per (op, raw inputs) on
 * each thread.
 */
#include "inputs.h"

#include <c10/core/ScalarTypeToTypeMeta.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace aiprof_torch {

namespace {

/* Input descriptions by op and shapes: training loops run the same ops on
 * the same shapes, so the texts are made and interned once per (op, raw
 * inputs).  An open-addressing table per thread (a CNN step has a few
 * hundred distinct keys; a small direct-mapped cache thrashed), its keys
 * in a grow-only arena; both are dropped and refilled if a program with
 * ever-changing shapes makes them large.  Before the table, the entry the
 * thread's sequence of ops predicts is tried (ShapeCache, inputs.h): a
 * step that repeats the last one hashes no key and probes no slot.
 *
 * An op's raw key and its texts are made in grow-only buffers per thread,
 * so inputs of any size are described (torch.where on three 16-D tensors
 * needs 57 words).  Only past kKeyMax key words or kTextMax characters of
 * text (some 20000 dimensions in all) are the remaining inputs cut, and then
 * visibly: they become one last entry "..." ([[2, 3], "..."] and
 * [float, ...]), never an empty description.  kTextMax keeps a text under
 * libaiprof's string length limit (64 KiB), which would cut it anywhere. */
constexpr uint32_t kKeyMax = 1u << 15;      /* int64s: 256 KiB */
constexpr uint32_t kTextMax = 60000;
constexpr uint32_t kShapeSlotsMax = 1u << 16;
constexpr uint32_t kKeyArenaMax = 1u << 20; /* int64s: 8 MiB */
static_assert(kKeyMax <= UINT16_MAX, "ShapeEntry::nkey is 16 bits");

/* The raw description of the inputs (kind, dtype, sizes). */
enum : int64_t {
    kTensor = 1, kUndefined, kScalar, kTensorList, kScalarList, kOther, kNested,
    kTruncated /* the inputs from here on are not described */
};

/* key_room() past the key's capacity. */
__attribute__((noinline, cold)) bool key_grow(InputTexts *s, uint32_t used, size_t n)
{
    if (used + n > kKeyMax)
        return false;
    uint32_t cap = s->key_cap ? s->key_cap : 64;
    while (cap < used + n)
        cap *= 2;
    cap = cap < kKeyMax ? cap : kKeyMax;
    auto *key = static_cast<int64_t *>(realloc(s->key, sizeof(int64_t) * cap));
    if (!key)
        return false;
    s->key = key;
    s->key_cap = cap;
    return true;
}

/* Room in the key for `n` more words after the first `used`; false past
 * kKeyMax or without memory.  Grows only when an op has more inputs than
 * any before it on this thread; inline, since it runs for every input. */
inline bool key_room(InputTexts *s, uint32_t used, size_t n)
{
    return used + n <= s->key_cap || key_grow(s, used, n);
}

/* Append input `v` to the key, leaving a word for kTruncated after it;
 * false if there is no room for it. */
bool key_input(InputTexts *s, const c10::IValue &v, uint32_t &n)
{
    if (!key_room(s, n, 3))
        return false;
    if (v.isTensor()) {
        const at::Tensor &t = v.toTensor();
        if (!t.defined()) {
            s->key[n++] = kUndefined;
        } else if (t.is_nested()) {
            s->key[n++] = kNested;
            s->key[n++] = (int64_t)t.scalar_type();
        } else {
            auto sizes = t.sizes();
            if (!key_room(s, n, 4 + sizes.size()))
                return false;
            s->key[n++] = kTensor;
            s->key[n++] = (int64_t)t.scalar_type();
            s->key[n++] = (int64_t)sizes.size();
            for (int64_t d : sizes)
                s->key[n++] = d;
        }
    } else if (v.isScalar()) {
        s->key[n++] = kScalar;
    } else if (!v.isList()) { /* None, str, device...: the inline tag test first */
        s->key[n++] = kOther;
    } else if (v.isIntList() || v.isDoubleList() || v.isBoolList()) {
        /* Before isTensorList(), which compares type objects (~100
         * instructions): int lists are the common lists (a convolution's
         * stride, padding, dilation), and a list has one element type. */
        s->key[n++] = kScalarList;
    } else if (v.isTensorList()) {
        s->key[n++] = kTensorList;
    } else {
        s->key[n++] = kOther;
    }
    return true;
}

/* False only without memory for even a cut key. */
bool raw_key(const at::RecordFunction &fn, InputTexts *s)
{
    uint32_t n = 0;
    auto inputs = fn.inputs();
    for (size_t i = 0; i < inputs.size(); i++) {
        if (!key_input(s, inputs[i], n)) {
            if (n >= s->key_cap)
                return false;
            s->key[n++] = kTruncated;
            break;
        }
    }
    s->nkey = n;
    return true;
}

char *put_int(char *p, int64_t v)
{
    auto r = std::to_chars(p, p + 24, v);
    return r.ptr;
}

/* Room for `n` more characters and a NUL; grows like the key. */
bool text_room(TextBuf &b, size_t n)
{
    if (b.len + n + 1 <= b.cap)
        return true;
    size_t cap = b.cap ? b.cap : 512;
    while (cap < b.len + n + 1)
        cap *= 2;
    if (cap > UINT32_MAX)
        return false;
    auto *p = static_cast<char *>(realloc(b.p, cap));
    if (!p)
        return false;
    b.p = p;
    b.cap = (uint32_t)cap;
    return true;
}

void text_put(TextBuf &b, const char *t, size_t n)
{
    memcpy(b.p + b.len, t, n);
    b.len += (uint32_t)n;
}

/* torch's record_shapes convention from the raw key: a tensor's sizes and
 * dtype name ("float"), [] and "Scalar" / "TensorList" / "ScalarList" / ""
 * for the rest; written "[[2, 3], []]" and "[float, Scalar]", into
 * s->shapes_text and s->dtypes_text.  Inputs that would take either text
 * past kTextMax, or that the key cut, are one last entry "..." (a JSON
 * string among the shapes).  False only without memory. */
bool format_key(InputTexts *s)
{
    TextBuf &sh = s->shapes_text, &dt = s->dtypes_text;
    sh.len = dt.len = 0;
    if (!text_room(sh, 1) || !text_room(dt, 1))
        return false;
    text_put(sh, "[", 1);
    text_put(dt, "[", 1);
    for (uint32_t i = 0, k = 0; i < s->nkey; k++) {
        uint32_t sh0 = sh.len, dt0 = dt.len; /* where to cut */
        size_t sep = k ? 2 : 0;
        int64_t tag = s->key[i++];
        bool cut = tag == kTruncated;
        if (!cut) {
            if (!text_room(sh, sep + 2) || !text_room(dt, sep))
                return false;
            text_put(sh, ", ", sep);
            text_put(dt, ", ", sep);
            const char *name = "";
            size_t nlen = 0;
            switch (tag) {
            case kTensor: {
                c10::ScalarType st = (c10::ScalarType)s->key[i++];
                int64_t nd = s->key[i++];
                text_put(sh, "[", 1);
                for (int64_t d = 0; d < nd; d++) {
                    if (!text_room(sh, 26)) /* ", " and to_chars' 24 */
                        return false;
                    if (d)
                        text_put(sh, ", ", 2);
                    sh.len = (uint32_t)(put_int(sh.p + sh.len, s->key[i++]) - sh.p);
                }
                text_put(sh, "]", 1);
                auto tn = c10::scalarTypeToTypeMeta(st).name();
                name = tn.data();
                nlen = tn.size();
                break;
            }
            case kNested: i++; text_put(sh, "[]", 2); break;
            case kScalar: name = "Scalar"; text_put(sh, "[]", 2); break;
            case kTensorList: name = "TensorList"; text_put(sh, "[]", 2); break;
            case kScalarList: name = "ScalarList"; text_put(sh, "[]", 2); break;
            default: text_put(sh, "[]", 2); break;
            }
            if (tag != kTensor)
                nlen = strlen(name);
            if (!text_room(dt, nlen))
                return false;
            text_put(dt, name, nlen);
            /* Room left for the cut entry and the closing bracket. */
            cut = sh.len > kTextMax - 16 || dt.len > kTextMax - 16;
        }
        if (cut) {
            sh.len = sh0;
            dt.len = dt0;
            if (!text_room(sh, 16) || !text_room(dt, 16))
                return false;
            text_put(sh, ", ", sep);
            text_put(dt, ", ", sep);
            text_put(sh, "\"...\"", 5);
            text_put(dt, "...", 3);
            break;
        }
    }
    if (!text_room(sh, 1) || !text_room(dt, 1))
        return false;
    text_put(sh, "]", 1);
    text_put(dt, "]", 1);
    sh.p[sh.len] = '\0';
    dt.p[dt.len] = '\0';
    return true;
}

void shape_cache_clear(ShapeCache &c)
{
    free(c.slots);
    free(c.keys);
    SeqRec *seq = c.seq;
    c = ShapeCache{};
    c.seq = seq;
}

/* The sequence is learnt again from the next op. */
void seq_forget(ShapeCache &c)
{
    c.len = c.cursor = c.ops = c.misses = 0;
    c.follow = false;
}

/* A table twice as large, the entries moved by their stored hashes.  The
 * sequence names slots, which move: it is learnt again. */
bool shape_cache_grow(ShapeCache &c)
{
    uint32_t cap = c.cap ? c.cap * 2 : 512;
    auto *slots = static_cast<ShapeEntry *>(calloc(cap, sizeof(ShapeEntry)));
    if (!slots)
        return false;
    for (uint32_t i = 0; i < c.cap; i++) {
        if (!c.slots[i].hash)
            continue;
        uint32_t j = (uint32_t)(c.slots[i].hash >> 32) & (cap - 1);
        while (slots[j].hash)
            j = (j + 1) & (cap - 1);
        slots[j] = c.slots[i];
    }
    free(c.slots);
    c.slots = slots;
    c.cap = cap;
    seq_forget(c);
    return true;
}

/* Room for n more key words in the arena. */
bool shape_cache_reserve(ShapeCache &c, uint32_t n)
{
    if (c.keys_used + n <= c.keys_cap)
        return true;
    uint32_t cap = c.keys_cap ? c.keys_cap * 2 : 4096;
    while (cap < c.keys_used + n)
        cap *= 2;
    auto *keys = static_cast<int64_t *>(realloc(c.keys, sizeof(int64_t) * cap));
    if (!keys)
        return false;
    c.keys = keys;
    c.keys_cap = cap;
    return true;
}

/* A key the cache does not hold (hash `h`): describe the inputs, then keep
 * the ids.  Cold and apart: the hit path that runs for every op stays
 * short, in a few cache lines of code. */
__attribute__((noinline, cold)) const ShapeEntry *add_entry(InputTexts *s, uint64_t h,
                                                             aip_string_id name)
{
    ShapeCache &c = s->shapes;
    size_t key_bytes = sizeof(int64_t) * (size_t)s->nkey;
    ShapeEntry made{h, name, {0, 0}, 0, (uint16_t)s->nkey, 0, 0};
    if (format_key(s)) {
        made.ids.shapes_id = aip_intern(s->shapes_text.p);
        made.ids.dtypes_id = aip_intern(s->dtypes_text.p);
    }
    if (c.used >= kShapeSlotsMax || c.keys_used + s->nkey > kKeyArenaMax)
        shape_cache_clear(c);
    if ((c.used + 1) * 2 > c.cap && !shape_cache_grow(c))
        return nullptr;
    if (!shape_cache_reserve(c, s->nkey))
        return nullptr;
    made.key_off = c.keys_used;
    made.last_pos = UINT32_MAX; /* not in the sequence */
    memcpy(c.keys + c.keys_used, s->key, key_bytes);
    c.keys_used += s->nkey;
    uint32_t i = (uint32_t)(h >> 32) & (c.cap - 1);
    while (c.slots[i].hash)
        i = (i + 1) & (c.cap - 1);
    c.slots[i] = made;
    c.used++;
    return &c.slots[i];
}

/* The key just built is the one at `key_off` (`nkey` words; a few:
 * inline, no call into libc). */
inline bool same_key(const ShapeCache &c, uint32_t key_off, uint32_t nkey, const InputTexts *s)
{
    if (nkey != s->nkey)
        return false;
    const int64_t *a = c.keys + key_off, *b = s->key;
    for (uint32_t i = 0; i < nkey; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* The entry of the key just built, by its hash: from the table or made. */
__attribute__((noinline)) const ShapeEntry *find_or_add(InputTexts *s, aip_string_id name)
{
    uint64_t h = (name + 1) * 0x9E3779B97F4A7C15ull;
    for (uint32_t i = 0; i < s->nkey; i++)
        h = (h ^ (uint64_t)s->key[i]) * 0x100000001B3ull;
    h |= 1; /* 0 marks an empty slot */
    ShapeCache &c = s->shapes;
    if (c.cap) {
        for (uint32_t i = (uint32_t)(h >> 32) & (c.cap - 1);; i = (i + 1) & (c.cap - 1)) {
            const ShapeEntry &e = c.slots[i];
            if (!e.hash)
                break;
            if (e.hash == h && e.name_id == name && same_key(c, e.key_off, e.nkey, s))
                return &e;
        }
    }
    return add_entry(s, h, name);
}

/* Appends the op just described (entry `e` in `slot`) to the sequence
 * being learnt. */
inline void seq_learn(ShapeCache &c, ShapeEntry *e, uint32_t slot)
{
    if (c.len >= kSeqLen)
        return;
    c.seq[c.len] = SeqRec{slot, e->name_id, e->ids, e->key_off, e->nkey};
    e->last_pos = c.len++;
}

/* An op the sequence did not predict, found by its hash (or made). */
__attribute__((noinline)) const InputIds *seq_miss(InputTexts *s, aip_string_id name)
{
    ShapeCache &c = s->shapes;
    ShapeEntry *e = const_cast<ShapeEntry *>(find_or_add(s, name));
    if (!e)
        return nullptr;
    if (!c.seq && !(c.seq = static_cast<SeqRec *>(malloc(sizeof(SeqRec) * kSeqLen))))
        return &e->ids; /* no memory for a sequence: the table alone */
    uint32_t slot = (uint32_t)(e - c.slots) + 1;
    if (c.len == kSeqLen) { /* learnt: replaying; relearnt if it keeps missing */
        if (++c.misses > kSeqLen / 4) {
            seq_forget(c);
            seq_learn(c, e, slot);
            return &e->ids;
        }
    }
    /* Where the sequence has it (its last place): the ops after it there
     * predict the ops after it now. */
    uint32_t p = e->last_pos;
    c.follow = p < c.len && c.seq[p].slot == slot && p + 1 < c.len;
    c.cursor = p + 1;
    seq_learn(c, e, slot);
    return &e->ids;
}

/* Input texts' ids for this op, from the thread's cache or made now; the
 * ids are 0 when the inputs cannot be described.  The op the thread's
 * sequence predicts is tried first (ShapeCache). */
const InputIds *lookup(const at::RecordFunction &fn, InputTexts *s, aip_string_id name)
{
    if (!raw_key(fn, s))
        return nullptr;
    ShapeCache &c = s->shapes;
    if (c.follow) {
        SeqRec &r = c.seq[c.cursor];
        if (__builtin_expect(r.name_id == name && same_key(c, r.key_off, r.nkey, s), 1)) {
            c.follow = ++c.cursor < c.len;
            if (c.len < kSeqLen) { /* still learning: the repeat is learnt too */
                c.seq[c.len] = r;
                c.slots[r.slot - 1].last_pos = c.len++;
            } else if (++c.ops == kSeqLen) {
                c.ops = c.misses = 0;
            }
            return &r.ids;
        }
    }
    return seq_miss(s, name);
}

} // namespace

const InputIds *describe_inputs(InputTexts &in, const at::RecordFunction &fn,
                                aip_string_id name)
{
    return lookup(fn, &in, name);
}

void free_inputs(InputTexts &in)
{
    free(in.shapes.seq);
    free(in.shapes.slots);
    free(in.shapes.keys);
    free(in.key);
    free(in.shapes_text.p);
    free(in.dtypes_text.p);
    in = InputTexts{};
}

} // namespace aiprof_torch
