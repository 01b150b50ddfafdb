#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct ConvCase {
  Shape input, weight;
  int64_t stride, padding, dilation, groups;
  bool bias;
};

// The cases every test runs: plain, strided + padded, dilated, grouped,
// depthwise, non-square kernel with odd sizes.
const ConvCase kCases[] = {
    {{2, 3, 7, 6}, {4, 3, 3, 3}, 1, 0, 1, 1, true},  {{1, 2, 7, 7}, {3, 2, 3, 3}, 2, 1, 1, 1, true},
    {{1, 2, 8, 7}, {2, 2, 3, 2}, 1, 2, 2, 1, false}, {{2, 4, 5, 5}, {6, 2, 3, 3}, 1, 1, 1, 2, true},
    {{2, 3, 6, 6}, {3, 1, 3, 3}, 2, 1, 1, 3, true},  {{1, 1, 5, 9}, {2, 1, 2, 3}, 1, 0, 1, 1, false},
};

std::vector<std::pair<std::string_view, AttrValue>> attr_list(const ConvCase& k) {
  return {{"stride", std::vector<int64_t>{k.stride, k.stride}},
          {"padding", std::vector<int64_t>{k.padding, k.padding}},
          {"dilation", std::vector<int64_t>{k.dilation, k.dilation}},
          {"groups", k.groups}};
}

Attrs make_conv_attrs(Runtime& rt, const ConvCase& k) {
  const auto list = attr_list(k);
  return rt.op("conv2d").make_attrs(std::span<const std::pair<std::string_view, AttrValue>>(list));
}

// Direct convolution over doubles, written from the definition.
std::vector<double> reference_conv(const ConvCase& k, const Shape& out, const std::vector<double>& x,
                                   const std::vector<double>& w, const std::vector<double>& b) {
  const int64_t n_size = k.input[0], c_size = k.input[1], h = k.input[2], wd = k.input[3];
  const int64_t o_size = k.weight[0], cg = k.weight[1], kh = k.weight[2], kw = k.weight[3];
  std::vector<double> y;
  for (int64_t n = 0; n < n_size; ++n)
    for (int64_t o = 0; o < o_size; ++o)
      for (int64_t oy = 0; oy < out[2]; ++oy)
        for (int64_t ox = 0; ox < out[3]; ++ox) {
          double acc = b.empty() ? 0.0 : b[size_t(o)];
          const int64_t group = o / (o_size / k.groups);
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = oy * k.stride - k.padding + ky * k.dilation;
                const int64_t ix = ox * k.stride - k.padding + kx * k.dilation;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                acc += x[size_t(((n * c_size + group * cg + ci) * h + iy) * wd + ix)] *
                       w[size_t(((o * cg + ci) * kh + ky) * kw + kx)];
              }
          y.push_back(acc);
        }
  return y;
}

int64_t out_size(int64_t in, int64_t kernel, const ConvCase& k) {
  return (in + 2 * k.padding - k.dilation * (kernel - 1) - 1) / k.stride + 1;
}

std::vector<Tensor> conv_inputs(Runtime& rt, const ConvCase& k, DType dtype) {
  std::vector<Tensor> in{random_tensor(rt, k.input, dtype, -1, 1, 1), random_tensor(rt, k.weight, dtype, -1, 1, 2)};
  if (k.bias) in.push_back(random_tensor(rt, {k.weight[0]}, dtype, -1, 1, 3));
  return in;
}

// kiln's Winograd kernels, for 3x3 and 5x5, run on CPUs with AVX2 and FMA
// (AVX-512 ones included).
bool cpu_has_winograd() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

// The largest error of `actual` as a share of the largest value expected.
double error_of_largest(const std::vector<double>& actual, const std::vector<double>& expected) {
  double error = 0, largest = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    error = std::max(error, std::abs(actual[i] - expected[i]));
    largest = std::max(largest, std::abs(expected[i]));
  }
  return error / largest;
}

// The output and the input, weight and bias gradients of conv2d for case
// k in `dtype`, the output's gradient random from a fixed seed.
std::vector<std::vector<double>> conv_output_and_grads(Runtime& rt, const ConvCase& k, DType dtype) {
  std::vector<Tensor> in = conv_inputs(rt, k, dtype);
  for (Tensor& x : in) x.set_requires_grad(true);
  const Tensor y = rt.call1(rt.op("conv2d"), in, make_conv_attrs(rt, k));
  rt.backward(y, random_tensor(rt, y.shape(), dtype, -1, 1, 4));
  std::vector<std::vector<double>> result{values(rt, y)};
  for (const Tensor& x : in) result.push_back(values(rt, x.grad()));
  return result;
}

}  // namespace

