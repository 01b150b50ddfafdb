// sum, mean, max, min, var and std over a set of dimensions, and their
// backward ops.
// Each output element folds its input elements in acc_t (double for f64);
// the output elements are spread across the runtime's threads.
#include <cmath>
#include <limits>

#include "common.hpp"
#include "families.hpp"
#include "reduce_geometry.hpp"

namespace kiln::reduction {
namespace {

template <class T>
acc_t<T> sum_of(const ReduceGeometry& g, const T* x, int64_t base) {
  if (g.reduced_dense) return cpu::dense_sum<acc_t<T>>(base, g.reduced_count, [x](int64_t i) { return load_acc(x[i]); });
  acc_t<T> s = 0;
  for_each_reduced(g, base, [&](int64_t i) { s += load_acc(x[i]); });
  return s;
}

// NaN wins, as in torch.amax and torch.amin.
template <bool Largest, class T>
acc_t<T> extreme_of(const ReduceGeometry& g, const T* x, int64_t base) {
  acc_t<T> m = (Largest ? -1 : 1) * std::numeric_limits<acc_t<T>>::infinity();
  for_each_reduced(g, base, [&](int64_t i) {
    const acc_t<T> v = load_acc(x[i]);
    if ((Largest ? v > m : v < m) || std::isnan(v)) m = std::isnan(m) ? m : v;
  });
  return m;
}

// Two passes (mean, then squared deviations) keep the variance accurate when
// the mean is large compared with the spread.
template <class T>
acc_t<T> sum_sq_dev(const ReduceGeometry& g, const T* x, int64_t base, acc_t<T> mean) {
  acc_t<T> s = 0;
  for_each_reduced(g, base, [&](int64_t i) {
    const acc_t<T> d = load_acc(x[i]) - mean;
    s += d * d;
  });
  return s;
}

template <class T>
acc_t<T> var_divisor(const ReduceGeometry& g, const OpDef& op, const Attrs& attrs) {
  // torch.var: the divisor is N - correction, clamped at 0 (giving inf or NaN).
  return acc_t<T>(std::max<int64_t>(0, g.reduced_count - op.attr_int(attrs, "correction")));
}

ReduceGeometry input_geometry(const KernelCall& c) {
  return reduce_geometry(c.op, c.inputs[0].shape(), c.inputs[0].strides(), c.attrs);
}

// Writes fold(g, x, base) into every output element.
template <class T, class Fold>
void reduce_into(const KernelCall& c, const ReduceGeometry& g, Fold fold) {
  const T* x = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) { out[o] = store_acc<T>(fold(g, x, base)); });
}

// The sum of every output's elements, divided by `divisor`.
template <class T>
void divided_sum(const KernelCall& c, const ReduceGeometry& g, acc_t<T> divisor) {
  const T* x = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  sum_each_output<acc_t<T>>(
      c.runtime.thread_pool(), g, [x](int64_t i) { return load_acc(x[i]); },
      [out, divisor](int64_t o, acc_t<T> s) { out[o] = store_acc<T>(s / divisor); });
}

template <class T>
void sum_kernel(const KernelCall& c) {
  divided_sum<T>(c, input_geometry(c), acc_t<T>(1));
}

template <class T>
void mean_kernel(const KernelCall& c) {
  const ReduceGeometry g = input_geometry(c);
  divided_sum<T>(c, g, acc_t<T>(g.reduced_count));
}

template <bool Largest, class T>
void extreme_kernel(const KernelCall& c) {
  reduce_into<T>(c, input_geometry(c), extreme_of<Largest, T>);
}

// var, or std (its square root) when Root.
template <bool Root, class T>
void var_kernel(const KernelCall& c) {
  const ReduceGeometry geometry = input_geometry(c);
  const acc_t<T> divisor = var_divisor<T>(geometry, c.op, c.attrs);
  reduce_into<T>(c, geometry, [divisor](const ReduceGeometry& g, const T* x, int64_t base) {
    const acc_t<T> mean = sum_of(g, x, base) / acc_t<T>(g.reduced_count);
    const acc_t<T> var = sum_sq_dev(g, x, base, mean) / divisor;
    return Root ? std::sqrt(var) : var;
  });
}

