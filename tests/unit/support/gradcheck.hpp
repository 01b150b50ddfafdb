// Test support shared by every op test: random tensors, element access,
// a CPU reference comparison and the finite-difference gradient check.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kiln/error.hpp"
#include "kiln/ops/op_def.hpp"
#include "kiln/runtime.hpp"

namespace kiln::test {

// A contiguous tensor with the given values (converted to dtype).
Tensor make_tensor(Runtime& rt, const Shape& shape, const std::vector<double>& values, DType dtype = DType::f64);
// Uniform values in [lo, hi), from a fixed seed so failures reproduce.
Tensor random_tensor(Runtime& rt, const Shape& shape, DType dtype = DType::f64, double lo = -1.0, double hi = 1.0,
                     uint64_t seed = 1);
// All elements as doubles in row-major order (any layout, any dtype).
std::vector<double> values(Runtime& rt, const Tensor& t);

// Checks every element of `actual` against `expected` within atol + rtol*|e|
// and reports the first mismatch with its index.
void require_close(const std::vector<double>& actual, const std::vector<double>& expected, double atol = 1e-6,
                   double rtol = 1e-5);
void require_close(Runtime& rt, const Tensor& actual, const std::vector<double>& expected, double atol = 1e-6,
                   double rtol = 1e-5);

// Runs `call`, which must throw kiln::Error with `status` and a message that
// contains every one of `parts`.
void require_error(const std::function<void()>& call, Status status, const std::vector<std::string>& parts);

// True when this CPU runs bf16 products (oneDNN 2.6 needs AVX-512);
// otherwise checks that the refusal says why, warns, and the caller skips
// its bf16 part.
bool cpu_runs_bf16(Runtime& rt);

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  // Inputs (by index) not to differentiate, e.g. class indices or a mask.
  std::vector<size_t> skip_inputs;
};

// Compares the analytic gradient of op(inputs) with central finite
// differences, for every floating input (which must be f64): the scalar is
// sum_k <w_k, output_k> with fixed random weights w_k, so every output
// element and every output of a multi-output op is checked.
void gradcheck(Runtime& rt, const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
               const GradcheckOptions& options = {});
void gradcheck(Runtime& rt, std::string_view op, const std::vector<Tensor>& inputs, NamedAttrs attrs = {},
               const GradcheckOptions& options = {});

// The same check for any differentiable function of the inputs built from ops
// (a composite, a layer) that returns one tensor.
void gradcheck_fn(Runtime& rt, const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                  const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace kiln::test
