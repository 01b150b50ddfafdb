// Scatter-adds on a GPU add with atomics, which exist for float and double
// only: f32 and f64 outputs take the sums directly, f16 and bf16 ones
// through an f32 scratch converted at the end. Shared by the shape ops'
// kernels (index_add, scatter_add, the backward of repeat and pad).
#pragma once

#include "element.cuh"
#include "fill.hpp"
#include "map.cuh"
#include "kiln/runtime.hpp"

namespace kiln::cuda {

template <class T>
struct Identity {
  __device__ T operator()(T v) const { return v; }
};

template <class T>
struct ToMath {
  __device__ acc_t<T> operator()(T v) const { return to_math(v); }
};

template <class T>
struct FromMath {
  __device__ T operator()(acc_t<T> v) const { return from_math<T>(v); }
};

// Where the sums of `out` are added: out itself or an f32 scratch, holding
// `start` (zeros when start is undefined).
template <class T>
Tensor start_sums(Runtime& rt, Tensor& out, const Tensor& start, const char* what) {
  Tensor acc = is_16bit_float_v<T> ? rt.empty(out.shape(), DType::f32, out.device()) : out;
  if (!start.defined())
    fill(acc, 0.0);
  else
    Map<acc_t<T>, T>::run_dense(what, acc, ToMath<T>{}, start);
  return acc;
}

// Writes the scratch back into out (nothing to do for f32 and f64).
template <class T>
void finish_sums(const Tensor& acc, Tensor& out, const char* what) {
  if constexpr (is_16bit_float_v<T>) Map<T, float>::run_dense(what, out, FromMath<T>{}, acc);
}

}  // namespace kiln::cuda
