// Kernels on cuda:0 checked against the CPU: fills, strided copies, and
// gradients flowing back across devices. Skipped with the reason on
// machines without a GPU.
#include <catch2/catch.hpp>

#include "device_test_support.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

const Device kGpu = Device::cuda(0);

Tensor transpose(Runtime& rt, const Tensor& t, int64_t a, int64_t b) {
  return rt.call1("transpose", {t}, {{"dim0", a}, {"dim1", b}});
}

}  // namespace

TEST_CASE("full on cuda:0 matches the CPU bit for bit for every dtype", "[gpu][ops]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : kAllDTypes) {
    for (double value : {0.0, 2.5, 7.0}) {
      INFO(dtype_name(t) << " filled with " << value);
      Tensor gpu = rt.full({5, 7}, value, t, kGpu);
      CHECK(gpu.device() == kGpu);
      CHECK(host_bytes(rt, gpu) == host_bytes(rt, rt.full({5, 7}, value, t)));
    }
  }
  // More elements than one launch covers: the kernel's grid-stride loop.
  const Shape big{int64_t(1) << 25};
  CHECK(host_bytes(rt, rt.full(big, 3.0, DType::u8, kGpu)) == std::vector<uint8_t>(size_t(big.numel()), 3));
}

TEST_CASE("copy on cuda:0 gathers strided views", "[gpu][ops]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::u8}) {
    INFO(dtype_name(t));
    std::vector<double> vals(24);
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = double(i);
    Tensor host = make_tensor(rt, {2, 3, 4}, vals, t);
    Tensor gpu = to_device(rt, host, kGpu);
    const auto same_on_both = [&](auto&& view) {
      Tensor on_gpu = rt.contiguous(view(gpu));
      CHECK(on_gpu.device() == kGpu);
      CHECK(on_gpu.is_contiguous());
      CHECK(host_bytes(rt, on_gpu) == host_bytes(rt, rt.contiguous(view(host))));
    };
    same_on_both([&](const Tensor& x) { return transpose(rt, x, 0, 2); });
    same_on_both([&](const Tensor& x) {
      return rt.call1("slice", {x}, {{"dim", 2}, {"start", 1}, {"end", 4}, {"step", 2}});
    });
    same_on_both([&](const Tensor& x) {
      Tensor column = rt.call1("slice", {x}, {{"dim", 2}, {"start", 0}, {"end", 1}});
      return rt.call1("expand", {column}, {{"shape", std::vector<int64_t>{2, 3, 5}}});
    });
    same_on_both([&](const Tensor& x) { return rt.call1("copy", {x}); });  // dense: one memcpy
  }
}

TEST_CASE("to round trips through cuda:0 and the gradient returns to the CPU leaf", "[gpu][ops][grad]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  Tensor x = make_tensor(rt, {2, 3}, {1, 2, 3, 4, 5, 6});
  x.set_requires_grad(true);
  // The transposed view makes the backward gather a strided gradient on the GPU.
  Tensor y = to_device(rt, transpose(rt, to_device(rt, x, kGpu), 0, 1), Device::cpu());
  CHECK(y.device() == Device::cpu());
  require_close(rt, y, {1, 4, 2, 5, 3, 6});
  rt.backward(y, make_tensor(rt, {3, 2}, {10, 20, 30, 40, 50, 60}));
  REQUIRE(x.grad().defined());
  CHECK(x.grad().device() == Device::cpu());
  require_close(rt, x.grad(), {10, 30, 50, 20, 40, 60});

  gradcheck_fn(
      rt, [&](const std::vector<Tensor>& in) { return to_device(rt, to_device(rt, in[0], kGpu), Device::cpu()); },
      {random_tensor(rt, {3, 4})});
}