void reduce_infer(InferCall& c) {
  check_floating(c, 0);
  const Tensor& in = c.inputs[0];
  const ReduceGeometry g = reduce_geometry(c.op, in.shape(), in.strides(), c.attrs);
  const bool extreme = c.op.name == "max" || c.op.name == "min";
  KILN_CHECK(!extreme || g.reduced_count > 0 || g.kept_shape.numel() == 0, Status::invalid_argument, "op '",
             c.op.name, "': cannot take the ", c.op.name == "max" ? "maximum" : "minimum", " over zero elements of shape ",
             to_string(in.shape()));
  c.outputs.push_back({g.output_shape, in.dtype(), c.device});
}

// ---- backward ops: the gradient of the input, from the output gradient ------

// sum_backward(grad): grad * scale broadcast back over the reduced dims.
void sum_backward_infer(InferCall& c) {
  c.outputs.push_back({shape_from_attr(c.op, c.op.attr_ints(c.attrs, "input_shape"), "input_shape"),
                       c.inputs[0].dtype(), c.device});
}

template <class T>
void sum_backward_kernel(const KernelCall& c) {
  Tensor& gx = c.outputs[0];
  const ReduceGeometry g = reduce_geometry(c.op, gx.shape(), c.attrs);
  const acc_t<T> scale = acc_t<T>(c.op.attr_real(c.attrs, "scale"));
  const T* gy = c.inputs[0].data<T>();
  T* out = gx.data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    const T v = store_acc<T>(load_acc(gy[o]) * scale);
    for_each_reduced(g, base, [&](int64_t i) { out[i] = v; });
  });
}

void like_input_infer(InferCall& c) { c.outputs.push_back({c.inputs[1].shape(), c.inputs[0].dtype(), c.device}); }

// max_backward(grad, input, output): the gradient goes to the elements
// equal to the output, split evenly among ties (as torch.amax and
// torch.amin), so it serves min as well.
template <class T>
void max_backward_kernel(const KernelCall& c) {
  const Tensor& x_t = c.inputs[1];
  const ReduceGeometry g = reduce_geometry(c.op, x_t.shape(), c.attrs);
  const T* gy = c.inputs[0].data<T>();
  const T* x = x_t.data<T>();
  const T* y = c.inputs[2].data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    const acc_t<T> m = load_acc(y[o]);
    int64_t ties = 0;
    for_each_reduced(g, base, [&](int64_t i) { ties += load_acc(x[i]) == m; });
    const acc_t<T> share = ties ? load_acc(gy[o]) / acc_t<T>(ties) : acc_t<T>(0);
    for_each_reduced(g, base, [&](int64_t i) { out[i] = store_acc<T>(load_acc(x[i]) == m ? share : acc_t<T>(0)); });
  });
}

// var_backward(grad, input): grad * 2 (x - mean) / (N - correction).
template <class T>
void var_backward_kernel(const KernelCall& c) {
  const Tensor& x_t = c.inputs[1];
  const ReduceGeometry g = reduce_geometry(c.op, x_t.shape(), c.attrs);
  const acc_t<T> divisor = var_divisor<T>(g, c.op, c.attrs);
  const T* gy = c.inputs[0].data<T>();
  const T* x = x_t.data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    const acc_t<T> mean = sum_of(g, x, base) / acc_t<T>(g.reduced_count);
    const acc_t<T> k = 2 * load_acc(gy[o]) / divisor;
    for_each_reduced(g, base, [&](int64_t i) { out[i] = store_acc<T>(k * (load_acc(x[i]) - mean)); });
  });
}

// ---- the backwards of the forward ops ------------------------------------

Tensor broadcast_back(const BackwardCall& c, double scale) {
  return call_op1(c.runtime, "sum_backward", {c.grad_outputs[0]},
                  {{"input_shape", dims_of(c.inputs[0].shape())},
                   {"dims", c.op.attr_ints(c.attrs, "dims")},
                   {"keepdim", c.op.attr_bool(c.attrs, "keepdim")},
                   {"scale", scale}});
}

std::vector<Tensor> sum_backward(const BackwardCall& c) { return {broadcast_back(c, 1.0)}; }

std::vector<Tensor> mean_backward(const BackwardCall& c) {
  const ReduceGeometry g = reduce_geometry(c.op, c.inputs[0].shape(), c.attrs);
  return {broadcast_back(c, 1.0 / double(g.reduced_count))};
}

