#include "bench_resnet_convs.hpp"

#include <cstdio>
#include <vector>

#include "bench_timer.hpp"

namespace kiln::bench {
namespace {

Tensor randn(Runtime& rt, const Shape& shape) {
  return rt.call1("randn", {}, {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}});
}

// Median microseconds of forward, input gradient and weight gradient.
struct PassTimes {
  double forward, grad_input, grad_weight;
};

PassTimes time_passes(Runtime& rt, int64_t channels, int64_t size) {
  const Shape input{32, channels, size, size}, weight{channels, channels, 3, 3};
  const Tensor x = randn(rt, input), w = randn(rt, weight), dy = randn(rt, input);
  const std::vector<int64_t> pad{1, 1}, input_dims(input.begin(), input.end()),
      weight_dims(weight.begin(), weight.end());
  return {median_seconds([&] { rt.call1("conv2d", {x, w}, {{"padding", pad}}); }) * 1e6,
          median_seconds([&] {
            rt.call1("conv2d_grad_input", {dy, w}, {{"padding", pad}, {"input_shape", input_dims}});
          }) * 1e6,
          median_seconds([&] {
            rt.call1("conv2d_grad_weight", {dy, x}, {{"padding", pad}, {"weight_shape", weight_dims}});
          }) * 1e6};
}

}  // namespace

void bench_resnet_convs() {
  RuntimeOptions direct_options;
  direct_options.direct_convolutions = true;
  Runtime fast, direct(direct_options);
  std::printf("ResNet-18 3x3 convolutions, batch 32, pad 1 (median us: default / direct kernels)\n");
  std::printf("  %-18s %22s %22s %22s\n", "layer", "forward", "input gradient", "weight gradient");
  const int64_t layers[][2] = {{64, 32}, {128, 16}, {256, 8}, {512, 4}};
  for (const auto& [channels, size] : layers) {
    const PassTimes a = time_passes(fast, channels, size), b = time_passes(direct, channels, size);
    char name[32];
    std::snprintf(name, sizeof name, "%lldx%lld, %lldx%lld", (long long)channels, (long long)channels,
                  (long long)size, (long long)size);
    std::printf("  %-18s %9.0f / %-9.0f   %9.0f / %-9.0f   %9.0f / %-9.0f\n", name, a.forward, b.forward,
                a.grad_input, b.grad_input, a.grad_weight, b.grad_weight);
  }
  std::printf("\n");
}

}  // namespace kiln::bench
