#include "bench_ops.hpp"

#include <dnnl.hpp>
#include <cstdio>
#include <vector>

#include "bench_timer.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/ops/op_def.hpp"

namespace kiln::bench {
namespace {

// n x n @ n x n through oneDNN with no kiln in between: the ceiling for kiln's matmul.
double direct_dnnl_matmul_seconds(int64_t n) {
  using dnnl::memory;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::desc md({n, n}, memory::data_type::f32, memory::format_tag::ab);
  const dnnl::matmul prim(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), engine));
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n));
  memory ma(md, engine, a.data()), mb(md, engine, b.data()), mc(md, engine, c.data());
  return median_seconds([&] {
    prim.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    stream.wait();
  });
}

Tensor ones_like(Runtime& rt, const Tensor& t) { return rt.full(t.shape(), 1.0, t.dtype()); }

Tensor leaf(Runtime& rt, const Shape& shape, double value) {
  Tensor t = rt.full(shape, value);
  t.set_requires_grad(true);
  return t;
}

}  // namespace

void bench_matmul(Runtime& rt) {
  std::printf("matmul f32, n x n @ n x n      kiln us  kiln GFLOP/s   direct us  direct GFLOP/s  kiln/direct\n");
  const OpDef& matmul = rt.op("matmul");
  const Attrs attrs = matmul.default_attrs();
  for (int64_t n : {256, 512, 1024, 2048}) {
    const Tensor a = rt.full({n, n}, 0.5), b = rt.full({n, n}, 0.25);
    const double kiln_s = median_seconds([&] { rt.call1(matmul, {a, b}, attrs); });
    const double direct_s = direct_dnnl_matmul_seconds(n);
    const double flops = 2.0 * double(n) * double(n) * double(n);
    std::printf("  n = %-4lld                   %10.1f  %12.1f  %10.1f  %14.1f  %10.1f%%\n", (long long)n,
                kiln_s * 1e6, flops / kiln_s * 1e-9, direct_s * 1e6, flops / direct_s * 1e-9,
                100.0 * direct_s / kiln_s);
  }
  std::printf("\n");
}

void bench_conv2d(Runtime& rt) {
  std::printf("conv2d f32 (Fashion-MNIST CNN layers)             forward us  forward+backward us\n");
  struct Layer {
    const char* name;
    Shape input, weight;
    int64_t padding;
  };
  const Layer layers[] = {{"[64,1,28,28]  * 32x1x5x5,  pad 2", {64, 1, 28, 28}, {32, 1, 5, 5}, 2},
                          {"[64,32,14,14] * 64x32x5x5, pad 2", {64, 32, 14, 14}, {64, 32, 5, 5}, 2}};
  const OpDef& conv = rt.op("conv2d");
  for (const Layer& l : layers) {
    const Attrs attrs = conv.make_attrs({{"padding", std::vector<int64_t>{l.padding, l.padding}}});
    const Tensor x = leaf(rt, l.input, 0.5), w = leaf(rt, l.weight, 0.01), b = leaf(rt, {l.weight[0]}, 0.1);
    double forward_s = 0;
    {
      NoGradGuard no_grad(rt);
      forward_s = median_seconds([&] { rt.call1(conv, {x, w, b}, attrs); });
    }
    const Tensor grad = ones_like(rt, rt.call1(conv, {x, w, b}, attrs));
    const double train_s = median_seconds([&] { rt.backward(rt.call1(conv, {x, w, b}, attrs), grad); });
    std::printf("  %-46s %10.1f  %19.1f\n", l.name, forward_s * 1e6, train_s * 1e6);
  }
  std::printf("\n");
}

void bench_mlp_step(Runtime& rt) {
  const bool has_relu = rt.registry().find("relu") != nullptr;
  const bool has_cross_entropy = rt.registry().find("cross_entropy") != nullptr;
  std::printf("MLP 784-256-10, batch 64: linear%s, loss %s\n", has_relu ? " + relu" : " (no relu registered)",
              has_cross_entropy ? "cross_entropy" : "sum_to (cross_entropy not registered)");
  const OpDef& linear = rt.op("linear");
  const Tensor x = rt.full({64, 784}, 0.5);
  const Tensor target = rt.full({64}, 3.0, DType::i64);
  std::vector<Tensor> params{leaf(rt, {256, 784}, 0.01), leaf(rt, {256}, 0.0), leaf(rt, {10, 256}, 0.01),
                             leaf(rt, {10}, 0.0)};
  auto forward = [&] {
    Tensor h = rt.call1(linear, {x, params[0], params[1]});
    if (has_relu) h = rt.call1("relu", {h});
    const Tensor logits = rt.call1(linear, {h, params[2], params[3]});
    if (has_cross_entropy) return rt.call1("cross_entropy", {logits, target});
    return rt.call1("sum_to", {logits}, {{"shape", std::vector<int64_t>{}}});
  };
  double forward_s = 0;
  {
    NoGradGuard no_grad(rt);
    forward_s = median_seconds([&] { forward(); });
  }
  const double step_s = median_seconds([&] {
    for (Tensor& p : params) p.set_grad(Tensor());
    rt.backward(forward());
  });
  std::printf("  forward us %10.1f    forward+backward us %10.1f\n\n", forward_s * 1e6, step_s * 1e6);
}

void bench_dispatch(Runtime& rt) {
  const OpDef* add = rt.registry().find("add");
  if (!add) {
    std::printf("dispatch: add of two 1-element f32 tensors, no grad    n/a (op 'add' not registered)\n");
    return;
  }
  const Tensor a = rt.full({1}, 1.0), b = rt.full({1}, 2.0);
  const Attrs attrs = add->default_attrs();
  constexpr int kCalls = 10000;
  NoGradGuard no_grad(rt);
  const double batch_s = median_seconds([&] {
    for (int i = 0; i < kCalls; ++i) rt.call1(*add, {a, b}, attrs);
  });
  std::printf("dispatch: add of two 1-element f32 tensors, no grad    %8.0f ns per call\n", batch_s / kCalls * 1e9);
}

}  // namespace kiln::bench
