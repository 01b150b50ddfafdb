// Reduction kernels on cuda:0 against the CPU: sum, mean, max and var over
// sets of dims (with keepdim, strided inputs, long and short rows) and
// their backward ops, sum_to, and softmax / log_softmax. Skipped with the
// reason without a GPU.
#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "gpu_reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// Multiples of 1/8 in [-2, 2]: exact in every floating dtype, so maxima tie
// and sums of up to 2^20 of them are exact in float whatever the order of
// the additions: the devices' different folding orders cannot hide or fake
// a difference.
Tensor grid_values(Runtime& rt, const Shape& shape, DType t) {
  std::vector<double> v = values(rt, random_tensor(rt, shape, DType::f64, -2, 2));
  for (double& x : v) x = std::round(x * 8) / 8;
  return make_tensor(rt, shape, v, t);
}

}  // namespace

TEST_CASE("sum, mean, max and var on cuda:0 match the CPU over any dims", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<std::vector<int64_t>> dim_sets = {{}, {0}, {1}, {-1}, {0, 2}};
  // [5, 700, 3]: rows of 700 take a block each; [4500, 2, 2]: many short
  // rows take a thread each.
  for (const Shape& shape : {Shape{5, 700, 3}, Shape{4500, 2, 2}}) {
    for (const char* op : {"sum", "mean", "max", "var"}) {
      for (DType t : kFloatTypes) {
        for (const std::vector<int64_t>& dims : dim_sets) {
          for (bool keepdim : {false, true}) {
            INFO(op << " in " << dtype_name(t) << " of " << to_string(shape) << " over " << dims.size()
                    << " dims, first " << (dims.empty() ? 99 : dims[0]) << (keepdim ? ", keepdim" : ""));
            const Attrs attrs = rt.op(op).make_attrs({{"dims", dims}, {"keepdim", keepdim}});
            require_grads_match_cpu(rt, op_fn(rt, op, attrs), {grid_values(rt, shape, t)});
          }
        }
      }
    }
  }
}

TEST_CASE("reductions on cuda:0 read strided inputs in place", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* op : {"sum", "mean", "max", "var"}) {
    for (DType t : {DType::f32, DType::f64}) {
      INFO(op << " in " << dtype_name(t));
      const Attrs attrs = rt.op(op).make_attrs({{"dims", std::vector<int64_t>{1}}, {"keepdim", false}});
      const Tensor x = grid_values(rt, {40, 600}, t);
      const Tensor expected = rt.call1(rt.op(op), {rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 1}})}, attrs);
      const Tensor view = rt.call1("transpose", {to_device(rt, x, kGpu)}, {{"dim0", 0}, {"dim1", 1}});
      REQUIRE_FALSE(view.is_contiguous());
      require_matches(rt, rt.call1(rt.op(op), {view}, attrs), expected);
    }
  }
}

TEST_CASE("sum_to on cuda:0 sums broadcast dims back like the CPU", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::pair<Shape, std::vector<int64_t>> cases[] = {
      {{4, 3, 5}, {3, 1}}, {{4, 3, 5}, {5}}, {{4, 3, 5}, {}}, {{4, 3, 5}, {4, 1, 5}}, {{2, 1, 6}, {1, 1, 6}}};
  for (DType t : kFloatTypes) {
    for (const auto& [from, to] : cases) {
      INFO(dtype_name(t) << ": " << to_string(from) << " to " << to.size() << " dims");
      const Attrs attrs = rt.op("sum_to").make_attrs({{"shape", to}});
      require_grads_match_cpu(rt, op_fn(rt, "sum_to", attrs), {random_tensor(rt, from, t)});
    }
  }
}

TEST_CASE("softmax and log_softmax on cuda:0 match the CPU with their gradients", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* op : {"softmax", "log_softmax"}) {
    for (DType t : kFloatTypes) {
      for (const Shape& shape : {Shape{6, 1000}, Shape{5000, 10}, Shape{3, 7, 4}}) {
        for (int64_t dim : {0, 1, -1}) {
          INFO(op << " in " << dtype_name(t) << " of " << to_string(shape) << " along " << dim);
          const Attrs attrs = rt.op(op).make_attrs({{"dim", dim}});
          require_grads_match_cpu(rt, op_fn(rt, op, attrs), {random_tensor(rt, shape, t, -8, 8)});
        }
      }
    }
  }
}
