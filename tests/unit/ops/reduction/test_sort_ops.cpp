// sort, argsort and topk against a stable reference sort: ties keep their
// order, NaN ranks above every number, integer inputs, and gradients.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// NaN above every number.
bool below(double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; }

struct Sorted {
  std::vector<double> values, indices;  // row-major, in the output's layout
};

// The first k of each row along dim, in the stable order PyTorch's
// stable=True sort gives.
Sorted sort_reference(const Shape& shape, const std::vector<double>& x, int dim, bool descending, int64_t k) {
  const int d = dim < 0 ? dim + shape.rank() : dim;
  Shape out_shape = shape;
  out_shape[d] = k;
  const auto in_rows = reduce_group_positions(shape, {d});
  const auto out_rows = reduce_group_positions(out_shape, {d});
  Sorted s{std::vector<double>(size_t(out_shape.numel())), std::vector<double>(size_t(out_shape.numel()))};
  for (size_t r = 0; r < in_rows.size(); ++r) {
    std::vector<int64_t> order(in_rows[r].size());
    std::iota(order.begin(), order.end(), int64_t(0));
    const auto at = [&](int64_t j) { return x[size_t(in_rows[r][size_t(j)])]; };
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return descending ? below(at(b), at(a)) : below(at(a), at(b)); });
    for (int64_t j = 0; j < k; ++j) {
      s.values[size_t(out_rows[r][size_t(j)])] = at(order[size_t(j)]);
      s.indices[size_t(out_rows[r][size_t(j)])] = double(order[size_t(j)]);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("sort and argsort match a stable reference sort", "[reduction][sort]") {
  Runtime rt;
  const Shape shape{4, 6, 3};
  std::vector<double> xv = values(rt, random_tensor(rt, shape, DType::f64, -3, 3, 61));
  for (double& v : xv) v = std::round(v);  // many ties
  xv[0] = kNan;
  xv[7] = kInf;
  xv[11] = -kInf;
  xv[20] = kNan;
  for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::i32, DType::i64}) {
    std::vector<double> typed = xv;
    if (!is_floating(dtype)) for (double& v : typed) v = std::isfinite(v) ? v : 7;
    Tensor x = make_tensor(rt, shape, typed, dtype);
    for (int dim : {0, 1, 2, -1}) {
      for (bool descending : {false, true}) {
        INFO(dtype_name(dtype) << " along " << dim << (descending ? " descending" : ""));
        const Sorted expected = sort_reference(shape, typed, dim, descending, shape[dim < 0 ? 2 : dim]);
        const NamedAttrs attrs = {{"dim", int64_t(dim)}, {"descending", descending}, {"stable", true}};
        const std::vector<Tensor> vi = rt.call("sort", {x}, attrs);
        REQUIRE(vi.size() == 2);
        CHECK(vi[0].dtype() == dtype);
        CHECK(vi[1].dtype() == DType::i64);
        CHECK(vi[0].shape() == shape);
        require_close(rt, vi[0], expected.values, 0, 0);
        require_close(rt, vi[1], expected.indices, 0, 0);
        require_close(rt, rt.call1("argsort", {x}, attrs), expected.indices, 0, 0);
      }
    }
  }
}

TEST_CASE("topk matches the head of a stable sort", "[reduction][sort]") {
  Runtime rt;
  const Shape shape{5, 7};
  std::vector<double> xv = values(rt, random_tensor(rt, shape, DType::f64, -3, 3, 67));
  for (double& v : xv) v = std::round(v);
  xv[3] = kNan;
  for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::i64}) {
    std::vector<double> typed = xv;
    if (!is_floating(dtype)) typed[3] = 9;
    Tensor x = make_tensor(rt, shape, typed, dtype);
    for (int dim : {0, 1, -1}) {
      for (int64_t k : {0, 1, 3, 5}) {
        for (bool largest : {true, false}) {
          INFO(dtype_name(dtype) << " along " << dim << " k " << k << (largest ? " largest" : " smallest"));
          const Sorted expected = sort_reference(shape, typed, dim, largest, k);
          const std::vector<Tensor> vi = rt.call("topk", {x}, {{"k", k}, {"dim", int64_t(dim)}, {"largest", largest}});
          Shape out = shape;
          out[dim < 0 ? 1 : dim] = k;
          CHECK(vi[0].shape() == out);
          CHECK(vi[1].dtype() == DType::i64);
          require_close(rt, vi[0], expected.values, 0, 0);
          require_close(rt, vi[1], expected.indices, 0, 0);
        }
      }
    }
  }
}

TEST_CASE("sort and topk gradients scatter back to the input", "[reduction][sort][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 5}, DType::f64, -1, 1, 71);
  for (int64_t dim : {0, 1, -1}) {
    INFO("dim " << dim);
    gradcheck(rt, "sort", {x}, {{"dim", dim}});
    gradcheck(rt, "sort", {x}, {{"dim", dim}, {"descending", true}});
    gradcheck(rt, "topk", {x}, {{"k", int64_t(2)}, {"dim", dim}});
    gradcheck(rt, "topk", {x}, {{"k", int64_t(3)}, {"dim", dim}, {"largest", false}});
  }
  Tensor leaf = make_tensor(rt, {4}, {3, 1, 4, 2});
  leaf.set_requires_grad(true);
  rt.backward(rt.call("topk", {leaf}, {{"k", int64_t(2)}})[0], make_tensor(rt, {2}, {10.0, 20.0}));
  require_close(rt, leaf.grad(), {20, 0, 10, 0});
}

TEST_CASE("sort and topk take 0-d and empty inputs", "[reduction][sort]") {
  Runtime rt;
  const std::vector<Tensor> scalar = rt.call("sort", {rt.full({}, 2.0)});
  CHECK(scalar[0].shape() == Shape{});
  require_close(rt, scalar[0], {2});
  require_close(rt, scalar[1], {0});
  CHECK(rt.call("sort", {rt.full({3, 0}, 1.0)}, {{"dim", int64_t(0)}})[1].shape() == Shape{3, 0});
  CHECK(rt.call("topk", {rt.full({3, 4}, 1.0)}, {{"k", int64_t(0)}})[0].shape() == Shape{3, 0});
}

TEST_CASE("sort, argsort and topk reject bad k, dims and bool inputs", "[reduction][sort][errors]") {
  Runtime rt;
  Tensor x = rt.full({2, 3}, 1.0);
  require_error([&] { rt.call("topk", {x}, {{"k", int64_t(4)}}); }, Status::invalid_argument,
                {"op 'topk'", "k = 4 is out of range for dimension 1 of size 3"});
  require_error([&] { rt.call("topk", {x}, {{"k", int64_t(-1)}, {"dim", int64_t(0)}}); }, Status::invalid_argument,
                {"op 'topk'", "k = -1", "dimension 0 of size 2"});
  require_error([&] { rt.call("topk", {x}); }, Status::invalid_argument, {"op 'topk'", "'k' is required"});
  require_error([&] { rt.call("sort", {x}, {{"dim", int64_t(2)}}); }, Status::invalid_argument,
                {"op 'sort'", "dimension 2 is out of range"});
  require_error([&] { rt.call1("argsort", {rt.full({2}, 1.0, DType::boolean)}); }, Status::dtype_mismatch,
                {"op 'argsort'", "bool"});
}
