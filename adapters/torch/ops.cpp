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
 * them during the call.  An end is forwarded only for a RecordFunction
 * whose begin was, in the same trace (ThreadState.fwd): one that began
 * before the trace, or in the previous of two back-to-back traces, ends
 * there without being a pop with no push.
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
 * input descriptions (inputs.cpp) are cached per thread, so a repeated op costs
 * pointer and key comparisons, not string hashing and formatting.  Texts
 * are interned once and their ids passed, so the core hashes nothing per op.
 */
#include "aiprof_torch.h"
#include "flops.h"
#include "inputs.h"
#include "op_context.h"

#include <aiprof.h>
#include <aiprof_integration.h>

#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
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
/* Threads that asked for shapes on their own (aiprof_torch_thread_options). */
std::atomic<int> g_thread_shapes{0};
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
struct alignas(64) NameSlot { /* one cache line */
    const char *ptr;
    aip_string_id id;
    char text[52];
};

struct TextSlot {
    uint64_t hash;
    uint32_t len;
    aip_string_id id;
    char text[80];
};

/* A RecordFunction this thread forwarded to libaiprof: its address (it
 * does not move while it runs) and the trace generation it went to. */
struct Forwarded {
    const void *fn;
    uint32_t gen;
    bool with_context; /* a USER_SCOPE opened by aip_annotation_begin() */
};
constexpr uint32_t kForwardedMax = 256;

/* What every op reads comes first, in one cache line: the fields after
 * the fwd array were a line of their own for each op's begin and end. */
struct ThreadState {
    uint64_t os_tid;
    uint32_t n_fwd; /* entries in fwd */
    /* disable_profiler_in_child_thread(): libaiprof leaves the thread out
     * (aip_thread_pause); this spares describing ops nobody records. */
    int paused;
    /* enable_profiler_in_child_thread(record_shapes=, with_flops=) */
    int want_shapes, want_flops;
    /* What on_enter forwarded and on_exit has not closed yet, innermost
     * last.  torch calls on_exit for every RecordFunction that ran on_enter,
     * also one that began before the trace recorded (or in the trace before
     * a back-to-back one, or while the thread was paused); only the ends of
     * what was forwarded, in the trace that is recording, are forwarded. */
    Forwarded fwd[kForwardedMax];
    NameSlot names[256];
    TextSlot texts[256];
    aiprof_torch::InputTexts inputs;
};

__thread ThreadState *t_state __attribute__((tls_model("initial-exec")));
pthread_key_t g_state_key;
pthread_once_t g_state_once = PTHREAD_ONCE_INIT;

/* Threads come and go (pools, DataLoader threads): a thread's block is
 * freed when it exits. */
