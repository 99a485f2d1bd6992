/*
 * ops.cpp — ATen ops and record_function ranges → libaiprof.
 *
 * Two global RecordFunction callbacks are registered once, disabled: one
 * without and one with inputs (boxing inputs costs, so it only runs when
 * record_shapes is on).  While a trace records the right one is enabled;
 * being global, they see every thread, autograd's included.  Each callback
 * forwards at once: ops (FUNCTION, BACKWARD_FUNCTION, ...) to
 * aip_op_begin/aip_op_end, USER_SCOPE ranges (record_function,
 * torch.profiler's ProfilerStep#N, DataLoader and optimizer ranges) to
 * aip_annotation_push/pop.  Names are passed as they are: the core interns
 * them during the call.
 *
 * "Fwd thread id": RecordFunction numbers threads itself; backward ops
 * carry the forward thread's number.  The analyser knows OS thread ids, so
 * backward ops carry the OS tid, from a (RecordFunction id → OS tid) table.
 * A thread notes its pair the first time it runs a recorded op; but the
 * forward thread may never run one while a trace records (the forward ran
 * before the trace, in a thread that is gone by now), so threads are also
 * noted when they start (aiprof_torch_note_thread(), called by the Python
 * package on every threading.Thread it starts) and when they switch
 * recording on — once per thread, nothing per op.
 *
 * Cost: everything on the path is per-thread and lock-free; op names and
 * input descriptions are cached per thread (below), so a repeated op costs
 * pointer and key comparisons, not string hashing and formatting.  Texts
 * are interned once and their ids passed, so the core hashes nothing per op.
 */
#include "aiprof_torch.h"
#include "flops.h"
#include "op_context.h"

#include <aiprof.h>

#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>
#include <c10/core/ScalarTypeToTypeMeta.h>
#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
#include <pthread.h>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

std::mutex g_lock;
at::CallbackHandle g_plain = at::INVALID_CALLBACK_HANDLE;
at::CallbackHandle g_inputs = at::INVALID_CALLBACK_HANDLE;
int g_enabled_kind = 0; /* 0 off, 1 plain, 2 with inputs */
std::atomic<int> g_record_shapes{0};
std::atomic<int> g_with_flops{0};
std::atomic<unsigned> g_want{0};
std::atomic<aiprof_op_context_fn> g_context_fn{nullptr};
thread_local std::string t_error;

constexpr size_t kMaxRfThreads = 1 << 14;
std::atomic<uint64_t> g_os_tid[kMaxRfThreads];

/* ---- per-thread state --------------------------------------------------
 * One heap block per thread, reached through a single initial-exec TLS
 * pointer: thread_local objects in a dlopen()ed library cost a
 * __tls_get_addr call per access, which showed up in profiles. */

/* Op names → string ids.  RecordFunction names of ATen ops point into the
 * operator schemas and repeat endlessly; a slot is reused only when both
 * the pointer and the text match.  Names of autograd nodes and
 * record_function ranges live in per-call strings, so their pointers miss:
 * a second table keyed by the text's hash finds them without going to the
 * process-wide string table every time. */
struct NameSlot {
    const char *ptr;
    aip_string_id id;
    char text[60];
};

struct TextSlot {
    uint64_t hash;
    uint32_t len;
    aip_string_id id;
    char text[80];
};

/* Input descriptions by op and shapes: training loops run the same ops on
 * the same shapes, so the texts are made and interned once per (op, raw
 * inputs).  An open-addressing table per thread (a CNN step has a few
 * hundred distinct keys; a small direct-mapped cache thrashed), its keys
 * in a grow-only arena; both are dropped and refilled if a program with
 * ever-changing shapes makes them large.
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

struct ThreadState {
    uint64_t os_tid;
    int paused; /* disable_profiler_in_child_thread(): this thread's ops are not recorded */
    NameSlot names[256];
    TextSlot texts[256];
    ShapeCache shapes;
    int64_t *key;
    uint32_t nkey, key_cap;
    TextBuf shapes_text, dtypes_text;
};

