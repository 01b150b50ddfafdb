// A cap on how much of a GPU's memory kiln reserves, as a fraction of the
// device's size, so that kiln can share a GPU with the host application:
// KILN_CUDA_MEMORY_FRACTION=0.5 lets each device allocator hold at most half
// its GPU. Unset, kiln may use the whole device.
#pragma once

#include <cstddef>

namespace kiln {

inline constexpr const char* kMemoryFractionVariable = "KILN_CUDA_MEMORY_FRACTION";

// The value of the variable (null or empty: unset, 1) as a number greater
// than 0 and at most 1; throws Error(invalid_argument) naming the variable
// and the value otherwise.
double parse_memory_fraction(const char* text);

// The cap for a device of `device_bytes` bytes: 0 (none) for a fraction of 1.
size_t memory_limit_bytes(double fraction, size_t device_bytes);

}  // namespace kiln
