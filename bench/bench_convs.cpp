#include "bench_convs.hpp"

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

PassTimes time_passes(Runtime& rt, const Shape& input, const Shape& weight, const Shape& output, int64_t padding) {
  const Tensor x = randn(rt, input), w = randn(rt, weight), dy = randn(rt, output);
  const std::vector<int64_t> pad{padding, padding}, input_dims(input.begin(), input.end()),
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

void bench_convs() {
  RuntimeOptions direct_options;
  direct_options.direct_convolutions = true;
  Runtime fast, direct(direct_options);
  std::printf("ResNet-18's 3x3 convolutions (batch 32, pad 1) and the Fashion-MNIST network's second 5x5 one\n"
              "(batch 64, pad 2), median us: default / direct kernels\n");
  std::printf("  %-22s %22s %22s %22s\n", "layer", "forward", "input gradient", "weight gradient");
  struct Layer {
    const char* name;
    Shape input, weight, output;
    int64_t padding;
  };
  const Layer layers[] = {
      {"64x64, 32x32", {32, 64, 32, 32}, {64, 64, 3, 3}, {32, 64, 32, 32}, 1},
      {"128x128, 16x16", {32, 128, 16, 16}, {128, 128, 3, 3}, {32, 128, 16, 16}, 1},
      {"256x256, 8x8", {32, 256, 8, 8}, {256, 256, 3, 3}, {32, 256, 8, 8}, 1},
      {"512x512, 4x4", {32, 512, 4, 4}, {512, 512, 3, 3}, {32, 512, 4, 4}, 1},
      {"32x64 5x5, 14x14", {64, 32, 14, 14}, {64, 32, 5, 5}, {64, 64, 14, 14}, 2},
  };
  for (const Layer& l : layers) {
    const PassTimes a = time_passes(fast, l.input, l.weight, l.output, l.padding),
                    b = time_passes(direct, l.input, l.weight, l.output, l.padding);
    std::printf("  %-22s %9.0f / %-9.0f   %9.0f / %-9.0f   %9.0f / %-9.0f\n", l.name, a.forward, b.forward,
                a.grad_input, b.grad_input, a.grad_weight, b.grad_weight);
  }
  std::printf("\n");
}

}  // namespace kiln::bench
