// Ops that are another op seen differently (a 1-d pool as a 2-d pool of
// height 1, bmm as matmul, instance_norm as group_norm with a group per
// channel, conv1d as conv2d of height 1, conv_transpose2d as conv2d's
// gradient with respect to its input) run that op's kernels, on every
// device it has them for, rather than a copy of them. Their kernel is one
// function for every device and dtype: it views the tensors, translates the
// attributes and calls the other op's kernel.
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/ops/registry.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {

// Every floating dtype: what conv2d and its backward ops take on every device.
inline constexpr std::array<DType, 4> kFloatingDTypes{DType::f32, DType::f64, DType::f16, DType::bf16};

// The devices this build has kernels for: the CPU, and CUDA when built with it.
std::vector<DeviceType> built_devices();

// `t` (dense) seen with another shape of the same element count, sharing
// its memory: writing the view writes `t`.
Tensor dense_view(const Tensor& t, const Shape& shape);

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
