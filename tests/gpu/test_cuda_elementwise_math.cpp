// The element-wise math ops on cuda:0 against the CPU where the CPU tests
// check them against references (tests/unit/ops/elementwise): unary
// functions and their derivatives at edge values (±0, half-way points,
// thresholds, ±inf, NaN), integer abs and sign, comparisons and logical ops
// in every dtype, minimum and maximum with NaN and ties, and integer
// remainder with its zero-divisor error. Skipped with the reason without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "device_test_support.hpp"
#include "gpu_reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<double> kEdges = {0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3, -3, 4, -4, 17, 20, 20.5,
                                    25,  -20,  -30, 100, -100, 1e-6, 1e30, -1e30, kInf, -kInf, kNaN};
// Derivatives at finite, moderate edges only: past them the f32 CPU kernels
// that run on oneDNN (mish) give other non-finite or saturated values than
// the formula (mish'(1e30): inf against 1).
const std::vector<double> kBackwardEdges = {0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3,   -3,  4,
                                            -4,  17,   20,  20.5, 25,  -20,  -30, 100, -100, 1e-6};

}  // namespace

TEST_CASE("unary functions and derivatives on cuda:0 match the CPU at edge values", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::pair<const char*, std::vector<std::pair<std::string_view, AttrValue>>> cases[] = {
      {"abs", {}},   {"sign", {}},  {"floor", {}}, {"ceil", {}},      {"round", {}},
      {"trunc", {}}, {"sin", {}},   {"cos", {}},   {"rsqrt", {}},     {"erf", {}},
      {"log1p", {}}, {"expm1", {}}, {"mish", {}},  {"hardswish", {}}, {"softplus", {}},
      {"softplus", {{"beta", 2.0}, {"threshold", 5.0}}},
  };
  const Shape shape{int64_t(kEdges.size())}, backward_shape{int64_t(kBackwardEdges.size())};
  for (const auto& [name, named] : cases) {
    const Attrs attrs = rt.op(name).make_attrs(named);
    const std::string backward = std::string(name) + "_backward";
    const bool has_backward = rt.registry().find(backward) != nullptr;
    for (DType t : kFloatTypes) {
      INFO(name << " in " << dtype_name(t));
      const Tensor x = make_tensor(rt, shape, kEdges, t);
      require_op_matches_cpu(rt, name, {x}, attrs);
      if (!has_backward) continue;
      const Tensor moderate = make_tensor(rt, backward_shape, kBackwardEdges, t);
      require_op_matches_cpu(rt, backward, {rt.full(backward_shape, 1.0, t), moderate}, attrs);
    }
  }
}

TEST_CASE("abs and sign on cuda:0 take integers and bool like the CPU", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const double i32_min = double(std::numeric_limits<int32_t>::min());
  const std::pair<DType, std::vector<double>> inputs[] = {
      {DType::i32, {i32_min, -7, 0, 1, 9}},
      {DType::i64, {-5e12, -1, 0, 3, 1}},
      {DType::u8, {0, 3, 255, 1, 2}},
  };
  for (const auto& [t, vals] : inputs) {
    INFO(dtype_name(t));
    const Tensor x = make_tensor(rt, {5}, vals, t);
    require_op_matches_cpu(rt, "abs", {x}, rt.op("abs").default_attrs());
    require_op_matches_cpu(rt, "sign", {x}, rt.op("sign").default_attrs());
  }
  require_op_matches_cpu(rt, "sign", {make_tensor(rt, {3}, {0, 1, 1}, DType::boolean)},
                         rt.op("sign").default_attrs());
}

