// matmul and linear on cuda:0 (cuBLASLt) against the CPU kernels, forward
// and backward: plain, batched and broadcast products, transposed and
// strided operands, an empty inner dimension, every floating dtype, and TF32
// only when the runtime allows it; linear's activations in cuBLASLt's
// epilogue and, where it cannot take them, after it.
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "cpu_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const DType kGpuDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

Tensor matmul(Runtime& rt, const std::vector<Tensor>& in) { return rt.call1("matmul", {in[0], in[1]}); }

Tensor transpose(Runtime& rt, const Tensor& t) { return rt.call1("transpose", {t}, {{"dim0", -2}, {"dim1", -1}}); }

Tensor linear(Runtime& rt, const std::vector<Tensor>& in) {
  return in.size() > 2 ? rt.call1("linear", {in[0], in[1], in[2]}) : rt.call1("linear", {in[0], in[1]});
}

const char* const kActivations[] = {"relu", "gelu_tanh"};

OpsFn linear_with(const std::string& activation) {
  return [activation](Runtime& rt, const std::vector<Tensor>& in) {
    return rt.call1("linear", {in[0], in[1], in.size() > 2 ? in[2] : Tensor()}, {{"activation", activation}});
  };
}

}  // namespace

TEST_CASE("matmul on cuda:0 matches the CPU for plain, batched and broadcast shapes", "[gpu][matmul]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7, 13}, {13, 5}},           {{64, 32}, {32, 48}},     {{1, 9}, {9, 1}},          {{17, 1}, {1, 23}},
      {{3, 6, 10}, {3, 10, 4}},     {{4, 6, 10}, {10, 4}},    {{6, 10}, {2, 10, 4}},     // one side shared
      {{2, 1, 5, 8}, {1, 3, 8, 6}},  // broadcast both ways: looped batches
      {{2, 3, 5, 8}, {3, 8, 6}},    {{2, 3, 5, 8}, {2, 1, 8, 6}},
  };
  for (DType dtype : kGpuDTypes)
    for (const auto& [a, b] : cases) {
      INFO(to_string(a) << " @ " << to_string(b));
      check_against_cpu(rt, matmul, {a, b}, dtype, tolerance_for(dtype));
    }
}

TEST_CASE("matmul on cuda:0 reads transposed and strided operands", "[gpu][matmul]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  // Operands stored by columns go to cuBLASLt as they are.
  const OpsFn both_transposed = [](Runtime& r, const std::vector<Tensor>& in) {
    return r.call1("matmul", {transpose(r, in[0]), transpose(r, in[1])});
  };
  // Every other column: neither by rows nor by columns, so copied first.
  const OpsFn strided = [](Runtime& r, const std::vector<Tensor>& in) {
    return r.call1("matmul", {r.call1("slice", {in[0]}, {{"dim", -1}, {"start", 0}, {"end", 12}, {"step", 2}}), in[1]});
  };
  // A batch dimension moved inside: batch strides that do not merge.
  const OpsFn batch_permuted = [](Runtime& r, const std::vector<Tensor>& in) {
    return r.call1("matmul", {r.call1("transpose", {in[0]}, {{"dim0", 0}, {"dim1", 1}}), in[1]});
  };
  for (DType dtype : kGpuDTypes) {
    check_against_cpu(rt, both_transposed, {{3, 9, 7}, {3, 5, 9}}, dtype, tolerance_for(dtype));
    check_against_cpu(rt, strided, {{5, 12}, {6, 4}}, dtype, tolerance_for(dtype));
    check_against_cpu(rt, batch_permuted, {{3, 2, 5, 6}, {6, 4}}, dtype, tolerance_for(dtype));
  }
}

TEST_CASE("matmul on cuda:0 over an empty inner dimension writes zeros", "[gpu][matmul]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes) {
    const Tensor a = to_device(rt, rt.empty({4, 0}, dtype), Device::cuda(0));
    const Tensor b = to_device(rt, rt.empty({0, 3}, dtype), Device::cuda(0));
    const Tensor out = rt.call1("matmul", {a, b});
    REQUIRE(out.shape() == Shape{4, 3});
    CHECK(values(rt, to_device(rt, out, Device::cpu())) == std::vector<double>(12, 0.0));
  }
}

TEST_CASE("matmul on cuda:0 keeps full f32 precision unless TF32 is allowed", "[gpu][matmul][tf32]") {
  // Large enough that TF32's 10-bit mantissa shows: with it off the error
  // stays at f32 rounding, with it on it stays within TF32's.
  const std::vector<Shape> shapes = {{96, 512}, {512, 80}};
  {
    Runtime rt;
    if (skip_without_gpu(rt)) return;
    REQUIRE_FALSE(rt.options().allow_tf32);
    check_against_cpu(rt, matmul, shapes, DType::f32, tolerance_for(DType::f32));
  }
  RuntimeOptions options;
  options.allow_tf32 = true;
  Runtime rt(options);
  check_against_cpu(rt, matmul, shapes, DType::f32, tolerance_for(DType::f32, true));
  check_against_cpu(rt, linear, {{96, 512}, {80, 512}, {80}}, DType::f32, tolerance_for(DType::f32, true));
  // Not relu: TF32's rounding moves pre-activations near zero across the
  // kink, and each one flips a term of the gradients.
  check_against_cpu(rt, linear_with("gelu_tanh"), {{96, 512}, {80, 512}, {80}}, DType::f32,
                    tolerance_for(DType::f32, true));
}

