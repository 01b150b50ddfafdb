// Element-wise kernels on cuda:0 against the CPU: unary ops and their
// backward ops, binary ops with broadcasting (minimum, maximum and remainder
// too; edge values, integers and comparisons are in
// test_cuda_elementwise_math.cpp), scalar ops, where, cast, creation ops,
// and the random ops and dropout, which must draw the same Philox words as
// the CPU. Skipped with the reason without a GPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <tuple>

#include "device_test_support.hpp"
#include "gpu_reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

struct UnaryCase {
  const char* op;
  std::vector<std::pair<std::string_view, AttrValue>> attrs;
  double lo, hi;  // the input range where the function is defined
};

Tensor slice_rows(Runtime& rt, const Tensor& t, int64_t start) {
  return rt.call1("slice", {t}, {{"dim", 0}, {"start", start}, {"end", t.shape()[0]}});
}

}  // namespace

TEST_CASE("unary ops and their backward ops on cuda:0 match the CPU", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const UnaryCase cases[] = {
      {"neg", {}, -3, 3},         {"relu", {}, -3, 3},           {"leaky_relu", {{"negative_slope", 0.2}}, -3, 3},
      {"gelu", {}, -3, 3},        {"gelu", {{"approximate", "tanh"}}, -3, 3},
      {"silu", {}, -3, 3},        {"tanh", {}, -3, 3},           {"sigmoid", {}, -3, 3},
      {"exp", {}, -3, 3},         {"log", {}, 0.1, 4},           {"sqrt", {}, 0.1, 4},
      {"pow", {{"exponent", 2.5}}, 0.1, 3},                      {"clamp", {{"min", -0.5}, {"max", 0.75}}, -2, 2},
      {"clamp", {{"min", -0.5}}, -2, 2},
      {"softplus", {}, -3, 3},    {"softplus", {{"beta", 2.0}, {"threshold", 3.0}}, -3, 3},
      {"hardswish", {}, -5, 5},   {"mish", {}, -3, 3},           {"abs", {}, -3, 3},
      {"sign", {}, -3, 3},        {"floor", {}, -3, 3},          {"ceil", {}, -3, 3},
      {"round", {}, -3, 3},       {"trunc", {}, -3, 3},          {"sin", {}, -4, 4},
      {"cos", {}, -4, 4},         {"rsqrt", {}, 0.1, 4},         {"erf", {}, -3, 3},
      {"log1p", {}, -0.9, 3},     {"expm1", {}, -3, 3},
  };
  for (const UnaryCase& u : cases) {
    const Attrs attrs = rt.op(u.op).make_attrs(u.attrs);
    for (DType t : kFloatTypes) {
      // An odd length leaves a tail after the 16-byte packets; the slice
      // starts one element in, so its data is not 16-byte aligned.
      for (const Shape& shape : {Shape{4099}, Shape{3, 5, 7}}) {
        INFO(u.op << " in " << dtype_name(t) << " over " << to_string(shape));
        const Tensor x = random_tensor(rt, shape, t, u.lo, u.hi);
        require_op_matches_cpu(rt, u.op, {x}, attrs);
        require_grads_match_cpu(rt, op_fn(rt, u.op, attrs), {x});
      }
      INFO(u.op << " in " << dtype_name(t) << " from a misaligned start");
      const Tensor x = random_tensor(rt, {65, 3}, t, u.lo, u.hi);
      const Tensor x_gpu = slice_rows(rt, to_device(rt, x, kGpu), 1);
      require_matches(rt, rt.call1(rt.op(u.op), {x_gpu}, attrs), rt.call1(rt.op(u.op), {slice_rows(rt, x, 1)}, attrs));
    }
  }
}

