// Reduction kernels on cuda:0 against the CPU: sum, mean, max, min, var,
// std, prod, norm, logsumexp, any and all over sets of dims (with keepdim,
// strided inputs, long and short rows) and their backward ops, the
// arg-reductions, cumsum, sort, argsort and topk, sum_to, and softmax /
// log_softmax. Skipped with the reason without a GPU.
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
    for (const char* op : {"sum", "mean", "max", "min", "var", "std", "logsumexp"}) {
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
  for (const char* op : {"sum", "mean", "max", "min", "var", "std", "logsumexp", "any", "all"}) {
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

namespace {

constexpr DType kOrderedTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i32, DType::i64, DType::u8};

// grid_values in any dtype; integers get whole numbers (many ties), u8 only
// non-negative ones.
Tensor ordered_values(Runtime& rt, const Shape& shape, DType t) {
  if (is_floating(t)) return grid_values(rt, shape, t);
  std::vector<double> v = values(rt, random_tensor(rt, shape, DType::f64, t == DType::u8 ? 0 : -9, 9));
  for (double& x : v) x = std::floor(x);
  return make_tensor(rt, shape, v, t);
}

// fn: output `index` of op.
TensorFn output_fn(Runtime& rt, const char* op, const Attrs& attrs, size_t index) {
  const OpDef* def = &rt.op(op);
  return [&rt, def, attrs, index](const std::vector<Tensor>& in) { return rt.call(*def, in, attrs).at(index); };
}

}  // namespace

TEST_CASE("norm on cuda:0 matches the CPU for p = 1, 2 and inf", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const Shape& shape : {Shape{5, 700, 3}, Shape{4500, 2, 2}}) {
    for (double p : {1.0, 2.0, std::numeric_limits<double>::infinity()}) {
      for (DType t : kFloatTypes) {
        for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{}, {1}, {0, 2}}) {
          INFO("p " << p << " in " << dtype_name(t) << " of " << to_string(shape) << " over " << dims.size() << " dims");
          const Attrs attrs = rt.op("norm").make_attrs({{"p", p}, {"dims", dims}});
          require_grads_match_cpu(rt, op_fn(rt, "norm", attrs), {grid_values(rt, shape, t)});
        }
      }
    }
  }
}

TEST_CASE("any, all and the arg-reductions on cuda:0 match the CPU in every dtype", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const Shape& shape : {Shape{5, 700, 3}, Shape{4500, 2, 2}}) {
    for (DType t : kOrderedTypes) {
      const Tensor x = ordered_values(rt, shape, t);
      for (int64_t dim : {0, 1, -1}) {
        INFO(dtype_name(t) << " of " << to_string(shape) << " along " << dim);
        for (const char* op : {"max_dim", "min_dim"})
          require_op_matches_cpu(rt, op, {x}, rt.op(op).make_attrs({{"dim", dim}}));
        for (const char* op : {"argmax", "argmin"})
          require_op_matches_cpu(rt, op, {x}, rt.op(op).make_attrs({{"dim", std::vector<int64_t>{dim}}}));
        for (const char* op : {"any", "all"})
          require_op_matches_cpu(rt, op, {x}, rt.op(op).make_attrs({{"dims", std::vector<int64_t>{dim}}}));
      }
      require_op_matches_cpu(rt, "argmax", {x}, rt.op("argmax").default_attrs());
      // Products of a few elements: long ones overflow or lose bits in any order.
      require_op_matches_cpu(rt, "prod", {x}, rt.op("prod").make_attrs({{"dims", std::vector<int64_t>{-1}}}));
    }
  }
  // NaN wins, the first one.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = make_tensor(rt, {2, 4}, {1, nan, 3, nan, 2, 2, -1, 0}, DType::f32);
  for (const char* op : {"max_dim", "min_dim"}) require_op_matches_cpu(rt, op, {x}, rt.op(op).make_attrs({{"dim", 1}}));
}

TEST_CASE("max_dim, min_dim, cumsum and prod gradients on cuda:0 match the CPU", "[gpu][reduction]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kFloatTypes) {
    const Tensor x = grid_values(rt, {6, 300, 4}, t);
    for (int64_t dim : {0, 1, -1}) {
      INFO(dtype_name(t) << " along " << dim);
      for (const char* op : {"max_dim", "min_dim"})
        require_grads_match_cpu(rt, output_fn(rt, op, rt.op(op).make_attrs({{"dim", dim}}), 0), {x});
      require_grads_match_cpu(rt, op_fn(rt, "cumsum", rt.op("cumsum").make_attrs({{"dim", dim}})), {x});
    }
  }
  // prod with rows holding no, one and two zeros.
  const Tensor z = make_tensor(rt, {3, 3}, {2, 3, 4, 2, 0, 4, 0, 3, 0});
  require_grads_match_cpu(rt, op_fn(rt, "prod", rt.op("prod").make_attrs({{"dims", std::vector<int64_t>{1}}})), {z});
  for (DType t : kOrderedTypes)
    require_op_matches_cpu(rt, "cumsum", {ordered_values(rt, {40, 7}, t)}, rt.op("cumsum").make_attrs({{"dim", 0}}));
}

TEST_CASE("sort, argsort and topk on cuda:0 match the CPU", "[gpu][reduction][sort]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kOrderedTypes) {
    for (const Shape& shape : {Shape{7, 300}, Shape{2000, 5}}) {
      const Tensor x = ordered_values(rt, shape, t);
      for (int64_t dim : {0, 1}) {
        for (bool flag : {false, true}) {
          INFO(dtype_name(t) << " of " << to_string(shape) << " along " << dim << (flag ? " descending" : ""));
          const Attrs sort = rt.op("sort").make_attrs({{"dim", dim}, {"descending", flag}});
          require_op_matches_cpu(rt, "sort", {x}, sort);
          require_op_matches_cpu(rt, "argsort", {x}, rt.op("argsort").make_attrs({{"dim", dim}, {"descending", flag}}));
          const Attrs topk = rt.op("topk").make_attrs({{"k", int64_t(3)}, {"dim", dim}, {"largest", flag}});
          require_op_matches_cpu(rt, "topk", {x}, topk);
          if (is_floating(t)) {
            require_grads_match_cpu(rt, output_fn(rt, "sort", sort, 0), {x});
            require_grads_match_cpu(rt, output_fn(rt, "topk", topk, 0), {x});
          }
        }
      }
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor x = make_tensor(rt, {2, 4}, {1, nan, 3, nan, 2, 2, -1, 0}, DType::f32);
  require_op_matches_cpu(rt, "sort", {x}, rt.op("sort").default_attrs());
  require_op_matches_cpu(rt, "topk", {x}, rt.op("topk").make_attrs({{"k", int64_t(2)}}));
}