void free_state(void *p)
{
    auto *s = static_cast<ThreadState *>(p);
    if (s->want_shapes) /* the boxing callback stays on until the next switch */
        g_thread_shapes.fetch_sub(1);
    aiprof_torch::free_inputs(s->inputs);
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
    /* Aligned as its type: an op name's slot is one cache line. */
    s = static_cast<ThreadState *>(aligned_alloc(alignof(ThreadState), sizeof(ThreadState)));
    if (!s)
        return nullptr;
    memset(static_cast<void *>(s), 0, sizeof(ThreadState));
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

/* name_id() when the name's slot holds another pointer or text. */
__attribute__((noinline)) aip_string_id name_id_miss(ThreadState *s, const char *name)
{
    NameSlot &e = s->names[((uintptr_t)name >> 3) & 255];
    size_t len = strlen(name);
    aip_string_id id = name_by_text(s, name, len);
    e.ptr = name;
    e.id = len < sizeof e.text ? id : 0;
    memcpy(e.text, name, len < sizeof e.text ? len + 1 : 0);
    return id;
}

/* Inline, the slow path apart: it runs for every op. */
inline aip_string_id name_id(ThreadState *s, const char *name)
{
    NameSlot &e = s->names[((uintptr_t)name >> 3) & 255];
    if (__builtin_expect(e.ptr == name && e.id && strcmp(e.text, name) == 0, 1))
        return e.id;
    return name_id_miss(s, name);
}


/* The list is full: drop the entries of earlier traces (their ends are
 * not forwarded either way; only RecordFunctions that ended on another
 * thread linger).  Whether room was made. */
__attribute__((noinline, cold)) bool forwarded_compact(ThreadState *s, uint32_t gen)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->n_fwd; i++)
        if (s->fwd[i].gen == gen)
            s->fwd[k++] = s->fwd[i];
    s->n_fwd = k;
    return k < kForwardedMax;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    if (!AIP_RECORDING())
        return nullptr;
    ThreadState *s = thread_state();
    if (!s || s->paused)
        return nullptr;
    uint32_t gen = __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    if (s->n_fwd == kForwardedMax && !forwarded_compact(s, gen))
        return nullptr; /* kForwardedMax ranges open in this trace: not recorded */
    s->fwd[s->n_fwd++] = Forwarded{&fn, gen, false};
    unsigned want = g_want.load(std::memory_order_relaxed);
    aiprof_op_context_fn ctx_fn = g_context_fn.load(std::memory_order_relaxed);
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
        if (!want || !ctx_fn) {
            aip_annotation_push_id(name_id(s, fn.name()));
            return nullptr;
        }
        /* with_stack / with_modules: the scope gets the Python stack where
         * it opened (torch's record_function events carry "Call stack" as
         * ops do: Optimizer.step#SGD.step, the user's own scopes) */
        aip_op_info ann{};
        ann.name_id = name_id(s, fn.name());
        ann.sequence_number = -1;
        aiprof_op_context ctx{nullptr, nullptr, 0, 0};
        ctx_fn(want, &ctx);
        ann.call_stack = ctx.call_stack;
        ann.module_hierarchy = ctx.module_hierarchy;
        ann.call_stack_id = ctx.call_stack_id;
        ann.module_hierarchy_id = ctx.module_hierarchy_id;
        s->fwd[s->n_fwd - 1].with_context = true;
        aip_annotation_begin(&ann);
        return nullptr;
    }
    aip_op_info op{};
    op.name_id = name_id(s, fn.name());
    op.sequence_number = fn.seqNr();
    op.is_backward = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
    op.fwd_thread_id = os_tid_of(fn.forwardThreadId());
    if ((g_record_shapes.load(std::memory_order_relaxed) || s->want_shapes) &&
        fn.needsInputs()) {
        try {
            if (const aiprof_torch::InputIds *in =
                    aiprof_torch::describe_inputs(s->inputs, fn, op.name_id)) {
                op.input_shapes_id = in->shapes_id;
                op.input_dtypes_id = in->dtypes_id;
            }
        } catch (...) { /* an input that cannot be described: no shapes */
        }
        if (g_with_flops.load(std::memory_order_relaxed) || s->want_flops) {
            try {
                op.flops = aiprof_torch::op_flops(op.name_id, fn.inputs());
            } catch (...) { /* no estimate */
            }
        }
    }
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

/* Was `fn` forwarded by this thread in the trace recording now?  Takes its
 * entry (and any above it: RecordFunctions that ended on another thread)
 * off the thread's list; *with_context: it was opened with
 * aip_annotation_begin(). */
bool forwarded_now(const at::RecordFunction &fn, bool *with_context)
{
    ThreadState *s = t_state;
    if (!s)
        return false;
    for (uint32_t i = s->n_fwd; i-- > 0;) {
        if (s->fwd[i].fn != &fn)
            continue;
        s->n_fwd = i;
        *with_context = s->fwd[i].with_context;
        return s->fwd[i].gen == __atomic_load_n(&aip_recording_generation, __ATOMIC_RELAXED);
    }
    return false; /* began before on_enter forwarded anything: nothing to end */
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *)
{
    bool with_context = false;
    if (!forwarded_now(fn, &with_context) || !AIP_RECORDING())
        return;
    if (fn.scope() != at::RecordScope::USER_SCOPE)
        aip_op_end();
    else if (with_context)
        aip_annotation_end(); /* opened with aip_annotation_begin() */
    else
        aip_annotation_pop();
}

/* The callback a recording trace needs: with inputs when the trace or
 * any thread wants shapes. */
int wanted_kind()
{
    return g_record_shapes.load() || g_thread_shapes.load() > 0 ? 2 : 1;
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
        apply_enabled(wanted_kind());
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
    apply_enabled(on ? wanted_kind() : 0);
}

int aiprof_torch_thread_options(int record_shapes, int with_flops)
{
    ThreadState *s = thread_state();
    if (!s)
        return -1;
    int shapes = record_shapes || with_flops ? 1 : 0; /* FLOPs come from the inputs */
    s->want_flops = with_flops ? 1 : 0;
    if (shapes == s->want_shapes)
        return 0;
    s->want_shapes = shapes;
    g_thread_shapes.fetch_add(shapes ? 1 : -1);
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_enabled_kind)
        apply_enabled(wanted_kind());
    return 0;
}

} // extern "C"
