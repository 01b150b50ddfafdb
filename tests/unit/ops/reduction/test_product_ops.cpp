// prod and cumsum against references: zeros, integers (int64 results),
// empty groups, and gradients, including prod's with one and several zeros.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kiln/runtime.hpp"
#include "ops/reduction/reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

double product(const std::vector<double>& g) {
  double p = 1;
  for (double v : g) p *= v;
  return p;
}

// cumsum of x along dim, by positions.
std::vector<double> cumsum_reference(const Shape& shape, const std::vector<double>& x, int dim) {
  std::vector<double> out(x.size());
  for (const std::vector<int64_t>& row : reduce_group_positions(shape, {dim})) {
    double s = 0;
    for (int64_t i : row) out[size_t(i)] = s += x[size_t(i)];
  }
  return out;
}

}  // namespace

TEST_CASE("prod matches a reference, integers giving int64", "[reduction]") {
  Runtime rt;
  const Shape shape{3, 4, 2};
  std::vector<double> xv = values(rt, random_tensor(rt, shape, DType::f64, -3, 3, 31));
  for (double& v : xv) v = std::round(v);  // integers, zeros among them
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64, DType::u8}) {
    std::vector<double> typed = xv;
    if (dtype == DType::u8) for (double& v : typed) v = std::abs(v);
    Tensor x = make_tensor(rt, shape, typed, dtype);
    for (const std::vector<int>& dims : std::vector<std::vector<int>>{{}, {1}, {0, 2}, {-1}}) {
      for (bool keepdim : {false, true}) {
        INFO(dtype_name(dtype) << " over " << dims.size() << " dims, keepdim " << keepdim);
        Tensor y = rt.call1("prod", {x}, {{"dims", std::vector<int64_t>(dims.begin(), dims.end())}, {"keepdim", keepdim}});
        CHECK(y.dtype() == (is_floating(dtype) ? dtype : DType::i64));
        CHECK(y.shape() == reduced_shape(shape, dims, keepdim));
        require_close(rt, y, per_group(reduce_groups(shape, typed, dims), product), 0, 1e-5);
      }
    }
  }
  require_close(rt, rt.call1("prod", {rt.full({2, 0}, 3.0)}, {{"dims", std::vector<int64_t>{1}}}), {1, 1});
  const double inf = std::numeric_limits<double>::infinity();
  require_close(rt, rt.call1("prod", {make_tensor(rt, {3}, {inf, 0, 2})}), {std::nan("")});
}

TEST_CASE("prod's gradient is exact with no, one and several zeros", "[reduction][grad]") {
  Runtime rt;
  gradcheck(rt, "prod", {random_tensor(rt, {3, 4, 5}, DType::f64, 0.5, 1.5, 3)}, {{"dims", std::vector<int64_t>{1}}});
  gradcheck(rt, "prod", {random_tensor(rt, {3, 4}, DType::f64, -1.5, 1.5, 8)});
  // Rows with no zero, one zero and two zeros.
  Tensor x = make_tensor(rt, {3, 3}, {2, 3, 4, 2, 0, 4, 0, 3, 0});
  gradcheck(rt, "prod", {x}, {{"dims", std::vector<int64_t>{1}}, {"keepdim", true}});
  Tensor leaf = make_tensor(rt, {3, 3}, {2, 3, 4, 2, 0, 4, 0, 3, 0});
  leaf.set_requires_grad(true);
  rt.backward(rt.call1("prod", {leaf}, {{"dims", std::vector<int64_t>{1}}}), make_tensor(rt, {3}, {1.0, 1.0, 1.0}));
  require_close(rt, leaf.grad(), {12, 8, 6, 0, 8, 0, 0, 0, 0});
}

TEST_CASE("cumsum matches a reference along every dim", "[reduction]") {
  Runtime rt;
  const Shape shape{3, 4, 5};
  std::vector<double> xv = values(rt, random_tensor(rt, shape, DType::f64, -4, 4, 41));
  for (double& v : xv) v = std::round(v);
  for (DType dtype : {DType::f32, DType::f64, DType::bf16, DType::i32, DType::i64, DType::boolean}) {
    std::vector<double> typed = xv;
    if (dtype == DType::boolean) for (double& v : typed) v = v != 0;
    Tensor x = make_tensor(rt, shape, typed, dtype);
    for (int dim : {0, 1, 2, -1}) {
      INFO(dtype_name(dtype) << " along " << dim);
      Tensor y = rt.call1("cumsum", {x}, {{"dim", int64_t(dim)}});
      CHECK(y.dtype() == (is_floating(dtype) ? dtype : DType::i64));
      CHECK(y.shape() == shape);
      require_close(rt, y, cumsum_reference(shape, typed, dim), 0, 0);
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  require_close(rt, rt.call1("cumsum", {make_tensor(rt, {4}, {1, inf, -inf, 2})}, {{"dim", int64_t(0)}}),
                {1, inf, std::nan(""), std::nan("")});
  CHECK(rt.call1("cumsum", {rt.full({0, 3}, 1.0)}, {{"dim", int64_t(0)}}).shape() == Shape{0, 3});
}

TEST_CASE("cumsum's gradient is the reversed cumulative sum", "[reduction][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {3, 4, 5}, DType::f64, -1, 1, 43);
  for (int64_t dim : {0, 1, -1}) gradcheck(rt, "cumsum", {x}, {{"dim", dim}});
  Tensor leaf = make_tensor(rt, {3}, {1, 2, 3});
  leaf.set_requires_grad(true);
  rt.backward(rt.call1("cumsum", {leaf}, {{"dim", int64_t(0)}}), make_tensor(rt, {3}, {1.0, 10.0, 100.0}));
  require_close(rt, leaf.grad(), {111, 110, 100});
}

TEST_CASE("prod and cumsum reject bad dims", "[reduction][errors]") {
  Runtime rt;
  Tensor x = rt.full({2, 3}, 1.0);
  require_error([&] { rt.call1("cumsum", {x}, {{"dim", int64_t(2)}}); }, Status::invalid_argument,
                {"op 'cumsum'", "dimension 2 is out of range", "rank 2"});
  require_error([&] { rt.call1("cumsum", {x}); }, Status::invalid_argument, {"op 'cumsum'", "'dim' is required"});
  require_error([&] { rt.call1("prod", {x}, {{"dims", std::vector<int64_t>{-3}}}); }, Status::invalid_argument,
                {"op 'prod'", "out of range"});
}
