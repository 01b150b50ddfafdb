// group_norm and its backward op, as torch.nn.functional.group_norm: the C
// channels of an [N, C, ...] input form num_groups groups of consecutive
// channels; each (sample, group) is normalised by its own mean and biased
// variance, then every channel is scaled by weight[c] and shifted by
// bias[c]. The backward recomputes each row's statistics from the input.
// Plain C++ on the runtime's threads: the oneDNN kiln builds against (2.6)
// has no group normalisation primitive.
#include <algorithm>

#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"
#include "norm_group.hpp"
#include "norm_ops.hpp"

namespace kiln::nn {
namespace {

// The input (at `at`) against num_groups, and the weight and bias after it
// (where given) against its channels.
GroupLayout check_group_norm_inputs(const InferCall& c, size_t at) {
  check_floating(c, at);
  check_same_dtype(c);
  const Shape& s = c.inputs[at].shape();
  const GroupLayout l = group_layout(c.op, c.attrs, s);
  for (size_t i = at + 1; i < c.inputs.size(); ++i) {
    const Tensor& t = c.inputs[i];
    KILN_CHECK(!t.defined() || t.shape() == Shape{l.channels}, Status::shape_mismatch, "op '", c.op.name, "': ",
               c.op.inputs[i].name, " has shape ", to_string(t.shape()), " but the input of shape ", to_string(s),
               " has ", l.channels, " channels; expected [", l.channels, "]");
  }
  return l;
}

int64_t row_grain(const GroupLayout& l) {
  return std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, l.row_size()));
}

// Mean and 1/std of row r.
template <class T>
void row_statistics(const GroupLayout& l, const T* x, int64_t r, double eps, double& mean, double& invstd) {
  const T* row = x + r * l.row_size();
  double var = 0;
  auto values = [&](auto&& fn) {
    for (int64_t k = 0; k < l.row_size(); ++k) fn(double(row[k]));
  };
  mean_and_variance(l.row_size(), values, mean, var);
  invstd = inverse_std(var, eps);
}

// ---- group_norm -----------------------------------------------------------

void group_norm_infer(InferCall& c) {
  check_group_norm_inputs(c, 0);
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void group_norm_kernel(const KernelCall& c) {
  const Tensor weight = optional_input(c.inputs, 1), bias = optional_input(c.inputs, 2);
  const GroupLayout l = group_layout(c.op, c.attrs, c.inputs[0].shape());
  const double eps = c.op.attr_real(c.attrs, "eps");
  const T* x = c.inputs[0].data<T>();
  const T* w = weight ? weight.data<T>() : nullptr;
  const T* b = bias ? bias.data<T>() : nullptr;
  T* y = c.outputs[0].data<T>();
  c.runtime.thread_pool().parallel_for(l.rows(), row_grain(l), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double mean, invstd;
      row_statistics(l, x, r, eps, mean, invstd);
      for (int64_t k = 0, i = r * l.row_size(); k < l.row_size(); ++k, ++i) {
        const int64_t ch = l.channel(r, k);
        y[i] = T((double(x[i]) - mean) * invstd * (w ? double(w[ch]) : 1.0) + (b ? double(b[ch]) : 0.0));
      }
    }
  });
}

std::vector<Tensor> group_norm_backward(const BackwardCall& c) {
  const Tensor weight = optional_input(c.inputs, 1);
  const Tensor inputs[] = {c.grad_outputs[0], c.inputs[0], weight};
  const OpDef& backward = c.runtime.op("group_norm_backward");
  std::vector<Tensor> g = c.runtime.call(backward, inputs, c.attrs);
  std::vector<Tensor> grads(c.inputs.size());
  grads[0] = g[0];
  if (weight) grads[1] = g[1];
  if (optional_input(c.inputs, 2)) grads[2] = g[2];
  return grads;
}

// ---- group_norm_backward --------------------------------------------------
// Inputs: grad_output, input, weight. Outputs: grad_input, grad_weight [C],
// grad_bias [C].

void group_norm_backward_infer(InferCall& c) {
  const GroupLayout l = check_group_norm_inputs(c, 1);
  const Shape& s = c.inputs[1].shape();
  KILN_CHECK(c.inputs[0].shape() == s, Status::shape_mismatch, "op '", c.op.name, "': grad_output has shape ",
             to_string(c.inputs[0].shape()), " but the input has shape ", to_string(s));
  const DType t = c.inputs[1].dtype();
  c.outputs.push_back({s, t, c.device});
  c.outputs.push_back({Shape{l.channels}, t, c.device});
  c.outputs.push_back({Shape{l.channels}, t, c.device});
}

