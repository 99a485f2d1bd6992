/*
 * flops.cpp — with_flops: estimated floating-point operations of an op
 * from its inputs, for the ops torch.profiler estimates (matrix products,
 * 2-D convolution, elementwise mul and add), with the same formulas:
 *
 *   mm, addmm        [n, m] x [m, p]                 2·n·m·p
 *   bmm, baddbmm     [b, n, m] x [b, m, p]           2·b·n·m·p
 *   conv2d           input [N, C, H, W], weight [O, C/g, kh, kw]
 *                    2·N·Hout·Wout·kh·kw·C·O / g, with
 *                    Hout = (H + 2·pad − dil·(kh − 1) − 1) / stride + 1
 *   mul, add         elements of the first input
 *
 * Anything else, or inputs of another shape (a string padding, a scalar
 * first operand, mismatched inner sizes), gives 0: no estimate.
 */
#include "flops.h"

#include <aiprof.h>

#include <ATen/core/ivalue.h>

#include <atomic>

namespace aiprof_torch {
namespace {

/* The ops' interned names, looked up once (ids are stable for the life of
 * the process). */
constexpr const char *kNames[] = {"aten::mm",     "aten::addmm", "aten::bmm", "aten::baddbmm",
                                  "aten::conv2d", "aten::mul",   "aten::add"};
enum Kind { kNone = -1, kMm, kAddmm, kBmm, kBaddbmm, kConv2d, kMul, kAdd, kKinds };

std::atomic<aip_string_id> g_ids[kKinds];
std::atomic<bool> g_ready{false};

int kind_of(aip_string_id name)
{
    if (!g_ready.load(std::memory_order_acquire)) {
        for (int k = 0; k < kKinds; k++)
            g_ids[k].store(aip_intern(kNames[k]), std::memory_order_relaxed);
        g_ready.store(true, std::memory_order_release);
    }
    for (int k = 0; k < kKinds; k++)
        if (g_ids[k].load(std::memory_order_relaxed) == name)
            return k;
    return kNone;
}

bool sizes_of(const c10::IValue &v, c10::IntArrayRef *out)
{
    if (!v.isTensor())
        return false;
    const at::Tensor &t = v.toTensor();
    if (!t.defined() || t.is_nested())
        return false;
    *out = t.sizes();
    return true;
}

/* An int list of exactly two non-negative items (stride, padding, dilation). */
bool pair_of(const c10::IValue &v, int64_t out[2])
{
    if (!v.isIntList())
        return false;
    auto l = v.toIntList();
    if (l.size() != 2)
        return false;
    out[0] = l.get(0);
    out[1] = l.get(1);
    return out[0] >= 0 && out[1] >= 0;
}

uint64_t product(c10::IntArrayRef sizes)
{
    uint64_t n = 1;
    for (int64_t d : sizes) {
        if (d < 0)
            return 0;
        n *= (uint64_t)d;
    }
    return n;
}

uint64_t matmul(c10::ArrayRef<const c10::IValue> in, size_t first, size_t dims)
{
    c10::IntArrayRef a, b;
    if (in.size() < first + 2 || !sizes_of(in[first], &a) || !sizes_of(in[first + 1], &b))
        return 0;
    if (a.size() != dims || b.size() != dims || a[dims - 1] != b[dims - 2])
        return 0;
    if (dims == 3 && a[0] != b[0])
        return 0;
    uint64_t f = 2 * product(a) * (uint64_t)b[dims - 1];
    return f;
}

uint64_t conv2d(c10::ArrayRef<const c10::IValue> in)
{
    c10::IntArrayRef x, w;
    int64_t stride[2], pad[2], dil[2];
    if (in.size() < 7 || !sizes_of(in[0], &x) || !sizes_of(in[1], &w) || x.size() != 4 ||
        w.size() != 4 || !pair_of(in[3], stride) || !pair_of(in[4], pad) ||
        !pair_of(in[5], dil) || !in[6].isInt())
        return 0;
    int64_t groups = in[6].toInt();
    if (groups <= 0 || stride[0] == 0 || stride[1] == 0)
        return 0;
    int64_t out_hw[2];
    for (int i = 0; i < 2; i++) {
        int64_t span = x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1;
        if (span < 0)
            return 0;
        out_hw[i] = span / stride[i] + 1;
    }
    for (int64_t d : {x[0], x[1], w[0], w[2], w[3]})
        if (d < 0)
            return 0;
    return 2 * (uint64_t)x[0] * (uint64_t)out_hw[0] * (uint64_t)out_hw[1] * (uint64_t)w[2] *
           (uint64_t)w[3] * (uint64_t)x[1] * (uint64_t)w[0] / (uint64_t)groups;
}

} // namespace

uint64_t op_flops(aip_string_id name, c10::ArrayRef<const c10::IValue> inputs)
{
    c10::IntArrayRef s;
    switch (kind_of(name)) {
    case kMm: return matmul(inputs, 0, 2);
    case kAddmm: return matmul(inputs, 1, 2);
    case kBmm: return matmul(inputs, 0, 3);
    case kBaddbmm: return matmul(inputs, 1, 3);
    case kConv2d: return conv2d(inputs);
    case kMul:
    case kAdd: return !inputs.empty() && sizes_of(inputs[0], &s) ? product(s) : 0;
    default: return 0;
    }
}

} // namespace aiprof_torch
