// scaled_dot_product_attention with dropout_p > 0: the weights dropped as
// the dropout op drops elements, from the runtime's random stream.
#include <catch2/catch.hpp>

#include <cmath>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor attention(Runtime& rt, const std::vector<Tensor>& in, double p) {
  const OpDef& op = rt.op("scaled_dot_product_attention");
  return rt.call1(op, in, op.make_attrs({{"dropout_p", p}}));
}

std::vector<Tensor> inputs_of(Runtime& rt, DType dtype, bool with_mask) {
  std::vector<Tensor> in{random_tensor(rt, {2, 3, 4, 3}, dtype, -1, 1, 51),
                         random_tensor(rt, {2, 3, 5, 3}, dtype, -1, 1, 52),
                         random_tensor(rt, {2, 3, 5, 2}, dtype, -1, 1, 53)};
  if (with_mask) in.push_back(random_tensor(rt, {3, 1, 5}, dtype, -1, 1, 54));  // broadcast over batch and queries
  return in;
}

}  // namespace

TEST_CASE("scaled_dot_product_attention with dropout_p 0 is the plain attention, bit for bit",
          "[nn][attention][dropout]") {
  Runtime rt;
  // f64 and f32 run the fused kernel, f16 the composed one.
  for (DType t : {DType::f64, DType::f32, DType::f16}) {
    INFO(dtype_name(t));
    std::vector<std::vector<double>> results[2];
    for (int given = 0; given < 2; ++given) {
      std::vector<Tensor> in = inputs_of(rt, t, true);
      for (Tensor& x : in) x.set_requires_grad(true);
      const uint64_t offset = rt.generator_state().offset;
      const Tensor y =
          given ? attention(rt, in, 0.0) : rt.call1("scaled_dot_product_attention", {in[0], in[1], in[2], in[3]});
      CHECK(rt.generator_state().offset == offset);  // nothing drawn
      rt.backward(y, random_tensor(rt, y.shape(), t, -1, 1, 55));
      results[given].push_back(values(rt, y));
      for (const Tensor& x : in) results[given].push_back(values(rt, x.grad()));
    }
    for (size_t i = 0; i < results[0].size(); ++i) CHECK(results[0][i] == results[1][i]);
  }
}

TEST_CASE("scaled_dot_product_attention drops a fraction p of the weights and scales the rest by 1 / (1 - p)",
          "[nn][attention][dropout]") {
  // Queries of zeros give every key the weight 1/S, and value the identity
  // makes output [i, j] the weight of key j for query i: 0 where dropped,
  // 1 / (S (1 - p)) where kept.
  Runtime rt;
  rt.manual_seed(3);
  const int64_t b = 4, l = 64, s = 64;
  const double p = 0.3;
  std::vector<double> identity(size_t(b * s * s), 0.0);
  for (int64_t k = 0; k < b; ++k)
    for (int64_t j = 0; j < s; ++j) identity[size_t((k * s + j) * s + j)] = 1.0;
  for (DType t : {DType::f32, DType::f64}) {
    INFO(dtype_name(t));
    const std::vector<Tensor> in{rt.full({b, l, 8}, 0.0, t), random_tensor(rt, {b, s, 8}, t),
                                 make_tensor(rt, {b, s, s}, identity, t)};
    const std::vector<double> out = values(rt, attention(rt, in, p));
    const double kept_value = 1.0 / (double(s) * (1.0 - p));
    int64_t dropped = 0;
    for (double x : out) {
      if (x == 0.0) {
        ++dropped;
        continue;
      }
      REQUIRE(x == Approx(kept_value).epsilon(1e-6));
    }
    // The count of drops is Binomial(n, p): within 5 standard deviations.
    const double n = double(out.size()), sd = std::sqrt(n * p * (1 - p));
    INFO("dropped " << dropped << " of " << n);
    CHECK(std::abs(double(dropped) - n * p) < 5 * sd);
  }
}

TEST_CASE("scaled_dot_product_attention dropout follows the runtime's seed", "[nn][attention][dropout]") {
  Runtime rt;
  const std::vector<Tensor> in = inputs_of(rt, DType::f32, false);
  const auto run = [&](uint64_t seed) {
    rt.manual_seed(seed);
    return values(rt, attention(rt, in, 0.5));
  };
  const std::vector<double> first = run(7);
  CHECK(run(7) == first);
  CHECK(run(8) != first);
  // A step of the stream of its own: the next call draws other weights.
  rt.manual_seed(7);
  attention(rt, in, 0.5);
  CHECK(values(rt, attention(rt, in, 0.5)) != first);
  // The mask is the backward's alone: a caller receives the attention only.
  const OpDef& op = rt.op("scaled_dot_product_attention");
  CHECK(rt.call(op, in, op.make_attrs({{"dropout_p", 0.5}})).size() == 1);
}

TEST_CASE("scaled_dot_product_attention gradients with dropout match finite differences",
          "[nn][attention][dropout][grad]") {
  // Every evaluation reseeds, so it draws the same mask; the backward reads
  // the mask its forward drew. A floating mask, broadcast, gets its gradient
  // through the dropped weights too.
  Runtime rt;
  for (bool with_mask : {false, true}) {
    INFO("with a floating mask: " << with_mask);
    gradcheck_fn(
        rt,
        [&](const std::vector<Tensor>& in) {
          rt.manual_seed(11);
          return attention(rt, in, 0.4);
        },
        inputs_of(rt, DType::f64, with_mask));
  }
}

TEST_CASE("scaled_dot_product_attention with dropout: f32 and f16 drop the f64 weights", "[nn][attention][dropout]") {
  // The mask depends on the seed and the element only, so every dtype
  // draws the same one: the cheaper dtypes agree with f64.
  Runtime rt;
  const auto run = [&](DType t) {
    rt.manual_seed(21);
    return values(rt, attention(rt, inputs_of(rt, t, true), 0.25));
  };
  const std::vector<double> exact = run(DType::f64);
  require_close(run(DType::f32), exact, 1e-5, 1e-4);
  require_close(run(DType::f16), exact, 2e-2, 2e-2);
}