__thread ThreadState *t_state __attribute__((tls_model("initial-exec")));
pthread_key_t g_state_key;
pthread_once_t g_state_once = PTHREAD_ONCE_INIT;

/* Threads come and go (pools, DataLoader threads): a thread's block is
 * freed when it exits. */
void free_state(void *p)
{
    auto *s = static_cast<ThreadState *>(p);
    free(s->shapes.slots);
    free(s->shapes.keys);
    free(s->key);
    free(s->shapes_text.p);
    free(s->dtypes_text.p);
    free(s);
    t_state = nullptr;
}

void make_state_key() { pthread_key_create(&g_state_key, free_state); }

/* Put the calling thread's pair in the table; its OS tid. */
uint64_t note_thread()
{
    uint64_t os_tid = (uint64_t)syscall(SYS_gettid);
    uint64_t rf = at::RecordFunction::currentThreadId();
    if (rf < kMaxRfThreads)
        g_os_tid[rf].store(os_tid, std::memory_order_relaxed);
    return os_tid;
}

ThreadState *thread_state()
{
    ThreadState *s = t_state;
    if (__builtin_expect(s != nullptr, 1))
        return s;
    pthread_once(&g_state_once, make_state_key);
    s = static_cast<ThreadState *>(calloc(1, sizeof(ThreadState)));
    if (!s)
        return nullptr;
    pthread_setspecific(g_state_key, s);
    s->os_tid = note_thread();
    t_state = s;
    return s;
}

uint64_t os_tid_of(uint64_t rf_thread)
{
    if (!rf_thread || rf_thread >= kMaxRfThreads)
        return 0;
    return g_os_tid[rf_thread].load(std::memory_order_relaxed);
}

/* A word at a time: names are short, and this runs on every pointer miss. */
uint64_t text_hash(const char *p, size_t n)
{
    uint64_t h = (n + 1) * 0x9E3779B97F4A7C15ull, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0x100000001B3ull;
    return h ^ (h >> 32);
}

aip_string_id name_by_text(ThreadState *s, const char *name, size_t len)
{
    uint64_t h = text_hash(name, len);
    TextSlot &t = s->texts[h & 255];
    if (t.id && t.hash == h && t.len == len && memcmp(t.text, name, len) == 0)
        return t.id;
    aip_string_id id = aip_intern(name);
    if (len < sizeof t.text) {
        t.hash = h;
        t.len = (uint32_t)len;
        t.id = id;
        memcpy(t.text, name, len + 1);
    }
    return id;
}

aip_string_id name_id(ThreadState *s, const char *name)
{
    NameSlot &e = s->names[((uintptr_t)name >> 3) & 255];
    if (e.ptr == name && e.id && strcmp(e.text, name) == 0)
        return e.id;
    size_t len = strlen(name);
    aip_string_id id = name_by_text(s, name, len);
    e.ptr = name;
    e.id = len < sizeof e.text ? id : 0;
    memcpy(e.text, name, len < sizeof e.text ? len + 1 : 0);
    return id;
}

/* The raw description of the inputs (kind, dtype, sizes). */
enum : int64_t {
    kTensor = 1, kUndefined, kScalar, kTensorList, kScalarList, kOther, kNested,
    kTruncated /* the inputs from here on are not described */
};

/* Room in the key for `n` more words after the first `used`; false past
 * kKeyMax or without memory.  Grows only when an op has more inputs than
 * any before it on this thread. */
bool key_room(ThreadState *s, uint32_t used, size_t n)
{
    if (used + n <= s->key_cap)
        return true;
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

/* Append input `v` to the key, leaving a word for kTruncated after it;
 * false if there is no room for it. */
bool key_input(ThreadState *s, const c10::IValue &v, uint32_t &n)
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
    } else if (v.isTensorList()) {
        s->key[n++] = kTensorList;
    } else if (v.isIntList() || v.isDoubleList() || v.isBoolList()) {
        s->key[n++] = kScalarList;
    } else {
        s->key[n++] = kOther;
    }
    return true;
}

