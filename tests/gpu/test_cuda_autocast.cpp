// Autocast on cuda:0 against the CPU: a small network (conv2d, relu,
// linear) run under f16 and under bf16 autocast from f32 leaves gives the
// CPU's outputs and f32 gradients within 16-bit rounding. On the CPU, f16
// products run through f32 (rounded once) and bf16 products on oneDNN;
// where the CPU has no bf16 support, the bf16 half is skipped with its
// reason.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"
#include "kiln/error.hpp"
#include "kiln/ops/autocast.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// Whether the CPU runs `low` products; warns why not.
bool cpu_runs(Runtime& rt, DType low) {
  try {
    rt.call1("matmul", {rt.full({2, 2}, 1.0, low), rt.full({2, 2}, 1.0, low)});
    return true;
  } catch (const Error& e) {
    WARN("skipped: the CPU runs no " << dtype_name(low) << " products: " << e.what());
    return false;
  }
}

}  // namespace

TEST_CASE("autocast on cuda:0 matches the CPU in f16 and bf16, with f32 gradients", "[gpu][autocast]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<Tensor> inputs = {
      random_tensor(rt, {2, 3, 6, 6}, DType::f32, -1, 1, 1), random_tensor(rt, {4, 3, 3, 3}, DType::f32, -0.5, 0.5, 2),
      random_tensor(rt, {4}, DType::f32, -1, 1, 3), random_tensor(rt, {5, 4 * 6 * 6}, DType::f32, -0.1, 0.1, 4)};
  for (DType low : {DType::f16, DType::bf16}) {
    INFO("autocast " << dtype_name(low));
    if (!cpu_runs(rt, low)) continue;
    const TensorFn net = [&rt, low](const std::vector<Tensor>& in) {
      const AutocastGuard scope(rt, low);
      const Tensor h = rt.call1("conv2d", {in[0], in[1], in[2]}, {{"padding", std::vector<int64_t>{1, 1}}});
      const Tensor flat = rt.call1("reshape", {rt.call1("relu", {h})}, {{"shape", std::vector<int64_t>{2, -1}}});
      const Tensor out = rt.call1("linear", {flat, in[3]});
      CHECK(out.dtype() == low);
      return out;
    };
    require_grads_match_cpu(rt, net, inputs, 3e-2);
  }
}
