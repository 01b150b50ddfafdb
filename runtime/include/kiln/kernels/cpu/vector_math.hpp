// Element functions as straight-line f32 arithmetic that the compiler
// widens into vector code inside a loop (std::exp is a library call per
// element, which keeps a loop scalar). Loops that use them are compiled
// with -fno-trapping-math (see runtime/CMakeLists.txt): under the default,
// GCC keeps the clamps' selects as branches and the loop scalar.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln::cpu {

// e^x from Cephes' range reduction and polynomial, within 2 ulp of the
// exact value, for x clamped to [-87, 88], where e^x and 2^n stay normal
// floats. NaN goes through every step as NaN.
[[gnu::always_inline]] inline float exp_f32(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // Adding 1.5 * 2^23 rounds x log2(e) to the integer n in the low mantissa bits.
  constexpr float kShift = 12582912.0f;
  const float shifted = x * 1.44269504088896341f + kShift;
  const float n = shifted - kShift;
  // r = x - n ln 2 in two parts, so that r keeps f32 precision.
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from n's bits, in unsigned arithmetic (defined for NaN's bits too).
  const uint32_t biased = std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kShift) + 127u;
  return p * std::bit_cast<float>(biased << 23);
}

}  // namespace kiln::cpu
