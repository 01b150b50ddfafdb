// Shape, padding and masking ops on cuda:0 against the CPU: flip, roll,
// repeat, pad (every mode), tril, triu and masked_fill in every dtype, with
// the gradients of the floating ones; the views (squeeze, unsqueeze,
// flatten, narrow) carry gradients on the device. Skipped with the reason
// without a GPU.
#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "gpu_reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;

// op(x; attrs) on both devices in every dtype, and its gradient in the
// floating ones.
void require_matches_in_every_dtype(Runtime& rt, const char* op, const Shape& shape, NamedAttrs named) {
  const Attrs attrs = rt.op(op).make_attrs(named);
  for (DType t : kAllDTypes) {
    INFO(op << " in " << dtype_name(t) << " of " << to_string(shape));
    const Tensor x = random_tensor(rt, shape, t, 0, 4, 7);
    if (is_floating(t))
      require_grads_match_cpu(rt, op_fn(rt, op, attrs), {x});
    else
      require_op_matches_cpu(rt, op, {x}, attrs);
  }
}

}  // namespace

TEST_CASE("flip, roll, repeat, tril and triu on cuda:0 match the CPU", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  require_matches_in_every_dtype(rt, "flip", {3, 5, 4}, {{"dims", Ints{0, -1}}});
  require_matches_in_every_dtype(rt, "roll", {3, 5, 4}, {{"shifts", Ints{7}}});
  require_matches_in_every_dtype(rt, "roll", {3, 5, 4}, {{"shifts", Ints{-2, 1}}, {"dims", Ints{1, 2}}});
  require_matches_in_every_dtype(rt, "repeat", {3, 5}, {{"repeats", Ints{2, 3, 2}}});
  require_matches_in_every_dtype(rt, "tril", {2, 5, 4}, {{"diagonal", 1}});
  require_matches_in_every_dtype(rt, "triu", {2, 5, 4}, {{"diagonal", -1}});
  // Many elements: the grid-stride loops.
  require_matches_in_every_dtype(rt, "flip", {700, 300}, {{"dims", Ints{1}}});
}

TEST_CASE("pad on cuda:0 matches the CPU in every mode", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  require_matches_in_every_dtype(rt, "pad", {2, 3, 5}, {{"pad", Ints{1, 2, 0, 3}}, {"value", 1.5}});
  require_matches_in_every_dtype(rt, "pad", {2, 3, 5}, {{"pad", Ints{-1, 2}}});
  require_matches_in_every_dtype(rt, "pad", {2, 3, 5}, {{"pad", Ints{4, 3, 2, 1}}, {"mode", "reflect"}});
  require_matches_in_every_dtype(rt, "pad", {2, 3, 5}, {{"pad", Ints{4, 3, 2, 1, 1, 1}}, {"mode", "replicate"}});
}

TEST_CASE("masked_fill on cuda:0 broadcasts the mask like the CPU", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Attrs attrs = rt.op("masked_fill").make_attrs({{"value", -2.0}});
  const Tensor mask = make_tensor(rt, {5, 1}, {1, 0, 0, 1, 1}, DType::boolean);
  for (DType t : kAllDTypes) {
    INFO("masked_fill in " << dtype_name(t));
    const Tensor x = random_tensor(rt, {4, 5, 6}, t, 0, 4, 9);
    if (is_floating(t))
      require_grads_match_cpu(rt, [&](const std::vector<Tensor>& in) {
        return rt.call1(rt.op("masked_fill"), {in[0], in[1]}, attrs);
      }, {x, mask});
    else
      require_op_matches_cpu(rt, "masked_fill", {x, mask}, attrs);
  }
}

TEST_CASE("squeeze, unsqueeze, flatten and narrow keep gradients on cuda:0", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const TensorFn views = [&](const std::vector<Tensor>& in) {
    Tensor t = rt.call1("unsqueeze", {in[0]}, {{"dim", 1}});
    t = rt.call1("narrow", {t}, {{"dim", -1}, {"start", 1}, {"length", 3}});
    t = rt.call1("flatten", {t}, {{"start_dim", 1}});
    return rt.call1("squeeze", {rt.call1("unsqueeze", {t}, {{"dim", 0}})});
  };
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    require_grads_match_cpu(rt, views, {random_tensor(rt, {3, 4, 5}, t)});
}

