// Checking a GPU op against the CPU kernels: the same function of the same
// random inputs runs on both devices, forward and backward, and every
// element of the output and of each input's gradient is compared. dtypes
// the CPU lacks (f16, bf16) are checked against f32 on the CPU, fed the same
// rounded values. The GPU's outputs and gradients are allocated over freed
// blocks poisoned with NaN (gpu_reference.hpp), so an element a kernel
// leaves unwritten fails the comparison.
#pragma once

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "device_test_support.hpp"
#include "gpu_reference.hpp"
#include "support/gradcheck.hpp"

namespace kiln::test {

// max |actual - expected| over max |expected|: an error relative to the
// tensor's scale, so elements near zero do not dominate.
inline double max_relative_error(const std::vector<double>& actual, const std::vector<double>& expected) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff = std::max(diff, std::abs(actual[i] - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return scale > 0.0 ? diff / scale : diff;
}

// The whole of `gpu` (moved to the host) against `cpu`: same shape, and
// every element within `tolerance` relative error.
inline void check_same_tensor(Runtime& rt, const Tensor& gpu, const Tensor& cpu, double tolerance, const char* what) {
  INFO(what);
  REQUIRE(gpu.defined());
  REQUIRE(cpu.defined());
  CHECK(gpu.device() == Device::cuda(0));
  REQUIRE(gpu.shape() == cpu.shape());
  const std::vector<double> got = values(rt, to_device(rt, gpu, Device::cpu()));
  const std::vector<double> want = values(rt, cpu);
  for (double v : got) REQUIRE(std::isfinite(v));
  const double error = max_relative_error(got, want);
  INFO("relative error " << error << " (tolerance " << tolerance << ")");
  CHECK(error <= tolerance);
}

inline Tensor cast(Runtime& rt, const Tensor& t, DType dtype) { return rt.call1("cast", {t}, {{"dtype", dtype}}); }

// What the CPU computes in when the GPU runs `dtype`.
inline DType reference_dtype(DType dtype) { return dtype == DType::f64 ? DType::f64 : DType::f32; }

using OpsFn = std::function<Tensor(Runtime&, const std::vector<Tensor>&)>;

struct DeviceInputs {
  std::vector<Tensor> cpu, gpu;
};

// Runs fn on random inputs of `shapes` on cuda:0 in `dtype` and on the CPU,
// then backward from the same random gradient, and compares the output and
// the gradient of every input. `differentiable` lists the inputs that
// require grad (all when empty); input i's values lie in ranges[i] ([-1, 1)
// when not given). Returns the inputs, for checks of what fn changed.
inline DeviceInputs check_against_cpu(Runtime& rt, const OpsFn& fn, const std::vector<Shape>& shapes, DType dtype,
                                      double tolerance, std::vector<size_t> differentiable = {},
                                      const std::vector<std::pair<double, double>>& ranges = {}) {
  INFO("dtype " << dtype_name(dtype));
  if (differentiable.empty())
    for (size_t i = 0; i < shapes.size(); ++i) differentiable.push_back(i);
  const DType ref = reference_dtype(dtype);
  std::vector<Tensor> on_cpu, on_gpu;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [lo, hi] = i < ranges.size() ? ranges[i] : std::pair<double, double>(-1.0, 1.0);
    const Tensor values_in_dtype = random_tensor(rt, shapes[i], dtype, lo, hi, 11 + i);
    on_cpu.push_back(cast(rt, values_in_dtype, ref));
    on_gpu.push_back(to_device(rt, values_in_dtype, Device::cuda(0)));
  }
  for (size_t i : differentiable) {
    on_cpu[i].set_requires_grad(true);
    on_gpu[i].set_requires_grad(true);
  }
  const Tensor cpu_out = fn(rt, on_cpu);
  poison_freed_blocks(rt, {rt.empty(cpu_out.shape(), dtype)});
  const Tensor gpu_out = fn(rt, on_gpu);
  check_same_tensor(rt, gpu_out, cpu_out, tolerance, "output");

  const Tensor grad = random_tensor(rt, cpu_out.shape(), dtype, -1.0, 1.0, 5);
  rt.backward(cpu_out, cast(rt, grad, ref));
  const Tensor gpu_grad = to_device(rt, grad, Device::cuda(0));
  std::vector<Tensor> grad_shapes;
  for (size_t i : differentiable) grad_shapes.push_back(rt.empty(shapes[i], dtype));
  poison_freed_blocks(rt, grad_shapes);
  rt.backward(gpu_out, gpu_grad);
  for (size_t i : differentiable) {
    INFO("gradient of input " << i << " " << to_string(shapes[i]));
    check_same_tensor(rt, on_gpu[i].grad(), on_cpu[i].grad(), tolerance, "gradient");
  }
  return {on_cpu, on_gpu};
}

// The tolerances the GPU kernels are held to, against the CPU.
inline double tolerance_for(DType dtype, bool tf32 = false) {
  switch (dtype) {
    case DType::f64: return 1e-12;
    case DType::f32: return tf32 ? 1e-3 : 1e-5;
    default: return 1e-2;  // f16, bf16: rounded once more on output
  }
}

}  // namespace kiln::test
