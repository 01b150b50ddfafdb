#include <catch2/catch.hpp>

#include "kiln/error.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Dims = std::vector<int64_t>;

struct Conv1dCase {
  Shape input, weight;  // [N, C, L], [O, C/groups, K]
  int64_t stride, padding, dilation, groups;
  bool bias;
};

// Plain, strided + padded, dilated, grouped, depthwise, kernel of 1.
const Conv1dCase kCases[] = {
    {{2, 3, 9}, {4, 3, 3}, 1, 0, 1, 1, true},  {{1, 2, 10}, {3, 2, 3}, 2, 1, 1, 1, true},
    {{2, 2, 11}, {2, 2, 4}, 1, 2, 2, 1, false}, {{2, 4, 7}, {6, 2, 3}, 3, 1, 1, 2, true},
    {{1, 3, 8}, {6, 1, 3}, 1, 1, 2, 3, true},   {{3, 2, 5}, {5, 2, 1}, 1, 0, 1, 1, false},
};

Attrs attrs_of(Runtime& rt, const Conv1dCase& k) {
  return rt.op("conv1d").make_attrs({{"stride", Dims{k.stride}},
                                     {"padding", Dims{k.padding}},
                                     {"dilation", Dims{k.dilation}},
                                     {"groups", k.groups}});
}

int64_t out_length(const Conv1dCase& k) {
  return (k.input[2] + 2 * k.padding - k.dilation * (k.weight[2] - 1) - 1) / k.stride + 1;
}

// torch.nn.functional.conv1d from its definition, over doubles.
std::vector<double> reference_conv1d(const Conv1dCase& k, const std::vector<double>& x, const std::vector<double>& w,
                                     const std::vector<double>& b) {
  const int64_t n_size = k.input[0], c_size = k.input[1], len = k.input[2];
  const int64_t o_size = k.weight[0], cg = k.weight[1], kl = k.weight[2], out = out_length(k);
  std::vector<double> y;
  for (int64_t n = 0; n < n_size; ++n)
    for (int64_t o = 0; o < o_size; ++o)
      for (int64_t ox = 0; ox < out; ++ox) {
        double acc = b.empty() ? 0.0 : b[size_t(o)];
        const int64_t group = o / (o_size / k.groups);
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kx = 0; kx < kl; ++kx) {
            const int64_t ix = ox * k.stride - k.padding + kx * k.dilation;
            if (ix < 0 || ix >= len) continue;
            acc += x[size_t((n * c_size + group * cg + ci) * len + ix)] * w[size_t((o * cg + ci) * kl + kx)];
          }
        y.push_back(acc);
      }
  return y;
}

std::vector<Tensor> conv1d_inputs(Runtime& rt, const Conv1dCase& k, DType dtype) {
  std::vector<Tensor> in{random_tensor(rt, k.input, dtype, -1, 1, 11), random_tensor(rt, k.weight, dtype, -1, 1, 12)};
  if (k.bias) in.push_back(random_tensor(rt, {k.weight[0]}, dtype, -1, 1, 13));
  return in;
}

std::string describe(const Conv1dCase& k) {
  return "input " + to_string(k.input) + " weight " + to_string(k.weight) + " stride " + std::to_string(k.stride) +
         " padding " + std::to_string(k.padding) + " dilation " + std::to_string(k.dilation) + " groups " +
         std::to_string(k.groups);
}

}  // namespace

TEST_CASE("conv1d matches the direct reference", "[nn][conv]") {
  Runtime rt;
  for (const Conv1dCase& k : kCases) {
    const std::vector<Tensor> in64 = conv1d_inputs(rt, k, DType::f64);
    const std::vector<double> expected = reference_conv1d(k, values(rt, in64[0]), values(rt, in64[1]),
                                                          k.bias ? values(rt, in64[2]) : std::vector<double>{});
    for (DType t : {DType::f32, DType::f64}) {
      INFO(dtype_name(t) << " " << describe(k));
      const Tensor y = rt.call1(rt.op("conv1d"), conv1d_inputs(rt, k, t), attrs_of(rt, k));
      CHECK(y.shape() == Shape{k.input[0], k.weight[0], out_length(k)});
      require_close(rt, y, expected, 1e-5, 1e-5);
    }
  }
}

