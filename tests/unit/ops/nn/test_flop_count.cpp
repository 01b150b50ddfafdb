// The FLOPs ops declare (OpDef::flops), counted per thread: products count
// 2 * outputs * inner size, convolutions 2 * outputs * weights per output
// channel, forward and backward alike; ops without a count add nothing, and
// other threads' calls are not counted here.
#include <catch2/catch.hpp>

#include <thread>

#include "kiln/ops/flop_count.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

// FLOPs counted on this thread while `work` runs.
template <class Work>
double flops_of(Work&& work) {
  const double before = flops_counted_on_this_thread();
  work();
  return flops_counted_on_this_thread() - before;
}

}  // namespace

TEST_CASE("matmul, linear and conv2d count their arithmetic", "[flops]") {
  Runtime rt;
  const Tensor a = random_tensor(rt, {2, 5, 3}, DType::f32), b = random_tensor(rt, {3, 4}, DType::f32);
  CHECK(flops_of([&] { rt.call1("matmul", {a, b}); }) == 2.0 * (2 * 5 * 4) * 3);
  const Tensor x = random_tensor(rt, {6, 8}, DType::f32), w = random_tensor(rt, {3, 8}, DType::f32);
  CHECK(flops_of([&] { rt.call1("linear", {x, w, Tensor()}); }) == 2.0 * (6 * 3) * 8);
  // 2 images, 3 -> 4 channels, 3x3 kernel, 7x6 -> 5x4 outputs.
  const Tensor image = random_tensor(rt, {2, 3, 7, 6}, DType::f32), kernel = random_tensor(rt, {4, 3, 3, 3}, DType::f32);
  CHECK(flops_of([&] { rt.call1("conv2d", {image, kernel, Tensor()}); }) == 2.0 * (2 * 4 * 5 * 4) * (3 * 3 * 3));
  // Element-wise ops declare nothing.
  CHECK(flops_of([&] { rt.call1("add", {x, x}); }) == 0.0);
}

TEST_CASE("backward counts its products too", "[flops]") {
  Runtime rt;
  Tensor image = random_tensor(rt, {2, 3, 7, 6}, DType::f32), kernel = random_tensor(rt, {4, 3, 3, 3}, DType::f32);
  image.set_requires_grad(true);
  kernel.set_requires_grad(true);
  const double forward = 2.0 * (2 * 4 * 5 * 4) * (3 * 3 * 3);
  Tensor loss;
  CHECK(flops_of([&] { loss = rt.call1("sum", {rt.call1("conv2d", {image, kernel, Tensor()})}); }) == forward);
  // The gradients of the input and of the weight: each as much as forward.
  CHECK(flops_of([&] { rt.backward(loss); }) == 2.0 * forward);
}

TEST_CASE("other threads' calls are not counted on this one", "[flops]") {
  Runtime rt;
  const Tensor a = random_tensor(rt, {4, 4}, DType::f32);
  CHECK(flops_of([&] { std::thread([&] { rt.call1("matmul", {a, a}); }).join(); }) == 0.0);
}

TEST_CASE("the product ops built on others count their arithmetic once", "[flops]") {
  Runtime rt;
  const Tensor b1 = random_tensor(rt, {3, 2, 4}, DType::f32), b2 = random_tensor(rt, {3, 4, 5}, DType::f32);
  CHECK(flops_of([&] { rt.call1("bmm", {b1, b2}); }) == 2.0 * (3 * 2 * 5) * 4);
  // 2 signals, 3 -> 4 channels, kernel 3: 8 -> 6 outputs.
  const Tensor signal = random_tensor(rt, {2, 3, 8}, DType::f32), kernel = random_tensor(rt, {4, 3, 3}, DType::f32);
  CHECK(flops_of([&] { rt.call1("conv1d", {signal, kernel, Tensor()}); }) == 2.0 * (2 * 4 * 6) * (3 * 3));
  // Transposed: each of the 2 x 2 x 3 x 3 input elements meets 3 x 2 x 2 weights.
  const Tensor image = random_tensor(rt, {2, 2, 3, 3}, DType::f32), weights = random_tensor(rt, {2, 3, 2, 2}, DType::f32);
  CHECK(flops_of([&] { rt.call1("conv_transpose2d", {image, weights, Tensor()}); }) == 2.0 * (2 * 2 * 3 * 3) * (3 * 2 * 2));
  // Attention, fused (f32) and composed of matmuls (bf16) alike: q k^T and the weighted sum of v.
  for (DType dtype : {DType::f32, DType::bf16}) {
    if (dtype == DType::bf16 && !cpu_runs_bf16(rt)) continue;
    const Tensor q = random_tensor(rt, {2, 3, 4}, dtype), k = random_tensor(rt, {2, 5, 4}, dtype),
                 v = random_tensor(rt, {2, 5, 6}, dtype);
    CHECK(flops_of([&] { rt.call1("scaled_dot_product_attention", {q, k, v, Tensor()}); }) ==
          2.0 * (2 * 3 * 5) * 4 + 2.0 * (2 * 3 * 5) * 6);
  }
}
