// Ops that are another op's computation on other views of their tensors
// (conv1d is conv2d of height 1; conv_transpose2d is conv2d's gradient with
// respect to its input) run that op's kernel directly: the one registered
// for the call's device and dtype, so they run wherever it runs, with no
// kernels of their own and no copies.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::nn {

// Every floating dtype: what conv2d and its backward ops take on every device.
inline constexpr std::array<DType, 4> kFloatingDTypes{DType::f32, DType::f64, DType::f16, DType::bf16};

// The devices this build has kernels for: the CPU, and CUDA when built with it.
std::vector<DeviceType> built_devices();

// `t` (dense) seen with another shape of the same element count, sharing
// its memory: writing the view writes `t`.
Tensor dense_view(const Tensor& t, const Shape& shape);

// Runs `op`'s kernel for the device of outputs[0] and the dtype of
// inputs[0] on these tensors (dense, shaped and typed as `op` expects them),
// with `attrs` built for `op`. `caller` names the op in the error raised
// when `op` has no such kernel.
void run_kernel_of(const KernelCall& caller, const OpDef& op, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, const Attrs& attrs);

}  // namespace kiln::nn
