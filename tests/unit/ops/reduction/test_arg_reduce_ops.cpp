// min, max_dim, min_dim, argmax and argmin against plain references: first
// index on ties, NaN wins, integer inputs, the flattened argmax, gradients.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The position of the first NaN, else of the first extreme value.
int64_t arg_extreme(const std::vector<double>& g, bool largest) {
  int64_t best = 0;
  for (size_t k = 0; k < g.size(); ++k) {
    if (std::isnan(g[k])) return int64_t(k);
    if (largest ? g[k] > g[size_t(best)] : g[k] < g[size_t(best)]) best = int64_t(k);
  }
  return best;
}

}  // namespace

TEST_CASE("min matches a reference and lets NaN win", "[reduction]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 5}, DType::f64, -2.0, 2.0, 5);
  const std::vector<double> xv = values(rt, x);
  for (const std::vector<int>& dims : std::vector<std::vector<int>>{{}, {1}, {0, 2}, {-1}}) {
    for (bool keepdim : {false, true}) {
      Tensor y = rt.call1("min", {x}, {{"dims", std::vector<int64_t>(dims.begin(), dims.end())}, {"keepdim", keepdim}});
      CHECK(y.shape() == reduced_shape({3, 4, 5}, dims, keepdim));
      require_close(rt, y, per_group(reduce_groups({3, 4, 5}, xv, dims), [](const std::vector<double>& g) {
                      return *std::min_element(g.begin(), g.end());
                    }));
    }
  }
  Tensor special = make_tensor(rt, {3, 3}, {1, kNan, -1, -kInf, 0, 2, 3, -0.5, kInf});
  require_close(rt, rt.call1("min", {special}, {{"dims", std::vector<int64_t>{1}}}), {kNan, -kInf, -0.5});
  require_close(rt, rt.call1("max", {special}, {{"dims", std::vector<int64_t>{1}}}), {kNan, 2, kInf});
}

TEST_CASE("min splits its gradient evenly among tied minima", "[reduction][grad]") {
  Runtime rt;
  gradcheck(rt, "min", {random_tensor(rt, {3, 4, 5}, DType::f64, -1, 1, 4)}, {{"dims", std::vector<int64_t>{1}}});
  gradcheck(rt, "min", {random_tensor(rt, {3, 4}, DType::f64, -1, 1, 4)});
  Tensor x = make_tensor(rt, {2, 3}, {1, 0, 0, 4, 2, 3});
  x.set_requires_grad(true);
  rt.backward(rt.call1("min", {x}, {{"dims", std::vector<int64_t>{1}}}), make_tensor(rt, {2}, {1.0, 2.0}));
  require_close(rt, x.grad(), {0, 0.5, 0.5, 0, 2, 0});
}

TEST_CASE("max_dim, min_dim, argmax and argmin match a reference", "[reduction]") {
  Runtime rt;
  const Shape shape{4, 3, 5};
  // Multiples of 1/2 in [-2, 2): many ties, so the first index must win.
  std::vector<double> xv = values(rt, random_tensor(rt, shape, DType::f64, -2, 2, 9));
  for (double& v : xv) v = std::floor(v * 2) / 2;
  for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::i32, DType::i64}) {
    std::vector<double> typed = xv;
    if (!is_floating(dtype)) for (double& v : typed) v = std::floor(v * 2);
    Tensor x = make_tensor(rt, shape, typed, dtype);
    for (int dim : {0, 1, 2, -1}) {
      for (bool keepdim : {false, true}) {
        for (bool largest : {true, false}) {
          INFO(dtype_name(dtype) << " dim " << dim << " keepdim " << keepdim << " largest " << largest);
          const auto groups = reduce_groups(shape, typed, {dim});
          std::vector<double> index, value;
          for (const auto& g : groups) {
            index.push_back(double(arg_extreme(g, largest)));
            value.push_back(g[size_t(index.back())]);
          }
          const std::vector<Tensor> vi =
              rt.call(largest ? "max_dim" : "min_dim", {x}, {{"dim", int64_t(dim)}, {"keepdim", keepdim}});
          REQUIRE(vi.size() == 2);
          CHECK(vi[0].dtype() == dtype);
          CHECK(vi[1].dtype() == DType::i64);
          CHECK(vi[0].shape() == reduced_shape(shape, {dim}, keepdim));
          require_close(rt, vi[0], value, 0, 0);
          require_close(rt, vi[1], index, 0, 0);
          Tensor arg = rt.call1(largest ? "argmax" : "argmin", {x},
                                {{"dim", std::vector<int64_t>{dim}}, {"keepdim", keepdim}});
          CHECK(arg.shape() == reduced_shape(shape, {dim}, keepdim));
          require_close(rt, arg, index, 0, 0);
        }
      }
    }
    // No dim: an index into the flattened tensor.
    Tensor flat = rt.call1("argmax", {x});
    CHECK(flat.shape() == Shape{});
    require_close(rt, flat, {double(arg_extreme(typed, true))}, 0, 0);
    require_close(rt, rt.call1("argmin", {x}, {{"keepdim", true}}), {double(arg_extreme(typed, false))}, 0, 0);
    CHECK(rt.call1("argmin", {x}, {{"keepdim", true}}).shape() == Shape{1, 1, 1});
  }
}

