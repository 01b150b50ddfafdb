#include "bench_transformer_pieces.hpp"

#include <cstdio>
#include <functional>
#include <vector>

#include "bench_timer.hpp"

namespace kiln::bench {
namespace {

void row(const char* name, const Shape& shape, const std::function<void()>& fn) {
  const double s = median_seconds(fn);
  const double gb = double(shape.numel()) * 4.0 / 1e9;
  std::printf("  %-34s %-14s %9.1f us  %6.1f GB/s of input\n", name, to_string(shape).c_str(), s * 1e6, gb / s);
}

Tensor randn(Runtime& rt, const Shape& shape) {
  std::vector<int64_t> dims;
  for (int d = 0; d < shape.rank(); ++d) dims.push_back(shape[d]);
  return rt.call1("randn", {}, {{"shape", dims}});
}

}  // namespace

void bench_transformer_pieces(Runtime& rt) {
  std::printf("transformer and LSTM pieces f32 (median us per call)\n");
  const Shape tokens{2048, 128}, hidden{2048, 512}, scores{32, 4, 64, 64};
  const Tensor x = randn(rt, tokens), g = randn(rt, tokens), w = randn(rt, {128}), b = randn(rt, {128});
  const Tensor h = randn(rt, hidden), gh = randn(rt, hidden);
  const Tensor s = randn(rt, scores), gs = randn(rt, scores);
  const NamedAttrs norm = {{"normalized_shape", std::vector<int64_t>{128}}};
  row("layer_norm", tokens, [&] { rt.call1("layer_norm", {x, w, b}, norm); });
  row("layer_norm_backward", tokens, [&] { rt.call("layer_norm_backward", {g, x, w}, norm); });
  row("gelu", hidden, [&] { rt.call1("gelu", {h}); });
  row("gelu_backward", hidden, [&] { rt.call1("gelu_backward", {gh, h}); });
  const Tensor p = rt.call1("softmax", {s}, {{"dim", int64_t(-1)}});
  row("softmax (last dim)", scores, [&] { rt.call1("softmax", {s}, {{"dim", int64_t(-1)}}); });
  row("softmax_backward", scores, [&] { rt.call1("softmax_backward", {gs, p}, {{"dim", int64_t(-1)}}); });
  const Shape heads{32, 4, 64, 32};
  const Tensor q = randn(rt, heads), k = randn(rt, heads), v = randn(rt, heads), go = randn(rt, heads);
  const NamedAttrs causal = {{"is_causal", true}};
  const Tensor out = rt.call("scaled_dot_product_attention", {q, k, v}, causal)[0];
  row("scaled_dot_product_attention causal", heads,
      [&] { rt.call("scaled_dot_product_attention", {q, k, v}, causal); });
  row("  its backward", heads, [&] {
    rt.call("scaled_dot_product_attention_backward", {go, q, k, v, out, Tensor(), Tensor()}, causal);
  });
  // The weight gradients of the 128 -> 512 and 512 -> 128 layers: kiln's
  // kernel takes grad^T as linear's backward passes it (a transposed view),
  // oneDNN the same product with grad^T made contiguous first.
  const NamedAttrs swap = {{"dim0", int64_t(0)}, {"dim1", int64_t(1)}};
  const Tensor g_t = rt.call1("transpose", {g}, swap), gh_t = rt.call1("transpose", {gh}, swap);
  const Tensor g_dense = rt.contiguous(g_t), gh_dense = rt.contiguous(gh_t);
  row("grad^T @ input [128, 512], kiln", tokens, [&] { rt.call1("matmul", {g_t, h}); });
  row("  oneDNN", tokens, [&] { rt.call1("matmul", {g_dense, h}); });
  row("grad^T @ input [512, 128], kiln", hidden, [&] { rt.call1("matmul", {gh_t, x}); });
  row("  oneDNN", hidden, [&] { rt.call1("matmul", {gh_dense, x}); });
  // The LSTM model's recurrence: 64 steps of 32 rows, H = 64; the backward
  // timed through autograd (with the forward and a sum of products).
  const Shape gates{64, 32, 256}, state{32, 64};
  const Tensor x_proj = randn(rt, gates), h0 = randn(rt, state), c0 = randn(rt, state), b_hh = randn(rt, {256});
  const Tensor w_hh = rt.call1("mul_scalar", {randn(rt, {256, 64})}, {{"value", 0.125}});
  const Tensor grad_out = randn(rt, {64, 32, 64});
  row("lstm_recurrence H 64", gates, [&] { rt.call("lstm_recurrence", {x_proj, h0, c0, w_hh, b_hh}); });
  Tensor x_grad = x_proj.detach(), w_grad = w_hh.detach();
  x_grad.set_requires_grad(true);
  w_grad.set_requires_grad(true);
  row("  with its backward", gates, [&] {
    const Tensor out = rt.call("lstm_recurrence", {x_grad, h0, c0, w_grad, b_hh})[0];
    rt.backward(rt.call1("sum", {rt.call1("mul", {out, grad_out})}));
  });
  std::printf("\n");
}

}  // namespace kiln::bench