TEST_CASE("conv1d takes a non-contiguous input", "[nn][conv]") {
  Runtime rt;
  const Conv1dCase k{{2, 3, 6}, {2, 3, 3}, 1, 1, 1, 1, false};
  const Tensor x = rt.call1("transpose", {random_tensor(rt, {2, 6, 3})}, {{"dim0", 1}, {"dim1", 2}});
  const Tensor w = random_tensor(rt, k.weight, DType::f64, -1, 1, 2);
  const Tensor y = rt.call1(rt.op("conv1d"), {x, w}, attrs_of(rt, k));
  require_close(rt, y, reference_conv1d(k, values(rt, x), values(rt, w), {}), 1e-12, 1e-12);
}

TEST_CASE("conv1d gradients match finite differences", "[nn][conv][grad]") {
  Runtime rt;
  for (const Conv1dCase& k : kCases) {
    INFO(describe(k));
    gradcheck(rt, rt.op("conv1d"), conv1d_inputs(rt, k, DType::f64), attrs_of(rt, k));
  }
}

TEST_CASE("conv1d f32 gradients through oneDNN match the f64 ones", "[nn][conv][grad]") {
  Runtime rt;
  for (const Conv1dCase& k : kCases) {
    INFO(describe(k));
    std::vector<std::vector<double>> grads[2];
    int slot = 0;
    for (DType t : {DType::f64, DType::f32}) {
      std::vector<Tensor> in = conv1d_inputs(rt, k, t);
      for (Tensor& x : in) x.set_requires_grad(true);
      const Tensor y = rt.call1(rt.op("conv1d"), in, attrs_of(rt, k));
      rt.backward(y, random_tensor(rt, y.shape(), t, -1, 1, 14));
      for (const Tensor& x : in) grads[slot].push_back(values(rt, x.grad()));
      ++slot;
    }
    for (size_t i = 0; i < grads[0].size(); ++i) require_close(grads[1][i], grads[0][i], 1e-4, 1e-4);
  }
}

TEST_CASE("conv1d rejects arguments that do not fit", "[nn][conv][errors]") {
  Runtime rt;
  const auto call = [&](const Shape& input, const Shape& weight, NamedAttrs attrs) {
    return [&rt, input, weight, attrs] { rt.call1("conv1d", {rt.full(input, 1.0), rt.full(weight, 1.0)}, attrs); };
  };
  require_error(call({1, 2, 5, 5}, {3, 2, 3}, {}), Status::shape_mismatch,
                {"op 'conv1d'", "input must be [N, C, L]", "[1, 2, 5, 5]"});
  require_error(call({1, 2, 5}, {3, 2, 3, 3}, {}), Status::shape_mismatch,
                {"op 'conv1d'", "weight must be [O, C/groups, K]", "[3, 2, 3, 3]"});
  require_error(call({1, 2, 5}, {3, 2, 7}, {}), Status::shape_mismatch, {"op 'conv1d'", "does not fit"});
  require_error(call({1, 3, 5}, {4, 1, 3}, {{"groups", 2}}), Status::shape_mismatch,
                {"op 'conv1d'", "divisible by groups = 2"});
  require_error(call({1, 2, 5}, {3, 2, 3}, {{"stride", Dims{0}}}), Status::invalid_argument,
                {"op 'conv1d'", "stride must be >= 1, got 0"});
  require_error(call({1, 2, 5}, {3, 2, 3}, {{"padding", Dims{1, 1}}}), Status::invalid_argument,
                {"op 'conv1d'", "padding must have 1 value (length), got 2"});
  require_error([&] { rt.call1("conv1d", {rt.full({1, 2, 5}, 1.0), rt.full({3, 2, 3}, 1.0), rt.full({2}, 1.0)}); },
                Status::shape_mismatch, {"op 'conv1d'", "bias must be [3]"});
}
