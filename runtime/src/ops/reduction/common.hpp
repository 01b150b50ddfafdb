// Pieces shared by the reduction, softmax, loss and indexing ops: calling
// other ops from a backward, class-index tensors, and the reduction of a loss.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ops/helpers.hpp"

namespace kiln::reduction {

inline std::vector<int64_t> dims_of(const Shape& s) { return {s.begin(), s.end()}; }

// Runs op `name` with named attributes (backwards compose ops this way).
std::vector<Tensor> call_op(Runtime& rt, std::string_view name, std::span<const Tensor> inputs, NamedAttrs attrs);
inline Tensor call_op1(Runtime& rt, std::string_view name, std::initializer_list<Tensor> inputs, NamedAttrs attrs) {
  return call_op(rt, name, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs).at(0);
}

// Class indices and gather/embedding indices are i32 or i64.
void check_index_dtype(const InferCall& c, size_t i);

// Calls fn.template operator()<I>() with I the C++ type of an index tensor
// (int32_t or int64_t; the infer function has checked it is one of them).
template <class Fn>
decltype(auto) visit_index_dtype(DType t, Fn&& fn) {
  if (t == DType::i32) return fn.template operator()<int32_t>();
  return fn.template operator()<int64_t>();
}

// Sets the op's CPU kernels for f32, f64, f16 and bf16 to
// make.template operator()<T>(), e.g. []<class T>() { return &kernel<T>; }.
template <class Make>
void set_float_kernels(OpDef& op, Make make) {
  op.set_kernel(DeviceType::cpu, DType::f32, make.template operator()<float>());
  op.set_kernel(DeviceType::cpu, DType::f64, make.template operator()<double>());
  op.set_kernel(DeviceType::cpu, DType::f16, make.template operator()<Half>());
  op.set_kernel(DeviceType::cpu, DType::bf16, make.template operator()<BFloat16>());
}

// How a loss turns its per-element values into the output.
enum class LossReduction { none, sum, mean };
LossReduction parse_loss_reduction(const OpDef& op, const Attrs& attrs);
// [] for sum and mean, the per-element shape for none.
Shape loss_output_shape(LossReduction r, const Shape& elements);

}  // namespace kiln::reduction
