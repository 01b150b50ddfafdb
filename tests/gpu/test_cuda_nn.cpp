// Loss, normalisation and indexing kernels on cuda:0 against the CPU:
// mse_loss, bce_with_logits, cross_entropy and nll_loss (every reduction,
// ignore_index, label smoothing, i32 and i64 targets), layer_norm, embedding,
// gather, concat, split and slice_grad, with their gradients, and the errors for
// indices out of range. Skipped with the reason without a GPU.
#include <catch2/catch.hpp>

#ifdef KILN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "device_test_support.hpp"
#include "gpu_reference.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

constexpr DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// Class indices in [0, classes), with every fifth one set to `ignore`.
Tensor class_targets(Runtime& rt, const Shape& shape, int64_t classes, int64_t ignore, DType t) {
  std::vector<double> v = values(rt, random_tensor(rt, shape, DType::f64, 0, double(classes), 3));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 5 == 4 ? double(ignore) : std::floor(v[i]);
  return make_tensor(rt, shape, v, t);
}

}  // namespace

TEST_CASE("mse_loss and bce_with_logits on cuda:0 match the CPU for every reduction", "[gpu][nn][loss]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* op : {"mse_loss", "bce_with_logits"}) {
    for (const char* reduction : {"none", "sum", "mean"}) {
      for (DType t : kFloatTypes) {
        // 10007 elements: several partial sums when reduced.
        for (const Shape& shape : {Shape{10007}, Shape{3, 5}}) {
          INFO(op << ", reduction " << reduction << ", " << dtype_name(t) << " " << to_string(shape));
          const Attrs attrs = rt.op(op).make_attrs({{"reduction", reduction}});
          const Tensor x = random_tensor(rt, shape, t, -4, 4, 1);
          const Tensor target = random_tensor(rt, shape, t, 0, 1, 2);
          require_grads_match_cpu(rt, op_fn(rt, op, attrs), {x, target});
        }
      }
    }
  }
}

TEST_CASE("cross_entropy and nll_loss on cuda:0 match the CPU", "[gpu][nn][loss]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const int64_t ignore = -100;
  // [N, C] with many classes (a block per row) and few (a thread per row),
  // and [N, C, d] with rows at a stride.
  const std::pair<Shape, Shape> shapes[] = {{{6, 1000}, {6}}, {{5000, 7}, {5000}}, {{4, 5, 3}, {4, 3}}};
  for (const char* op : {"cross_entropy", "nll_loss"}) {
    for (const char* reduction : {"none", "sum", "mean"}) {
      for (DType t : kFloatTypes) {
        for (DType index : {DType::i64, DType::i32}) {
          for (const auto& [scores, target_shape] : shapes) {
            for (double smoothing : {0.0, 0.1}) {
              if (smoothing > 0 && std::string(op) == "nll_loss") continue;
              INFO(op << ", reduction " << reduction << ", " << dtype_name(t) << " scores " << to_string(scores)
                      << ", " << dtype_name(index) << " targets, label smoothing " << smoothing);
              const OpDef& def = rt.op(op);
              const Attrs attrs =
                  smoothing > 0
                      ? def.make_attrs({{"reduction", reduction}, {"ignore_index", ignore}, {"label_smoothing", smoothing}})
                      : def.make_attrs({{"reduction", reduction}, {"ignore_index", ignore}});
              const Tensor x = random_tensor(rt, scores, t, -3, 3, 1);
              const Tensor target = class_targets(rt, target_shape, scores[1], ignore, index);
              require_grads_match_cpu(rt, op_fn(rt, op, attrs), {x, target});
            }
          }
        }
      }
    }
  }
}

TEST_CASE("class losses on cuda:0 reject a target out of range like the CPU", "[gpu][nn][loss]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* op : {"cross_entropy", "nll_loss", "cross_entropy_backward", "nll_loss_backward"}) {
    for (double bad : {4.0, -1.0}) {
      INFO(op << " with target " << bad);
      const Tensor x = to_device(rt, random_tensor(rt, {3, 4}, DType::f32), kGpu);
      const Tensor target = to_device(rt, make_tensor(rt, {3}, {0, bad, 2}, DType::i64), kGpu);
      const bool backward = std::string(op).ends_with("_backward");
      const Tensor grad = to_device(rt, rt.full({}, 1.0), kGpu);
      require_error(
          [&] {
            if (backward) rt.call(op, {grad, x, target});
            else rt.call(op, {x, target});
          },
          Status::invalid_argument,
          {std::string("op '") + op + "'", "target " + std::to_string(int64_t(bad)) + " at position 1",
           "out of range for 4 classes"});
    }
  }
}

