// where(condition, a, b): a where condition holds, b elsewhere, all three
// broadcast together. The kernel reads any layout and is chosen by a's dtype.
#include "elementwise_common.hpp"

namespace kiln::elementwise {
namespace {

void where_infer(InferCall& c) {
  const Tensor& cond = c.inputs[0];
  KILN_CHECK(cond.dtype() == DType::boolean, Status::dtype_mismatch, "op '", c.op.name,
             "': condition must be bool, got ", dtype_name(cond.dtype()));
  const Tensor& a = c.inputs[1];
  const Tensor& b = c.inputs[2];
  KILN_CHECK(a.dtype() == b.dtype(), Status::dtype_mismatch, "op '", c.op.name, "': a is ", dtype_name(a.dtype()),
             " but b is ", dtype_name(b.dtype()), "; they must share one dtype (cast first)");
  const char* name = c.op.name.c_str();
  const Shape shape = broadcast_shapes(cond.shape(), broadcast_shapes(a.shape(), b.shape(), name), name);
  c.outputs.push_back({shape, a.dtype(), c.device});
}

template <class T>
void where_kernel(const KernelCall& c) {
  const Tensor& cond = c.inputs[0];
  const Tensor& a = c.inputs[1];
  const Tensor& b = c.inputs[2];
  Tensor& out = c.outputs[0];
  const Shape& shape = out.shape();
  const std::array<Shape, 3> strides{cpu::broadcast_strides(cond.shape(), cond.strides(), shape),
                                     cpu::broadcast_strides(a.shape(), a.strides(), shape),
                                     cpu::broadcast_strides(b.shape(), b.strides(), shape)};
  const bool* pc = cond.data<bool>();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  for_range(c.runtime, out.numel(), [&](int64_t begin, int64_t end) {
    for_each_offsets<3>(shape, strides, begin, end, [&](int64_t i, const std::array<int64_t, 3>& off) {
      po[i] = pc[off[0]] ? pa[off[1]] : pb[off[2]];
    });
  });
}

// The gradient goes to a where the condition holds and to b elsewhere.
std::vector<Tensor> where_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& cond = c.inputs[0];
  const Tensor& g = c.grad_outputs[0];
  const OpDef& where = c.op;
  const Tensor zero = rt.full({}, 0.0, g.dtype(), g.device());
  std::vector<Tensor> grads(3);
  if (c.needs_input_grad[1]) grads[1] = sum_to(rt, rt.call1(where, {cond, g, zero}, c.attrs), c.inputs[1].shape());
  if (c.needs_input_grad[2]) grads[2] = sum_to(rt, rt.call1(where, {cond, zero, g}, c.attrs), c.inputs[2].shape());
  return grads;
}

}  // namespace

void register_where_op(OpRegistry& r) {
  OpDef op;
  op.name = "where";
  op.inputs = {{"condition"}, {"a"}, {"b"}};
  op.infer = where_infer;
  op.backward = where_backward;
  op.accepts_strided = true;
  op.dtype_input = 1;
  op.saves_outputs = false;
  set_cpu_kernels(op, AllTypes{}, []<class T>() -> KernelFn { return where_kernel<T>; });
  r.add(std::move(op));
}

}  // namespace kiln::elementwise