TEST_CASE("argmax, argmin and max_dim pick the first NaN", "[reduction]") {
  Runtime rt;
  Tensor x = make_tensor(rt, {3, 4}, {1, kNan, 5, kNan, -kInf, -kInf, 2, kInf, 0, -0.0, 3, 3}, DType::f32);
  require_close(rt, rt.call1("argmax", {x}, {{"dim", std::vector<int64_t>{1}}}), {1, 3, 2}, 0, 0);
  require_close(rt, rt.call1("argmin", {x}, {{"dim", std::vector<int64_t>{1}}}), {1, 0, 0}, 0, 0);
  require_close(rt, rt.call1("argmax", {x}), {1}, 0, 0);
  const std::vector<Tensor> vi = rt.call("min_dim", {x}, {{"dim", int64_t(1)}});
  require_close(rt, vi[0], {kNan, -kInf, 0}, 0, 0);
  require_close(rt, vi[1], {1, 0, 0}, 0, 0);
}

TEST_CASE("max_dim and min_dim send the gradient to the chosen element", "[reduction][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 5}, DType::f64, -1, 1, 13);
  for (const char* op : {"max_dim", "min_dim"}) {
    INFO(op);
    gradcheck(rt, op, {x}, {{"dim", int64_t(1)}});
    gradcheck(rt, op, {x}, {{"dim", int64_t(-1)}, {"keepdim", true}});
    gradcheck(rt, op, {x}, {{"dim", int64_t(0)}});
  }
  // Ties: only the first maximum gets the gradient, as in torch.max(x, dim).
  Tensor t = make_tensor(rt, {2, 3}, {3, 1, 3, 0, 2, 2});
  t.set_requires_grad(true);
  rt.backward(rt.call("max_dim", {t}, {{"dim", int64_t(1)}})[0], make_tensor(rt, {2}, {1.0, 5.0}));
  require_close(rt, t.grad(), {1, 0, 0, 0, 5, 0});
}

TEST_CASE("arg-reductions reject bad dims, empty dims and bool inputs", "[reduction][errors]") {
  Runtime rt;
  Tensor x = rt.full({2, 3}, 1.0);
  require_error([&] { rt.call("max_dim", {x}, {{"dim", int64_t(2)}}); }, Status::invalid_argument,
                {"op 'max_dim'", "dimension 2 is out of range"});
  require_error([&] { rt.call("min_dim", {x}); }, Status::invalid_argument, {"op 'min_dim'", "'dim' is required"});
  require_error([&] { rt.call1("argmax", {x}, {{"dim", std::vector<int64_t>{0, 1}}}); }, Status::invalid_argument,
                {"op 'argmax'", "at most one dimension"});
  require_error([&] { rt.call1("argmin", {x}, {{"dim", std::vector<int64_t>{-3}}}); }, Status::invalid_argument,
                {"op 'argmin'", "out of range"});
  require_error([&] { rt.call1("argmax", {rt.full({2, 0}, 1.0)}, {{"dim", std::vector<int64_t>{1}}}); },
                Status::invalid_argument, {"op 'argmax'", "zero elements", "[2, 0]"});
  require_error([&] { rt.call1("min", {rt.full({0}, 1.0)}); }, Status::invalid_argument,
                {"op 'min'", "minimum over zero elements"});
  require_error([&] { rt.call1("argmax", {rt.full({2}, 1.0, DType::boolean)}); }, Status::dtype_mismatch,
                {"op 'argmax'", "bool"});
}
