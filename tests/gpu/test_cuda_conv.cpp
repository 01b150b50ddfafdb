// conv2d and its backward ops on cuda:0 (cuDNN) against the CPU kernels:
// strides, padding, dilation, grouped and depthwise weights, with and
// without bias, every floating dtype, TF32 only when allowed; empty batches
// and sizes cuDNN cannot address.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const DType kGpuDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

struct ConvCase {
  Shape input, weight;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
  bool bias;
};

OpsFn conv(const ConvCase& k) {
  return [k](Runtime& rt, const std::vector<Tensor>& in) {
    const OpDef& op = rt.op("conv2d");
    const Attrs attrs = op.make_attrs(
        {{"stride", k.stride}, {"padding", k.padding}, {"dilation", k.dilation}, {"groups", k.groups}});
    if (k.bias) return rt.call1(op, {in[0], in[1], in[2]}, attrs);
    return rt.call1(op, {in[0], in[1]}, attrs);
  };
}

std::vector<Shape> shapes_of(const ConvCase& k) {
  std::vector<Shape> shapes = {k.input, k.weight};
  if (k.bias) shapes.push_back(Shape{k.weight[0]});
  return shapes;
}

}  // namespace

TEST_CASE("conv2d on cuda:0 matches the CPU forward and backward", "[gpu][conv]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<ConvCase> cases = {
      {{2, 3, 9, 9}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1, true},
      {{2, 3, 9, 9}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, false},
      {{1, 4, 12, 10}, {6, 4, 3, 5}, {2, 3}, {1, 2}, {1, 1}, 1, true},  // uneven stride and padding
      {{2, 2, 11, 11}, {3, 2, 3, 3}, {1, 1}, {2, 2}, {2, 2}, 1, true},  // dilated
      {{2, 6, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, true},    // two groups
      {{2, 5, 7, 7}, {5, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 5, true},    // depthwise
      {{2, 4, 7, 7}, {8, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 4, false},   // depthwise, two per channel
      {{3, 8, 5, 5}, {16, 8, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},   // pointwise
  };
  for (DType dtype : kGpuDTypes)
    for (const ConvCase& k : cases) {
      INFO("input " << to_string(k.input) << " weight " << to_string(k.weight) << " groups " << k.groups);
      check_against_cpu(rt, conv(k), shapes_of(k), dtype, tolerance_for(dtype));
    }
}

TEST_CASE("conv2d on cuda:0 keeps full f32 precision unless TF32 is allowed", "[gpu][conv][tf32]") {
  // Long sums (64 channels x 3 x 3) so TF32's rounding would show.
  const ConvCase k{{4, 64, 16, 16}, {32, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true};
  {
    Runtime rt;
    if (skip_without_gpu(rt)) return;
    check_against_cpu(rt, conv(k), shapes_of(k), DType::f32, tolerance_for(DType::f32));
  }
  RuntimeOptions options;
  options.allow_tf32 = true;
  Runtime rt(options);
  check_against_cpu(rt, conv(k), shapes_of(k), DType::f32, tolerance_for(DType::f32, true));
}

TEST_CASE("conv2d on cuda:0 with an empty batch gives empty outputs and zero weight gradients", "[gpu][conv]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const Device gpu = Device::cuda(0);
  const Tensor x = to_device(rt, rt.empty({0, 3, 5, 5}), gpu);
  Tensor w = to_device(rt, random_tensor(rt, {2, 3, 3, 3}, DType::f32), gpu);
  w.set_requires_grad(true);
  const Tensor y = rt.call1("conv2d", {x, w});
  REQUIRE(y.shape() == Shape{0, 2, 3, 3});
  rt.backward(y, to_device(rt, rt.empty({0, 2, 3, 3}), gpu));
  REQUIRE(w.grad().defined());
  CHECK(values(rt, to_device(rt, w.grad(), Device::cpu())) == std::vector<double>(54, 0.0));
}

TEST_CASE("conv2d on cuda:0 refuses sizes past cuDNN's int range with a message", "[gpu][conv]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  // 2^31 columns of f16: 4 GiB, one more than cuDNN's int can count.
  const int64_t wide = int64_t(1) << 31;
  const Tensor x = rt.full({1, 1, 1, wide}, 1.0, DType::f16, Device::cuda(0));
  const Tensor w = rt.full({1, 1, 1, 1}, 1.0, DType::f16, Device::cuda(0));
  require_error([&] { rt.call1("conv2d", {x, w}); }, Status::unsupported,
                {"a width is 2147483648", "more than cuDNN can address"});
}
