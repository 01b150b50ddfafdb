// The result and accumulation types of prod and cumsum, shared by their CPU
// and CUDA kernels: as in PyTorch, integer and bool inputs give int64 (products
// and running sums overflow narrow integers quickly); floating inputs keep
// their dtype and accumulate in acc_t.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kiln/dtype.hpp"

namespace kiln::reduction {

template <class T> using result_t = std::conditional_t<std::is_integral_v<T>, int64_t, T>;
template <class T> using fold_t = std::conditional_t<std::is_integral_v<T>, int64_t, acc_t<T>>;

inline DType result_dtype(DType t) { return is_floating(t) ? t : DType::i64; }

}  // namespace kiln::reduction
