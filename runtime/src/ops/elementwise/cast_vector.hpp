// Vectorised conversions between f32 and the 16-bit floats, for the cast op
// (autocast makes many, the weights of every product each step). The path
// is chosen at run time from what the CPU has: AVX-512, AVX2 with F16C, or
// plain loops. Every path rounds to nearest even and gives the bits of
// float_to_bf16 / float_to_half, except that a NaN converted to f16 keeps
// the top bits of its payload (F16C's rule) where the plain loop gives the
// canonical quiet NaN.
#pragma once

#include <cstdint>

#include "kiln/dtype.hpp"

namespace kiln::elementwise {

void convert_floats(const float* in, BFloat16* out, int64_t n);
void convert_floats(const BFloat16* in, float* out, int64_t n);
void convert_floats(const float* in, Half* out, int64_t n);
void convert_floats(const Half* in, float* out, int64_t n);

}  // namespace kiln::elementwise
