// Element-wise reductions of host memory for CPU collectives, one per dtype
// and operation: Gloo calls them to combine the pieces it receives. 16-bit
// floats are combined in float and rounded once; bool sums are logical or
// (as PyTorch's), min is logical and; integers wrap as C++ unsigned
// arithmetic would not surprise (two's complement).
#pragma once

#include <cstddef>

#include "kiln/dist/process_group.hpp"
#include "kiln/dtype.hpp"

namespace kiln::dist {

// out[i] = a[i] (op) b[i] for i < n; out may alias a or b. op is sum, max or
// min (mean reduces as sum).
using ReduceFn = void (*)(void* out, const void* a, const void* b, size_t n);
ReduceFn reduce_function(DType dtype, ReduceOp op);

// Divides every element of host memory by `divisor` (mean = sum / ranks);
// floating dtypes only.
void divide_in_place(void* data, DType dtype, size_t n, int divisor);

}  // namespace kiln::dist
