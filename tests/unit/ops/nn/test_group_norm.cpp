// group_norm and instance_norm against a plain double reference, their
// gradients against finite differences, and their argument errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// x seen as [N, groups, C / groups * inner]: each (sample, group) row
// normalised, then channel c scaled by w[c] and shifted by b[c].
std::vector<double> group_norm_reference(const std::vector<double>& x, const Shape& s, int64_t groups,
                                         const std::vector<double>& w, const std::vector<double>& b, double eps) {
  const int64_t c = s[1], inner = s.numel() / (s[0] * c), row = c / groups * inner;
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < s[0] * groups; ++r) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < row; ++k) mean += x[size_t(r * row + k)] / double(row);
    for (int64_t k = 0; k < row; ++k) var += std::pow(x[size_t(r * row + k)] - mean, 2) / double(row);
    for (int64_t k = 0; k < row; ++k) {
      const size_t ch = size_t((r % groups) * (c / groups) + k / inner);
      y[size_t(r * row + k)] = (x[size_t(r * row + k)] - mean) / std::sqrt(var + eps) * w[ch] + b[ch];
    }
  }
  return y;
}

}  // namespace

TEST_CASE("group_norm matches a reference", "[nn][norm][group_norm]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    for (const Shape& shape : {Shape{2, 6}, Shape{3, 4, 5}, Shape{2, 6, 3, 4}}) {
      for (int64_t groups : {int64_t(1), int64_t(2), shape[1]}) {
        INFO("dtype " << dtype_name(t) << " shape " << to_string(shape) << " groups " << groups);
        const int64_t c = shape[1];
        const Tensor x = random_tensor(rt, shape, t, -2.0, 3.0, 41);
        const Tensor w = random_tensor(rt, {c}, t, 0.5, 1.5, 42), b = random_tensor(rt, {c}, t, -1.0, 1.0, 43);
        if (shape.numel() / shape[0] / groups > 1) {
          const Tensor y = rt.call1("group_norm", {x, w, b}, {{"num_groups", groups}, {"eps", 1e-3}});
          CHECK(y.dtype() == t);
          CHECK(y.shape() == shape);
          require_close(rt, y, group_norm_reference(values(rt, x), shape, groups, values(rt, w), values(rt, b), 1e-3),
                        1e-5, 1e-5);
        }
        const std::vector<double> ones(size_t(c), 1.0), zeros(size_t(c), 0.0);
        require_close(rt, rt.call1("group_norm", {x}, {{"num_groups", groups}}),
                      group_norm_reference(values(rt, x), shape, groups, ones, zeros, 1e-5), 1e-4, 1e-4);
      }
    }
  }
}

TEST_CASE("instance_norm normalises each sample's channel on its own", "[nn][norm][instance_norm]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    for (const Shape& shape : {Shape{2, 3, 5}, Shape{3, 4, 2, 3}}) {
      INFO("dtype " << dtype_name(t) << " shape " << to_string(shape));
      const int64_t c = shape[1];
      const Tensor x = random_tensor(rt, shape, t, -2.0, 3.0, 51);
      const Tensor w = random_tensor(rt, {c}, t, 0.5, 1.5, 52), b = random_tensor(rt, {c}, t, -1.0, 1.0, 53);
      require_close(rt, rt.call1("instance_norm", {x, w, b}, {{"eps", 1e-3}}),
                    group_norm_reference(values(rt, x), shape, c, values(rt, w), values(rt, b), 1e-3), 1e-5, 1e-5);
      const std::vector<double> ones(size_t(c), 1.0), zeros(size_t(c), 0.0);
      require_close(rt, rt.call1("instance_norm", {x}),
                    group_norm_reference(values(rt, x), shape, c, ones, zeros, 1e-5), 1e-4, 1e-4);
    }
  }
}

TEST_CASE("group_norm and instance_norm gradients match finite differences", "[nn][norm][grad]") {
  Runtime rt;
  for (const Shape& shape : {Shape{3, 4}, Shape{2, 4, 3}, Shape{2, 6, 2, 2}}) {
    const int64_t c = shape[1];
    const Tensor x = random_tensor(rt, shape, DType::f64, -1.0, 1.0, 61);
    const Tensor w = random_tensor(rt, {c}, DType::f64, 0.5, 1.5, 62);
    const Tensor b = random_tensor(rt, {c}, DType::f64, -1.0, 1.0, 63);
    INFO("shape " << to_string(shape));
    gradcheck(rt, "group_norm", {x, w, b}, {{"num_groups", 2}});
    gradcheck(rt, "group_norm", {x}, {{"num_groups", 1}});
    gradcheck(rt, "group_norm", {x, w}, {{"num_groups", 2}, {"eps", 1e-3}});
    if (shape.rank() >= 3) {
      gradcheck(rt, "instance_norm", {x, w, b});
      gradcheck(rt, "instance_norm", {x});
    }
  }
}

TEST_CASE("group_norm and instance_norm reject wrong shapes, groups and dtypes", "[nn][norm][errors]") {
  Runtime rt;
  const Tensor x = rt.full({2, 6, 3}, 1.0);
  require_error(
      [&] {
        rt.call1("group_norm", {x}, {{"num_groups", 4}});
      },
      Status::shape_mismatch, {"op 'group_norm'", "divisible by num_groups", "[2, 6, 3]", "num_groups = 4"});
  require_error(
      [&] {
        rt.call1("group_norm", {x}, {{"num_groups", 0}});
      },
      Status::invalid_argument, {"op 'group_norm'", "num_groups must be positive, got 0"});
  require_error(
      [&] {
        rt.call1("group_norm", {x, rt.full({3}, 1.0)}, {{"num_groups", 2}});
      },
      Status::shape_mismatch, {"op 'group_norm'", "weight has shape [3]", "6 channels", "expected [6]"});
  require_error(
      [&] {
        rt.call1("group_norm", {rt.full({6}, 1.0)}, {{"num_groups", 2}});
      },
      Status::shape_mismatch, {"op 'group_norm'", "[N, C, ...]", "[6]"});
  require_error(
      [&] {
        rt.call1("group_norm", {rt.full({2, 4}, 1.0, DType::i64)}, {{"num_groups", 2}});
      },
      Status::dtype_mismatch, {"op 'group_norm'", "floating point", "i64"});
  require_error([&] { rt.call1("group_norm", {x}); }, Status::invalid_argument, {"group_norm", "num_groups"});
  require_error(
      [&] {
        rt.call1("instance_norm", {rt.full({2, 6}, 1.0)});
      },
      Status::shape_mismatch, {"op 'instance_norm'", "at least one spatial dim", "[2, 6]"});
  require_error(
      [&] {
        rt.call1("instance_norm", {rt.full({2, 6, 1}, 1.0)});
      },
      Status::shape_mismatch, {"op 'instance_norm'", "more than 1 spatial element", "[2, 6, 1]"});
  require_error(
      [&] {
        rt.call1("instance_norm", {x, Tensor(), rt.full({2}, 0.0)});
      },
      Status::shape_mismatch, {"op 'instance_norm'", "bias has shape [2]", "expected [6]"});
}