TEST_CASE("conv2d matches the direct reference", "[nn][conv]") {
  Runtime rt;
  for (const ConvCase& k : kCases) {
    const Shape out{k.input[0], k.weight[0], out_size(k.input[2], k.weight[2], k), out_size(k.input[3], k.weight[3], k)};
    const std::vector<Tensor> in64 = conv_inputs(rt, k, DType::f64);
    const std::vector<double> expected = reference_conv(k, out, values(rt, in64[0]), values(rt, in64[1]),
                                                        k.bias ? values(rt, in64[2]) : std::vector<double>{});
    for (DType t : {DType::f32, DType::f64}) {
      INFO("dtype " << dtype_name(t) << " input " << to_string(k.input) << " weight " << to_string(k.weight)
                    << " groups " << k.groups);
      const Tensor y = rt.call1(rt.op("conv2d"), conv_inputs(rt, k, t), make_conv_attrs(rt, k));
      CHECK(y.shape() == out);
      require_close(rt, y, expected, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("conv2d takes a non-contiguous input", "[nn][conv]") {
  Runtime rt;
  const ConvCase k{{1, 2, 5, 4}, {3, 2, 2, 2}, 1, 1, 1, 1, false};
  const Tensor x_t = rt.call1("transpose", {random_tensor(rt, {1, 2, 4, 5})}, {{"dim0", 2}, {"dim1", 3}});
  const Tensor w = random_tensor(rt, k.weight, DType::f64, -1, 1, 2);
  const Tensor y = rt.call1(rt.op("conv2d"), {x_t, w}, make_conv_attrs(rt, k));
  require_close(rt, y, reference_conv(k, y.shape(), values(rt, x_t), values(rt, w), {}), 1e-9, 1e-9);
}

TEST_CASE("conv2d of an empty batch gives empty output and zero weight gradients", "[nn][conv]") {
  Runtime rt;
  for (DType t : {DType::f32, DType::f64}) {
    Tensor x = rt.full({0, 2, 5, 5}, 1.0, t), w = rt.full({3, 2, 3, 3}, 1.0, t);
    w.set_requires_grad(true);
    const Tensor y = rt.call1("conv2d", {x, w});
    CHECK(y.shape() == Shape{0, 3, 3, 3});
    rt.backward(y, rt.full(y.shape(), 1.0, t));
    require_close(rt, w.grad(), std::vector<double>(54, 0.0));
  }
}

TEST_CASE("conv2d gradients match finite differences", "[nn][conv][grad]") {
  Runtime rt;
  for (const ConvCase& k : kCases) {
    INFO("input " << to_string(k.input) << " weight " << to_string(k.weight) << " groups " << k.groups);
    gradcheck(rt, rt.op("conv2d"), conv_inputs(rt, k, DType::f64), make_conv_attrs(rt, k));
  }
}

TEST_CASE("conv2d f32 gradients through oneDNN match the f64 reference", "[nn][conv][grad]") {
  Runtime rt;
  for (const ConvCase& k : kCases) {
    INFO("input " << to_string(k.input) << " weight " << to_string(k.weight) << " groups " << k.groups);
    const auto expected = conv_output_and_grads(rt, k, DType::f64);
    const auto actual = conv_output_and_grads(rt, k, DType::f32);
    for (size_t i = 1; i < actual.size(); ++i) require_close(actual[i], expected[i], 1e-4, 1e-4);
  }
}

TEST_CASE("conv2d f32 may run Winograd's algorithm, close to the f64 reference, unless convolutions are direct",
          "[nn][conv][grad]") {
  // ResNet-like 3x3 stride-1 layers with enough tiles for kiln's Winograd
  // kernels, and odd ones: sizes that leave tiles part used, channels that
  // are no multiple of its blocks of 16, padding 0 and 2, images narrower
  // than its 8-column layout copies. Then the same for kiln's 5x5 kernels:
  // a Fashion-MNIST-like layer, and padding 0, 1 and 4.
  const ConvCase cases[] = {{{32, 64, 16, 16}, {64, 64, 3, 3}, 1, 1, 1, 1, true},
                            {{4, 20, 30, 30}, {24, 20, 3, 3}, 1, 1, 1, 1, true},
                            {{3, 16, 45, 37}, {16, 16, 3, 3}, 1, 0, 1, 1, false},
                            {{3, 17, 40, 40}, {33, 17, 3, 3}, 1, 2, 1, 1, true},
                            {{40, 16, 6, 5}, {16, 16, 3, 3}, 1, 1, 1, 1, true},
                            {{8, 32, 14, 14}, {64, 32, 5, 5}, 1, 2, 1, 1, true},
                            {{5, 17, 23, 19}, {20, 17, 5, 5}, 1, 1, 1, 1, false},
                            {{8, 16, 20, 20}, {16, 16, 5, 5}, 1, 0, 1, 1, true},
                            {{8, 16, 12, 12}, {24, 16, 5, 5}, 1, 4, 1, 1, false}};
  RuntimeOptions direct_options;
  direct_options.direct_convolutions = true;
  Runtime fast, direct(direct_options);
  for (const ConvCase& k : cases) {
    INFO("input " << to_string(k.input) << " weight " << to_string(k.weight) << " padding " << k.padding);
    const auto expected = conv_output_and_grads(direct, k, DType::f64);
    std::vector<std::vector<double>> outputs;
    for (Runtime* rt : {&fast, &direct}) {
      INFO((rt == &fast ? "default runtime" : "direct_convolutions"));
      const auto actual = conv_output_and_grads(*rt, k, DType::f32);
      // Winograd's F(4x4, 3x3) and F(4x4, 5x5) in f32 err by a few
      // millionths of the largest value (kiln's 3e-6 to 8.5e-6 on these),
      // the direct kernels by up to 3e-6 (weight gradients) and well under
      // 1e-6 otherwise.
      for (size_t i = 0; i < actual.size(); ++i) {
        INFO("result " << i << " (output, input, weight, bias gradients)");
        CHECK(error_of_largest(actual[i], expected[i]) < 2e-5);
      }
      outputs.push_back(actual[0]);
    }
    if (!cpu_has_winograd()) {
      WARN("this CPU has no Winograd kernels (kiln's need AVX2 with FMA)");
      continue;
    }
    // Winograd rounds differently from the direct kernel: some output differs.
    CHECK(outputs[0] != outputs[1]);
  }
}

TEST_CASE("conv2d f32 weight gradients over few input channels match the f64 reference", "[nn][conv][grad]") {
  // An image model's first layer, and rows that end in a part vector, a
  // filter 8 wide and padding on one side only: on CPUs with AVX2 kiln's
  // own kernel takes these (up to 4 input channels, stride 1).
  const ConvCase cases[] = {{{3, 1, 28, 28}, {8, 1, 5, 5}, 1, 2, 1, 1, true},
                            {{2, 3, 11, 13}, {5, 3, 3, 3}, 1, 1, 1, 1, false},
                            {{2, 2, 9, 20}, {3, 2, 2, 8}, 1, 0, 1, 1, true},
                            {{1, 4, 6, 16}, {2, 4, 3, 1}, 1, 2, 1, 1, false}};
  Runtime rt;
  for (const ConvCase& k : cases) {
    INFO("input " << to_string(k.input) << " weight " << to_string(k.weight) << " padding " << k.padding);
    const auto expected = conv_output_and_grads(rt, k, DType::f64);
    const auto actual = conv_output_and_grads(rt, k, DType::f32);
    CHECK(error_of_largest(actual[2], expected[2]) < 1e-6);
  }
}

TEST_CASE("conv2d rejects shapes that do not fit", "[nn][conv][errors]") {
  Runtime rt;
  auto expect_error = [&](const ConvCase& k, Status status, const char* reason) {
    std::vector<Tensor> in{rt.full(k.input, 1.0), rt.full(k.weight, 1.0)};
    if (k.bias) in.push_back(rt.full({k.weight[0] + 1}, 1.0));
    try {
      rt.call1(rt.op("conv2d"), in, make_conv_attrs(rt, k));
      FAIL("accepted input " << to_string(k.input) << " weight " << to_string(k.weight));
    } catch (const Error& e) {
      CHECK(e.status() == status);
      CHECK_THAT(e.what(), Catch::Contains("op 'conv2d'") && Catch::Contains(reason));
    }
  };
  expect_error({{1, 3, 5, 5}, {4, 1, 3, 3}, 1, 0, 1, 2, false}, Status::shape_mismatch, "divisible by groups = 2");
  expect_error({{1, 4, 5, 5}, {4, 3, 3, 3}, 1, 0, 1, 2, false}, Status::shape_mismatch, "[4, 3, 3, 3]");
  expect_error({{1, 1, 3, 3}, {1, 1, 5, 5}, 1, 0, 1, 1, false}, Status::shape_mismatch, "does not fit the padded input");
  expect_error({{1, 1, 3, 3}, {1, 1, 3, 3}, 1, 0, 2, 1, false}, Status::shape_mismatch, "dilated extent 5x5");
  expect_error({{1, 2, 5, 5}, {3, 2, 3, 3}, 1, 0, 1, 1, true}, Status::shape_mismatch, "bias must be [3]");
  try {
    rt.call1("conv2d", {rt.full({1, 2, 5, 5}, 1.0), rt.full({3, 2, 3}, 1.0)});
    FAIL("rank-3 weight accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::shape_mismatch);
    CHECK_THAT(e.what(), Catch::Contains("weight must be [O, C/groups, KH, KW]") && Catch::Contains("[3, 2, 3]"));
  }
  try {
    rt.call1("conv2d", {rt.full({1, 2, 5, 5}, 1.0)}, {});
    FAIL("missing weight accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
  }
  try {
    rt.call1("conv2d", {rt.full({1, 1, 5, 5}, 1.0), rt.full({1, 1, 3, 3}, 1.0)}, {{"stride", std::vector<int64_t>{0, 1}}});
    FAIL("zero stride accepted");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK_THAT(e.what(), Catch::Contains("stride must be >= 1"));
  }
}
