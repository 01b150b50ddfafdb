// Checks of GPU kernels against the CPU kernels of the same ops: an op (or
// a function built from ops) runs on CPU inputs and on copies of them on
// cuda:0, and every output and every input gradient must agree within the
// tolerance of its dtype.
//
// Poisoning: before each GPU call, blocks the size of each expected output
// are filled with 0xFF bytes (NaN in every floating dtype, the largest
// value of every integer one) and released, so the caching allocator hands
// those blocks to the op's outputs; an element a kernel forgets to write then
// shows up as a mismatch instead of a lucky zero.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::test {

inline const Device kGpu = Device::cuda(0);

// |gpu - cpu| <= tol * (1 + |cpu|): 1e-5 for f32, 1e-10 for f64, 1e-2 for
// f16 and bf16, 0 (exact) for integers and bool.
double tolerance(DType t);

// Copies of the tensors on cuda:0.
std::vector<Tensor> to_gpu(Runtime& rt, const std::vector<Tensor>& cpu);

// Fills blocks shaped like `like` with 0xFF on cuda:0 and frees them.
void poison_freed_blocks(Runtime& rt, const std::vector<Tensor>& like);

// gpu lies on cuda:0 and has cpu's shape, dtype and values (within tol; a
// negative tol means tolerance(dtype)).
void require_matches(Runtime& rt, const Tensor& gpu, const Tensor& cpu, double tol = -1);
// The same bytes, element for element.
void require_same_bits(Runtime& rt, const Tensor& gpu, const Tensor& cpu);

// Runs op on the inputs on both devices; every output must match. Returns
// the GPU outputs.
std::vector<Tensor> require_op_matches_cpu(Runtime& rt, std::string_view op, const std::vector<Tensor>& inputs,
                                           const Attrs& attrs, double tol = -1);

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;

// Runs fn on both devices with every floating input a leaf that requires
// grad, back-propagates the same random output gradient, and requires the
// outputs and every input gradient to match.
void require_grads_match_cpu(Runtime& rt, const TensorFn& fn, const std::vector<Tensor>& inputs, double tol = -1);

// fn calling op with attrs on its inputs (for require_grads_match_cpu).
TensorFn op_fn(Runtime& rt, std::string_view op, const Attrs& attrs);

}  // namespace kiln::test
