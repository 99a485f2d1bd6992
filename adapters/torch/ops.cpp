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
 * each thread records its (RecordFunction id → OS tid) pair the first time
 * it runs a recorded op, and backward ops carry the OS tid.
 */
#include "aiprof_torch.h"
#include "op_context.h"

#include <aiprof.h>

#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
#include <charconv>
#include <mutex>
#include <string>

#include <sys/syscall.h>
#include <unistd.h>

namespace {

std::mutex g_lock;
at::CallbackHandle g_plain = at::INVALID_CALLBACK_HANDLE;
at::CallbackHandle g_inputs = at::INVALID_CALLBACK_HANDLE;
int g_enabled_kind = 0; /* 0 off, 1 plain, 2 with inputs */
std::atomic<int> g_record_shapes{0};
std::atomic<unsigned> g_want{0};
std::atomic<aiprof_op_context_fn> g_context_fn{nullptr};
thread_local std::string t_error;

constexpr size_t kMaxRfThreads = 1 << 14;
std::atomic<uint64_t> g_os_tid[kMaxRfThreads];
thread_local uint64_t t_os_tid = 0;

void note_thread()
{
    if (t_os_tid)
        return;
    t_os_tid = (uint64_t)syscall(SYS_gettid);
    uint64_t rf = at::RecordFunction::currentThreadId();
    if (rf < kMaxRfThreads)
        g_os_tid[rf].store(t_os_tid, std::memory_order_relaxed);
}

uint64_t os_tid_of(uint64_t rf_thread)
{
    if (!rf_thread || rf_thread >= kMaxRfThreads)
        return 0;
    return g_os_tid[rf_thread].load(std::memory_order_relaxed);
}

void append_int(std::string &s, int64_t v)
{
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    s.append(buf, r.ptr);
}

/* torch's record_shapes convention: a tensor's sizes and dtype name
 * ("float"), [] and "Scalar" / "TensorList" / "ScalarList" / "" for the
 * rest.  Written "[[2, 3], []]" and "[float, Scalar]". */
void format_inputs(const at::RecordFunction &fn, std::string &shapes, std::string &dtypes)
{
    shapes.assign("[");
    dtypes.assign("[");
    auto inputs = fn.inputs();
    for (size_t i = 0; i < inputs.size(); i++) {
        if (i) {
            shapes.append(", ");
            dtypes.append(", ");
        }
        const c10::IValue &v = inputs[i];
        if (v.isTensor()) {
            const at::Tensor &t = v.toTensor();
            shapes.push_back('[');
            if (t.defined() && !t.is_nested()) {
                auto sizes = t.sizes();
                for (size_t d = 0; d < sizes.size(); d++) {
                    if (d)
                        shapes.append(", ");
                    append_int(shapes, sizes[d]);
                }
                auto name = t.dtype().name();
                dtypes.append(name.data(), name.size());
            }
            shapes.push_back(']');
        } else {
            shapes.append("[]");
            if (v.isScalar())
                dtypes.append("Scalar");
            else if (v.isTensorList())
                dtypes.append("TensorList");
            else if (v.isIntList() || v.isDoubleList() || v.isBoolList())
                dtypes.append("ScalarList");
        }
    }
    shapes.push_back(']');
    dtypes.push_back(']');
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    if (!AIP_RECORDING())
        return nullptr;
    if (fn.scope() == at::RecordScope::USER_SCOPE) {
        aip_annotation_push(fn.name());
        return nullptr;
    }
    note_thread();
    aip_op_info op{};
    op.name = fn.name();
    op.sequence_number = fn.seqNr();
    op.is_backward = fn.scope() == at::RecordScope::BACKWARD_FUNCTION;
    op.fwd_thread_id = os_tid_of(fn.forwardThreadId());

    thread_local std::string shapes, dtypes;
    if (g_record_shapes.load(std::memory_order_relaxed) && fn.needsInputs()) {
        try {
            format_inputs(fn, shapes, dtypes);
            op.input_shapes = shapes.c_str();
            op.input_dtypes = dtypes.c_str();
        } catch (...) { /* an input that cannot be described: no shapes */
        }
    }
    unsigned want = g_want.load(std::memory_order_relaxed);
    aiprof_op_context_fn ctx_fn = g_context_fn.load(std::memory_order_relaxed);
    if (want && ctx_fn) {
        aiprof_op_context ctx{nullptr, nullptr};
        /* torch gives backward ops no Python stack: they run in the engine. */
        ctx_fn(op.is_backward ? (want & ~AIPROF_WANT_STACK) : want, &ctx);
        op.call_stack = ctx.call_stack;
        op.module_hierarchy = ctx.module_hierarchy;
    }
    aip_op_begin(&op);
    return nullptr;
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *)
{
    if (!AIP_RECORDING())
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
    } catch (const std::exception &e) {
        t_error = std::string("cannot register RecordFunction callbacks: ") + e.what();
        return -1;
    }
    return 0;
}

void aiprof_torch_configure(int record_shapes, unsigned want, void *context_fn)
{
    std::lock_guard<std::mutex> guard(g_lock);
    g_record_shapes.store(record_shapes ? 1 : 0);
    g_want.store(want);
    g_context_fn.store(reinterpret_cast<aiprof_op_context_fn>(context_fn));
    if (g_enabled_kind)
        apply_enabled(record_shapes ? 2 : 1);
}

void aiprof_torch_enable(int on)
{
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_plain == at::INVALID_CALLBACK_HANDLE)
        return;
    apply_enabled(on ? (g_record_shapes.load() ? 2 : 1) : 0);
}

} // extern "C"
