#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Dims = std::vector<int64_t>;

struct TransposeCase {
  Shape input, weight;  // [N, C_in, H, W], [C_in, C_out/groups, KH, KW]
  Dims stride, padding, output_padding;
  int64_t groups;
  Dims dilation;
  bool bias;
};

// Plain, strided (the usual 2x upsampling), padded with output_padding,
// dilated, grouped, depthwise, uneven strides and kernels, and
// output_padding at or above the stride, below the dilation (with padding,
// the added rows receive products too).
const TransposeCase kCases[] = {
    {{2, 3, 4, 5}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {0, 0}, 1, {1, 1}, true},
    {{1, 2, 3, 3}, {2, 3, 2, 2}, {2, 2}, {0, 0}, {0, 0}, 1, {1, 1}, true},
    {{1, 2, 4, 3}, {2, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1, {1, 1}, false},
    {{2, 2, 3, 4}, {2, 1, 2, 3}, {1, 1}, {1, 0}, {0, 0}, 1, {2, 2}, true},
    {{1, 4, 3, 3}, {4, 3, 3, 3}, {2, 1}, {1, 1}, {1, 0}, 2, {1, 1}, true},
    {{2, 3, 4, 4}, {3, 1, 3, 3}, {3, 2}, {2, 1}, {2, 1}, 3, {1, 2}, false},
    {{1, 2, 3, 4}, {2, 3, 2, 2}, {1, 1}, {0, 0}, {1, 1}, 1, {2, 2}, true},
    {{2, 2, 4, 3}, {2, 2, 3, 2}, {1, 2}, {2, 1}, {2, 1}, 1, {3, 2}, false},
};

Attrs attrs_of(Runtime& rt, const TransposeCase& k) {
  return rt.op("conv_transpose2d")
      .make_attrs({{"stride", k.stride},
                   {"padding", k.padding},
                   {"output_padding", k.output_padding},
                   {"groups", k.groups},
                   {"dilation", k.dilation}});
}

Shape out_shape(const TransposeCase& k) {
  Shape out{k.input[0], k.weight[1] * k.groups, 0, 0};
  for (size_t i = 0; i < 2; ++i)
    out[2 + i] = (k.input[2 + i] - 1) * k.stride[i] - 2 * k.padding[i] + k.dilation[i] * (k.weight[2 + i] - 1) +
                 k.output_padding[i] + 1;
  return out;
}

// The transposed convolution from its definition: every input element
// scatters its products with the kernel into the output.
std::vector<double> reference(const TransposeCase& k, const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>& b) {
  const Shape out = out_shape(k);
  const int64_t cin = k.input[1], h = k.input[2], wd = k.input[3];
  const int64_t og = k.weight[1], kh = k.weight[2], kw = k.weight[3], cout = out[1], oh = out[2], ow = out[3];
  std::vector<double> y(size_t(out.numel()), 0.0);
  for (int64_t n = 0; n < k.input[0]; ++n)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t p = 0; p < oh * ow; ++p) y[size_t((n * cout + co) * oh * ow + p)] = b.empty() ? 0.0 : b[size_t(co)];
  for (int64_t n = 0; n < k.input[0]; ++n)
    for (int64_t ci = 0; ci < cin; ++ci) {
      const int64_t group = ci / (cin / k.groups);
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < wd; ++ix)
          for (int64_t oc = 0; oc < og; ++oc)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t y0 = iy * k.stride[0] - k.padding[0] + ky * k.dilation[0];
                const int64_t x0 = ix * k.stride[1] - k.padding[1] + kx * k.dilation[1];
                if (y0 < 0 || y0 >= oh || x0 < 0 || x0 >= ow) continue;
                y[size_t(((n * cout + group * og + oc) * oh + y0) * ow + x0)] +=
                    x[size_t(((n * cin + ci) * h + iy) * wd + ix)] * w[size_t(((ci * og + oc) * kh + ky) * kw + kx)];
              }
    }
  return y;
}

std::vector<Tensor> inputs_of(Runtime& rt, const TransposeCase& k, DType dtype) {
  std::vector<Tensor> in{random_tensor(rt, k.input, dtype, -1, 1, 21), random_tensor(rt, k.weight, dtype, -1, 1, 22)};
  if (k.bias) in.push_back(random_tensor(rt, {k.weight[1] * k.groups}, dtype, -1, 1, 23));
  return in;
}

std::string describe(const TransposeCase& k) {
  const auto pair = [](const Dims& d) { return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + "]"; };
  return "input " + to_string(k.input) + " weight " + to_string(k.weight) + " stride " + pair(k.stride) +
         " padding " + pair(k.padding) + " output_padding " + pair(k.output_padding) + " groups " +
         std::to_string(k.groups) + " dilation " + pair(k.dilation);
}

}  // namespace

TEST_CASE("conv_transpose2d matches the direct reference", "[nn][conv]") {
  Runtime rt;
  for (const TransposeCase& k : kCases) {
    const std::vector<Tensor> in64 = inputs_of(rt, k, DType::f64);
    const std::vector<double> expected =
        reference(k, values(rt, in64[0]), values(rt, in64[1]), k.bias ? values(rt, in64[2]) : std::vector<double>{});
    for (DType t : {DType::f32, DType::f64, DType::f16}) {
      INFO(dtype_name(t) << " " << describe(k));
      const Tensor y = rt.call1(rt.op("conv_transpose2d"), inputs_of(rt, k, t), attrs_of(rt, k));
      CHECK(y.shape() == out_shape(k));
      const double tol = t == DType::f16 ? 1e-2 : 1e-5;  // f16 rounds the inputs too
      require_close(rt, y, expected, tol, tol);
    }
  }
}

