/*
 * comm.cpp — torch.distributed collectives that run from C++ (c10d::*
 * dispatcher ops: DistributedDataParallel's gradient buckets and parameter
 * broadcasts, and every torch.distributed collective of this torch)
 * recorded as communication operations (libaiprof's aip_comm_*).
 *
 * A RecordFunction callback of its own, with inputs and outputs, is on
 * while a trace records and the Python package switched communication on
 * (aiprof_torch_comm_enable: torch.distributed initialised).  At a c10d
 * collective's start it reads the tensors (bytes, count, dtype), the
 * process group (the C++ object's address: the key under which the Python
 * package registered the group, with its global ranks, through
 * aiprof_torch_comm_group) and the root, and takes the group's next
 * sequence number; at its end it finds the Work the op returned and
 * records the op when the Work's future completes — the collective's real
 * end, on the thread that completes it.  Point-to-point calls are left to
 * the Python wrappers (their peer and tag are global there).
 *
 * With mstx on (aiprof_torch_comm_mstx), each such collective is also an
 * mstx range over the same span, in the domain "communication", whose
 * message is the JSON text torch_npu's ProcessGroupHCCL writes
 * (profiler/_mstx_auto.py says what is in it and why).
 */
#include "aiprof_torch.h"

#include <aiprof.h>
#include <aiprof_integration.h>

#include <ATen/record_function.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" void aiprof__torch_set_error(const char *msg);

