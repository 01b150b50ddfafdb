// The LSTM cell's activations as straight-line arithmetic that the compiler
// widens into vector code (std::exp is a library call per element, which
// keeps a loop scalar): sigmoid and tanh built on the f32 exp of
// kiln/kernels/cpu/vector_math.hpp. f64 keeps the library functions: it is the reference the f32 path and
// the gradient checks are measured against.
#pragma once

#include <cmath>

#include "kiln/kernels/cpu/vector_math.hpp"

namespace kiln::nn::lstm {

using cpu::exp_f32;

[[gnu::always_inline]] inline float sigmoid(float x) { return 1.0f / (1.0f + exp_f32(-x)); }
[[gnu::always_inline]] inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// tanh(x) = 2 sigmoid(2x) - 1: within 3e-7 of tanh everywhere (absolute),
// which is what an f32 cell keeps of its state anyway.
[[gnu::always_inline]] inline float tanh(float x) { return 2.0f * sigmoid(2.0f * x) - 1.0f; }
[[gnu::always_inline]] inline double tanh(double x) { return std::tanh(x); }

}  // namespace kiln::nn::lstm
