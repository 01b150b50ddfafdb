// linear's fused activation against linear followed by the activation as its
// own op (relu, gelu with approximate = "tanh"), forward and backward, and
// the error an unknown activation name gets.
#include <catch2/catch.hpp>
#include <string>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct ActivationCase {
  const char* name;         // linear's activation attribute
  const char* op;           // the unary op that computes it alone
  const char* approximate;  // that op's approximate attribute, or null
};

const ActivationCase kCases[] = {{"relu", "relu", nullptr}, {"gelu_tanh", "gelu", "tanh"}};

Tensor fused(Runtime& rt, const ActivationCase& a, const Tensor& x, const Tensor& w, const Tensor& b) {
  return rt.call1("linear", {x, w, b}, {{"activation", std::string(a.name)}});
}

Tensor two_ops(Runtime& rt, const ActivationCase& a, const Tensor& x, const Tensor& w, const Tensor& b) {
  const Tensor pre = rt.call1("linear", {x, w, b});
  return a.approximate ? rt.call1(a.op, {pre}, {{"approximate", std::string(a.approximate)}}) : rt.call1(a.op, {pre});
}

}  // namespace

TEST_CASE("linear's activation matches linear then the activation op", "[nn][linear][activation]") {
  Runtime rt;
  for (const ActivationCase& a : kCases)
    for (DType dtype : {DType::f32, DType::f64})
      for (const bool with_bias : {true, false}) {
        INFO(a.name << ", " << dtype_name(dtype) << ", bias " << with_bias);
        // Weights up to 2 put pre-activations well into both sides of zero.
        const Tensor x = random_tensor(rt, {2, 5, 7}, dtype, -1, 1, 1);
        const Tensor w = random_tensor(rt, {6, 7}, dtype, -2, 2, 2);
        const Tensor b = with_bias ? random_tensor(rt, {6}, dtype, -1, 1, 3) : Tensor();
        const Tensor got = fused(rt, a, x, w, b);
        CHECK(got.shape() == Shape{2, 5, 6});
        require_close(rt, got, values(rt, two_ops(rt, a, x, w, b)), 1e-6, 1e-5);
      }
}

TEST_CASE("linear's activation over an empty inner dimension is the activation of the bias",
          "[nn][linear][activation]") {
  Runtime rt;
  for (const ActivationCase& a : kCases)
    for (DType dtype : {DType::f32, DType::f64}) {
      INFO(a.name << ", " << dtype_name(dtype));
      const Tensor x = rt.empty({3, 0}, dtype), w = rt.empty({4, 0}, dtype);
      const Tensor b = make_tensor(rt, {4}, {-1.5, -0.25, 0.5, 2.0}, dtype);
      require_close(rt, fused(rt, a, x, w, b), values(rt, two_ops(rt, a, x, w, b)), 1e-6, 1e-5);
    }
}

TEST_CASE("linear's activation gradients match finite differences", "[nn][linear][activation][grad]") {
  Runtime rt;
  for (const ActivationCase& a : kCases) {
    INFO(a.name);
    const Tensor w = random_tensor(rt, {3, 4}, DType::f64, -2, 2, 2), b = random_tensor(rt, {3}, DType::f64, -1, 1, 3);
    gradcheck(rt, "linear", {random_tensor(rt, {2, 5, 4}), w, b}, {{"activation", std::string(a.name)}});
    gradcheck(rt, "linear", {random_tensor(rt, {6, 4}), w}, {{"activation", std::string(a.name)}});
  }
}

TEST_CASE("linear's activation gradients in f32 match linear then the activation op",
          "[nn][linear][activation][grad]") {
  Runtime rt;
  for (const ActivationCase& a : kCases)
    for (const bool with_bias : {true, false}) {
      INFO(a.name << ", bias " << with_bias);
      auto leaf = [&](const Shape& s, double lo, double hi, uint64_t seed) {
        Tensor t = random_tensor(rt, s, DType::f32, lo, hi, seed);
        t.set_requires_grad(true);
        return t;
      };
      const Tensor g = random_tensor(rt, {8, 5}, DType::f32, -1, 1, 4);
      Tensor x1 = leaf({8, 6}, -1, 1, 1), w1 = leaf({5, 6}, -2, 2, 2), b1 = with_bias ? leaf({5}, -1, 1, 3) : Tensor();
      Tensor x2 = leaf({8, 6}, -1, 1, 1), w2 = leaf({5, 6}, -2, 2, 2), b2 = with_bias ? leaf({5}, -1, 1, 3) : Tensor();
      rt.backward(fused(rt, a, x1, w1, b1), g);
      rt.backward(two_ops(rt, a, x2, w2, b2), g);
      require_close(rt, x1.grad(), values(rt, x2.grad()), 1e-6, 1e-5);
      require_close(rt, w1.grad(), values(rt, w2.grad()), 1e-6, 1e-5);
      if (with_bias) require_close(rt, b1.grad(), values(rt, b2.grad()), 1e-6, 1e-5);
    }
}

TEST_CASE("linear rejects an unknown activation, naming the accepted ones", "[nn][linear][activation][errors]") {
  Runtime rt;
  const Tensor x = rt.full({2, 4}, 1.0), w = rt.full({3, 4}, 1.0);
  // "gelu" alone is refused: the fused GELU is the tanh form only.
  for (const char* bad : {"gelu", "Relu", ""})
    require_error([&] { rt.call1("linear", {x, w}, {{"activation", std::string(bad)}}); }, Status::invalid_argument,
                  {"op 'linear'", "unknown activation \"" + std::string(bad) + "\"",
                   "accepted: \"none\", \"relu\", \"gelu_tanh\""});
}
