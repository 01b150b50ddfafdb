// Ops that are another op seen differently (a 1-d pool as a 2-d pool of
// height 1, bmm as matmul, instance_norm as group_norm with a group per
// channel) run that op's kernels, on every device it has them for, rather
// than a copy of them. Their kernel is one function for every device and
// dtype: it reshapes the tensors, translates the attributes and calls the
// other op's kernel.
#pragma once

#include <span>
#include <string_view>

#include "kiln/ops/registry.hpp"

namespace kiln::nn {

// Runs the kernel `target` has for the device of outputs[0] and the dtype of
// its dtype_input among `inputs`; throws unsupported, naming both ops, when
// it has none.
void run_kernel_of(const KernelCall& c, const OpDef& target, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, const Attrs& attrs);

// Gives `op` the kernel `fn` for every dtype `target` has a kernel for on `device`.
void mirror_kernels(OpDef& op, const OpDef& target, DeviceType device, KernelFn fn);

// The CUDA build's pass, after the CUDA kernels exist: each op above gets
// its CPU function for every dtype its target has a CUDA kernel for.
void register_cuda_mirrored_kernels(OpRegistry& r);

}  // namespace kiln::nn
