#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

enum class Mask { none, keep, add };

struct AttentionCase {
  Shape query, key, value;
  Mask mask;
  Shape mask_shape;  // broadcast to [..., L, S]
  bool causal;
  double scale;  // NaN: 1/sqrt(E)
};

constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

const AttentionCase kCases[] = {
    {{2, 3, 4, 5}, {2, 3, 6, 5}, {2, 3, 6, 4}, Mask::none, {}, false, kUnset},
    {{2, 5, 3}, {2, 5, 3}, {2, 5, 2}, Mask::none, {}, true, kUnset},     // causal, square
    {{1, 2, 3, 4}, {1, 2, 7, 4}, {1, 2, 7, 3}, Mask::none, {}, true, 0.5},  // causal, more keys than queries
    {{2, 2, 4, 3}, {2, 2, 5, 3}, {2, 2, 5, 3}, Mask::keep, {4, 5}, false, kUnset},
    {{2, 2, 4, 3}, {2, 2, 5, 3}, {2, 2, 5, 6}, Mask::keep, {2, 1, 4, 5}, false, kUnset},
    {{3, 4, 2}, {3, 6, 2}, {3, 6, 3}, Mask::add, {1, 4, 6}, false, kUnset},
    {{4, 3}, {5, 3}, {5, 2}, Mask::add, {4, 1}, false, 1.5},  // no batch dims
    {{2, 3, 4}, {2, 5, 4}, {2, 5, 3}, Mask::none, {}, false, 0.0},  // scale 0: the mean of the values
};

// softmax(q k^T * scale + mask) v from the definition, row by row, over doubles.
std::vector<double> reference(const AttentionCase& k, const std::vector<double>& q, const std::vector<double>& kk,
                              const std::vector<double>& v, const std::vector<double>& mask) {
  const int r = k.query.rank();
  const int64_t l = k.query[r - 2], e = k.query[r - 1], s = k.key[r - 2], ev = k.value[r - 1];
  const int64_t batch = k.query.numel() / (l * e);
  const double scale = std::isnan(k.scale) ? 1.0 / std::sqrt(double(e)) : k.scale;
  // The mask's strides against [batch..., L, S], 0 where it broadcasts.
  Shape target = k.query;
  target[r - 1] = s;
  std::vector<int64_t> mstride(size_t(r), 0);
  int64_t dense = 1;
  for (int d = k.mask_shape.rank() - 1; d >= 0; --d) {
    if (k.mask_shape[d] != 1) mstride[size_t(r - k.mask_shape.rank() + d)] = dense;
    dense *= k.mask_shape[d];
  }
  std::vector<double> out;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> w(size_t(s), -std::numeric_limits<double>::infinity());
      for (int64_t j = 0; j < s; ++j) {
        int64_t rest = b, mi = i * mstride[size_t(r - 2)] + j * mstride[size_t(r - 1)];
        for (int d = r - 3; d >= 0; --d) {
          mi += (rest % target[d]) * mstride[size_t(d)];
          rest /= target[d];
        }
        if (k.causal && j > i) continue;
        if (k.mask == Mask::keep && mask[size_t(mi)] == 0.0) continue;
        double dot = 0;
        for (int64_t x = 0; x < e; ++x) dot += q[size_t((b * l + i) * e + x)] * kk[size_t((b * s + j) * e + x)];
        w[size_t(j)] = dot * scale + (k.mask == Mask::add ? mask[size_t(mi)] : 0.0);
      }
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (double x : w) max = std::max(max, x);
      for (double& x : w) sum += (x = std::exp(x - max));
      for (int64_t x = 0; x < ev; ++x) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) acc += w[size_t(j)] / sum * v[size_t((b * s + j) * ev + x)];
        out.push_back(acc);
      }
    }
  return out;
}

std::vector<Tensor> inputs_of(Runtime& rt, const AttentionCase& k, DType dtype) {
  std::vector<Tensor> in{random_tensor(rt, k.query, dtype, -1, 1, 41), random_tensor(rt, k.key, dtype, -1, 1, 42),
                         random_tensor(rt, k.value, dtype, -1, 1, 43)};
  if (k.mask == Mask::add) in.push_back(random_tensor(rt, k.mask_shape, dtype, -2, 1, 44));
  if (k.mask == Mask::keep) {
    // Keeps the first key of every row, so that no row is left empty.
    std::vector<double> keep(size_t(k.mask_shape.numel()));
    const int64_t s = k.mask_shape[k.mask_shape.rank() - 1];
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = (i % size_t(s) == 0 || (i * 7) % 3 != 0) ? 1.0 : 0.0;
    in.push_back(make_tensor(rt, k.mask_shape, keep, DType::boolean));
  }
  return in;
}