TEST_CASE("layer_norm on cuda:0 matches the CPU with and without weight and bias", "[gpu][nn][norm]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : {DType::f32, DType::f64}) {
    // Rows of 1024 (a block each) and many rows of 6 (a thread each); the
    // column sums for the weight gradient run the other way.
    const std::pair<Shape, std::vector<int64_t>> cases[] = {{{4, 3, 1024}, {1024}}, {{5000, 2, 3}, {2, 3}}};
    for (const auto& [shape, normalized] : cases) {
      const Shape param_shape{std::span<const int64_t>(normalized)};
      for (bool affine : {true, false}) {
        INFO(dtype_name(t) << " " << to_string(shape) << (affine ? " with" : " without") << " weight and bias");
        const Attrs attrs = rt.op("layer_norm").make_attrs({{"normalized_shape", normalized}, {"eps", 1e-5}});
        std::vector<Tensor> inputs = {random_tensor(rt, shape, t, -2, 5, 1)};
        if (affine) {
          inputs.push_back(random_tensor(rt, param_shape, t, 0.5, 1.5, 2));
          inputs.push_back(random_tensor(rt, param_shape, t, -1, 1, 3));
        }
        require_grads_match_cpu(rt, op_fn(rt, "layer_norm", attrs), inputs);
      }
    }
  }
}

TEST_CASE("embedding on cuda:0 matches the CPU, repeated rows adding up in the gradient", "[gpu][nn][index]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kFloatTypes) {
    for (DType index : {DType::i64, DType::i32}) {
      INFO(dtype_name(t) << " table, " << dtype_name(index) << " indices");
      const Tensor weight = random_tensor(rt, {10, 33}, t);
      std::vector<double> rows;
      for (int i = 0; i < 60; ++i) rows.push_back(double((i * 7) % 10 == 3 ? 3 : (i * 7) % 10));
      const Tensor indices = make_tensor(rt, {4, 15}, rows, index);
      require_grads_match_cpu(rt, op_fn(rt, "embedding", rt.op("embedding").default_attrs()), {indices, weight});
    }
  }
}

TEST_CASE("embedding and gather on cuda:0 reject an index out of range like the CPU", "[gpu][nn][index]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Tensor weight = to_device(rt, random_tensor(rt, {5, 4}, DType::f32), kGpu);
  for (double bad : {5.0, -2.0}) {
    const std::string index = std::to_string(int64_t(bad));
    const Tensor indices = to_device(rt, make_tensor(rt, {3}, {0, bad, 1}, DType::i64), kGpu);
    require_error([&] { rt.call("embedding", {indices, weight}); }, Status::invalid_argument,
                  {"op 'embedding'", "index " + index + " is out of range for a weight table of size 5"});
    const Tensor grad = to_device(rt, random_tensor(rt, {3, 4}, DType::f32), kGpu);
    require_error([&] { rt.call("embedding_backward", {grad, indices}, {{"num_weights", 5}}); },
                  Status::invalid_argument,
                  {"op 'embedding_backward'", "index " + index + " is out of range for a weight table of size 5"});
    const Tensor index_2d = to_device(rt, make_tensor(rt, {1, 3}, {0, bad, 1}, DType::i32), kGpu);
    require_error([&] { rt.call("gather", {weight, index_2d}, {{"dim", 1}}); }, Status::invalid_argument,
                  {"op 'gather'", "index " + index + " is out of range for the gathered dimension of size 4"});
    require_error(
        [&] {
          rt.call("gather_backward", {to_device(rt, rt.full({1, 3}, 1.0), kGpu), index_2d},
                  {{"input_shape", std::vector<int64_t>{5, 4}}, {"dim", 1}});
        },
        Status::invalid_argument,
        {"op 'gather_backward'", "index " + index + " is out of range for the gathered dimension of size 4"});
  }
}

