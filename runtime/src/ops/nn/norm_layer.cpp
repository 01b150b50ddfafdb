// layer_norm and its backward op: each row of the trailing normalized_shape
// dims is normalised by its own mean and biased variance, then scaled and
// shifted elementwise by weight and bias (both of normalized_shape). The
// backward recomputes each row's statistics from the input.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/kernels/cpu/dense_sum.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"
#include "norm_dnnl.hpp"
#include "norm_ops.hpp"

namespace kiln::nn {
namespace {

// The input seen as [rows, size], size = the product of normalized_shape.
struct RowLayout {
  int64_t rows = 0, size = 0;
  int64_t grain() const { return std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, size)); }
};

// Checks the input (at `at`) against normalized_shape, and the weight and
// bias after it (where given) against it too.
void check_layer_norm_inputs(const InferCall& c, size_t at) {
  check_floating(c, at);
  check_same_dtype(c);
  const Shape normalized = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "normalized_shape"), "normalized_shape");
  const Shape& s = c.inputs[at].shape();
  const int r = normalized.rank();
  bool trailing = r > 0 && r <= s.rank();
  for (int d = 0; trailing && d < r; ++d) trailing = s[s.rank() - r + d] == normalized[d];
  KILN_CHECK(trailing, Status::shape_mismatch, "op '", c.op.name, "': input of shape ", to_string(s),
             " does not end in normalized_shape ", to_string(normalized));
  for (size_t i = at + 1; i < c.inputs.size(); ++i) {
    const Tensor& t = c.inputs[i];
    KILN_CHECK(!t.defined() || t.shape() == normalized, Status::shape_mismatch, "op '", c.op.name, "': ",
               c.op.inputs[i].name, " has shape ", to_string(t.shape()), ", expected normalized_shape ",
               to_string(normalized));
  }
}

RowLayout row_layout(const OpDef& op, const Attrs& attrs, const Shape& input) {
  int64_t size = 1;
  for (int64_t d : op.attr_ints(attrs, "normalized_shape")) size *= d;
  return {size ? input.numel() / size : 0, size};
}

// Mean and 1/std of one row.
template <class T>
void row_statistics(const T* row, int64_t size, double eps, double& mean, double& invstd) {
  double var = 0;
  auto values = [&](auto&& fn) {
    for (int64_t k = 0; k < size; ++k) fn(double(row[k]));
  };
  mean_and_variance(size, values, mean, var);
  invstd = inverse_std(var, eps);
}

// ---- layer_norm -----------------------------------------------------------

void layer_norm_infer(InferCall& c) {
  check_layer_norm_inputs(c, 0);
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void layer_norm_kernel(const KernelCall& c) {
  const Tensor& input = c.inputs[0];
  const Tensor weight = optional_input(c.inputs, 1), bias = optional_input(c.inputs, 2);
  const double eps = c.op.attr_real(c.attrs, "eps");
  const RowLayout l = row_layout(c.op, c.attrs, input.shape());
  if constexpr (std::is_same_v<T, float>) {
    dnnl_layer_norm(c.runtime, input, l.rows, l.size, weight, bias, eps, c.outputs[0]);
    return;
  }
  const T* x = input.data<T>();
  const T* w = weight ? weight.data<T>() : nullptr;
  const T* b = bias ? bias.data<T>() : nullptr;
  T* y = c.outputs[0].data<T>();
  c.runtime.thread_pool().parallel_for(l.rows, l.grain(), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double mean, invstd;
      row_statistics(x + r * l.size, l.size, eps, mean, invstd);
      for (int64_t k = 0, i = r * l.size; k < l.size; ++k, ++i) {
        const double v = (double(x[i]) - mean) * invstd;
        y[i] = T(v * (w ? double(w[k]) : 1.0) + (b ? double(b[k]) : 0.0));
      }
    }
  });
}

std::vector<Tensor> layer_norm_backward(const BackwardCall& c) {
  const Tensor weight = optional_input(c.inputs, 1);
  const Tensor inputs[] = {c.grad_outputs[0], c.inputs[0], weight};
  std::vector<Tensor> g = c.runtime.call(c.runtime.op("layer_norm_backward"), inputs, c.attrs);
  std::vector<Tensor> grads(c.inputs.size());
  grads[0] = g[0];
  if (weight) grads[1] = g[1];
  if (optional_input(c.inputs, 2)) grads[2] = g[2];
  return grads;
}

// ---- layer_norm_backward --------------------------------------------------
// Inputs: grad_output, input, weight. Outputs: grad_input, grad_weight and
// grad_bias (both of normalized_shape).

void layer_norm_backward_infer(InferCall& c) {
  check_layer_norm_inputs(c, 1);
  const Shape& s = c.inputs[1].shape();
  KILN_CHECK(c.inputs[0].shape() == s, Status::shape_mismatch, "op '", c.op.name, "': grad_output has shape ",
             to_string(c.inputs[0].shape()), " but the input has shape ", to_string(s));
  const Shape normalized = shape_from_attr(c.op, c.op.attr_ints(c.attrs, "normalized_shape"), "normalized_shape");
  const DType t = c.inputs[1].dtype();
  c.outputs.push_back({s, t, c.device});
  c.outputs.push_back({normalized, t, c.device});
  c.outputs.push_back({normalized, t, c.device});
}

