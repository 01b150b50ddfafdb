// batch_norm and its backward on cuda:0 against the CPU kernels: training
// and evaluation, [N, C] and [N, C, ...] inputs, with and without weight,
// bias and running statistics, and the running statistics updated in place.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const DType kGpuDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// Inputs in order: input, weight, bias, running_mean, running_var; an
// absent one is passed undefined.
OpsFn batch_norm(bool training, bool affine, bool running) {
  return [=](Runtime& rt, const std::vector<Tensor>& in) {
    const OpDef& op = rt.op("batch_norm");
    const Tensor none;
    const Tensor inputs[] = {in[0], affine ? in[1] : none, affine ? in[2] : none, running ? in[3] : none,
                             running ? in[4] : none};
    return rt.call(op, inputs, op.make_attrs({{"training", training}, {"momentum", 0.2}, {"eps", 1e-5}}))[0];
  };
}

}  // namespace

TEST_CASE("batch_norm on cuda:0 matches the CPU in training and evaluation", "[gpu][batch_norm]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<Shape> inputs = {{8, 5}, {4, 3, 6, 5}, {3, 4, 7}, {2, 70, 3, 3}};
  // Running variances must be positive; the mean is off zero so centring shows.
  const std::vector<std::pair<double, double>> ranges = {{-2.0, 3.0}, {0.5, 1.5}, {-1.0, 1.0}, {-0.5, 0.5}, {0.5, 2.0}};
  for (DType dtype : kGpuDTypes)
    for (const Shape& s : inputs)
      for (bool training : {true, false})
        for (bool affine : {true, false}) {
          const bool running = !training || affine;  // training without running statistics too
          INFO(to_string(s) << (training ? " training" : " evaluation") << (affine ? " with" : " without")
                            << " weight and bias" << (running ? ", running statistics" : ""));
          const Shape channels{s[1]};
          std::vector<size_t> differentiable = {0};
          if (affine) differentiable.insert(differentiable.end(), {1, 2});
          const DeviceInputs in = check_against_cpu(rt, batch_norm(training, affine, running),
                                                    {s, channels, channels, channels, channels}, dtype,
                                                    tolerance_for(dtype), differentiable, ranges);
          if (training && running) {
            check_same_tensor(rt, in.gpu[3], in.cpu[3], tolerance_for(dtype), "running_mean after the update");
            check_same_tensor(rt, in.gpu[4], in.cpu[4], tolerance_for(dtype), "running_var after the update");
          }
        }
}

TEST_CASE("batch_norm on cuda:0 in evaluation with an empty batch gives zero parameter gradients",
          "[gpu][batch_norm]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Device gpu = Device::cuda(0);
  const Tensor x = to_device(rt, rt.empty({0, 3}), gpu);
  Tensor weight = rt.full({3}, 1.5, DType::f32, gpu), bias = rt.full({3}, 0.5, DType::f32, gpu);
  weight.set_requires_grad(true);
  bias.set_requires_grad(true);
  const Tensor mean = rt.full({3}, 0.0, DType::f32, gpu), var = rt.full({3}, 1.0, DType::f32, gpu);
  const Tensor y = rt.call1("batch_norm", {x, weight, bias, mean, var});
  REQUIRE(y.shape() == Shape{0, 3});
  rt.backward(y, to_device(rt, rt.empty({0, 3}), gpu));
  CHECK(values(rt, to_device(rt, weight.grad(), Device::cpu())) == std::vector<double>(3, 0.0));
  CHECK(values(rt, to_device(rt, bias.grad(), Device::cpu())) == std::vector<double>(3, 0.0));
}