TEST_CASE("linear on cuda:0 matches the CPU with and without bias", "[gpu][linear]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes) {
    check_against_cpu(rt, linear, {{8, 20}, {12, 20}, {12}}, dtype, tolerance_for(dtype));
    check_against_cpu(rt, linear, {{2, 3, 7}, {5, 7}, {5}}, dtype, tolerance_for(dtype));
    check_against_cpu(rt, linear, {{8, 20}, {12, 20}}, dtype, tolerance_for(dtype));
    check_against_cpu(rt, linear, {{1, 33}, {65, 33}, {65}}, dtype, tolerance_for(dtype));
  }
}

TEST_CASE("linear on cuda:0 adds a bias that is not aligned for vector loads", "[gpu][linear]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  // The bias starts one element into its storage: too little aligned for
  // cuBLASLt's epilogue, so it is written first and the product added to it.
  const OpsFn sliced_bias = [](Runtime& r, const std::vector<Tensor>& in) {
    return r.call1("linear", {in[0], in[1], r.call1("slice", {in[2]}, {{"dim", 0}, {"start", 1}, {"end", 13}})});
  };
  for (DType dtype : kGpuDTypes)
    check_against_cpu(rt, sliced_bias, {{6, 10}, {12, 10}, {13}}, dtype, tolerance_for(dtype));
}

TEST_CASE("linear on cuda:0 applies each activation as the CPU does", "[gpu][linear][activation]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* activation : kActivations)
    for (DType dtype : kGpuDTypes) {
      INFO("activation " << activation);
      const OpsFn fn = linear_with(activation);
      check_against_cpu(rt, fn, {{8, 20}, {12, 20}, {12}}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, fn, {{2, 3, 7}, {5, 7}, {5}}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, fn, {{8, 20}, {12, 20}}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, fn, {{64, 96}, {48, 96}, {48}}, dtype, tolerance_for(dtype));
    }
}

TEST_CASE("linear on cuda:0 applies the activation after a bias the epilogue cannot read",
          "[gpu][linear][activation]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  // A bias one element into its storage is written before the product, and
  // the activation then runs as its own kernel over the output.
  for (const char* activation : kActivations) {
    const std::string name = activation;
    const OpsFn sliced_bias = [name](Runtime& r, const std::vector<Tensor>& in) {
      const Tensor bias = r.call1("slice", {in[2]}, {{"dim", 0}, {"start", 1}, {"end", 13}});
      return r.call1("linear", {in[0], in[1], bias}, {{"activation", name}});
    };
    for (DType dtype : kGpuDTypes) {
      INFO("activation " << activation);
      check_against_cpu(rt, sliced_bias, {{6, 10}, {12, 10}, {13}}, dtype, tolerance_for(dtype));
    }
  }
}

TEST_CASE("linear on cuda:0 over an empty inner dimension is the activation of the bias",
          "[gpu][linear][activation]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (const char* activation : kActivations)
    for (DType dtype : kGpuDTypes) {
      INFO("activation " << activation << ", dtype " << dtype_name(dtype));
      const std::vector<Tensor> cpu = {rt.empty({4, 0}, dtype), rt.empty({3, 0}, dtype),
                                       random_tensor(rt, {3}, dtype, -2.0, 2.0, 7)};
      std::vector<Tensor> gpu;
      for (const Tensor& t : cpu) gpu.push_back(to_device(rt, t, Device::cuda(0)));
      const std::vector<Tensor> reference = {cast(rt, cpu[0], reference_dtype(dtype)),
                                             cast(rt, cpu[1], reference_dtype(dtype)),
                                             cast(rt, cpu[2], reference_dtype(dtype))};
      check_same_tensor(rt, linear_with(activation)(rt, gpu), linear_with(activation)(rt, reference),
                        tolerance_for(dtype), "output");
    }
}

TEST_CASE("matmul on cuda:0 from several threads at once", "[gpu][matmul]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Tensor a = random_tensor(rt, {40, 30}, DType::f32, -1.0, 1.0, 3);
  const Tensor b = random_tensor(rt, {30, 20}, DType::f32, -1.0, 1.0, 4);
  const std::vector<double> expected = values(rt, rt.call1("matmul", {a, b}));
  const Tensor a_gpu = to_device(rt, a, Device::cuda(0)), b_gpu = to_device(rt, b, Device::cuda(0));
  // Each thread records its worst error, or what it threw: Catch's checks
  // run on this thread only.
  std::vector<double> errors(4, 1.0);
  std::vector<std::string> failures(errors.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < errors.size(); ++t)
    threads.emplace_back([&, t] {
      try {
        double worst = 0.0;
        for (int i = 0; i < 20; ++i) {
          const Tensor out = to_device(rt, rt.call1("matmul", {a_gpu, b_gpu}), Device::cpu());
          worst = std::max(worst, max_relative_error(values(rt, out), expected));
        }
        errors[t] = worst;
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (size_t t = 0; t < errors.size(); ++t) {
    CHECK(failures[t].empty());
    CHECK(errors[t] <= 1e-5);
  }
}