/* False only without memory for even a cut key. */
bool raw_key(const at::RecordFunction &fn, ThreadState *s)
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
bool format_key(ThreadState *s)
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
    c = ShapeCache{};
}

/* A table twice as large, the entries moved by their stored hashes. */
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

/* Input texts' ids for this op, from the thread's cache or made now; the
 * entry's ids are 0 when the inputs cannot be described. */
const ShapeEntry *input_texts(const at::RecordFunction &fn, ThreadState *s, aip_string_id name)
{
    if (!raw_key(fn, s))
        return nullptr;
    uint64_t h = (name + 1) * 0x9E3779B97F4A7C15ull;
    for (uint32_t i = 0; i < s->nkey; i++)
        h = (h ^ (uint64_t)s->key[i]) * 0x100000001B3ull;
    h |= 1; /* 0 marks an empty slot */
    ShapeCache &c = s->shapes;
    size_t key_bytes = sizeof(int64_t) * (size_t)s->nkey;
    if (c.cap) {
        for (uint32_t i = (uint32_t)(h >> 32) & (c.cap - 1);; i = (i + 1) & (c.cap - 1)) {
            const ShapeEntry &e = c.slots[i];
            if (!e.hash)
                break;
            if (e.hash == h && e.name_id == name && e.nkey == s->nkey &&
                memcmp(c.keys + e.key_off, s->key, key_bytes) == 0)
                return &e;
        }
    }
    /* A miss: describe the inputs, then keep the ids. */
    ShapeEntry made{h, name, 0, 0, 0, s->nkey};
    if (format_key(s)) {
        made.shapes_id = aip_intern(s->shapes_text.p);
        made.dtypes_id = aip_intern(s->dtypes_text.p);
    }
    if (c.used >= kShapeSlotsMax || c.keys_used + s->nkey > kKeyArenaMax)
        shape_cache_clear(c);
    if ((c.used + 1) * 2 > c.cap && !shape_cache_grow(c))
        return nullptr;
    if (!shape_cache_reserve(c, s->nkey))
        return nullptr;
    made.key_off = c.keys_used;
    memcpy(c.keys + c.keys_used, s->key, key_bytes);
    c.keys_used += s->nkey;
    uint32_t i = (uint32_t)(h >> 32) & (c.cap - 1);
    while (c.slots[i].hash)
        i = (i + 1) & (c.cap - 1);
    c.slots[i] = made;
    c.used++;
    return &c.slots[i];
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    if (!AIP_RECORDING())
        return nullptr;
    ThreadState *s = thread_state();
    if (!s || s->paused)
        return nullptr;
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
        aip_annotation_push_id(name_id(s, fn.name()));
        return nullptr;
    }
    aip_op_info op{};
    op.name_id = name_id(s, fn.name());
    op.sequence_number = fn.seqNr();
    op.is_backward = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
    op.fwd_thread_id = os_tid_of(fn.forwardThreadId());
    if (g_record_shapes.load(std::memory_order_relaxed) && fn.needsInputs()) {
        try {
            if (const ShapeEntry *in = input_texts(fn, s, op.name_id)) {
                op.input_shapes_id = in->shapes_id;
                op.input_dtypes_id = in->dtypes_id;
            }
        } catch (...) { /* an input that cannot be described: no shapes */
        }
        if (g_with_flops.load(std::memory_order_relaxed)) {
            try {
                op.flops = aiprof_torch::op_flops(op.name_id, fn.inputs());
            } catch (...) { /* no estimate */
            }
        }
    }
    unsigned want = g_want.load(std::memory_order_relaxed);
    aiprof_op_context_fn ctx_fn = g_context_fn.load(std::memory_order_relaxed);
    if (want && ctx_fn) {
        aiprof_op_context ctx{nullptr, nullptr, 0, 0};
        /* torch gives backward ops no Python stack: they run in the engine. */
        ctx_fn(op.is_backward ? (want & ~AIPROF_WANT_STACK) : want, &ctx);
        op.call_stack = ctx.call_stack;
        op.module_hierarchy = ctx.module_hierarchy;
        op.call_stack_id = ctx.call_stack_id;
        op.module_hierarchy_id = ctx.module_hierarchy_id;
    }
    aip_op_begin(&op);
    return nullptr;
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *)
{
    if (!AIP_RECORDING())
        return;
    /* Like a trace that starts or stops inside an op, a pause that does:
     * libaiprof copes with an end whose begin it did not see, and the
     * other way round. */
    if (t_state && t_state->paused)
        return;
    if (fn.scope() == at::RecordScope::USER_SCOPE)
        aip_annotation_pop();
    else
        aip_op_end();
}

