// The tape itself: accumulation, freeing, grad mode, and a composite model
// whose gradients are derived by hand.
#include <catch2/catch.hpp>
#include <cmath>

#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor leaf(Runtime& rt, const Shape& shape, const std::vector<double>& v) {
  Tensor t = make_tensor(rt, shape, v);
  t.set_requires_grad(true);
  return t;
}

Tensor sum_all(Runtime& rt, const Tensor& t) { return rt.call1("sum", {t}); }

}  // namespace

TEST_CASE("gradients accumulate across backward calls until zeroed", "[autograd]") {
  Runtime rt;
  Tensor x = leaf(rt, {3}, {1, 2, 3});
  for (int i = 0; i < 2; ++i) rt.backward(sum_all(rt, rt.call1("mul", {x, x})));
  require_close(rt, x.grad(), {4, 8, 12});  // 2 * (2x)
  x.set_grad(Tensor());
  rt.backward(sum_all(rt, rt.call1("mul", {x, x})));
  require_close(rt, x.grad(), {2, 4, 6});
}

TEST_CASE("a leaf used twice in one graph gets the sum of both paths", "[autograd]") {
  Runtime rt;
  Tensor x = leaf(rt, {2}, {3, -1});
  Tensor y = rt.call1("add", {rt.call1("mul", {x, x}), x});  // x^2 + x
  rt.backward(sum_all(rt, y));
  require_close(rt, x.grad(), {7, -1});
}

TEST_CASE("the tape is freed after backward and a second backward says so", "[autograd]") {
  Runtime rt;
  Tensor x = leaf(rt, {2}, {1, 2});
  Tensor loss = sum_all(rt, rt.call1("mul", {x, x}));
  rt.backward(loss);
  try {
    rt.backward(loss);
    FAIL("second backward through a freed graph succeeded");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_state);
    CHECK_THAT(e.what(), Catch::Contains("already been freed") && Catch::Contains("retain_graph"));
  }
  Tensor kept = sum_all(rt, rt.call1("mul", {x, x}));
  x.set_grad(Tensor());
  rt.backward(kept, {}, /*retain_graph=*/true);
  rt.backward(kept);
  require_close(rt, x.grad(), {4, 8});
}

TEST_CASE("no_grad scopes record nothing and nest", "[autograd]") {
  Runtime rt;
  Tensor x = leaf(rt, {2}, {1, 2});
  {
    NoGradGuard outer(rt);
    {
      NoGradGuard inner(rt);
      CHECK_FALSE(grad_enabled(rt.id()));
    }
    CHECK_FALSE(grad_enabled(rt.id()));
    Tensor y = rt.call1("mul", {x, x});
    CHECK_FALSE(y.requires_grad());
    CHECK_THROWS_WITH(rt.backward(sum_all(rt, y)), Catch::Contains("does not require grad"));
  }
  CHECK(grad_enabled(rt.id()));
  Runtime other;  // grad mode is per runtime
  NoGradGuard off(other);
  CHECK(grad_enabled(rt.id()));
  CHECK(rt.call1("mul", {x, x}).requires_grad());
}

TEST_CASE("requires_grad is refused on integer tensors and non-leaves", "[autograd][errors]") {
  Runtime rt;
  Tensor i = rt.full({2}, 1.0, DType::i64);
  CHECK_THROWS_WITH(i.set_requires_grad(true), Catch::Contains("floating-point") && Catch::Contains("i64"));
  Tensor x = leaf(rt, {2}, {1, 2});
  Tensor y = rt.call1("mul", {x, x});
  CHECK_THROWS_WITH(y.set_requires_grad(false), Catch::Contains("leaf"));
}

TEST_CASE("backward of a non-scalar needs an explicit gradient", "[autograd][errors]") {
  Runtime rt;
  Tensor x = leaf(rt, {2}, {1, 2});
  Tensor y = rt.call1("mul", {x, x});
  CHECK_THROWS_WITH(rt.backward(y), Catch::Contains("a gradient must be given"));
  rt.backward(y, make_tensor(rt, {2}, {1, 10}));
  require_close(rt, x.grad(), {2, 40});
}

