// The products in bf16 and f16 on the CPU. bf16: each against the f32
// result within bf16's rounding, skipped where the CPU has no bf16 support,
// which is itself checked to say so. f16 (run through f32 where oneDNN has
// no f16 products): the f32 result rounded once, bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor cast(Runtime& rt, const Tensor& t, DType dtype) {
  return t.defined() ? rt.call1("cast", {t}, {{"dtype", dtype}}) : Tensor();
}

// `low` (a bf16 result) against `reference` (f32 or f64, from the same
// inputs): within a relative error bf16 allows, measured against the
// largest reference value (the sums cancel, so a single element may be
// near zero while its rounding is not).
void require_close_low(Runtime& rt, const Tensor& low, const Tensor& reference, double tolerance = 1.5e-2) {
  const std::vector<double> got = values(rt, low), want = values(rt, reference);
  REQUIRE(got.size() == want.size());
  double scale = 0.0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i] << " (largest " << scale << ")");
    REQUIRE(std::abs(got[i] - want[i]) <= tolerance * scale + 1e-6);
  }
}

// The op on bf16 inputs against the same op on f32 inputs rounded to bf16
// first, so only the products' own rounding differs.
void check_bf16(Runtime& rt, std::string_view op, const std::vector<Tensor>& f32_inputs, NamedAttrs attrs = {}) {
  const OpDef& def = rt.op(op);
  const Attrs a = def.make_attrs(attrs);
  std::vector<Tensor> low, rounded;
  for (const Tensor& t : f32_inputs) {
    low.push_back(cast(rt, t, DType::bf16));
    rounded.push_back(cast(rt, low.back(), DType::f32));
  }
  const Tensor out = rt.call1(def, std::span<const Tensor>(low), a);
  CHECK(out.dtype() == DType::bf16);
  const Tensor expected = rt.call1(def, std::span<const Tensor>(rounded), a);
  INFO("op " << op);
  require_close_low(rt, out, expected);
}

}  // namespace

TEST_CASE("bf16 matmul matches f32 within bf16 rounding", "[nn][matmul][bf16]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  check_bf16(rt, "matmul",
             {random_tensor(rt, {17, 33}, DType::f32, -1, 1, 1), random_tensor(rt, {33, 9}, DType::f32, -1, 1, 2)});
  // Batched with a broadcast operand, and a transposed view (strides reach oneDNN).
  check_bf16(rt, "matmul",
             {random_tensor(rt, {3, 5, 64}, DType::f32, -1, 1, 3), random_tensor(rt, {64, 7}, DType::f32, -1, 1, 4)});
  const Tensor bt = cast(rt, random_tensor(rt, {7, 64}, DType::f32, -1, 1, 5), DType::bf16);
  const Tensor at = cast(rt, random_tensor(rt, {5, 64}, DType::f32, -1, 1, 6), DType::bf16);
  const Tensor view = rt.call1("transpose", {bt}, {{"dim0", 0}, {"dim1", 1}});
  const Tensor out = rt.call1("matmul", {at, view});
  CHECK(out.dtype() == DType::bf16);
  require_close_low(rt, out, rt.call1("matmul", {cast(rt, at, DType::f32), cast(rt, view, DType::f32)}));
}

TEST_CASE("bf16 linear with its fused bias and activation matches f32", "[nn][linear][bf16]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  const Tensor x = random_tensor(rt, {2, 6, 48}, DType::f32, -1, 1, 1);
  const Tensor w = random_tensor(rt, {24, 48}, DType::f32, -0.3, 0.3, 2);
  const Tensor b = random_tensor(rt, {24}, DType::f32, -1, 1, 3);
  for (const char* activation : {"none", "relu", "gelu_tanh"}) {
    INFO("activation " << activation);
    check_bf16(rt, "linear", {x, w, b}, {{"activation", std::string(activation)}});
  }
  check_bf16(rt, "linear", {x, w});
  // An empty inner dimension: every row is the bias.
  const Tensor empty = rt.call1("linear", {rt.full({3, 0}, 0.0, DType::bf16), rt.full({4, 0}, 0.0, DType::bf16),
                                           rt.full({4}, 0.5, DType::bf16)});
  CHECK(empty.dtype() == DType::bf16);
  require_close(rt, empty, std::vector<double>(12, 0.5));
}