TEST_CASE("comparisons and logical ops on cuda:0 match the CPU in every dtype", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::pair<Shape, Shape> shapes[] = {{{4099}, {4099}}, {{3, 1, 5}, {4, 5}}, {{257}, {1}}, {{}, {2, 3}}};
  for (DType t : kAllDTypes) {
    for (const auto& [sa, sb] : shapes) {
      // Few distinct values, so that equal pairs occur.
      const Tensor a = rt.call1("round", {random_tensor(rt, sa, DType::f32, 0, 3, 1)});
      const Tensor b = rt.call1("round", {random_tensor(rt, sb, DType::f32, 0, 3, 2)});
      const Tensor ta = rt.call1("cast", {a}, {{"dtype", t}}), tb = rt.call1("cast", {b}, {{"dtype", t}});
      for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"}) {
        INFO(op << " in " << dtype_name(t) << ": " << to_string(sa) << " and " << to_string(sb));
        require_op_matches_cpu(rt, op, {ta, tb}, rt.op(op).default_attrs());
      }
      INFO("logical_not in " << dtype_name(t));
      require_op_matches_cpu(rt, "logical_not", {ta}, rt.op("logical_not").default_attrs());
    }
  }
  const std::vector<double> a = {kNaN, kNaN, 1, kInf, -kInf, -0.0, 1};
  const std::vector<double> b = {kNaN, 1, kNaN, kInf, kInf, 0.0, 2};
  for (DType t : kFloatTypes) {
    const Tensor ta = make_tensor(rt, {7}, a, t), tb = make_tensor(rt, {7}, b, t);
    for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"}) {
      INFO(op << " with NaN in " << dtype_name(t));
      require_op_matches_cpu(rt, op, {ta, tb}, rt.op(op).default_attrs());
    }
    require_op_matches_cpu(rt, "logical_not", {ta}, rt.op("logical_not").default_attrs());
  }
}

TEST_CASE("minimum and maximum on cuda:0 propagate NaN and split ties like the CPU", "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<double> a = {kNaN, 1, kNaN, -kInf, 2, -0.0, 3, 3};
  const std::vector<double> b = {1, kNaN, kNaN, 3, kInf, 0.0, 3, 1};
  for (DType t : kFloatTypes) {
    const Tensor ta = make_tensor(rt, {8}, a, t), tb = make_tensor(rt, {8}, b, t);
    for (const char* op : {"minimum", "maximum"}) {
      INFO(op << " in " << dtype_name(t));
      require_op_matches_cpu(rt, op, {ta, tb}, rt.op(op).default_attrs());
      // Ties in a broadcast: gradients in halves, summed back to b's shape.
      const Tensor x = make_tensor(rt, {2, 3}, {1, 2, 3, 2, 2, 0}, t), y = make_tensor(rt, {3}, {2, 2, 1}, t);
      require_grads_match_cpu(rt, op_fn(rt, op, rt.op(op).default_attrs()), {x, y});
    }
  }
  const Tensor p = make_tensor(rt, {4}, {0, 0, 1, 1}, DType::boolean), q = make_tensor(rt, {4}, {0, 1, 0, 1}, DType::boolean);
  for (const char* op : {"minimum", "maximum"}) require_op_matches_cpu(rt, op, {p, q}, rt.op(op).default_attrs());
}

TEST_CASE("remainder on cuda:0 follows the divisor's sign and refuses an integer zero divisor",
          "[gpu][elementwise]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<double> a = {-7, 7, -7, 7, 7.5, -7.5, 0, 5, -1, 1, kInf, 3};
  const std::vector<double> b = {3, -3, -3, 3, 2, 2, -2, 0, kInf, -kInf, 2, kNaN};
  for (DType t : kFloatTypes) {
    INFO(dtype_name(t));
    require_op_matches_cpu(rt, "remainder", {make_tensor(rt, {12}, a, t), make_tensor(rt, {12}, b, t)},
                           rt.op("remainder").default_attrs());
  }
  const double i32_min = double(std::numeric_limits<int32_t>::min());
  for (DType t : {DType::i32, DType::i64}) {
    INFO(dtype_name(t));
    const Tensor x = make_tensor(rt, {2, 4}, {-7, 7, -7, 7, 0, -8, i32_min, 9}, t);
    const Tensor y = make_tensor(rt, {4}, {3, -3, -1, 4}, t);
    require_op_matches_cpu(rt, "remainder", {x, y}, rt.op("remainder").default_attrs());
    const Tensor zero = to_device(rt, make_tensor(rt, {4}, {3, 0, 1, 2}, t), kGpu);
    require_error([&] { rt.call1("remainder", {to_device(rt, x, kGpu), zero}); }, Status::invalid_argument,
                  {"op 'remainder'", "division by zero"});
  }
}
