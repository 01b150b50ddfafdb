// Sets every row of a dense [rows, cols] matrix on a GPU to bias[cols], or to
// zeros when bias is null: the start of a product whose bias cuBLASLt cannot
// add itself, and the whole result of a product over zero terms.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln::cuda {

void fill_rows_with_bias(int device, void* out, const void* bias, size_t element_size, int64_t rows, int64_t cols);

}  // namespace kiln::cuda
