// prod over a set of dimensions and cumsum along one, with their backward
// ops; the dtypes of their results are product_types.hpp's.
#include "common.hpp"
#include "dim_rows.hpp"
#include "families.hpp"
#include "product_types.hpp"
#include "reduce_geometry.hpp"

namespace kiln::reduction {
namespace {

template <class T>
fold_t<T> load_fold(T v) {
  if constexpr (std::is_integral_v<T>) return int64_t(v);
  else return load_acc(v);
}

template <class T>
result_t<T> store_fold(fold_t<T> v) {
  if constexpr (std::is_integral_v<T>) return v;
  else return store_acc<T>(v);
}

template <class Make>
void set_all_kernels(OpDef& op, Make make) {
  for (DType t : kAllDTypes) visit_dtype(t, [&]<class T>() { op.set_kernel(DeviceType::cpu, t, make.template operator()<T>()); });
}

// ---- prod ------------------------------------------------------------------

void prod_infer(InferCall& c) {
  const Tensor& in = c.inputs[0];
  const ReduceGeometry g = reduce_geometry(c.op, in.shape(), in.strides(), c.attrs);
  c.outputs.push_back({g.output_shape, result_dtype(in.dtype()), c.device});
}

template <class T>
void prod_kernel(const KernelCall& c) {
  const ReduceGeometry g = reduce_geometry(c.op, c.inputs[0].shape(), c.inputs[0].strides(), c.attrs);
  const T* x = c.inputs[0].data<T>();
  result_t<T>* out = c.outputs[0].data<result_t<T>>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    fold_t<T> p = 1;
    for_each_reduced(g, base, [&](int64_t i) { p *= load_fold(x[i]); });
    out[o] = store_fold<T>(p);
  });
}

// prod_backward(grad, input, output), as PyTorch's: without a zero in the
// group, grad * prod / x; with one zero, only the zero gets grad times the
// product of the others; with several, every gradient is 0.
template <class T>
void prod_backward_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const Tensor& x_t = c.inputs[1];
  const ReduceGeometry g = reduce_geometry(c.op, x_t.shape(), c.attrs);
  const T* gy = c.inputs[0].data<T>();
  const T* x = x_t.data<T>();
  const T* y = c.inputs[2].data<T>();
  T* out = c.outputs[0].data<T>();
  for_each_output(c.runtime.thread_pool(), g, [&](int64_t o, int64_t base) {
    int64_t zeros = 0;
    A others = 1;  // the product of the non-zero elements
    for_each_reduced(g, base, [&](int64_t i) {
      const A v = load_acc(x[i]);
      if (v == 0) ++zeros;
      else others *= v;
    });
    const A grad = load_acc(gy[o]), product = load_acc(y[o]);
    for_each_reduced(g, base, [&](int64_t i) {
      const A v = load_acc(x[i]);
      A d = 0;
      if (zeros == 0) d = grad * product / v;
      else if (zeros == 1 && v == 0) d = grad * others;
      out[i] = store_acc<T>(d);
    });
  });
}

std::vector<Tensor> prod_backward(const BackwardCall& c) {
  return {call_op1(c.runtime, "prod_backward", {c.grad_outputs[0], c.inputs[0], c.outputs[0]},
                   {{"dims", c.op.attr_ints(c.attrs, "dims")}, {"keepdim", c.op.attr_bool(c.attrs, "keepdim")}})};
}

// ---- cumsum ----------------------------------------------------------------

void cumsum_infer(InferCall& c) {
  const Tensor& in = c.inputs[0];
  single_dim(c.op, c.attrs, in.shape());
  c.outputs.push_back({in.shape(), result_dtype(in.dtype()), c.device});
}

// Running sums along the dim, front to back (cumsum) or back to front
// (cumsum_backward: the gradient of out[j] = sum_{i <= j} x[i] is
// gx[i] = sum_{j >= i} g[j]).
template <bool Reverse, class T>
void cumsum_kernel(const KernelCall& c) {
  const DimRows s = dim_rows(c.op, c.inputs[0].shape(), c.attrs);
  const T* x = c.inputs[0].data<T>();
  result_t<T>* out = c.outputs[0].data<result_t<T>>();
  for_row_ranges(c.runtime.thread_pool(), s, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = s.base(r);
      fold_t<T> sum = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        const int64_t i = base + (Reverse ? s.n - 1 - j : j) * s.inner;
        sum += load_fold(x[i]);
        out[i] = store_fold<T>(sum);
      }
    }
  });
}

std::vector<Tensor> cumsum_backward(const BackwardCall& c) {
  return {call_op1(c.runtime, "cumsum_backward", {c.grad_outputs[0]}, {{"dim", c.op.attr_int(c.attrs, "dim")}})};
}

void like_grad_infer(InferCall& c) {
  single_dim(c.op, c.attrs, c.inputs[0].shape());
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

void like_input_infer(InferCall& c) { c.outputs.push_back({c.inputs[1].shape(), c.inputs[0].dtype(), c.device}); }

}  // namespace

void register_product_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "prod";
    op.inputs = {{"input"}};
    op.attrs = {attr_ints("dims", {}), attr_bool("keepdim", false)};
    op.infer = prod_infer;
    op.backward = prod_backward;
    op.accepts_strided = true;
    op.precision = PrecisionCategory::f32;
    set_all_kernels(op, []<class T>() { return &prod_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "prod_backward";
    op.inputs = {{"grad"}, {"input"}, {"output"}};
    op.attrs = {attr_ints("dims", {}), attr_bool("keepdim", false)};
    op.infer = like_input_infer;
    set_float_kernels(op, []<class T>() { return &prod_backward_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "cumsum";
    op.inputs = {{"input"}};
    op.attrs = {attr_required("dim", AttrType::integer)};
    op.infer = cumsum_infer;
    op.backward = cumsum_backward;
    op.saves_inputs = false;
    op.saves_outputs = false;
    op.precision = PrecisionCategory::f32;
    set_all_kernels(op, []<class T>() { return &cumsum_kernel<false, T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "cumsum_backward";
    op.inputs = {{"grad"}};
    op.attrs = {attr_required("dim", AttrType::integer)};
    op.infer = like_grad_infer;
    set_float_kernels(op, []<class T>() { return &cumsum_kernel<true, T>; });
    r.add(std::move(op));
  }
}

}  // namespace kiln::reduction
