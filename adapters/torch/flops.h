/*
 * flops.h — with_flops estimates (flops.cpp), used by the op callback.
 */
#ifndef AIPROF_TORCH_FLOPS_H
#define AIPROF_TORCH_FLOPS_H

#include <aiprof.h>

#include <ATen/core/ivalue.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>

namespace aiprof_torch {

/* Estimated floating-point operations of the op named `name` (an interned
 * id) with these inputs; 0 for ops without a formula or unexpected inputs. */
uint64_t op_flops(aip_string_id name, c10::ArrayRef<const c10::IValue> inputs);

} // namespace aiprof_torch

#endif
