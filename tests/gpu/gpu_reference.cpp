#include "gpu_reference.hpp"

#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "support/gradcheck.hpp"

namespace kiln::test {

double tolerance(DType t) {
  switch (t) {
    case DType::f32: return 1e-5;
    case DType::f64: return 1e-10;
    case DType::f16: case DType::bf16: return 1e-2;
    default: return 0.0;
  }
}

std::vector<Tensor> to_gpu(Runtime& rt, const std::vector<Tensor>& cpu) {
  std::vector<Tensor> out;
  for (const Tensor& t : cpu) out.push_back(t.defined() ? to_device(rt, t, kGpu) : Tensor());
  return out;
}

void poison_freed_blocks(Runtime& rt, const std::vector<Tensor>& like) {
  std::vector<Tensor> blocks;
  for (const Tensor& t : like)
    if (t.defined()) blocks.push_back(rt.full({int64_t(t.nbytes())}, 255.0, DType::u8, kGpu));
}

void require_matches(Runtime& rt, const Tensor& gpu, const Tensor& cpu, double tol) {
  REQUIRE(gpu.defined());
  CHECK(gpu.device() == kGpu);
  REQUIRE(gpu.dtype() == cpu.dtype());
  REQUIRE(gpu.shape() == cpu.shape());
  const double t = tol < 0 ? tolerance(cpu.dtype()) : tol;
  require_close(values(rt, to_device(rt, gpu, Device::cpu())), values(rt, cpu), t, t);  // values reads host memory
}

void require_same_bits(Runtime& rt, const Tensor& gpu, const Tensor& cpu) {
  CHECK(gpu.device() == kGpu);
  REQUIRE(gpu.dtype() == cpu.dtype());
  REQUIRE(gpu.shape() == cpu.shape());
  CHECK(host_bytes(rt, gpu) == host_bytes(rt, cpu));
}

std::vector<Tensor> require_op_matches_cpu(Runtime& rt, std::string_view op, const std::vector<Tensor>& inputs,
                                           const Attrs& attrs, double tol) {
  const OpDef& def = rt.op(op);
  const std::vector<Tensor> expected = rt.call(def, inputs, attrs);
  const std::vector<Tensor> on_gpu = to_gpu(rt, inputs);
  poison_freed_blocks(rt, expected);
  const std::vector<Tensor> actual = rt.call(def, on_gpu, attrs);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("op " << op << ", output " << i);
    require_matches(rt, actual[i], expected[i], tol);
  }
  return actual;
}

namespace {

// Leaves for fn: fresh tensors, floating ones requiring grad.
std::vector<Tensor> leaves(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = inputs;
  for (Tensor& t : out)
    if (t.defined() && is_floating(t.dtype())) t.set_requires_grad(true);
  return out;
}

}  // namespace

void require_grads_match_cpu(Runtime& rt, const TensorFn& fn, const std::vector<Tensor>& inputs, double tol) {
  std::vector<Tensor> cpu_inputs;
  for (const Tensor& t : inputs) cpu_inputs.push_back(t.defined() ? rt.call1("copy", {t}) : Tensor());  // fresh leaves
  const std::vector<Tensor> cpu_leaves = leaves(cpu_inputs);
  const std::vector<Tensor> gpu_leaves = leaves(to_gpu(rt, inputs));
  const Tensor cpu_out = fn(cpu_leaves);
  const Tensor seed = random_tensor(rt, cpu_out.shape(), cpu_out.dtype(), -1.0, 1.0, 7);
  rt.backward(cpu_out, seed);
  std::vector<Tensor> cpu_grads;
  for (const Tensor& t : cpu_leaves) cpu_grads.push_back(t.defined() ? t.grad() : Tensor());
  poison_freed_blocks(rt, cpu_grads);
  const Tensor gpu_out = fn(gpu_leaves);
  {
    INFO("forward");
    require_matches(rt, gpu_out, cpu_out, tol);
  }
  rt.backward(gpu_out, to_device(rt, seed, kGpu));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!cpu_grads[i].defined()) continue;
    INFO("gradient of input " << i);
    require_matches(rt, gpu_leaves[i].grad(), cpu_grads[i], tol);
  }
}

TensorFn op_fn(Runtime& rt, std::string_view op, const Attrs& attrs) {
  const OpDef* def = &rt.op(op);
  return [&rt, def, attrs](const std::vector<Tensor>& in) { return rt.call1(*def, in, attrs); };
}

}  // namespace kiln::test