std::vector<Tensor> extreme_backward(const BackwardCall& c) {
  return {call_op1(c.runtime, "max_backward", {c.grad_outputs[0], c.inputs[0], c.outputs[0]},
                   {{"dims", c.op.attr_ints(c.attrs, "dims")}, {"keepdim", c.op.attr_bool(c.attrs, "keepdim")}})};
}

Tensor var_grad(const BackwardCall& c, const Tensor& grad_var) {
  return call_op1(c.runtime, "var_backward", {grad_var, c.inputs[0]},
                  {{"dims", c.op.attr_ints(c.attrs, "dims")},
                   {"keepdim", c.op.attr_bool(c.attrs, "keepdim")},
                   {"correction", c.op.attr_int(c.attrs, "correction")}});
}

std::vector<Tensor> var_backward(const BackwardCall& c) { return {var_grad(c, c.grad_outputs[0])}; }

// d std = d var / (2 std); a zero std gives inf or NaN, as in torch.std.
std::vector<Tensor> std_backward(const BackwardCall& c) {
  const Tensor twice_std = call_op1(c.runtime, "mul_scalar", {c.outputs[0]}, {{"value", 2.0}});
  return {var_grad(c, call_op1(c.runtime, "div", {c.grad_outputs[0], twice_std}, {}))};
}

std::vector<AttrSpec> reduce_attrs() { return {attr_ints("dims", {}), attr_bool("keepdim", false)}; }

// `kernel` is []<class T>() { return &some_kernel<T>; }.
template <class MakeKernel>
void add_reduce_op(OpRegistry& r, std::string name, MakeKernel kernel, BackwardFn backward, bool saves_outputs,
                   std::vector<AttrSpec> extra = {}) {
  OpDef op;
  // Sums lose low bits in 16-bit types; an extreme is exact in any.
  op.precision = name == "max" || name == "min" ? PrecisionCategory::promote : PrecisionCategory::f32;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = reduce_attrs();
  op.attrs.insert(op.attrs.end(), extra.begin(), extra.end());
  op.infer = reduce_infer;
  op.backward = backward;
  op.accepts_strided = true;
  op.saves_outputs = saves_outputs;
  set_float_kernels(op, kernel);
  r.add(std::move(op));
}

template <class MakeKernel>
void add_backward_op(OpRegistry& r, std::string name, MakeKernel kernel, std::vector<InputSpec> inputs,
                     std::vector<AttrSpec> attrs, InferFn infer) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.infer = infer;
  set_float_kernels(op, kernel);
  r.add(std::move(op));
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  add_reduce_op(r, "sum", []<class T>() { return &sum_kernel<T>; }, sum_backward, false);
  add_reduce_op(r, "mean", []<class T>() { return &mean_kernel<T>; }, mean_backward, false);
  add_reduce_op(r, "max", []<class T>() { return &extreme_kernel<true, T>; }, extreme_backward, true);
  add_reduce_op(r, "min", []<class T>() { return &extreme_kernel<false, T>; }, extreme_backward, true);
  add_reduce_op(r, "var", []<class T>() { return &var_kernel<false, T>; }, var_backward, false,
                {attr_int("correction", 1)});
  add_reduce_op(r, "std", []<class T>() { return &var_kernel<true, T>; }, std_backward, true,
                {attr_int("correction", 1)});

  std::vector<AttrSpec> sum_grad_attrs = {attr_required("input_shape", AttrType::ints)};
  for (AttrSpec& a : reduce_attrs()) sum_grad_attrs.push_back(std::move(a));
  sum_grad_attrs.push_back(attr_real("scale", 1.0));
  add_backward_op(r, "sum_backward", []<class T>() { return &sum_backward_kernel<T>; }, {{"grad"}}, sum_grad_attrs, sum_backward_infer);
  add_backward_op(r, "max_backward", []<class T>() { return &max_backward_kernel<T>; },
                  {{"grad"}, {"input"}, {"output"}}, reduce_attrs(), like_input_infer);
  std::vector<AttrSpec> var_grad_attrs = reduce_attrs();
  var_grad_attrs.push_back(attr_int("correction", 1));
  add_backward_op(r, "var_backward", []<class T>() { return &var_backward_kernel<T>; }, {{"grad"}, {"input"}},
                  var_grad_attrs, like_input_infer);
}

}  // namespace kiln::reduction
