/*
 * labels.cpp — memory categories of tensors the Python side points at
 * (parameters, gradients, optimizer state, model inputs), labelled in C++.
 *
 * _memory_labels.py finds the tensors; asking each one for its storage in
 * Python cost ~0.65 us per tensor (four attribute calls), which made the
 * labels of a small model cost more than its memory events.  Here a tensor
 * costs a pointer chase.  These entry points take Python objects, so the
 * package calls them through ctypes.PyDLL (GIL held).
 */
#include "aiprof_torch.h"

#include <aiprof.h>
#include <aiprof_integration.h>

#include <Python.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>
#include <vector>

namespace {

PyTypeObject *g_tensor_type; /* torch._C._TensorBase: every torch.Tensor */
PyObject *g_param_groups, *g_params, *g_state; /* interned attribute names */

bool is_tensor(PyObject *o) { return g_tensor_type && PyObject_TypeCheck(o, g_tensor_type); }

/* The storages labelled in a pass.  Called at every optimizer step, so no
 * allocation per call: open addressing with a pass number per slot, and a
 * new pass is a counter bump. */
class SeenSet {
  public:
    void clear()
    {
        if (++pass_ == 0) { /* wrapped: old numbers could match again */
            std::fill(slots_.begin(), slots_.end(), Slot{nullptr, 0});
            pass_ = 1;
        }
        count_ = 0;
    }

    /* False if `p` was already seen in this pass. */
    bool insert(const void *p)
    {
        if ((count_ + 1) * 2 > slots_.size())
            grow();
        size_t mask = slots_.size() - 1;
        for (size_t i = hash(p) & mask;; i = (i + 1) & mask) {
            Slot &s = slots_[i];
            if (s.pass != pass_) {
                s = Slot{p, pass_};
                count_++;
                return true;
            }
            if (s.ptr == p)
                return false;
        }
    }

    size_t size() const { return count_; }

  private:
    struct Slot {
        const void *ptr;
        uint32_t pass;
    };
    static size_t hash(const void *p) { return (size_t)((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 20; }

    void grow()
    {
        std::vector<Slot> old;
        old.swap(slots_);
        slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{nullptr, 0});
        uint32_t keep = pass_;
        count_ = 0;
        for (const Slot &s : old)
            if (s.pass == keep && s.pass != 0)
                insert(s.ptr);
    }

    std::vector<Slot> slots_;
    size_t count_ = 0;
    uint32_t pass_ = 1;
};

/* The pass of aiprof_torch_label and aiprof_torch_label_optimizer: a
 * trace's start labels every optimizer in one pass, some through one, some
 * through the other (the GIL serialises callers). */
SeenSet g_pass_seen;

/* Label the storage under `t` once per pass (views share a storage). */
void label(const at::Tensor &t, aip_memory_category category, SeenSet &seen)
{
    if (!t.defined() || !t.has_storage())
        return;
    const c10::Storage &st = t.storage();
    const void *data = st.data();
    if (!data)
        return;
    if (!seen.insert(data))
        return;
    c10::Device dev = st.device();
    aip_device_type type;
    if (dev.is_cpu())
        type = AIP_DEVICE_CPU;
    else if (dev.is_cuda())
        type = AIP_DEVICE_CUDA;
    else
        return;
    /* torch's CPU device has no index: the allocator reports -1. */
    aip_memory_label((uint64_t)(uintptr_t)data, (int64_t)st.nbytes(), type,
                     dev.has_index() ? dev.index() : -1, category);
}

} // namespace

extern "C" {

AIPROF_TORCH_API int aiprof_torch_labels_init(PyObject *tensor_type)
{
    if (!PyType_Check(tensor_type))
        return -1;
    g_param_groups = PyUnicode_InternFromString("param_groups");
    g_params = PyUnicode_InternFromString("params");
    g_state = PyUnicode_InternFromString("state");
    if (!g_param_groups || !g_params || !g_state) {
        PyErr_Clear();
        return -1;
    }
    Py_INCREF(tensor_type);
    g_tensor_type = (PyTypeObject *)tensor_type;
    return 0;
}

/* Label every tensor of the sequence `tensors`, and of the lists and
 * tuples in it (one level: a module's arguments), other items skipped;
 * with `grads`, label each tensor's .grad instead.  A storage is labelled
 * once per pass, by the first call that meets it; `new_pass` starts a
 * pass.  @return -1 if `tensors` is no list or tuple, else the number of
 * storages labelled so far in the pass. */
AIPROF_TORCH_API int aiprof_torch_label(PyObject *tensors, int category, int grads,
                                        int new_pass)
{
    SeenSet &seen = g_pass_seen;
    if (!PyList_Check(tensors) && !PyTuple_Check(tensors))
        return -1;
    if (new_pass)
        seen.clear();
    try {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(tensors);
        PyObject **items = PySequence_Fast_ITEMS(tensors);
        auto one = [&](PyObject *o) {
            if (!is_tensor(o))
                return;
            const at::Tensor &t = THPVariable_Unpack(o);
            label(grads ? t.grad() : t, (aip_memory_category)category, seen);
        };
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *o = items[i];
            if (PyList_Check(o) || PyTuple_Check(o)) {
                Py_ssize_t m = PySequence_Fast_GET_SIZE(o);
                PyObject **inner = PySequence_Fast_ITEMS(o);
                for (Py_ssize_t j = 0; j < m; j++)
                    one(inner[j]);
            } else {
                one(o);
            }
        }
    } catch (...) { /* a tensor without a storage view: labels never break training */
    }
    return (int)seen.size();
}

} // extern "C"

