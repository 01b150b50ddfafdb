// The three computations of a 2-D convolution, each on dense NCHW tensors
// shaped by a Conv2dGeometry: f32 and bf16 on oneDNN (conv_dnnl.cpp;
// `op` names the failing op when this CPU's oneDNN cannot run the dtype),
// f64 as direct loops (conv_reference.cpp) that serve as the reference and
// for gradcheck. f16 runs through f32 (f16_through_f32.hpp).
#pragma once

#include "conv_geometry.hpp"
#include "kiln/runtime.hpp"

namespace kiln::nn {

// output = conv(input, weight) + bias (bias may be undefined).
void conv2d_forward_dnnl(Runtime& rt, const OpDef& op, const Conv2dGeometry& g, const Tensor& input,
                         const Tensor& weight, const Tensor& bias, Tensor& output);
// grad_input from grad_output and weight.
void conv2d_backward_input_dnnl(Runtime& rt, const OpDef& op, const Conv2dGeometry& g, const Tensor& grad_output,
                                const Tensor& weight, Tensor& grad_input);
// grad_weight from grad_output and input.
void conv2d_backward_weight_dnnl(Runtime& rt, const OpDef& op, const Conv2dGeometry& g, const Tensor& grad_output,
                                 const Tensor& input, Tensor& grad_weight);

void conv2d_forward_reference(Runtime& rt, const Conv2dGeometry& g, const Tensor& input, const Tensor& weight,
                              const Tensor& bias, Tensor& output);
void conv2d_backward_input_reference(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                     const Tensor& weight, Tensor& grad_input);
void conv2d_backward_weight_reference(Runtime& rt, const Conv2dGeometry& g, const Tensor& grad_output,
                                      const Tensor& input, Tensor& grad_weight);

}  // namespace kiln::nn
