// Autocast: mixed precision chosen by the dispatcher. Inside a scope, the
// products (ops of PrecisionCategory::lower: matmul, linear, conv2d) run in
// bf16 or f16 with f32 accumulation, precision-sensitive ops run in f32, and
// every other op promotes mixed floating inputs to the widest; parameters
// stay f32. Casts are ordinary `cast` op calls, so the tape records them and
// gradients come back in each parameter's own dtype.
//
//   kiln::Runtime rt;
//   {
//     kiln::AutocastGuard bf16(rt, kiln::DType::bf16);
//     kiln::Tensor y = rt.call1("linear", {x, w, b});  // bf16, from f32 x, w, b
//     loss = rt.call1("cross_entropy", {y, target});   // f32
//   }
//   rt.backward(loss);                                   // w.grad() is f32
//
// The scope is per runtime and per thread, like grad mode: a runtime's
// evaluation thread does not see its training thread's scope, and two
// runtimes never see each other's. Scopes nest; the innermost decides, and
// f32 turns autocast off inside an enclosing scope. Backward always runs
// with autocast off: backward ops see the dtypes the forward recorded.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/tensor.hpp"

namespace kiln {

class Runtime;
struct OpDef;

// The low dtype of the innermost scope of `rt` on this thread: bf16 or f16,
// or f32 when none is open (or the innermost is an f32 scope).
DType autocast_dtype(const Runtime& rt);
// Opens a scope: dtype bf16 or f16, or f32 to turn autocast off inside; any
// other dtype is an invalid_argument error naming it.
void push_autocast(Runtime& rt, DType dtype);
// Closes the innermost scope of `rt` on this thread; false when none is open.
bool pop_autocast(Runtime& rt);

// Why `device` cannot run autocast's products in `dtype` (bf16 or f16), or
// an empty string when it can. A CPU computes bf16 where oneDNN does (AVX-512
// CPUs); f16 products run through f32 on any CPU. A GPU is taken to
// compute both (kiln's CUDA kernels take either dtype).
std::string autocast_unsupported(Device device, DType dtype);

// RAII: a scope for `rt` on this thread while it lives.
class AutocastGuard {
 public:
  AutocastGuard(Runtime& rt, DType dtype);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  Runtime& runtime_;
};

// For the dispatcher: the inputs `op` should run on under the low dtype
// `low` (bf16 or f16) on `device`. Returns false when they are fine as
// given; otherwise fills `cast` with every input, those that need it cast
// through the `cast` op. Ops that write their inputs are never cast.
bool autocast_inputs(Runtime& rt, const OpDef& op, Device device, std::span<const Tensor> inputs, DType low,
                     std::vector<Tensor>& cast);

}  // namespace kiln