Attrs attrs_of(Runtime& rt, const AttentionCase& k) {
  return rt.op("scaled_dot_product_attention").make_attrs({{"is_causal", k.causal}, {"scale", k.scale}});
}

std::string describe(const AttentionCase& k) {
  return "query " + to_string(k.query) + " key " + to_string(k.key) + " value " + to_string(k.value) + " mask " +
         to_string(k.mask_shape) + (k.mask == Mask::keep ? " (bool)" : "") + (k.causal ? " causal" : "");
}

std::vector<double> expected_of(Runtime& rt, const AttentionCase& k) {
  const std::vector<Tensor> in = inputs_of(rt, k, DType::f64);
  return reference(k, values(rt, in[0]), values(rt, in[1]), values(rt, in[2]),
                   in.size() > 3 ? values(rt, in[3]) : std::vector<double>{});
}

// The gradients of query, key and value (and of a floating mask when
// `mask_grad`) of sum(output * weights) in `dtype`.
std::vector<std::vector<double>> gradients(Runtime& rt, const AttentionCase& k, DType dtype, bool mask_grad = true) {
  std::vector<Tensor> in = inputs_of(rt, k, dtype);
  const size_t n = k.mask == Mask::add && mask_grad ? 4 : 3;
  for (size_t i = 0; i < n; ++i) in[i].set_requires_grad(true);
  const Tensor y = rt.call1(rt.op("scaled_dot_product_attention"), in, attrs_of(rt, k));
  rt.backward(y, random_tensor(rt, y.shape(), dtype, -1, 1, 45));
  std::vector<std::vector<double>> grads;
  for (size_t i = 0; i < n; ++i) grads.push_back(values(rt, in[i].grad()));
  return grads;
}

}  // namespace

TEST_CASE("scaled_dot_product_attention matches softmax(q k^T scale + mask) v", "[nn][attention]") {
  Runtime rt;
  for (const AttentionCase& k : kCases) {
    const std::vector<double> expected = expected_of(rt, k);
    // f32 and f64 run the fused kernel, f16 the composed one.
    for (DType t : {DType::f64, DType::f32, DType::f16}) {
      INFO(dtype_name(t) << " " << describe(k));
      const Tensor y = rt.call1(rt.op("scaled_dot_product_attention"), inputs_of(rt, k, t), attrs_of(rt, k));
      Shape out = k.query;
      out[out.rank() - 1] = k.value[k.value.rank() - 1];
      CHECK(y.shape() == out);
      const double tol = t == DType::f64 ? 1e-12 : t == DType::f32 ? 1e-5 : 1e-2;
      require_close(rt, y, expected, tol, tol);
    }
  }
}

TEST_CASE("scaled_dot_product_attention over a long sequence keeps its running softmax exact", "[nn][attention]") {
  // Scores of widely different sizes, so that the running maximum grows
  // many times along each row.
  Runtime rt;
  const AttentionCase k{{1, 2, 3, 8}, {1, 2, 1000, 8}, {1, 2, 1000, 4}, Mask::none, {}, false, 4.0};
  const std::vector<Tensor> in = inputs_of(rt, k, DType::f64);
  const Tensor y = rt.call1(rt.op("scaled_dot_product_attention"), in, attrs_of(rt, k));
  require_close(rt, y, reference(k, values(rt, in[0]), values(rt, in[1]), values(rt, in[2]), {}), 1e-12, 1e-10);
}

TEST_CASE("scaled_dot_product_attention gives 0 for a row whose keys are all masked, as PyTorch",
          "[nn][attention]") {
  Runtime rt;
  const Tensor q = random_tensor(rt, {2, 3}), kk = random_tensor(rt, {3, 3}, DType::f64, -1, 1, 2);
  const Tensor v = random_tensor(rt, {3, 2}, DType::f64, -1, 1, 3);
  const Tensor keep = make_tensor(rt, {2, 3}, {1, 0, 1, 0, 0, 0}, DType::boolean);
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor add = make_tensor(rt, {2, 3}, {0, -inf, 0, -inf, -inf, -inf});
  const AttentionCase k{{2, 3}, {3, 3}, {3, 2}, Mask::keep, {2, 3}, false, kUnset};
  const std::vector<double> first_row =
      reference(k, values(rt, q), values(rt, kk), values(rt, v), {1, 0, 1, 0, 0, 0});
  for (DType t : {DType::f64, DType::f32, DType::f16}) {
    INFO(dtype_name(t));
    const auto cast = [&](const Tensor& x) { return rt.call1("cast", {x}, {{"dtype", t}}); };
    for (const Tensor& mask : {keep, cast(add)}) {
      std::vector<Tensor> in{cast(q), cast(kk), cast(v)};
      for (Tensor& x : in) x.set_requires_grad(true);
      const Tensor y = rt.call1("scaled_dot_product_attention", {in[0], in[1], in[2], mask});
      const std::vector<double> got = values(rt, y);
      require_close({got[0], got[1]}, {first_row[0], first_row[1]}, 1e-2, 1e-2);
      CHECK(got[2] == 0.0);
      CHECK(got[3] == 0.0);
      rt.backward(y, rt.full(y.shape(), 1.0, t));
      const std::vector<double> dq = values(rt, in[0].grad());
      for (size_t i = 3; i < 6; ++i) CHECK(dq[i] == 0.0);  // the masked row's query
      for (const Tensor& x : in)
        for (double g : values(rt, x.grad())) CHECK(std::isfinite(g));
    }
  }
}

