// max_pool2d, avg_pool2d and adaptive_avg_pool2d with their backward ops on
// cuda:0 against the CPU kernels: strides, padding, dilation, ceil_mode
// windows hanging past the input, both average divisors, adaptive bins that
// overlap or leave gaps, every floating dtype.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const DType kGpuDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

struct PoolCase {
  Shape input;
  std::vector<int64_t> kernel, stride, padding;
  bool ceil_mode;
};

OpsFn max_pool(const PoolCase& k, std::vector<int64_t> dilation) {
  return [=](Runtime& rt, const std::vector<Tensor>& in) {
    return rt.call1("max_pool2d", {in[0]},
                    {{"kernel_size", k.kernel},
                     {"stride", k.stride},
                     {"padding", k.padding},
                     {"dilation", dilation},
                     {"ceil_mode", k.ceil_mode}});
  };
}

OpsFn avg_pool(const PoolCase& k, bool count_include_pad) {
  return [=](Runtime& rt, const std::vector<Tensor>& in) {
    return rt.call1("avg_pool2d", {in[0]},
                    {{"kernel_size", k.kernel},
                     {"stride", k.stride},
                     {"padding", k.padding},
                     {"ceil_mode", k.ceil_mode},
                     {"count_include_pad", count_include_pad}});
  };
}

const std::vector<PoolCase> kCases = {
    {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false},
    {{2, 3, 9, 7}, {3, 3}, {2, 2}, {1, 1}, false},  // overlapping windows
    {{1, 2, 10, 9}, {3, 2}, {2, 3}, {1, 1}, true},  // ceil_mode: last windows hang past the input
    {{3, 2, 5, 6}, {2, 3}, {1, 1}, {1, 0}, false},  // stride 1: every element in several windows
};

}  // namespace

TEST_CASE("max_pool2d on cuda:0 matches the CPU forward and backward", "[gpu][pool]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes) {
    for (const PoolCase& k : kCases) {
      INFO(to_string(k.input) << " kernel " << k.kernel[0] << "x" << k.kernel[1] << (k.ceil_mode ? " ceil" : ""));
      check_against_cpu(rt, max_pool(k, {1, 1}), {k.input}, dtype, tolerance_for(dtype));
    }
    const PoolCase dilated{{2, 2, 11, 12}, {3, 3}, {2, 1}, {1, 1}, true};
    check_against_cpu(rt, max_pool(dilated, {2, 3}), {dilated.input}, dtype, tolerance_for(dtype));
  }
}

TEST_CASE("avg_pool2d on cuda:0 matches the CPU forward and backward", "[gpu][pool]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes)
    for (const PoolCase& k : kCases)
      for (bool include_pad : {true, false}) {
        INFO(to_string(k.input) << " kernel " << k.kernel[0] << "x" << k.kernel[1] << (k.ceil_mode ? " ceil" : "")
                                << (include_pad ? " counting padding" : ""));
        check_against_cpu(rt, avg_pool(k, include_pad), {k.input}, dtype, tolerance_for(dtype));
      }
}

TEST_CASE("adaptive_avg_pool2d on cuda:0 matches the CPU forward and backward", "[gpu][pool]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  // Bins that overlap (7 -> 3), tile exactly (8 -> 4), outnumber the input
  // (3 -> 5) and reduce to one value (6 -> 1).
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 7, 7}, {3, 3}}, {{2, 2, 8, 6}, {4, 2}}, {{1, 2, 3, 4}, {5, 6}}, {{3, 4, 6, 5}, {1, 1}}};
  for (DType dtype : kGpuDTypes)
    for (const auto& [input, size] : cases) {
      INFO(to_string(input) << " to " << size[0] << "x" << size[1]);
      const OpsFn adaptive = [size = size](Runtime& r, const std::vector<Tensor>& in) {
        return r.call1("adaptive_avg_pool2d", {in[0]}, {{"output_size", size}});
      };
      check_against_cpu(rt, adaptive, {input}, dtype, tolerance_for(dtype));
    }
}