#ifdef KILN_WITH_CUDA
// The check reads its result back on the indices' device, not the current one.
TEST_CASE("an index out of range on cuda:1 is found while cuda:0 is current", "[gpu][nn][index][multi_gpu]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  if (rt.devices().cuda_device_count < 2) {
    WARN("skipped: needs two GPUs, found " << rt.devices().cuda_device_count);
    return;
  }
  // Rows enough that the embedding kernel is still running when the check
  // is read back; the one bad index is the last.
  const int64_t n = int64_t(1) << 24;
  Tensor host_indices = rt.full({n}, 1.0, DType::i64);
  host_indices.data<int64_t>()[n - 1] = 9;
  const Device second = Device::cuda(1);
  const Tensor indices = to_device(rt, host_indices, second);
  const Tensor weight = to_device(rt, random_tensor(rt, {5, 16}, DType::f32), second);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  require_error([&] { rt.call("embedding", {indices, weight}); }, Status::invalid_argument,
                {"op 'embedding'", "index 9 is out of range for a weight table of size 5"});
  int current = -1;
  REQUIRE(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 0);
}
#endif

TEST_CASE("gather on cuda:0 matches the CPU along every dim", "[gpu][nn][index]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kFloatTypes) {
    for (int64_t dim : {0, 1, 2}) {
      INFO(dtype_name(t) << " along " << dim);
      const Shape in_shape{4, 5, 6};
      Shape index_shape{3, 4, 5};
      std::vector<double> picks = values(rt, random_tensor(rt, index_shape, DType::f64, 0, double(in_shape[dim])));
      for (double& p : picks) p = std::floor(p);
      const Tensor index = make_tensor(rt, index_shape, picks, DType::i64);
      const Attrs attrs = rt.op("gather").make_attrs({{"dim", dim}});
      require_grads_match_cpu(rt, op_fn(rt, "gather", attrs), {random_tensor(rt, in_shape, t), index});
    }
  }
}

TEST_CASE("concat and split on cuda:0 move every dtype's bits like the CPU", "[gpu][nn]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kAllDTypes) {
    INFO(dtype_name(t));
    const Tensor a = random_tensor(rt, {3, 4, 5}, t, 0, 50, 1);
    const Tensor b = random_tensor(rt, {3, 2, 5}, t, 0, 50, 2);
    const Tensor b_view = random_tensor(rt, {5, 2, 3}, t, 0, 50, 3);  // used transposed: a strided input
    const auto joined = [&](const Tensor& x, const Tensor& y, const Tensor& z) {
      return rt.call1("concat", {x, y, rt.call1("transpose", {z}, {{"dim0", 0}, {"dim1", 2}})}, {{"dim", 1}});
    };
    const Tensor expected = joined(a, b, b_view);
    require_same_bits(rt, joined(to_device(rt, a, kGpu), to_device(rt, b, kGpu), to_device(rt, b_view, kGpu)),
                      expected);
    const Attrs split = rt.op("split").make_attrs({{"dim", 1}, {"sizes", std::vector<int64_t>{3, 1, 4}}});
    const std::vector<Tensor> parts = rt.call(rt.op("split"), std::vector<Tensor>{expected}, split);
    const std::vector<Tensor> gpu_parts = rt.call(rt.op("split"), std::vector<Tensor>{to_device(rt, expected, kGpu)}, split);
    REQUIRE(gpu_parts.size() == parts.size());
    for (size_t i = 0; i < parts.size(); ++i) require_same_bits(rt, gpu_parts[i], parts[i]);
  }
  require_grads_match_cpu(
      rt, [&](const std::vector<Tensor>& in) { return rt.call1("concat", {in[0], in[1]}, {{"dim", 0}}); },
      {random_tensor(rt, {2, 3}), random_tensor(rt, {4, 3})});
}

TEST_CASE("slice_grad on cuda:0 writes the gradient of a strided slice like the CPU", "[gpu][nn]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kFloatTypes) {
    INFO(dtype_name(t));
    require_grads_match_cpu(
        rt,
        [&](const std::vector<Tensor>& in) {
          return rt.call1("slice", {in[0]}, {{"dim", 1}, {"start", 1}, {"end", 8}, {"step", 3}});
        },
        {random_tensor(rt, {4, 9, 2}, t)});
  }
}