TEST_CASE("bf16 conv2d and its two backward ops match f32", "[nn][conv][bf16]") {
  Runtime rt;
  if (!cpu_runs_bf16(rt)) return;
  struct Case {
    Shape input, weight;
    int64_t stride, padding, groups;
  };
  const Case cases[] = {{{2, 3, 9, 8}, {4, 3, 3, 3}, 1, 1, 1},
                        {{2, 1, 12, 12}, {8, 1, 5, 5}, 1, 2, 1},   // the first layer of the Fashion-MNIST CNN, smaller
                        {{1, 4, 7, 7}, {6, 2, 3, 3}, 2, 1, 2}};
  for (const Case& k : cases) {
    INFO("input " << to_string(k.input) << ", weight " << to_string(k.weight));
    const Tensor x = random_tensor(rt, k.input, DType::f32, -1, 1, 1);
    const Tensor w = random_tensor(rt, k.weight, DType::f32, -0.5, 0.5, 2);
    const Tensor b = random_tensor(rt, {k.weight[0]}, DType::f32, -1, 1, 3);
    const std::vector<int64_t> stride{k.stride, k.stride}, padding{k.padding, k.padding};
    check_bf16(rt, "conv2d", {x, w, b}, {{"stride", stride}, {"padding", padding}, {"groups", k.groups}});
    const Shape out =
        rt.call1("conv2d", {x, w}, {{"stride", stride}, {"padding", padding}, {"groups", k.groups}}).shape();
    const Tensor grad = random_tensor(rt, out, DType::f32, -1, 1, 4);
    check_bf16(rt, "conv2d_grad_input", {grad, w},
               {{"stride", stride}, {"padding", padding}, {"groups", k.groups},
                {"input_shape", std::vector<int64_t>(k.input.begin(), k.input.end())}});
    check_bf16(rt, "conv2d_grad_weight", {grad, x},
               {{"stride", stride}, {"padding", padding}, {"groups", k.groups},
                {"weight_shape", std::vector<int64_t>(k.weight.begin(), k.weight.end())}});
  }
}

TEST_CASE("bf16 max_pool2d and its backward match f32 exactly", "[nn][pool][bf16]") {
  Runtime rt;
  const Tensor x = cast(rt, random_tensor(rt, {2, 3, 8, 8}, DType::f32, -1, 1, 1), DType::bf16);
  const Tensor y = rt.call1("max_pool2d", {x}, {{"kernel_size", std::vector<int64_t>{2, 2}}});
  CHECK(y.dtype() == DType::bf16);
  const Tensor x32 = cast(rt, x, DType::f32);
  require_close(rt, y, values(rt, rt.call1("max_pool2d", {x32}, {{"kernel_size", std::vector<int64_t>{2, 2}}})), 0, 0);
  const Tensor g = cast(rt, random_tensor(rt, y.shape(), DType::f32, -1, 1, 2), DType::bf16);
  const Tensor gx = rt.call1("max_pool2d_backward", {g, x}, {{"kernel_size", std::vector<int64_t>{2, 2}}});
  CHECK(gx.dtype() == DType::bf16);
  const Tensor gx32 =
      rt.call1("max_pool2d_backward", {cast(rt, g, DType::f32), x32}, {{"kernel_size", std::vector<int64_t>{2, 2}}});
  require_close(rt, gx, values(rt, gx32), 0, 0);
}

namespace {

// The op on f16 inputs: bit for bit the f32 op on the same values rounded
// once to f16 (what f32 accumulation gives), and within f16's rounding of
// the f64 op.
void check_f16(Runtime& rt, std::string_view op, const std::vector<Tensor>& f32_inputs, NamedAttrs attrs = {}) {
  const OpDef& def = rt.op(op);
  const Attrs a = def.make_attrs(attrs);
  std::vector<Tensor> low, widened, wide;
  for (const Tensor& t : f32_inputs) {
    low.push_back(cast(rt, t, DType::f16));
    widened.push_back(cast(rt, low.back(), DType::f32));
    wide.push_back(cast(rt, low.back(), DType::f64));
  }
  INFO("op " << op);
  const Tensor out = rt.call1(def, std::span<const Tensor>(low), a);
  CHECK(out.dtype() == DType::f16);
  const Tensor rounded = cast(rt, rt.call1(def, std::span<const Tensor>(widened), a), DType::f16);
  require_close(rt, out, values(rt, rounded), 0, 0);
  require_close_low(rt, out, rt.call1(def, std::span<const Tensor>(wide), a), 2e-3);
}

}  // namespace