TEST_CASE("binary ops on cuda:0 broadcast like the CPU, with gradients summed back", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::pair<Shape, Shape> shapes[] = {
      {{6, 4, 5}, {6, 4, 5}},  // dense
      {{3, 1, 5}, {4, 5}},     // both broadcast
      {{257}, {1}},            // a one-element operand
      {{}, {2, 3}},            // a scalar operand
  };
  for (const char* op : {"add", "sub", "mul", "div", "minimum", "maximum", "remainder"}) {
    for (DType t : kFloatTypes) {
      for (const auto& [sa, sb] : shapes) {
        INFO(op << " in " << dtype_name(t) << ": " << to_string(sa) << " and " << to_string(sb));
        const Tensor a = random_tensor(rt, sa, t, 0.5, 2.0, 1);
        const Tensor b = random_tensor(rt, sb, t, 0.5, 2.0, 2);
        const Attrs attrs = rt.op(op).default_attrs();
        require_op_matches_cpu(rt, op, {a, b}, attrs);
        require_grads_match_cpu(rt, op_fn(rt, op, attrs), {a, b});
      }
      INFO(op << " in " << dtype_name(t) << " of a transposed operand");
      const Tensor a = random_tensor(rt, {5, 7}, t, 0.5, 2.0, 3);
      const Tensor b = random_tensor(rt, {7, 5}, t, 0.5, 2.0, 4);
      require_grads_match_cpu(
          rt,
          [&](const std::vector<Tensor>& in) {
            return rt.call1(op, {in[0], rt.call1("transpose", {in[1]}, {{"dim0", 0}, {"dim1", 1}})});
          },
          {a, b});
    }
  }
  for (const char* op : {"add", "sub", "mul", "minimum", "maximum"}) {
    for (DType t : {DType::i32, DType::i64}) {
      INFO(op << " in " << dtype_name(t));
      require_op_matches_cpu(rt, op, {random_tensor(rt, {4, 6}, t, -50, 50, 5), random_tensor(rt, {6}, t, -50, 50, 6)},
                             rt.op(op).default_attrs());
    }
  }
}

TEST_CASE("add_scalar and mul_scalar on cuda:0 match the CPU", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* op : {"add_scalar", "mul_scalar"}) {
    const Attrs attrs = rt.op(op).make_attrs({{"value", 2.75}});
    for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64}) {
      INFO(op << " in " << dtype_name(t));
      const Tensor x = random_tensor(rt, {1027}, t, -20, 20);
      require_op_matches_cpu(rt, op, {x}, attrs);
      if (is_floating(t)) require_grads_match_cpu(rt, op_fn(rt, op, attrs), {x});
    }
  }
}

TEST_CASE("where on cuda:0 selects like the CPU for every dtype", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Tensor positive = rt.call1("relu", {random_tensor(rt, {4, 1, 6}, DType::f32, -1, 1)});
  const Tensor mask = rt.call1("cast", {positive}, {{"dtype", DType::boolean}});
  for (DType t : kAllDTypes) {
    INFO(dtype_name(t));
    const Tensor a = random_tensor(rt, {3, 6}, t, 0, 100, 1);
    const Tensor b = random_tensor(rt, {4, 3, 1}, t, 0, 100, 2);
    const Attrs attrs = rt.op("where").default_attrs();
    require_op_matches_cpu(rt, "where", {mask, a, b}, attrs, 0.0);
    if (is_floating(t)) require_grads_match_cpu(rt, op_fn(rt, "where", attrs), {mask, a, b});
  }
}

TEST_CASE("cast on cuda:0 converts every dtype pair bit for bit like the CPU", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  // Non-negative values in range for every type (a negative or too large
  // value has no defined conversion to an unsigned or narrower integer),
  // with zeros for bool and fractions for rounding.
  std::vector<double> vals;
  for (int i = 0; i < 300; ++i) vals.push_back(i % 7 == 0 ? 0.0 : 0.37 * i);
  for (DType from : kAllDTypes) {
    const Tensor x = make_tensor(rt, {int64_t(vals.size())}, vals, from);
    for (DType to : kAllDTypes) {
      INFO(dtype_name(from) << " to " << dtype_name(to));
      const Tensor expected = rt.call1("cast", {x}, {{"dtype", to}});
      require_same_bits(rt, rt.call1("cast", {to_device(rt, x, kGpu)}, {{"dtype", to}}), expected);
    }
  }
  // Between floating types: NaN stays NaN (its payload bits may differ),
  // infinities, overflow to infinity, subnormals and -0 convert exactly.
  const std::vector<double> special = {std::nan(""), INFINITY, -INFINITY, 1e30, 65519.0, 1e-8, 3e-41, -0.0};
  for (DType from : kFloatTypes) {
    const Tensor x = make_tensor(rt, {int64_t(special.size())}, special, from);
    for (DType to : kFloatTypes) {
      INFO("special values, " << dtype_name(from) << " to " << dtype_name(to));
      require_matches(rt, rt.call1("cast", {to_device(rt, x, kGpu)}, {{"dtype", to}}),
                      rt.call1("cast", {x}, {{"dtype", to}}), 0.0);
    }
  }
  require_grads_match_cpu(
      rt, [&](const std::vector<Tensor>& in) { return rt.call1("cast", {in[0]}, {{"dtype", DType::f16}}); },
      {random_tensor(rt, {33}, DType::f32)}, 1e-2);
}