template <class T>
void group_norm_backward_kernel(const KernelCall& c) {
  const T* g = c.inputs[0].data<T>();
  const T* x = c.inputs[1].data<T>();
  const Tensor weight = optional_input(c.inputs, 2);
  const T* w = weight ? weight.data<T>() : nullptr;
  const GroupLayout l = group_layout(c.op, c.attrs, c.inputs[1].shape());
  const double eps = c.op.attr_real(c.attrs, "eps");
  std::vector<double> means(size_t(l.rows())), invstds(size_t(l.rows()));
  T* grad_input = c.outputs[0].data<T>();
  ThreadPool& pool = c.runtime.thread_pool();
  // Rows: the input gradient, which the row's statistics couple across it.
  pool.parallel_for(l.rows(), row_grain(l), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double& mean = means[size_t(r)];
      double& invstd = invstds[size_t(r)];
      row_statistics(l, x, r, eps, mean, invstd);
      const int64_t row = r * l.row_size();
      auto gw = [&](int64_t k) { return double(g[row + k]) * (w ? double(w[l.channel(r, k)]) : 1.0); };
      double sum_gw = 0, sum_gw_xhat = 0;
      for (int64_t k = 0; k < l.row_size(); ++k) {
        sum_gw += gw(k);
        sum_gw_xhat += gw(k) * (double(x[row + k]) - mean) * invstd;
      }
      const double n = double(l.row_size());
      for (int64_t k = 0; k < l.row_size(); ++k) {
        const double xhat = (double(x[row + k]) - mean) * invstd;
        grad_input[row + k] = T(invstd * (gw(k) - sum_gw / n - xhat * sum_gw_xhat / n));
      }
    }
  });
  // Channels: weight and bias gradients sum over the samples and the inner dims.
  T* grad_weight = c.outputs[1].data<T>();
  T* grad_bias = c.outputs[2].data<T>();
  const int64_t channel_grain = std::max<int64_t>(1, cpu::kElementGrain / std::max<int64_t>(1, l.channel_count()));
  pool.parallel_for(l.channels, channel_grain, [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      double sum_g = 0, sum_g_xhat = 0;
      for (int64_t j = 0; j < l.channel_count(); ++j) {
        const int64_t i = l.channel_offset(ch, j);
        const size_t r = size_t(l.channel_row(ch, j));
        sum_g += double(g[i]);
        sum_g_xhat += double(g[i]) * (double(x[i]) - means[r]) * invstds[r];
      }
      grad_weight[ch] = T(sum_g_xhat);
      grad_bias[ch] = T(sum_g);
    }
  });
}

}  // namespace

GroupLayout group_layout(const OpDef& op, const Attrs& attrs, const Shape& input) {
  KILN_CHECK(input.rank() >= 2, Status::shape_mismatch, "op '", op.name,
             "': input must be [N, C, ...] (rank 2 or more), got shape ", to_string(input));
  const int64_t groups = op.attr_int(attrs, "num_groups");
  KILN_CHECK(groups > 0, Status::invalid_argument, "op '", op.name, "': num_groups must be positive, got ", groups);
  KILN_CHECK(input[1] % groups == 0, Status::shape_mismatch, "op '", op.name,
             "': expected the number of channels to be divisible by num_groups, but got input of shape ",
             to_string(input), " and num_groups = ", groups);
  GroupLayout l;
  l.samples = input[0];
  l.channels = input[1];
  l.groups = groups;
  for (int d = 2; d < input.rank(); ++d) l.inner *= input[d];
  return l;
}

void register_group_norm_ops(OpRegistry& r) {
  const std::vector<AttrSpec> attrs = {attr_required("num_groups", AttrType::integer), attr_real("eps", 1e-5)};
  {
    OpDef op;
    op.name = "group_norm";
    op.inputs = {{"input"}, {"weight", true}, {"bias", true}};
    op.attrs = attrs;
    op.infer = group_norm_infer;
    op.backward = group_norm_backward;
    op.saves_outputs = false;
    op.precision = PrecisionCategory::f32;
    op.set_kernel(DeviceType::cpu, DType::f32, group_norm_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, group_norm_kernel<double>);
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "group_norm_backward";
    op.inputs = {{"grad_output"}, {"input"}, {"weight", true}};
    op.attrs = attrs;
    op.infer = group_norm_backward_infer;
    op.dtype_input = 1;
    op.set_kernel(DeviceType::cpu, DType::f32, group_norm_backward_kernel<float>);
    op.set_kernel(DeviceType::cpu, DType::f64, group_norm_backward_kernel<double>);
    r.add(std::move(op));
  }
}

}  // namespace kiln::nn