TEST_CASE("f16 matmul and linear equal the f32 product rounded once to f16", "[nn][matmul][f16]") {
  Runtime rt;
  check_f16(rt, "matmul",
            {random_tensor(rt, {17, 33}, DType::f32, -1, 1, 1), random_tensor(rt, {33, 9}, DType::f32, -1, 1, 2)});
  check_f16(rt, "matmul",
            {random_tensor(rt, {3, 5, 64}, DType::f32, -1, 1, 3), random_tensor(rt, {64, 7}, DType::f32, -1, 1, 4)});
  const Tensor x = random_tensor(rt, {2, 6, 48}, DType::f32, -1, 1, 5);
  const Tensor w = random_tensor(rt, {24, 48}, DType::f32, -0.3, 0.3, 6);
  const Tensor b = random_tensor(rt, {24}, DType::f32, -1, 1, 7);
  for (const char* activation : {"none", "relu", "gelu_tanh"}) {
    INFO("activation " << activation);
    check_f16(rt, "linear", {x, w, b}, {{"activation", std::string(activation)}});
  }
  // Exact in f16: 8 products of 0.5 * 0.25.
  const Tensor out = rt.call1("matmul", {rt.full({4, 8}, 0.5, DType::f16), rt.full({8, 3}, 0.25, DType::f16)});
  CHECK(out.dtype() == DType::f16);
  require_close(rt, out, std::vector<double>(12, 1.0), 0, 0);
}

TEST_CASE("f16 conv2d and its two backward ops equal f32 rounded once to f16", "[nn][conv][f16]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {2, 3, 9, 8}, DType::f32, -1, 1, 1);
  const Tensor w = random_tensor(rt, {4, 3, 3, 3}, DType::f32, -0.5, 0.5, 2);
  const Tensor b = random_tensor(rt, {4}, DType::f32, -1, 1, 3);
  const std::vector<int64_t> stride{1, 1}, padding{1, 1};
  check_f16(rt, "conv2d", {x, w, b}, {{"stride", stride}, {"padding", padding}});
  const Shape out = rt.call1("conv2d", {x, w}, {{"stride", stride}, {"padding", padding}}).shape();
  const Tensor grad = random_tensor(rt, out, DType::f32, -1, 1, 4);
  check_f16(rt, "conv2d_grad_input", {grad, w},
            {{"stride", stride}, {"padding", padding}, {"input_shape", std::vector<int64_t>{2, 3, 9, 8}}});
  check_f16(rt, "conv2d_grad_weight", {grad, x},
            {{"stride", stride}, {"padding", padding}, {"weight_shape", std::vector<int64_t>{4, 3, 3, 3}}});
}

TEST_CASE("cast between f32 and bf16/f16 agrees with the scalar conversion at every length", "[cast][bf16]") {
  Runtime rt;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Ties, values that round up into the next binade, overflow, subnormals,
  // signed zeros, infinities and NaN, then plain values.
  std::vector<float> special{1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 1.0f + 1.0f / 512, 65504.0f, 65520.0f, 1e6f,
                             5.96e-8f, 2.98e-8f, 1e-40f, 0.0f, -0.0f, inf, -inf, nan, 3.3895e38f, -1.5f};
  for (int length : {1, 7, 8, 15, 16, 17, 31, 33, 100, 40000}) {
    INFO("length " << length);
    std::vector<double> input;
    for (int i = 0; i < length; ++i)
      input.push_back(i < int(special.size()) ? special[size_t(i)] : std::sin(0.37 * i) * std::pow(10.0, i % 9 - 4));
    const Tensor x = make_tensor(rt, {int64_t(length)}, input, DType::f32);
    for (DType low : {DType::bf16, DType::f16}) {
      INFO("dtype " << dtype_name(low));
      const Tensor y = cast(rt, x, low);
      const Tensor back = cast(rt, y, DType::f32);
      const float* in = x.data<float>();
      const float* out = back.data<float>();
      for (int i = 0; i < length; ++i) {
        const float want =
            low == DType::bf16 ? bf16_to_float(float_to_bf16(in[i])) : half_to_float(float_to_half(in[i]));
        INFO("element " << i << " = " << in[i]);
        if (std::isnan(want))
          REQUIRE(std::isnan(out[i]));
        else
          REQUIRE(std::bit_cast<uint32_t>(out[i]) == std::bit_cast<uint32_t>(want));
      }
    }
  }
}
