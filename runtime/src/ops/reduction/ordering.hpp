// The order the arg-reductions, max_dim/min_dim, sort and topk share with
// PyTorch: a NaN ranks above every number, so max, argmax and a descending
// sort pick NaNs first, an ascending sort puts them last, and min/argmin
// still pick a NaN (it propagates, as in torch.min). Integers compare as
// themselves; 16-bit floats compare after widening to float.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kiln/dtype.hpp"
#include "kiln/ops/op_def.hpp"

namespace kiln::reduction {

// What an element of type T is compared as.
template <class T>
auto order_key(T v) {
  if constexpr (std::is_integral_v<T>) return v;
  else return load_acc(v);
}

template <class K>
bool is_nan_key(K v) {
  if constexpr (std::is_floating_point_v<K>) return std::isnan(v);
  else return false;
}

// a sorts strictly before b in ascending order (NaN last).
template <class K>
bool ascending_before(K a, K b) {
  return is_nan_key(b) ? !is_nan_key(a) : a < b;
}

// a replaces the best-so-far b in a scan for the maximum (Largest) or the
// minimum: a NaN beats any number and nothing beats a NaN, so the scan
// keeps the first NaN, or else the first extreme value.
template <bool Largest, class K>
bool beats(K a, K b) {
  if (is_nan_key(b)) return false;
  if (is_nan_key(a)) return true;
  return Largest ? a > b : a < b;
}

// Sets the op's CPU kernels for every dtype with an order (all but bool) to
// make.template operator()<T>().
template <class Make>
void set_ordered_kernels(OpDef& op, Make make) {
  op.set_kernel(DeviceType::cpu, DType::f32, make.template operator()<float>());
  op.set_kernel(DeviceType::cpu, DType::f64, make.template operator()<double>());
  op.set_kernel(DeviceType::cpu, DType::f16, make.template operator()<Half>());
  op.set_kernel(DeviceType::cpu, DType::bf16, make.template operator()<BFloat16>());
  op.set_kernel(DeviceType::cpu, DType::i32, make.template operator()<int32_t>());
  op.set_kernel(DeviceType::cpu, DType::i64, make.template operator()<int64_t>());
  op.set_kernel(DeviceType::cpu, DType::u8, make.template operator()<uint8_t>());
}

// Throws dtype_mismatch naming the op unless input i has an order (not bool).
void check_ordered(const InferCall& c, size_t i);

// The single dimension of an op's integer attribute `name`, normalised.
int single_dim(const OpDef& op, const Attrs& attrs, const Shape& shape, const char* name = "dim");

}  // namespace kiln::reduction