TEST_CASE("index_select, index_add, scatter and scatter_add on cuda:0 match the CPU", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Tensor rows = make_tensor(rt, {5}, {3, 0, 3, 1, 2}, DType::i64);
  const Tensor scatter_index = make_tensor(rt, {2, 3}, {3, 0, 1, 0, 2, 2}, DType::i32);
  for (DType t : kAllDTypes) {
    INFO("in " << dtype_name(t));
    const Tensor x = random_tensor(rt, {4, 3}, t, 0, 4, 11);
    const Tensor src = random_tensor(rt, {3, 3}, t, 0, 4, 12);
    const Attrs dim0 = rt.op("index_select").make_attrs({{"dim", 0}});
    const Attrs scatter_dim0 = rt.op("scatter").make_attrs({{"dim", 0}});
    if (!is_floating(t)) {
      require_op_matches_cpu(rt, "index_select", {x, rows}, dim0);
      require_op_matches_cpu(rt, "scatter", {x, scatter_index, src}, scatter_dim0);
      continue;
    }
    require_grads_match_cpu(rt, op_fn(rt, "index_select", dim0), {x, rows});
    require_grads_match_cpu(rt, op_fn(rt, "index_add", rt.op("index_add").make_attrs({{"dim", 1}, {"alpha", 0.5}})),
                            {x, make_tensor(rt, {2}, {2, 2}, DType::i64), random_tensor(rt, {4, 2}, t, 0, 4, 13)});
    // scatter's CPU and GPU kernels may keep different writes for a
    // repeated index: compare with distinct ones only.
    require_grads_match_cpu(rt, op_fn(rt, "scatter", scatter_dim0),
                            {x, make_tensor(rt, {2, 3}, {3, 0, 1, 0, 2, 2}, DType::i64), src});
    require_grads_match_cpu(rt, op_fn(rt, "scatter_add", scatter_dim0), {x, scatter_index, src});
  }
}

TEST_CASE("indexing ops on cuda:0 throw the CPU's error for an index out of range", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Tensor x = to_device(rt, random_tensor(rt, {3, 2}, DType::f32), kGpu);
  const Tensor bad = to_device(rt, make_tensor(rt, {2}, {0, 3}, DType::i64), kGpu);
  require_error([&] { rt.call1("index_select", {x, bad}, {{"dim", 0}}); }, Status::invalid_argument,
                {"index_select", "index 3 is out of range for dimension 0 of size 3"});
  require_error([&] { rt.call1("index_add", {x, bad, x}, {{"dim", 0}}); }, Status::invalid_argument,
                {"index_add", "index 3 is out of range"});
  const Tensor bad2 = to_device(rt, make_tensor(rt, {1, 2}, {0, 2}, DType::i64), kGpu);
  require_error([&] { rt.call1("scatter_add", {x, bad2, x}, {{"dim", 1}}); }, Status::invalid_argument,
                {"scatter_add", "index 2 is out of range for dimension 1 of size 2"});
}

TEST_CASE("stack and chunk on cuda:0 match the CPU", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : {DType::f32, DType::f64, DType::bf16}) {
    INFO("in " << dtype_name(t));
    const TensorFn stack_then_chunk = [&](const std::vector<Tensor>& in) {
      const OpDef& stack = rt.op("stack");
      const Tensor joined = rt.call1(stack, in, stack.make_attrs({{"dim", 1}}));
      const std::vector<Tensor> pieces = rt.call("chunk", {joined}, {{"chunks", 2}, {"dim", -1}});
      return rt.call1("mul", {pieces[0], pieces[1]});
    };
    require_grads_match_cpu(rt, stack_then_chunk, {random_tensor(rt, {3, 4}, t, -1, 1, 21),
                                                   random_tensor(rt, {3, 4}, t, -1, 1, 22)});
  }
  require_op_matches_cpu(rt, "chunk", {random_tensor(rt, {7, 2}, DType::i64, 0, 9, 23)},
                         rt.op("chunk").make_attrs({{"chunks", 3}}));
}

TEST_CASE("one_hot on cuda:0 matches the CPU and checks the indices", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Tensor labels = make_tensor(rt, {2, 3}, {4, 0, 1, 1, 3, 0}, DType::i64);
  require_op_matches_cpu(rt, "one_hot", {labels}, rt.op("one_hot").default_attrs());
  require_op_matches_cpu(rt, "one_hot", {labels}, rt.op("one_hot").make_attrs({{"num_classes", 7}}));
  require_error([&] { rt.call1("one_hot", {to_device(rt, labels, kGpu)}, {{"num_classes", 4}}); },
                Status::invalid_argument, {"one_hot", "class index 4 is out of range for 4 classes"});
}

TEST_CASE("prelu on cuda:0 matches the CPU, gradients included", "[gpu][shape]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    INFO("prelu in " << dtype_name(t));
    const Tensor x = random_tensor(rt, {4, 3, 50}, t, -1, 1, 31);
    const TensorFn prelu = op_fn(rt, "prelu", rt.op("prelu").default_attrs());
    require_grads_match_cpu(rt, prelu, {x, random_tensor(rt, {3}, t, 0, 1, 32)});
    require_grads_match_cpu(rt, prelu, {x, random_tensor(rt, {1}, t, 0, 1, 33)});
  }
}