// Rows normalised by one task, whose weight and bias gradients are summed
// into partial sums of their own.
constexpr int64_t kRowsPerBlock = 32;

// One row: its input gradient, and its terms of the weight and bias
// gradients added to part_w and part_b (xhat and gw: scratch of `size`;
// no two of the written arrays overlap, which lets the loops run in
// vectors without run-time overlap checks). A is f32 for f32 (as PyTorch's
// CPU kernel), f64 for f64; the sums run in interleaved lanes.
template <class T, class A>
void layer_norm_backward_row(const T* g, const T* x, const T* w, int64_t size, A eps, T* __restrict grad_input,
                             A* __restrict part_w, A* __restrict part_b, A* __restrict xhat, A* __restrict gw) {
  const A n = A(size);
  const A mean = cpu::dense_sum<A>(0, size, [x](int64_t k) { return A(x[k]); }) / n;
  const A var = cpu::dense_sum<A>(0, size, [x, mean](int64_t k) { return (A(x[k]) - mean) * (A(x[k]) - mean); }) / n;
  const A invstd = A(1) / std::sqrt(var + eps);
  for (int64_t k = 0; k < size; ++k) {
    xhat[k] = (A(x[k]) - mean) * invstd;
    gw[k] = A(g[k]) * (w ? A(w[k]) : A(1));
    part_w[k] += A(g[k]) * xhat[k];
    part_b[k] += A(g[k]);
  }
  const A mean_gw = cpu::dense_sum<A>(0, size, [gw](int64_t k) { return gw[k]; }) / n;
  const A mean_gw_xhat = cpu::dense_sum<A>(0, size, [gw, xhat](int64_t k) { return gw[k] * xhat[k]; }) / n;
  for (int64_t k = 0; k < size; ++k) grad_input[k] = T(invstd * (gw[k] - mean_gw - xhat[k] * mean_gw_xhat));
}

// Blocks of rows run on the threads; the weight and bias gradients add the
// blocks' partial sums in block order, so they do not depend on the thread
// count.
template <class T>
void layer_norm_backward_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const T* g = c.inputs[0].data<T>();
  const T* x = c.inputs[1].data<T>();
  const Tensor weight = optional_input(c.inputs, 2);
  const T* w = weight ? weight.data<T>() : nullptr;
  const A eps = A(c.op.attr_real(c.attrs, "eps"));
  const RowLayout l = row_layout(c.op, c.attrs, c.inputs[1].shape());
  T* grad_input = c.outputs[0].data<T>();
  const int64_t blocks = (l.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<A> partial(size_t(2 * blocks * l.size), A(0));  // per block: weight terms, then bias terms
  ThreadPool& pool = c.runtime.thread_pool();
  pool.parallel_for(blocks, std::max<int64_t>(1, l.grain() / kRowsPerBlock), [&](int64_t begin, int64_t end) {
    std::vector<A> scratch(size_t(2 * l.size));
    for (int64_t b = begin; b < end; ++b) {
      A* part_w = partial.data() + 2 * b * l.size;
      for (int64_t r = b * kRowsPerBlock; r < std::min(l.rows, (b + 1) * kRowsPerBlock); ++r) {
        const int64_t row = r * l.size;
        layer_norm_backward_row(g + row, x + row, w, l.size, eps, grad_input + row, part_w, part_w + l.size,
                                scratch.data(), scratch.data() + l.size);
      }
    }
  });
  T* grad_weight = c.outputs[1].data<T>();
  T* grad_bias = c.outputs[2].data<T>();
  pool.parallel_for(l.size, std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, blocks)),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t k = begin; k < end; ++k) {
                        A sum_w = 0, sum_b = 0;
                        for (int64_t b = 0; b < blocks; ++b) {
                          sum_w += partial[size_t(2 * b * l.size + k)];
                          sum_b += partial[size_t((2 * b + 1) * l.size + k)];
                        }
                        grad_weight[k] = T(sum_w);
                        grad_bias[k] = T(sum_b);
                      }
                    });
}

}  // namespace

void register_layer_norm_ops(OpRegistry& r) {
  const std::vector<AttrSpec> attrs = {attr_required("normalized_shape", AttrType::ints), attr_real("eps", 1e-5)};
  {
    OpDef op;
    op.name = "layer_norm";
    op.inputs = {{"input"}, {"weight", true}, {"bias", true}};
    op.attrs = attrs;
    op.infer = layer_norm_infer;
    op.backward = layer_norm_backward;
    op.saves_outputs = false;
    op.precision = PrecisionCategory::f32;
    op.set_kernel(DeviceType::cpu, DType::f32, layer_norm_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, layer_norm_kernel<double>);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "layer_norm_backward";
    op.inputs = {{"grad_output"}, {"input"}, {"weight", true}};
    op.attrs = attrs;
    op.infer = layer_norm_backward_infer;
    op.dtype_input = 1;
    op.set_kernel(DeviceType::cpu, DType::f32, layer_norm_backward_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, layer_norm_backward_kernel<double>);
    r.add(std::move(op));
  }
}

}  // namespace kiln::nn