namespace {

struct Group {
    uint32_t id = AIP_COMM_NO_GROUP;
    std::vector<uint32_t> ranks; /* group rank -> global rank */
    std::string name;            /* for mstx's groupName */
};

std::mutex g_lock;
std::unordered_map<uint64_t, Group> g_groups; /* ProcessGroup address -> group */
at::CallbackHandle g_cb = at::INVALID_CALLBACK_HANDLE;
bool g_enabled = false;
int g_lib = AIP_COMM_LIB_OTHER;
std::atomic<bool> g_mstx{false};

/* A collective whose record its future's callback owes.  c10d's Future
 * wakes its waiters before it runs its callbacks: DDP's reducer (or the
 * program) can return from wait() and reach the profiler's step or stop
 * while the record is still to be written on gloo's thread.  A trace that
 * stops waits (drain(), bounded) for those already complete. */
struct Owed {
    c10::intrusive_ptr<c10::ivalue::Future> fut;
    std::atomic<bool> recorded{false};
};
std::mutex g_owed_lock;
std::vector<std::shared_ptr<Owed>> g_owed;
constexpr auto kDrainBound = std::chrono::seconds(1);

void prune_owed() /* g_owed_lock held */
{
    std::vector<std::shared_ptr<Owed>> keep;
    for (auto &o : g_owed)
        if (!o->recorded.load(std::memory_order_acquire))
            keep.push_back(std::move(o));
    g_owed.swap(keep);
}

/* aip_comm_set_drain's drain: on the stopping thread, while recording. */
void drain()
{
    std::vector<std::shared_ptr<Owed>> owed;
    {
        std::lock_guard<std::mutex> guard(g_owed_lock);
        prune_owed();
        owed = g_owed;
    }
    auto deadline = std::chrono::steady_clock::now() + kDrainBound;
    for (auto &o : owed) /* still in flight (not completed): not waited for */
        while (!o->recorded.load(std::memory_order_acquire) && o->fut->completed() &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
    /* Nothing is owed to a later trace: let go of the futures now, while the
     * interpreter runs.  Held in g_owed until static destruction, a future
     * would free its tensors after Python's finalisation (torch aborts
     * then).  One still in flight keeps its Owed through its callback. */
    std::lock_guard<std::mutex> guard(g_owed_lock);
    g_owed.clear();
}

struct Pending : at::ObserverContext {
    aip_comm_op_info op{};
    std::string name, dtype;
    uint64_t range = 0; /* its mstx range, 0: none */
};

/* Bytes, count and dtype of a tensor or (nested) tensor list. */
void add_tensors(const c10::IValue &v, Pending &p, bool &mixed)
{
    auto one = [&](const at::Tensor &t) {
        if (!t.defined())
            return;
        p.op.bytes += (uint64_t)t.numel() * (uint64_t)t.element_size();
        p.op.count += (uint64_t)t.numel();
        std::string d = c10::toString(t.scalar_type());
        if (p.dtype.empty())
            p.dtype = d;
        else if (p.dtype != d)
            mixed = true;
    };
    if (v.isTensor())
        one(v.toTensor());
    else if (v.isTensorList())
        for (const at::Tensor &t : v.toTensorList().vec())
            one(t);
    else if (v.isList())
        for (const c10::IValue &e : v.toListRef())
            add_tensors(e, p, mixed);
}

/* torch's dtype names are "Float", "Long": the Python ones read better and
 * match the records of the Python wrappers. */
const char *py_dtype(const std::string &d)
{
    static const std::pair<const char *, const char *> names[] = {
        {"Float", "float32"}, {"Double", "float64"}, {"Half", "float16"},
        {"BFloat16", "bfloat16"}, {"Long", "int64"}, {"Int", "int32"}, {"Short", "int16"},
        {"Char", "int8"}, {"Byte", "uint8"}, {"Bool", "bool"}};
    for (const auto &n : names)
        if (d == n.first)
            return n.second;
    return nullptr;
}

/* Which input holds this rank's part, which the root; the op's name, and
 * the HCCL operator torch_npu's mstx range names (as the Python wrappers'
 * _HCCL_OPS do). */
struct Kind {
    const char *op, *name, *hccl;
    int data, root; /* input indices, -1 none */
};
const Kind kKinds[] = {
    {"c10d::allreduce_", "all_reduce", "HcclAllreduce", 0, -1},
    {"c10d::broadcast_", "broadcast", "HcclBroadcast", 0, 2},
    {"c10d::reduce_", "reduce", "HcclReduce", 0, 3},
    {"c10d::allgather_", "all_gather", "HcclAllGather", 1, -1},
    {"c10d::gather_", "gather", "HcclGather", 1, 3},
    {"c10d::scatter_", "scatter", "HcclScatter", 0, 3},
    {"c10d::reduce_scatter_", "reduce_scatter", "HcclReduceScatter", 1, -1},
    {"c10d::alltoall_", "all_to_all", "HcclAlltoAllV", 1, -1},
    {"c10d::barrier", "barrier", "HcclBarrier", -1, -1},
};

/* The seed's dataType of a torch dtype name (Python's), "na" for others. */
const char *hccl_type(const char *py)
{
    static const std::pair<const char *, const char *> names[] = {
        {"int8", "int8"},    {"int16", "int16"},  {"int32", "int32"}, {"int64", "int64"},
        {"uint8", "uint8"},  {"bool", "uint8"},   {"float16", "fp16"}, {"float32", "fp32"},
        {"float64", "fp64"}, {"bfloat16", "bfp16"}};
    for (const auto &n : names)
        if (py && !std::strcmp(py, n.first))
            return n.second;
    return "na";
}

/* torch_npu's message of a collective's range (collectives: no peers). */
std::string mstx_message(const Kind &k, const Pending &p, const std::string &group)
{
    std::string esc;
    for (char c : group) {
        if (c == '"' || c == '\\')
            esc += '\\';
        esc += c;
    }
    const char *dt = p.dtype.empty() ? nullptr : py_dtype(p.dtype);
    return std::string("{\"streamId\": \"N/A\",\"count\": \"") + std::to_string(p.op.count) +
           "\",\"dataType\": \"" + hccl_type(dt) + "\",\"groupName\": \"" + esc +
           "\",\"opName\": \"" + k.hccl + "\"}";
}

const Kind *kind_of(const char *name)
{
    if (std::strncmp(name, "c10d::", 6) != 0)
        return nullptr;
    for (const Kind &k : kKinds)
        if (!std::strcmp(name, k.op))
            return &k;
    return nullptr;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    if (!AIP_RECORDING() || !aip_comm_recording())
        return nullptr;
    const Kind *k = kind_of(fn.name());
    if (!k)
        return nullptr;
    try {
        auto inputs = fn.inputs();
        auto p = std::make_unique<Pending>();
        p->name = k->name;
        p->op.group = AIP_COMM_NO_GROUP;
        p->op.peer = p->op.root = AIP_COMM_NO_RANK;
        p->op.tag = -1;
        p->op.kind = AIP_COMM_OP_COLLECTIVE;
        p->op.lib = (uint8_t)g_lib;
        p->op.nonblocking = 1; /* from the launch to the Work's completion */
        bool mixed = false;
        if (k->data >= 0 && (size_t)k->data < inputs.size())
            add_tensors(inputs[k->data], *p, mixed);
        if (mixed)
            p->dtype.clear();
        const Group *g = nullptr;
        std::string group_name = "N/A";
        for (const c10::IValue &v : inputs)
            if (v.isCustomClass()) {
                auto pg = v.toCustomClass<c10d::ProcessGroup>();
                std::lock_guard<std::mutex> guard(g_lock);
                auto it = g_groups.find((uint64_t)(uintptr_t)pg.get());
                if (it != g_groups.end())
                    g = &it->second; /* entries never move out of the map while held */
                if (g) {
                    p->op.group = g->id;
                    if (!g->name.empty())
                        group_name = g->name;
                    if (k->root >= 0 && (size_t)k->root < inputs.size() &&
                        inputs[k->root].isInt()) {
                        int64_t r = inputs[k->root].toInt();
                        if (r >= 0 && (size_t)r < g->ranks.size())
                            p->op.root = g->ranks[r];
                    }
                }
                break;
            }
        if (p->op.group != AIP_COMM_NO_GROUP)
            p->op.seq = aip_comm_next_seq(p->op.group);
        if (g_mstx.load(std::memory_order_relaxed))
            p->range = aip_range_start("communication", mstx_message(*k, *p, group_name).c_str());
        p->op.start = aip_comm_ticks();
        return p;
    } catch (...) { /* inputs of another shape: not recorded */
        return nullptr;
    }
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *ctx)
{
    auto *p = static_cast<Pending *>(ctx);
    if (!p)
        return;
    try {
        c10::intrusive_ptr<c10d::Work> work;
        for (const c10::IValue &v : fn.outputs()) {
            if (v.isCustomClass()) {
                work = v.toCustomClass<c10d::Work>();
                break;
            }
            if (v.isTuple())
                for (const c10::IValue &e : v.toTupleRef().elements())
                    if (e.isCustomClass()) {
                        work = e.toCustomClass<c10d::Work>();
                        break;
                    }
            if (work)
                break;
        }
        auto record = [info = *p](uint64_t end) mutable {
            info.op.name = info.name.c_str();
            info.op.dtype = info.dtype.empty() ? nullptr : py_dtype(info.dtype);
            if (!info.op.dtype && !info.dtype.empty())
                info.op.dtype = info.dtype.c_str();
            info.op.end = end;
            aip_comm_op(&info.op);
            aip_range_end(info.range);
        };
        if (!work) { /* no Work to wait for: the launch is all there is */
            record(aip_comm_ticks());
            return;
        }
        auto fut = work->getFuture();
        if (!fut) {
            record(aip_comm_ticks());
            return;
        }
        auto owed = std::make_shared<Owed>();
        owed->fut = fut;
        {
            std::lock_guard<std::mutex> guard(g_owed_lock);
            if (g_owed.size() >= 64)
                prune_owed();
            g_owed.push_back(owed);
        }
        fut->addCallback([record, owed](c10::ivalue::Future &) mutable {
            record(aip_comm_ticks());
            /* The future keeps this callback (and so `owed`, which keeps the
             * future) only until it has run it: no lasting cycle. */
            owed->recorded.store(true, std::memory_order_release);
        });
    } catch (...) { /* a Work without a future: not recorded */
        aip_range_end(p->range);
    }
}

} // namespace

extern "C" {

int aiprof_torch_comm_group(uint64_t key, uint32_t id, const uint32_t *ranks, int n)
{
    try {
        std::lock_guard<std::mutex> guard(g_lock);
        Group &g = g_groups[key];
        g.id = id;
        g.ranks.assign(ranks, ranks + (n > 0 ? n : 0));
        return 0;
    } catch (...) {
        return -1;
    }
}

int aiprof_torch_comm_group_name(uint64_t key, const char *name)
{
    try {
        std::lock_guard<std::mutex> guard(g_lock);
        g_groups[key].name = name ? name : "";
        return 0;
    } catch (...) {
        return -1;
    }
}

int aiprof_torch_comm_mstx(int on)
{
    g_mstx.store(on != 0, std::memory_order_relaxed);
    return 0;
}

int aiprof_torch_comm_enable(int on, int lib)
{
    std::lock_guard<std::mutex> guard(g_lock);
    try {
        if (g_cb == at::INVALID_CALLBACK_HANDLE) {
            if (!on)
                return 0;
            aip_comm_set_drain(drain);
            g_cb = at::addGlobalCallback(at::RecordFunctionCallback(&on_enter, &on_exit)
                                             .needsInputs(true)
                                             .needsOutputs(true)
                                             .scopes({at::RecordScope::FUNCTION}));
            g_enabled = true;
        }
        g_lib = lib;
        if (on && !g_enabled)
            at::reenableCallback(g_cb);
        else if (!on && g_enabled)
            at::disableCallback(g_cb);
        g_enabled = on != 0;
        return 0;
    } catch (const std::exception &e) {
        aiprof__torch_set_error((std::string("communication capture: ") + e.what()).c_str());
        return -1;
    }
}

} // extern "C"