TEST_CASE("creation ops on cuda:0 write the CPU's bits", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::string gpu = to_string(kGpu);
  for (DType t : kAllDTypes) {
    INFO(dtype_name(t));
    for (const char* op : {"zeros", "ones"}) {
      const std::vector<int64_t> shape{3, 1001};
      require_same_bits(rt, rt.call1(op, {}, {{"shape", shape}, {"dtype", t}, {"device", gpu}}),
                        rt.call1(op, {}, {{"shape", shape}, {"dtype", t}}));
    }
    const Tensor like = random_tensor(rt, {7, 9}, t, 0, 5);
    require_same_bits(rt, rt.call1("fill", {to_device(rt, like, kGpu)}, {{"value", 3.0}}),
                      rt.call1("fill", {like}, {{"value", 3.0}}));
    if (t == DType::boolean) continue;
    // u8 gets values in [0, 255] only: a negative or too large double has
    // no defined conversion to it (the CPU wraps, the GPU saturates).
    using Ranges = std::vector<std::tuple<double, double, double>>;
    const Ranges ranges = t == DType::u8 ? Ranges{{0.0, 256.0, 1.0}, {0.0, 7.0, 0.1}, {200.0, 3.0, -0.7}}
                                         : Ranges{{0.0, 1000.0, 1.0}, {-3.0, 7.0, 0.1}, {5.0, -5.0, -0.7}};
    for (const auto& [start, end, step] : ranges) {
      INFO("arange " << start << ", " << end << ", " << step);
      require_same_bits(
          rt, rt.call1("arange", {}, {{"start", start}, {"end", end}, {"step", step}, {"dtype", t}, {"device", gpu}}),
          rt.call1("arange", {}, {{"start", start}, {"end", end}, {"step", step}, {"dtype", t}}));
    }
  }
}

TEST_CASE("rand, randn and dropout on cuda:0 draw the CPU's numbers for a seed", "[gpu][elementwise][random]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::string gpu = to_string(kGpu);
  // An odd count leaves a partial Philox block at the end.
  const std::vector<int64_t> shape{5, 201};
  // Runs make() after the same seed, on the CPU then on the GPU; the stream
  // must advance by as much on both.
  const auto both = [&](auto make) {
    rt.manual_seed(1234);
    auto cpu = make("cpu");
    const GeneratorState after_cpu = rt.generator_state();
    rt.manual_seed(1234);
    auto on_gpu = make(gpu);
    CHECK(rt.generator_state().offset == after_cpu.offset);
    return std::pair{on_gpu, cpu};
  };
  for (DType t : kFloatTypes) {
    INFO(dtype_name(t));
    // Uniform draws are one scale and one shift of the same words: exact.
    auto [u_gpu, u_cpu] = both([&](const std::string& device) {
      return rt.call1("rand", {}, {{"shape", shape}, {"dtype", t}, {"device", device}, {"low", -2.0}, {"high", 3.0}});
    });
    require_same_bits(rt, u_gpu, u_cpu);
    // Box-Muller goes through log, sqrt, cos and sin: close, not exact.
    auto [n_gpu, n_cpu] = both([&](const std::string& device) {
      return rt.call1("randn", {}, {{"shape", shape}, {"dtype", t}, {"device", device}, {"mean", 1.0}, {"std", 2.0}});
    });
    require_matches(rt, n_gpu, n_cpu, t == DType::f64 ? 1e-6 : tolerance(t));

    const Tensor x = random_tensor(rt, {1001}, t, -1, 1);
    const Tensor x_gpu = to_device(rt, x, kGpu);
    const std::pair<double, bool> settings[] = {{0.3, true}, {0.0, true}, {0.5, false}};
    for (const auto& [p, training] : settings) {
      INFO("dropout p " << p << (training ? " training" : " eval"));
      const Attrs attrs = rt.op("dropout").make_attrs({{"p", p}, {"training", training}});
      auto [d_gpu, d_cpu] = both([&](const std::string& device) {
        return rt.call(rt.op("dropout"), std::vector<Tensor>{device == "cpu" ? x : x_gpu}, attrs);
      });
      require_same_bits(rt, d_gpu[1], d_cpu[1]);  // the mask
      require_same_bits(rt, d_gpu[0], d_cpu[0]);
      const Tensor g = random_tensor(rt, {1001}, t, -1, 1, 9);
      const Attrs scale = rt.op("dropout_backward").make_attrs({{"scale", 1.0 / (1.0 - p)}});
      require_same_bits(rt, rt.call1(rt.op("dropout_backward"), {to_device(rt, g, kGpu), d_gpu[1]}, scale),
                        rt.call1(rt.op("dropout_backward"), {g, d_cpu[1]}, scale));
    }
  }
}
