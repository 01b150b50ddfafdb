#include "ops/torch/compare.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "support/gradcheck.hpp"

namespace kiln::test {

Tolerance tolerance_for(DType t) {
  switch (t) {
    case DType::f64: return {1e-10, 1e-9};
    case DType::f32: return {1e-5, 1e-5};
    case DType::f16: return {1e-3, 1e-3};
    case DType::bf16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

void Difference::merge(const Difference& other) {
  max_abs = std::max(max_abs, other.max_abs);
  worst = std::max(worst, other.worst);
  if (failure.empty()) failure = other.failure;
}

namespace {

// "" when `a` may stand for `e`, else why not.
std::string element_fault(double a, double e, const Tolerance& tol, Difference& d) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a) ? "" : "NaN in one result only";
  if (std::isinf(e) || std::isinf(a)) return a == e ? "" : "infinities differ";
  const double diff = std::abs(a - e);
  d.max_abs = std::max(d.max_abs, diff);
  const double allowed = tol.atol + tol.rtol * std::abs(e);
  if (allowed == 0) return diff == 0 ? "" : "values differ";
  d.worst = std::max(d.worst, diff / allowed);
  return diff <= allowed ? "" : "beyond the tolerance";
}

}  // namespace

Difference compare_tensors(Runtime& rt, const Tensor& actual, const Tensor& expected) {
  Difference d;
  std::ostringstream why;
  why << std::setprecision(17);
  if (actual.dtype() != expected.dtype()) {
    why << "dtype " << dtype_name(actual.dtype()) << ", expected " << dtype_name(expected.dtype());
  } else if (actual.shape() != expected.shape()) {
    why << "shape " << to_string(actual.shape()) << ", expected " << to_string(expected.shape());
  } else {
    const std::vector<double> a = values(rt, actual), e = values(rt, expected);
    const Tolerance tol = tolerance_for(expected.dtype());
    bool found = false;
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string fault = element_fault(a[i], e[i], tol, d);
      if (!fault.empty() && !found) {
        found = true;
        why << "element " << i << ": " << fault << ": got " << a[i] << ", expected " << e[i];
      }
    }
  }
  d.failure = why.str();
  return d;
}

}  // namespace kiln::test