/* ---- after optimizer.step() ------------------------------------------ */

namespace {

/* The objects of an optimizer's param_groups' "params" and of its state's
 * per-parameter dicts, borrowed: the optimizer's lists and dicts keep them
 * alive while the caller holds the GIL and runs no Python code. */
struct OptimizerObjects {
    std::vector<PyObject *> params, state;
};

/* False on a shape this does not know (the caller falls back to Python). */
bool collect(PyObject *optimizer, OptimizerObjects &out)
{
    PyObject *groups = PyObject_GetAttr(optimizer, g_param_groups);
    if (!groups) {
        PyErr_Clear();
        return false;
    }
    bool ok = PyList_Check(groups);
    for (Py_ssize_t g = 0; ok && g < PyList_GET_SIZE(groups); g++) {
        PyObject *group = PyList_GET_ITEM(groups, g);
        PyObject *params = PyDict_Check(group) ? PyDict_GetItem(group, g_params) : nullptr;
        ok = params && PyList_Check(params);
        for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(params); i++)
            out.params.push_back(PyList_GET_ITEM(params, i));
    }
    Py_DECREF(groups);
    if (!ok)
        return false;
    PyObject *state = PyObject_GetAttr(optimizer, g_state);
    if (!state) {
        PyErr_Clear();
        return false;
    }
    if (PyDict_Check(state)) { /* defaultdict is a dict subclass */
        Py_ssize_t pos = 0;
        PyObject *key, *per_param;
        while (PyDict_Next(state, &pos, &key, &per_param)) {
            if (!PyDict_Check(per_param))
                continue;
            Py_ssize_t pos2 = 0;
            PyObject *k2, *v;
            while (PyDict_Next(per_param, &pos2, &k2, &v))
                out.state.push_back(v);
        }
    }
    Py_DECREF(state);
    return true;
}

/* Parameters (with `all`), then gradients (with `grads`), then state
 * (with `all`): a storage keeps the first category met. */
void label_objects(const OptimizerObjects &o, bool all, bool grads, SeenSet &seen)
{
    try {
        if (all)
            for (PyObject *p : o.params)
                if (is_tensor(p))
                    label(THPVariable_Unpack(p), AIP_MEM_PARAMETER, seen);
        if (grads)
            for (PyObject *p : o.params)
                if (is_tensor(p))
                    label(THPVariable_Unpack(p).grad(), AIP_MEM_GRADIENT, seen);
        if (all)
            for (PyObject *v : o.state)
                if (is_tensor(v))
                    label(THPVariable_Unpack(v), AIP_MEM_OPTIMIZER_STATE, seen);
    } catch (...) { /* labels never break training */
    }
}

/* Kept across calls (the GIL serialises them): no allocation per step. */
OptimizerObjects g_objects;

uint64_t signature(const OptimizerObjects &o)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const auto *list : {&o.params, &o.state})
        for (PyObject *p : *list)
            h = (h ^ (uint64_t)(uintptr_t)p) * 0x100000001B3ull;
    return h ? h : 1; /* 0 means "do it in Python" */
}

} // namespace

extern "C" {

/* After optimizer.step(): label the optimizer's gradients and, unless its
 * set of parameter and state tensor objects still has the signature
 * `known` (the value this call returned last time in this trace), its
 * parameters and state too — they are updated in place, so their blocks
 * stay.  @return the signature, or 0 if the optimizer has a shape this
 * does not know (the caller labels it in Python). */
AIPROF_TORCH_API unsigned long long aiprof_torch_label_step(PyObject *optimizer,
                                                            unsigned long long known)
{
    static SeenSet seen;
    OptimizerObjects &o = g_objects;
    o.params.clear();
    o.state.clear();
    if (!collect(optimizer, o))
        return 0;
    uint64_t sig = signature(o);
    seen.clear();
    label_objects(o, sig != known, true, seen);
    return sig;
}

/* A trace's start: label the optimizer's parameters, its gradients (with
 * `grads`) and its state, in aiprof_torch_label's pass (`new_pass` starts
 * one, before anything else).  @return 1, or 0 if the optimizer has a
 * shape this does not know (nothing labelled: the caller labels it with
 * aiprof_torch_label, in the same pass). */
AIPROF_TORCH_API int aiprof_torch_label_optimizer(PyObject *optimizer, int grads, int new_pass)
{
    OptimizerObjects &o = g_objects;
    if (new_pass)
        g_pass_seen.clear();
    o.params.clear();
    o.state.clear();
    if (!collect(optimizer, o))
        return 0;
    label_objects(o, true, grads != 0, g_pass_seen);
    return 1;
}

} // extern "C"