// A two-layer MLP with cross-entropy: every parameter gradient against the
// formulas derived by hand (softmax minus one-hot, back through the layers).
TEST_CASE("two-layer MLP gradients match hand-derived formulas", "[autograd][composite]") {
  Runtime rt;
  const int N = 4, D = 3, H = 5, C = 3;
  Tensor x = random_tensor(rt, {N, D}, DType::f64, -1, 1, 11);
  Tensor w1 = random_tensor(rt, {H, D}, DType::f64, -1, 1, 12);
  Tensor b1 = random_tensor(rt, {H}, DType::f64, -1, 1, 13);
  Tensor w2 = random_tensor(rt, {C, H}, DType::f64, -1, 1, 14);
  Tensor b2 = random_tensor(rt, {C}, DType::f64, -1, 1, 15);
  const std::vector<int64_t> labels = {0, 2, 1, 2};
  Tensor target = rt.empty({N}, DType::i64);
  for (int n = 0; n < N; ++n) target.data<int64_t>()[n] = labels[size_t(n)];
  for (Tensor* p : {&w1, &b1, &w2, &b2}) p->set_requires_grad(true);

  Tensor hidden = rt.call1("relu", {rt.call1("linear", {x, w1, b1})});
  Tensor logits = rt.call1("linear", {hidden, w2, b2});
  Tensor loss = rt.call1("cross_entropy", {logits, target});
  rt.backward(loss);

  const auto X = values(rt, x), W1 = values(rt, w1), B1 = values(rt, b1), W2 = values(rt, w2), B2 = values(rt, b2);
  std::vector<double> pre(N * H), h(N * H), z(N * C), dz(N * C);
  double expected_loss = 0;
  for (int n = 0; n < N; ++n) {
    for (int j = 0; j < H; ++j) {
      double s = B1[size_t(j)];
      for (int d = 0; d < D; ++d) s += X[size_t(n * D + d)] * W1[size_t(j * D + d)];
      pre[size_t(n * H + j)] = s;
      h[size_t(n * H + j)] = s > 0 ? s : 0;
    }
    double zmax = -1e300;
    for (int c = 0; c < C; ++c) {
      double s = B2[size_t(c)];
      for (int j = 0; j < H; ++j) s += h[size_t(n * H + j)] * W2[size_t(c * H + j)];
      z[size_t(n * C + c)] = s;
      zmax = std::max(zmax, s);
    }
    double denom = 0;
    for (int c = 0; c < C; ++c) denom += std::exp(z[size_t(n * C + c)] - zmax);
    for (int c = 0; c < C; ++c) {
      const double p = std::exp(z[size_t(n * C + c)] - zmax) / denom;
      dz[size_t(n * C + c)] = (p - (c == labels[size_t(n)] ? 1.0 : 0.0)) / N;
    }
    expected_loss += -(z[size_t(n * C + labels[size_t(n)])] - zmax - std::log(denom)) / N;
  }
  std::vector<double> dw2(C * H, 0), db2(C, 0), dw1(H * D, 0), db1(H, 0);
  for (int n = 0; n < N; ++n) {
    for (int c = 0; c < C; ++c) {
      db2[size_t(c)] += dz[size_t(n * C + c)];
      for (int j = 0; j < H; ++j) dw2[size_t(c * H + j)] += dz[size_t(n * C + c)] * h[size_t(n * H + j)];
    }
    for (int j = 0; j < H; ++j) {
      double dh = 0;
      for (int c = 0; c < C; ++c) dh += dz[size_t(n * C + c)] * W2[size_t(c * H + j)];
      const double dpre = pre[size_t(n * H + j)] > 0 ? dh : 0;
      db1[size_t(j)] += dpre;
      for (int d = 0; d < D; ++d) dw1[size_t(j * D + d)] += dpre * X[size_t(n * D + d)];
    }
  }
  require_close(rt, loss, {expected_loss}, 1e-12, 1e-10);
  require_close(rt, w2.grad(), dw2, 1e-12, 1e-10);
  require_close(rt, b2.grad(), db2, 1e-12, 1e-10);
  require_close(rt, w1.grad(), dw1, 1e-12, 1e-10);
  require_close(rt, b1.grad(), db1, 1e-12, 1e-10);
}

TEST_CASE("ops whose backward needs only input shapes do not keep inputs alive", "[autograd][memory]") {
  Runtime rt;
  Tensor x = rt.full({1000}, 1.0, DType::f64);
  x.set_requires_grad(true);
  Tensor scaled = rt.call1("mul_scalar", {x}, {{"value", 2.0}});
  Tensor y = rt.call1("add", {scaled, x});
  const int64_t before = rt.allocator(Device::cpu())->stats().current_bytes;
  scaled = Tensor();  // add's tape node must not hold it
  CHECK(rt.allocator(Device::cpu())->stats().current_bytes == before - 8000);
  rt.backward(y, rt.full({1000}, 1.0, DType::f64));
  require_close(rt, x.grad(), std::vector<double>(1000, 3.0));
}
