// scatter(input, index, src; dim) and scatter_add, as torch.scatter and
// torch.scatter_add: input with src[i] written (added) at the position
// index[i] names along dim, for every element i of index; src may be
// larger than index (only the part index covers is read). With repeated
// indices scatter keeps one of the writes, scatter_add their sum.
// Gradients: src's is grad gathered back at the index (zeros where src
// was not read); input's is grad, with the overwritten positions zeroed for
// scatter.
#include <algorithm>

#include "../reduction/common.hpp"
#include "families.hpp"
#include "index_geometry.hpp"
#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::shape {
namespace {

using reduction::visit_index_dtype;

void scatter_infer(InferCall& c) {
  reduction::check_index_dtype(c, 1);
  const Tensor& in = c.inputs[0];
  const Shape& index = c.inputs[1].shape();
  const Shape& src = c.inputs[2].shape();
  KILN_CHECK(c.inputs[2].dtype() == in.dtype(), Status::dtype_mismatch, "op '", c.op.name, "': src is ",
             dtype_name(c.inputs[2].dtype()), " but input is ", dtype_name(in.dtype()));
  KILN_CHECK(index.rank() == in.rank() && src.rank() == in.rank(), Status::shape_mismatch, "op '", c.op.name,
             "': input ", to_string(in.shape()), ", index ", to_string(index), " and src ", to_string(src),
             " must have the same rank");
  const int dim = normalize_dim(int(c.op.attr_int(c.attrs, "dim")), in.rank(), c.op.name.c_str());
  for (int d = 0; d < in.rank(); ++d) {
    KILN_CHECK(index[d] <= src[d], Status::shape_mismatch, "op '", c.op.name, "': index ", to_string(index),
               " is larger than src ", to_string(src), " in dimension ", d);
    KILN_CHECK(d == dim || index[d] <= in.shape()[d], Status::shape_mismatch, "op '", c.op.name, "': index ",
               to_string(index), " is larger than input ", to_string(in.shape()), " in dimension ", d,
               " (only dimension ", dim, " may differ)");
  }
  c.outputs.push_back({in.shape(), in.dtype(), c.device});
}

// Calls fn(src_offset, out_offset) for every element of index, in order.
template <class Fn>
void for_each_scattered(const KernelCall& c, const Shape& out_shape, Fn&& fn) {
  const Tensor& index = c.inputs[1];
  const int dim = normalize_dim(int(c.op.attr_int(c.attrs, "dim")), out_shape.rank(), c.op.name.c_str());
  const Shape out_strides = contiguous_strides(out_shape);
  Shape base_strides = out_strides;
  base_strides[dim] = 0;  // the index supplies this coordinate
  visit_index_dtype(index.dtype(), [&]<class I>() {
    const I* idx = index.data<I>();
    cpu::for_each_offset2(index.shape(), contiguous_strides(c.inputs[2].shape()), base_strides, 0, index.numel(),
                          [&](int64_t i, int64_t src_off, int64_t base) {
                            const int64_t k = int64_t(idx[i]);
                            if (k < 0 || k >= out_shape[dim]) throw_index_out_of_range(c.op, k, dim, out_shape[dim]);
                            fn(src_off, base + k * out_strides[dim]);
                          });
  });
}

template <class T>
void scatter_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  std::copy_n(c.inputs[0].data<T>(), out.numel(), out.data<T>());
  const T* src = c.inputs[2].data<T>();
  T* dst = out.data<T>();
  for_each_scattered(c, out.shape(), [&](int64_t s, int64_t o) { dst[o] = src[s]; });
}

template <class T>
void scatter_add_kernel(const KernelCall& c) {
  Tensor& out = c.outputs[0];
  std::vector<acc_t<T>> acc(size_t(out.numel()));
  const T* base = c.inputs[0].data<T>();
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = load_acc(base[i]);
  const T* src = c.inputs[2].data<T>();
  for_each_scattered(c, out.shape(), [&](int64_t s, int64_t o) { acc[size_t(o)] += load_acc(src[s]); });
  T* dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) dst[i] = store_acc<T>(acc[i]);
}

// grad gathered at the index, padded with zeros up to src's shape.
Tensor src_gradient(const BackwardCall& c) {
  const OpDef& gather = c.runtime.op("gather");
  Tensor g = c.runtime.call1(gather, {c.grad_outputs[0], c.inputs[1]},
                             gather.make_attrs({{"dim", c.op.attr_int(c.attrs, "dim")}}));
  const Shape& src = c.input_meta[2].shape;
  if (g.shape() == src) return g;
  std::vector<int64_t> pad;
  for (int d = src.rank() - 1; d >= 0; --d) pad.insert(pad.end(), {0, src[d] - g.shape()[d]});
  return c.runtime.call1("pad", {g}, {{"pad", pad}});
}

std::vector<Tensor> scatter_backward(const BackwardCall& c) {
  std::vector<Tensor> grads(3);
  const Tensor& grad = c.grad_outputs[0];
  if (c.needs_input_grad[0]) {
    const Tensor zeros = c.runtime.full(c.inputs[1].shape(), 0.0, grad.dtype(), grad.device());
    grads[0] = c.runtime.call1(c.op, {grad, c.inputs[1], zeros}, c.attrs);
  }
  if (c.needs_input_grad[2]) grads[2] = src_gradient(c);
  return grads;
}

std::vector<Tensor> scatter_add_backward(const BackwardCall& c) {
  std::vector<Tensor> grads(3);
  if (c.needs_input_grad[0]) grads[0] = c.grad_outputs[0];
  if (c.needs_input_grad[2]) grads[2] = src_gradient(c);
  return grads;
}

OpDef scatter_op(std::string name, BackwardFn backward) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}, {"index"}, {"src"}};
  op.attrs = {attr_required("dim", AttrType::integer)};
  op.infer = scatter_infer;
  op.backward = backward;
  op.saves_outputs = false;
  return op;
}

}  // namespace

void register_scatter_ops(OpRegistry& r) {
  OpDef scatter = scatter_op("scatter", scatter_backward);
  for (DType t : kAllDTypes)
    visit_dtype(t, [&]<class T>() { scatter.set_kernel(DeviceType::cpu, t, &scatter_kernel<T>); });
  r.add(std::move(scatter));
  OpDef add = scatter_op("scatter_add", scatter_add_backward);
  reduction::set_float_kernels(add, []<class T>() { return &scatter_add_kernel<T>; });
  r.add(std::move(add));
}

}  // namespace kiln::shape
