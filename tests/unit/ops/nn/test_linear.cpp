#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"
#include "test_matmul_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// input @ weight^T + bias by plain loops.
std::vector<double> reference_linear(Runtime& rt, const Tensor& x, const Tensor& w, const Tensor& bias) {
  const int64_t in = w.dim(1), out = w.dim(0), rows = x.numel() / in;
  const std::vector<double> xv = values(rt, x), wv = values(rt, w);
  const std::vector<double> bv = bias.defined() ? values(rt, bias) : std::vector<double>(size_t(out), 0.0);
  std::vector<double> y;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = bv[size_t(o)];
      for (int64_t i = 0; i < in; ++i) acc += xv[size_t(r * in + i)] * wv[size_t(o * in + i)];
      y.push_back(acc);
    }
  return y;
}

Tensor as_dtype(Runtime& rt, const Tensor& t, DType dtype) {
  return t.defined() ? make_tensor(rt, t.shape(), values(rt, t), dtype) : Tensor();
}

void check_linear_forward(Runtime& rt, const Tensor& x, const Tensor& w, const Tensor& bias, const Shape& out_shape) {
  const std::vector<double> expected = reference_linear(rt, x, w, bias);
  for (DType t : {DType::f32, DType::f64}) {
    INFO("dtype " << dtype_name(t) << ", input " << to_string(x.shape()) << ", bias " << bias.defined());
    const Tensor xt = x.dtype() == t ? x : as_dtype(rt, x, t);
    const Tensor out = bias.defined() ? rt.call1("linear", {xt, as_dtype(rt, w, t), as_dtype(rt, bias, t)})
                                      : rt.call1("linear", {xt, as_dtype(rt, w, t)});
    CHECK(out.shape() == out_shape);
    require_close(rt, out, expected, 1e-5, 1e-5);
  }
}

}  // namespace

TEST_CASE("linear matches the loop reference", "[nn][linear]") {
  Runtime rt;
  const Tensor w = random_tensor(rt, {5, 4}, DType::f64, -1, 1, 2), b = random_tensor(rt, {5}, DType::f64, -1, 1, 3);
  check_linear_forward(rt, random_tensor(rt, {2, 3, 4}), w, b, {2, 3, 5});
  check_linear_forward(rt, random_tensor(rt, {7, 4}), w, Tensor(), {7, 5});
  check_linear_forward(rt, random_tensor(rt, {4}), w, b, {5});
  // A transposed (non-contiguous) input.
  const Tensor xt = rt.call1("transpose", {random_tensor(rt, {4, 3})}, {{"dim0", 0}, {"dim1", 1}});
  check_linear_forward(rt, xt, w, b, {3, 5});
}

TEST_CASE("linear gradients match finite differences", "[nn][linear][grad]") {
  Runtime rt;
  const Tensor w = random_tensor(rt, {3, 4}, DType::f64, -1, 1, 2), b = random_tensor(rt, {3}, DType::f64, -1, 1, 3);
  gradcheck(rt, "linear", {random_tensor(rt, {2, 3, 4}), w, b});
  gradcheck(rt, "linear", {random_tensor(rt, {5, 4}), w});
  gradcheck(rt, "linear", {random_tensor(rt, {4}), w, b});
}

TEST_CASE("linear f32 gradients match the reference", "[nn][linear][grad]") {
  Runtime rt;
  Tensor x = random_tensor(rt, {6, 4}, DType::f32), w = random_tensor(rt, {3, 4}, DType::f32, -1, 1, 2);
  Tensor b = random_tensor(rt, {3}, DType::f32, -1, 1, 3);
  for (Tensor* t : {&x, &w, &b}) t->set_requires_grad(true);
  const Tensor g = random_tensor(rt, {6, 3}, DType::f32, -1, 1, 4);
  rt.backward(rt.call1("linear", {x, w, b}), g);
  const std::vector<double> xv = values(rt, x), wv = values(rt, w), gv = values(rt, g);
  const Shape gs{6, 3};
  require_close(rt, x.grad(), reference_matmul(gv, gs, wv, {3, 4}, {6, 4}), 1e-5, 1e-5);
  std::vector<double> g_t;  // g^T, [3, 6]
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t r = 0; r < 6; ++r) g_t.push_back(gv[size_t(r * 3 + o)]);
  require_close(rt, w.grad(), reference_matmul(g_t, {3, 6}, xv, {6, 4}, {3, 4}), 1e-5, 1e-5);
  std::vector<double> gb(3, 0.0);
  for (size_t i = 0; i < gv.size(); ++i) gb[i % 3] += gv[i];
  require_close(rt, b.grad(), gb, 1e-5, 1e-5);
}

TEST_CASE("linear rejects shapes and dtypes that do not fit", "[nn][linear][errors]") {
  Runtime rt;
  try {
    rt.call1("linear", {rt.full({2, 3}, 1.0), rt.full({5, 4}, 1.0)});
    FAIL("feature mismatch accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("op 'linear'") && Catch::Contains("[2, 3]") && Catch::Contains("[5, 4]"));
  }
  try {
    rt.call1("linear", {rt.full({2, 4}, 1.0), rt.full({5, 4}, 1.0), rt.full({4}, 1.0)});
    FAIL("wrong bias accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("bias must be [5]") && Catch::Contains("[4]"));
  }
  try {
    rt.call1("linear", {rt.full({2, 4}, 1.0), rt.full({1, 5, 4}, 1.0)});
    FAIL("rank-3 weight accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("weight") && Catch::Contains("[1, 5, 4]"));
  }
  try {
    rt.call1("linear", {rt.full({2, 4}, 1.0, DType::f64), rt.full({5, 4}, 1.0, DType::f32)});
    FAIL("mixed dtypes accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::dtype_mismatch);
  }
}