TEST_CASE("conv_transpose2d maps back along conv2d: the adjoint identity", "[nn][conv]") {
  // <conv_transpose2d(x, w), z> == <x, conv2d(z, w)> for the same window.
  Runtime rt;
  const TransposeCase k = kCases[4];
  const Tensor x = random_tensor(rt, k.input, DType::f64, -1, 1, 31);
  const Tensor w = random_tensor(rt, k.weight, DType::f64, -1, 1, 32);
  const Tensor z = random_tensor(rt, out_shape(k), DType::f64, -1, 1, 33);
  const std::vector<double> y = values(rt, rt.call1(rt.op("conv_transpose2d"), {x, w}, attrs_of(rt, k)));
  const std::vector<double> cz = values(
      rt, rt.call1("conv2d", {z, w},
                   {{"stride", k.stride}, {"padding", k.padding}, {"dilation", k.dilation}, {"groups", k.groups}}));
  const std::vector<double> xv = values(rt, x), zv = values(rt, z);
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < y.size(); ++i) lhs += y[i] * zv[i];
  for (size_t i = 0; i < xv.size(); ++i) rhs += xv[i] * cz[i];
  CHECK(lhs == Approx(rhs).epsilon(1e-12));
}

TEST_CASE("conv_transpose2d gradients match finite differences", "[nn][conv][grad]") {
  Runtime rt;
  for (const TransposeCase& k : kCases) {
    INFO(describe(k));
    gradcheck(rt, rt.op("conv_transpose2d"), inputs_of(rt, k, DType::f64), attrs_of(rt, k));
  }
}

TEST_CASE("conv_transpose2d f32 gradients through oneDNN match the f64 ones", "[nn][conv][grad]") {
  Runtime rt;
  for (const TransposeCase& k : kCases) {
    INFO(describe(k));
    std::vector<std::vector<double>> grads[2];
    int slot = 0;
    for (DType t : {DType::f64, DType::f32}) {
      std::vector<Tensor> in = inputs_of(rt, k, t);
      for (Tensor& x : in) x.set_requires_grad(true);
      const Tensor y = rt.call1(rt.op("conv_transpose2d"), in, attrs_of(rt, k));
      rt.backward(y, random_tensor(rt, y.shape(), t, -1, 1, 24));
      for (const Tensor& x : in) grads[slot].push_back(values(rt, x.grad()));
      ++slot;
    }
    for (size_t i = 0; i < grads[0].size(); ++i) require_close(grads[1][i], grads[0][i], 1e-4, 1e-4);
  }
}

TEST_CASE("conv_transpose2d rejects arguments that do not fit", "[nn][conv][errors]") {
  Runtime rt;
  const auto call = [&](const Shape& input, const Shape& weight, NamedAttrs attrs) {
    return [&rt, input, weight, attrs] {
      rt.call1("conv_transpose2d", {rt.full(input, 1.0), rt.full(weight, 1.0)}, attrs);
    };
  };
  require_error(call({1, 2, 5}, {2, 3, 3, 3}, {}), Status::shape_mismatch,
                {"op 'conv_transpose2d'", "input must be [N, C_in, H, W]", "[1, 2, 5]"});
  require_error(call({1, 2, 5, 5}, {2, 3, 3}, {}), Status::shape_mismatch,
                {"op 'conv_transpose2d'", "weight must be [C_in, C_out/groups, KH, KW]"});
  require_error(call({1, 2, 5, 5}, {3, 3, 3, 3}, {}), Status::shape_mismatch,
                {"op 'conv_transpose2d'", "is for 3 input channels", "has 2"});
  require_error(call({1, 3, 5, 5}, {3, 1, 3, 3}, {{"groups", 2}}), Status::shape_mismatch,
                {"op 'conv_transpose2d'", "not divisible by groups = 2"});
  require_error(call({1, 2, 5, 5}, {2, 1, 3, 3}, {{"stride", Dims{2, 2}}, {"output_padding", Dims{2, 0}}}),
                Status::invalid_argument,
                {"op 'conv_transpose2d'", "output_padding must be smaller than stride or dilation",
                 "output_padding [2, 0] with stride [2, 2] and dilation [1, 1]"});
  require_error(call({1, 2, 5, 5}, {2, 1, 3, 3}, {{"dilation", Dims{2, 2}}, {"output_padding", Dims{0, 2}}}),
                Status::invalid_argument, {"op 'conv_transpose2d'", "output_padding [0, 2] with stride [1, 1] and dilation [2, 2]"});
  require_error(call({1, 2, 1, 1}, {2, 1, 1, 1}, {{"padding", Dims{1, 1}}}), Status::shape_mismatch,
                {"op 'conv_transpose2d'", "output height of -1"});
  require_error(call({1, 2, 5, 5}, {2, 1, 3, 3}, {{"dilation", Dims{1}}}), Status::invalid_argument,
                {"op 'conv_transpose2d'", "dilation must have 2 values"});
  require_error(
      [&] {
        rt.call1("conv_transpose2d", {rt.full({1, 2, 5, 5}, 1.0), rt.full({2, 3, 3, 3}, 1.0), rt.full({2}, 1.0)});
      },
      Status::shape_mismatch, {"op 'conv_transpose2d'", "bias must be [3]"});
}
