// The parameter lists kiln_optim_bench steps over: ResNet-18's 62 tensors
// (11.7M values: convolutions without bias, batch-norm scale and shift, the
// 1000-class head) and the four tensors of the 784-256-10 Fashion-MNIST MLP.
// bench/torch_optimizer_step.py builds the same lists.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::bench {

using ParamShapes = std::vector<std::vector<int64_t>>;

struct ParamList {
  const char* name;
  ParamShapes shapes;
};

inline ParamShapes resnet18_shapes() {
  ParamShapes s;
  auto conv_bn = [&](int64_t out, int64_t in, int64_t k) {
    s.push_back({out, in, k, k});
    s.push_back({out});
    s.push_back({out});
  };
  conv_bn(64, 3, 7);
  int64_t in = 64;
  for (int64_t width : {64, 128, 256, 512}) {
    for (int block = 0; block < 2; ++block) {
      const int64_t block_in = block == 0 ? in : width;
      conv_bn(width, block_in, 3);
      conv_bn(width, width, 3);
      if (block_in != width) conv_bn(width, block_in, 1);  // the downsampling shortcut
    }
    in = width;
  }
  s.push_back({1000, 512});
  s.push_back({1000});
  return s;
}

inline std::vector<ParamList> param_lists() {
  return {{"ResNet-18", resnet18_shapes()}, {"MLP 784-256-10", {{256, 784}, {256}, {10, 256}, {10}}}};
}

inline int64_t value_count(const ParamShapes& shapes) {
  int64_t n = 0;
  for (const std::vector<int64_t>& shape : shapes) {
    int64_t v = 1;
    for (int64_t d : shape) v *= d;
    n += v;
  }
  return n;
}

}  // namespace kiln::bench