void apply_enabled(int kind)
{
    if (kind == g_enabled_kind)
        return;
    if (kind == 1)
        at::reenableCallback(g_plain);
    else if (kind == 2)
        at::reenableCallback(g_inputs);
    if (g_enabled_kind == 1)
        at::disableCallback(g_plain);
    else if (g_enabled_kind == 2)
        at::disableCallback(g_inputs);
    g_enabled_kind = kind;
}

/* Each thread keeps its own copy of torch's callback list and brings it up
 * to date, under torch's global callback mutex, at its first op after the
 * list changed (apply_enabled changes it at every trace start and stop).
 * That mutex is not fork-safe: a child forked (a DataLoader worker) while
 * another thread of the parent held it, whose first op then needs the
 * update, waits forever.  Updating the forking thread's copy just before
 * the fork (waiting for the mutex if another thread holds it) leaves the
 * child's thread nothing to update. */
void sync_callbacks_before_fork()
{
    try {
        (void)at::getStepCallbacksUnlessEmpty(at::RecordScope::FUNCTION);
    } catch (...) {
    }
}

} // namespace

extern "C" {

int aiprof_torch_abi(void) { return AIPROF_TORCH_ABI; }

#define AIP_STR2(x) #x
#define AIP_STR(x) AIP_STR2(x)
const char *aiprof_torch_built_for(void)
{
    return AIP_STR(TORCH_VERSION_MAJOR) "." AIP_STR(TORCH_VERSION_MINOR);
}

const char *aiprof_torch_error(void) { return t_error.c_str(); }

void aiprof__torch_set_error(const char *msg) { t_error.assign(msg); }

int aiprof_torch_install(void)
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_plain != at::INVALID_CALLBACK_HANDLE)
        return 0;
    try {
        g_plain = at::addGlobalCallback(
            at::RecordFunctionCallback(&on_enter, &on_exit).needsInputs(false));
        at::disableCallback(g_plain);
        g_inputs = at::addGlobalCallback(
            at::RecordFunctionCallback(&on_enter, &on_exit).needsInputs(true));
        at::disableCallback(g_inputs);
        pthread_atfork(sync_callbacks_before_fork, nullptr, nullptr);
    } catch (const std::exception &e) {
        t_error = std::string("cannot register RecordFunction callbacks: ") + e.what();
        return -1;
    }
    return 0;
}

void aiprof_torch_configure(int record_shapes, int with_flops, unsigned want, void *context_fn)
{
    std::lock_guard<std::mutex> guard(g_lock);
    /* FLOPs are estimated from the inputs: they need the boxed inputs too. */
    g_record_shapes.store(record_shapes || with_flops ? 1 : 0);
    g_with_flops.store(with_flops ? 1 : 0);
    g_want.store(want);
    g_context_fn.store(reinterpret_cast<aiprof_op_context_fn>(context_fn));
    if (g_enabled_kind)
        apply_enabled(record_shapes || with_flops ? 2 : 1);
}

void aiprof_torch_note_thread(void) { note_thread(); }

int aiprof_torch_thread_pause(int paused)
{
    ThreadState *s = thread_state();
    if (!s)
        return -1;
    s->paused = paused ? 1 : 0;
    return 0;
}

void aiprof_torch_enable(int on)
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_plain == at::INVALID_CALLBACK_HANDLE)
        return;
    /* The thread that starts a trace may only wait in it while others run
     * the backward of its forward ops. */
    note_thread();
    apply_enabled(on ? (g_record_shapes.load() ? 2 : 1) : 0);
}

} // extern "C"
