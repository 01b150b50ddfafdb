// conv1d, conv_transpose2d (on conv2d's cuDNN kernels) and
// scaled_dot_product_attention (composed of the GPU's ops) on cuda:0
// against the CPU, forward and backward, in every floating dtype.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Dims = std::vector<int64_t>;

const DType kGpuDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

OpsFn op_with(const char* name, NamedAttrs attrs) {
  std::vector<std::pair<std::string, AttrValue>> kept;
  for (const auto& [key, value] : attrs) kept.emplace_back(std::string(key), value);
  return [name, kept](Runtime& rt, const std::vector<Tensor>& in) {
    const OpDef& op = rt.op(name);
    std::vector<std::pair<std::string_view, AttrValue>> given(kept.begin(), kept.end());
    return rt.call1(op, in, op.make_attrs(std::span<const std::pair<std::string_view, AttrValue>>(given)));
  };
}

}  // namespace

TEST_CASE("conv1d on cuda:0 matches the CPU forward and backward", "[gpu][conv]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes) {
    check_against_cpu(rt, op_with("conv1d", {{"stride", Dims{2}}, {"padding", Dims{1}}}), {{2, 3, 11}, {4, 3, 3}, {4}},
                      dtype, tolerance_for(dtype));
    check_against_cpu(rt, op_with("conv1d", {{"dilation", Dims{2}}, {"groups", 2}}), {{2, 4, 9}, {6, 2, 3}}, dtype,
                      tolerance_for(dtype));
  }
}

TEST_CASE("conv_transpose2d on cuda:0 matches the CPU forward and backward", "[gpu][conv]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes) {
    check_against_cpu(rt,
                      op_with("conv_transpose2d",
                              {{"stride", Dims{2, 2}}, {"padding", Dims{1, 1}}, {"output_padding", Dims{1, 1}}}),
                      {{2, 3, 5, 4}, {3, 4, 3, 3}, {4}}, dtype, tolerance_for(dtype));
    check_against_cpu(rt, op_with("conv_transpose2d", {{"groups", 2}, {"dilation", Dims{2, 1}}}),
                      {{1, 4, 4, 4}, {4, 3, 2, 3}}, dtype, tolerance_for(dtype));
    // output_padding at the stride, below the dilation.
    check_against_cpu(rt,
                      op_with("conv_transpose2d",
                              {{"padding", Dims{1, 0}}, {"output_padding", Dims{1, 1}}, {"dilation", Dims{2, 2}}}),
                      {{2, 3, 4, 5}, {3, 2, 3, 3}, {2}}, dtype, tolerance_for(dtype));
  }
}

TEST_CASE("scaled_dot_product_attention on cuda:0 matches the CPU forward and backward", "[gpu][attention]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kGpuDTypes) {
    check_against_cpu(rt, op_with("scaled_dot_product_attention", {}), {{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}},
                      dtype, tolerance_for(dtype));
    check_against_cpu(rt, op_with("scaled_dot_product_attention", {{"is_causal", true}, {"scale", 0.3}}),
                      {{2, 6, 4}, {2, 6, 4}, {2, 6, 4}}, dtype, tolerance_for(dtype));
    // An explicit scale 0 is used as it is: uniform weights.
    check_against_cpu(rt, op_with("scaled_dot_product_attention", {{"scale", 0.0}}),
                      {{2, 4, 3}, {2, 5, 3}, {2, 5, 2}}, dtype, tolerance_for(dtype));
    // Dropout: one seed draws the same mask on both devices (the same
    // Philox words), with a floating mask and its gradient.
    const OpsFn base = op_with("scaled_dot_product_attention", {{"dropout_p", 0.3}});
    const OpsFn seeded = [base](Runtime& r, const std::vector<Tensor>& in) {
      r.manual_seed(17);
      return base(r, in);
    };
    check_against_cpu(rt, seeded, {{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 4}, {3, 1, 7}}, dtype, tolerance_for(dtype));
    // A floating mask, broadcast over the batch, and its gradient.
    check_against_cpu(rt, op_with("scaled_dot_product_attention", {}), {{2, 4, 3}, {2, 5, 3}, {2, 5, 2}, {4, 5}},
                      dtype, tolerance_for(dtype));
  }
}
