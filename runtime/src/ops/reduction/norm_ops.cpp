// norm (torch.linalg.vector_norm with ord 1, 2 or inf) and logsumexp over a
// set of dimensions, with their backward ops.
#include <cmath>
#include <limits>

#include "common.hpp"
#include "families.hpp"
#include "norm_order.hpp"
#include "reduce_geometry.hpp"

namespace kiln::reduction {

NormOrder norm_order(const OpDef& op, const Attrs& attrs) {
  const double p = op.attr_real(attrs, "p");
  if (p == 1) return NormOrder::one;
  if (p == 2) return NormOrder::two;
  if (p == std::numeric_limits<double>::infinity()) return NormOrder::inf;
  throw_error(Status::invalid_argument, str_cat("op '", op.name, "': p must be 1, 2 or inf, got ", p));
}

namespace {

ReduceGeometry input_geometry(const KernelCall& c, size_t input) {
  return reduce_geometry(c.op, c.inputs[input].shape(), c.inputs[input].strides(), c.attrs);
}

void norm_infer(InferCall& c) {
  check_floating(c, 0);
  const Tensor& in = c.inputs[0];
  const ReduceGeometry g = reduce_geometry(c.op, in.shape(), in.strides(), c.attrs);
  if (c.op.name == "norm") {
    KILN_CHECK(norm_order(c.op, c.attrs) != NormOrder::inf || g.reduced_count > 0 || g.kept_shape.numel() == 0,
               Status::invalid_argument, "op 'norm': cannot take the inf-norm over zero elements of shape ",
               to_string(in.shape()));
  }
  c.outputs.push_back({g.output_shape, in.dtype(), c.device});
}

template <class T>
void norm_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const ReduceGeometry g = input_geometry(c, 0);
  const NormOrder order = norm_order(c.op, c.attrs);
  const T* x = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  ThreadPool& pool = c.runtime.thread_pool();
  if (order == NormOrder::one) {
    sum_each_output<A>(pool, g, [x](int64_t i) { return std::abs(load_acc(x[i])); },
                       [out](int64_t o, A s) { out[o] = store_acc<T>(s); });
    return;
  }
  if (order == NormOrder::two) {
    sum_each_output<A>(pool, g, [x](int64_t i) { const A a = load_acc(x[i]); return a * a; },
                       [out](int64_t o, A s) { out[o] = store_acc<T>(std::sqrt(s)); });
    return;
  }
  for_each_output(pool, g, [&](int64_t o, int64_t base) {
    A m = 0;
    for_each_reduced(g, base, [&](int64_t i) {
      const A a = std::abs(load_acc(x[i]));
      if (a > m || std::isnan(a)) m = std::isnan(m) ? m : a;  // NaN wins, as in max
    });
    out[o] = store_acc<T>(m);
  });
}

template <class A>
A sign(A v) {
  return A((v > 0) - (v < 0));
}

// norm_backward(grad, input, output), as PyTorch's: p = 1 gives
// grad * sign(x); p = 2 gives grad * x / norm, and 0 where the norm is 0
// (the subgradient PyTorch picks); p = inf gives grad * sign(x) split
// evenly among the elements whose |x| equals the norm.
template <class T>
void norm_backward_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const ReduceGeometry g = input_geometry(c, 1);
  const NormOrder order = norm_order(c.op, c.attrs);
  const T* gy = c.inputs[0].data<T>();
  const T* x = c.inputs[1].data<T>();
  const T* y = c.inputs[2].data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    const A grad = load_acc(gy[o]), norm = load_acc(y[o]);
    int64_t ties = 0;
    if (order == NormOrder::inf) for_each_reduced(g, base, [&](int64_t i) { ties += std::abs(load_acc(x[i])) == norm; });
    for_each_reduced(g, base, [&](int64_t i) {
      const A v = load_acc(x[i]);
      A d = 0;
      if (order == NormOrder::one) d = grad * sign(v);
      else if (order == NormOrder::two) d = norm == 0 ? A(0) : grad * v / norm;
      else if (std::abs(v) == norm) d = grad * sign(v) / A(ties);
      out[i] = store_acc<T>(d);
    });
  });
}

// log(sum(exp(x))) with the maximum taken out first, so exp() cannot
// overflow; an infinite maximum is not taken out (inf - inf would be NaN),
// which gives -inf for a group of -inf (or no elements) and inf when one is
// inf, as torch.logsumexp does. A NaN anywhere gives NaN.
template <class T>
void logsumexp_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const ReduceGeometry g = input_geometry(c, 0);
  const T* x = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    A m = -std::numeric_limits<A>::infinity();
    for_each_reduced(g, base, [&](int64_t i) { m = std::max(m, load_acc(x[i])); });
    if (std::isinf(m)) m = 0;
    A s = 0;
    for_each_reduced(g, base, [&](int64_t i) { s += std::exp(load_acc(x[i]) - m); });
    out[o] = store_acc<T>(std::log(s) + m);
  });
}

// logsumexp_backward(grad, input, output): grad * exp(x - output), which is
// NaN for a group of -inf, as in PyTorch.
template <class T>
void logsumexp_backward_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const ReduceGeometry g = input_geometry(c, 1);
  const T* gy = c.inputs[0].data<T>();
  const T* x = c.inputs[1].data<T>();
  const T* y = c.inputs[2].data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    const A grad = load_acc(gy[o]), lse = load_acc(y[o]);
    for_each_reduced(g, base, [&](int64_t i) { out[i] = store_acc<T>(grad * std::exp(load_acc(x[i]) - lse)); });
  });
}

void like_input_infer(InferCall& c) { c.outputs.push_back({c.inputs[1].shape(), c.inputs[0].dtype(), c.device}); }

// Both backwards read (grad, input, output) and the forward's attributes.
std::vector<Tensor> norm_family_backward(const BackwardCall& c) {
  // The backward op's schema repeats the forward's, so the attributes carry over.
  const OpDef& grad_op = c.runtime.op(c.op.name + "_backward");
  return {c.runtime.call1(grad_op, {c.grad_outputs[0], c.inputs[0], c.outputs[0]}, c.attrs)};
}

std::vector<AttrSpec> norm_attrs(bool with_p) {
  std::vector<AttrSpec> a;
  if (with_p) a.push_back(attr_real("p", 2.0));
  a.push_back(attr_ints("dims", {}));
  a.push_back(attr_bool("keepdim", false));
  return a;
}

template <class Make, class MakeGrad>
void add_norm_op(OpRegistry& r, const std::string& name, bool with_p, Make kernel, MakeGrad grad_kernel) {
  OpDef op;
  op.name = name;
  op.inputs = {{"input"}};
  op.attrs = norm_attrs(with_p);
  op.infer = norm_infer;
  op.backward = norm_family_backward;
  op.accepts_strided = true;
  op.precision = PrecisionCategory::f32;
  set_float_kernels(op, kernel);
  r.add(std::move(op));

  OpDef grad;
  grad.name = name + "_backward";
  grad.inputs = {{"grad"}, {"input"}, {"output"}};
  grad.attrs = norm_attrs(with_p);
  grad.infer = like_input_infer;
  set_float_kernels(grad, grad_kernel);
  r.add(std::move(grad));
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  add_norm_op(r, "norm", true, []<class T>() { return &norm_kernel<T>; },
              []<class T>() { return &norm_backward_kernel<T>; });
  add_norm_op(r, "logsumexp", false, []<class T>() { return &logsumexp_kernel<T>; },
              []<class T>() { return &logsumexp_backward_kernel<T>; });
}

}  // namespace kiln::reduction