TEST_CASE("scaled_dot_product_attention gradients match finite differences", "[nn][attention][grad]") {
  Runtime rt;
  for (const AttentionCase& k : kCases) {
    INFO(describe(k));
    GradcheckOptions options;
    if (k.mask == Mask::keep) options.skip_inputs = {3};  // a bool mask has no gradient
    gradcheck(rt, rt.op("scaled_dot_product_attention"), inputs_of(rt, k, DType::f64), attrs_of(rt, k), options);
  }
}

TEST_CASE("scaled_dot_product_attention gradients agree across the fused and composed kernels",
          "[nn][attention][grad]") {
  Runtime rt;
  for (const AttentionCase& k : kCases) {
    INFO(describe(k));
    const auto exact = gradients(rt, k, DType::f64);
    const auto fused = gradients(rt, k, DType::f32);
    const auto composed = gradients(rt, k, DType::f16);
    for (size_t i = 0; i < exact.size(); ++i) {
      require_close(fused[i], exact[i], 1e-5, 1e-4);
      require_close(composed[i], exact[i], 2e-2, 2e-2);
    }
  }
}

TEST_CASE("scaled_dot_product_attention in f32 holds over sizes past the vector widths", "[nn][attention][grad]") {
  // The f32 kernel works in blocks of four query rows and four or eight
  // keys or features: sizes that leave every kind of remainder, causal or
  // not, against the f64 kernel; causal with more keys than queries leaves
  // the last keys unattended, their gradients zero.
  Runtime rt;
  const AttentionCase cases[] = {
      {{2, 3, 37, 20}, {2, 3, 37, 20}, {2, 3, 37, 12}, Mask::none, {}, true, kUnset},
      {{2, 2, 18, 40}, {2, 2, 45, 40}, {2, 2, 45, 24}, Mask::none, {}, false, kUnset},
      {{1, 1, 70, 32}, {1, 1, 66, 32}, {1, 1, 66, 33}, Mask::none, {}, true, 0.3},
      {{1, 2, 19, 16}, {1, 2, 30, 16}, {1, 2, 30, 9}, Mask::none, {}, true, kUnset},
  };
  for (const AttentionCase& k : cases) {
    INFO(describe(k));
    const Tensor y = rt.call1(rt.op("scaled_dot_product_attention"), inputs_of(rt, k, DType::f32), attrs_of(rt, k));
    require_close(rt, y, expected_of(rt, k), 1e-5, 1e-4);
    const auto exact = gradients(rt, k, DType::f64);
    const auto fast = gradients(rt, k, DType::f32);
    for (size_t i = 0; i < exact.size(); ++i) require_close(fast[i], exact[i], 1e-5, 1e-4);
  }
}

TEST_CASE("scaled_dot_product_attention reads heads in place from a permuted tensor", "[nn][attention][grad]") {
  // [N, L, H, D] permuted to [N, H, L, D], as a layer splits its heads: the
  // f32 kernel reads those rows where they are, f64 and f16 get copies;
  // both must give what the contiguous heads give, gradients included.
  Runtime rt;
  const NamedAttrs swap = {{"dims", std::vector<int64_t>{0, 2, 1, 3}}};
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    INFO(dtype_name(t));
    std::vector<Tensor> base, heads, dense;
    for (uint64_t seed : {51, 52, 53}) {
      base.push_back(random_tensor(rt, {2, 9, 3, 8}, t, -1, 1, seed));
      base.back().set_requires_grad(true);
      heads.push_back(rt.call1("permute", {base.back()}, swap));
      dense.push_back(rt.contiguous(heads.back()).detach());
      dense.back().set_requires_grad(true);
    }
    REQUIRE_FALSE(heads[0].is_contiguous());
    const Attrs causal = rt.op("scaled_dot_product_attention").make_attrs({{"is_causal", true}});
    const Tensor y = rt.call1(rt.op("scaled_dot_product_attention"), heads, causal);
    const Tensor expected = rt.call1(rt.op("scaled_dot_product_attention"), dense, causal);
    const double tol = t == DType::f16 ? 1e-3 : 1e-6;
    require_close(rt, y, values(rt, expected), tol, tol);
    const Tensor g = random_tensor(rt, y.shape(), t, -1, 1, 54);
    rt.backward(y, g);
    rt.backward(expected, g);
    for (size_t i = 0; i < 3; ++i)
      require_close(rt, rt.call1("permute", {base[i].grad()}, swap), values(rt, dense[i].grad()), tol, tol);
  }
}

TEST_CASE("scaled_dot_product_attention with a constant floating mask gives it no gradient, the rest unchanged",
          "[nn][attention][grad]") {
  // The fused backward (mask constant) against the composed one (mask
  // differentiable), in f64.
  Runtime rt;
  for (const AttentionCase& k : kCases) {
    if (k.mask != Mask::add) continue;
    INFO(describe(k));
    const auto constant = gradients(rt, k, DType::f64, false);
    const auto differentiable = gradients(rt, k, DType::f64);
    REQUIRE(constant.size() == 3);
    for (size_t i = 0; i < 3; ++i) require_close(constant[i], differentiable[i], 1e-12, 1e-10);
  }
}

TEST_CASE("scaled_dot_product_attention rejects arguments that do not fit", "[nn][attention][errors]") {
  Runtime rt;
  const auto t = [&](const Shape& s) { return rt.full(s, 1.0, DType::f64); };
  const auto call = [&](std::vector<Tensor> in, NamedAttrs attrs) {
    return [&rt, in, attrs] {
      const OpDef& op = rt.op("scaled_dot_product_attention");
      rt.call1(op, in, op.make_attrs(attrs));
    };
  };
  const std::string name = "op 'scaled_dot_product_attention'";
  require_error(call({t({2, 4, 3}), t({2, 5, 4}), t({2, 5, 3})}, {}), Status::shape_mismatch,
                {name, "same last dim E", "[2, 4, 3]", "[2, 5, 4]"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 6, 3})}, {}), Status::shape_mismatch,
                {name, "same number of positions S"});
  require_error(call({t({2, 4, 3}), t({3, 5, 3}), t({3, 5, 3})}, {}), Status::shape_mismatch,
                {name, "same leading (batch) dims"});
  require_error(call({t({4}), t({4}), t({4})}, {}), Status::shape_mismatch, {name, "one rank, 2 or more"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3}), t({3, 5})}, {}), Status::shape_mismatch,
                {name, "attn_mask [3, 5] does not broadcast", "[2, 4, 5]"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3}), rt.full({4, 5}, 1.0, DType::i64)}, {}),
                Status::dtype_mismatch, {name, "attn_mask must be bool", "got i64"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3}), rt.full({4, 5}, 1.0, DType::boolean)},
                     {{"is_causal", true}}),
                Status::invalid_argument, {name, "either attn_mask or is_causal"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3})}, {{"dropout_p", 1.0}}), Status::invalid_argument,
                {name, "dropout_p must be in [0, 1), got 1"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3})}, {{"dropout_p", -0.25}}), Status::invalid_argument,
                {name, "dropout_p must be in [0, 1), got -0.25"});
  require_error(call({t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3})}, {{"scale", std::numeric_limits<double>::infinity()}}),
                Status::invalid_argument, {name, "scale must be finite (or NaN, the default, for 1/sqrt(E)), got inf"});
  require_error(call({t({2, 4, 3}), rt.full({2, 5, 3}, 1.0), t({2, 5, 3})}, {}), Status::dtype_mismatch,
                {name, "key is f32 but query is f64"});
  // The backward op gives a mask's gradient only for a floating mask.
  const OpDef& backward = rt.op("scaled_dot_product_attention_backward");
  require_error(
      [&] {
        rt.call(backward,
                std::vector<Tensor>{t({2, 4, 3}), t({2, 4, 3}), t({2, 5, 3}), t({2, 5, 3}), t({2, 4, 3}),
                                    rt.full({4, 5}, 1.0, DType::boolean)},
                backward.make_attrs({{"attn_mask_grad", true}}));
      },
      Status::invalid_argument,
      {"op 'scaled_dot_product_attention_backward'", "attn_mask_grad asks for the gradient of a floating attn_mask"});
}
