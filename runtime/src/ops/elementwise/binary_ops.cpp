// add, sub, mul, div with NumPy broadcasting, and add_scalar / mul_scalar.
// The kernels read their operands in any layout: equal dense shapes and a
// one-element operand take flat loops the compiler vectorises; everything
// else walks broadcast strides. Small tensors run inline with no allocation,
// since `add` on tiny tensors sits on the autograd accumulation path.
#include "elementwise_common.hpp"

namespace kiln::elementwise {
namespace {

struct AddFn {
  template <class A> A operator()(A x, A y) const { return x + y; }
};
struct SubFn {
  template <class A> A operator()(A x, A y) const { return x - y; }
};
struct MulFn {
  template <class A> A operator()(A x, A y) const { return x * y; }
};
struct DivFn {
  template <class A> A operator()(A x, A y) const { return x / y; }
};

// out[i] = fn(in[i], s) over a dense input: the loop shared by a one-element
// operand of a binary op and by the *_scalar ops. `scalar_first` swaps the
// operands (a one-element left operand of sub or div).
template <class T, class Fn, bool scalar_first>
void scalar_loop(Runtime& rt, const T* in, math_t<T> s, T* out, int64_t n) {
  for_range(rt, n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const math_t<T> x = load_math(in[i]);
      out[i] = store_math<T>(scalar_first ? Fn{}(s, x) : Fn{}(x, s));
    }
  });
}

template <class T, class Fn>
void binary_kernel(const KernelCall& c) {
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  Tensor& out = c.outputs[0];
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  const int64_t n = out.numel();
  // Equal element counts and dense layouts put operands and output in the
  // same row-major order, whatever leading 1s the shapes carry.
  const bool a_dense = a.numel() == n && a.is_contiguous();
  const bool b_dense = b.numel() == n && b.is_contiguous();
  if (a_dense && b_dense) {
    for_range(c.runtime, n, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = store_math<T>(Fn{}(load_math(pa[i]), load_math(pb[i])));
    });
  } else if (a_dense && b.numel() == 1) {
    scalar_loop<T, Fn, false>(c.runtime, pa, load_math(pb[0]), po, n);
  } else if (b_dense && a.numel() == 1) {
    scalar_loop<T, Fn, true>(c.runtime, pb, load_math(pa[0]), po, n);
  } else {
    const Shape& shape = out.shape();
    const std::array<Shape, 2> strides{cpu::broadcast_strides(a.shape(), a.strides(), shape),
                                       cpu::broadcast_strides(b.shape(), b.strides(), shape)};
    for_range(c.runtime, n, [&](int64_t begin, int64_t end) {
      for_each_offsets<2>(shape, strides, begin, end, [&](int64_t i, const std::array<int64_t, 2>& off) {
        po[i] = store_math<T>(Fn{}(load_math(pa[off[0]]), load_math(pb[off[1]])));
      });
    });
  }
}

template <class T, class Fn>
void scalar_op_kernel(const KernelCall& c) {
  const double value = c.op.attr_real(c.attrs, "value");
  scalar_loop<T, Fn, false>(c.runtime, c.inputs[0].data<T>(), static_cast<math_t<T>>(value), c.outputs[0].data<T>(),
                            c.outputs[0].numel());
}

void binary_infer(InferCall& c) {
  check_same_dtype(c);
  c.outputs.push_back(
      {broadcast_shapes(c.inputs[0].shape(), c.inputs[1].shape(), c.op.name.c_str()), c.inputs[0].dtype(), c.device});
}

void same_as_input_infer(InferCall& c) {
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

// ---- backwards: each operand's gradient summed down to its shape ----------------

Tensor grad_for(const BackwardCall& c, size_t i, const Tensor& full_grad) {
  return sum_to(c.runtime, full_grad, c.input_meta[i].shape);
}

std::vector<Tensor> add_backward(const BackwardCall& c) {
  const Tensor& g = c.grad_outputs[0];
  return {c.needs_input_grad[0] ? grad_for(c, 0, g) : Tensor(), c.needs_input_grad[1] ? grad_for(c, 1, g) : Tensor()};
}

std::vector<Tensor> sub_backward(const BackwardCall& c) {
  const Tensor& g = c.grad_outputs[0];
  Runtime& rt = c.runtime;
  return {c.needs_input_grad[0] ? grad_for(c, 0, g) : Tensor(),
          c.needs_input_grad[1] ? grad_for(c, 1, rt.call1("neg", {g})) : Tensor()};
}

std::vector<Tensor> mul_backward(const BackwardCall& c) {
  const Tensor& g = c.grad_outputs[0];
  Runtime& rt = c.runtime;
  const OpDef& mul = rt.op("mul");
  return {c.needs_input_grad[0] ? grad_for(c, 0, rt.call1(mul, {g, c.inputs[1]})) : Tensor(),
          c.needs_input_grad[1] ? grad_for(c, 1, rt.call1(mul, {g, c.inputs[0]})) : Tensor()};
}

// d(a/b)/da = 1/b and d(a/b)/db = -(a/b)/b: the second reuses g/b.
std::vector<Tensor> div_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const OpDef& div = rt.op("div");
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const Tensor g_over_b = rt.call1(div, {c.grad_outputs[0], b});
  Tensor grad_b;
  if (c.needs_input_grad[1])
    grad_b = grad_for(c, 1, rt.call1("neg", {rt.call1("mul", {g_over_b, rt.call1(div, {a, b})})}));
  return {c.needs_input_grad[0] ? grad_for(c, 0, g_over_b) : Tensor(), grad_b};
}

std::vector<Tensor> add_scalar_backward(const BackwardCall& c) { return {c.grad_outputs[0]}; }

std::vector<Tensor> mul_scalar_backward(const BackwardCall& c) {
  return {c.runtime.call1(c.op, {c.grad_outputs[0]}, c.attrs)};
}

template <class Fn>
OpDef binary_op(std::string name, BackwardFn backward, bool integers, bool backward_reads_inputs) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"a"}, {"b"}};
  op.infer = binary_infer;
  op.backward = backward;
  op.accepts_strided = true;
  op.saves_outputs = false;
  op.saves_inputs = backward_reads_inputs;  // add and sub need only the shapes
  const auto kernel = []<class T>() -> KernelFn { return binary_kernel<T, Fn>; };
  if (integers) set_cpu_kernels(op, ArithmeticTypes{}, kernel);
  else set_cpu_kernels(op, FloatTypes{}, kernel);
  return op;
}

template <class Fn>
OpDef scalar_op(std::string name, BackwardFn backward) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"input"}};
  op.attrs = {attr_real("value", 0.0)};
  op.infer = same_as_input_infer;
  op.backward = backward;
  op.saves_inputs = op.saves_outputs = false;
  set_cpu_kernels(op, ArithmeticTypes{}, []<class T>() -> KernelFn { return scalar_op_kernel<T, Fn>; });
  return op;
}

}  // namespace

void register_binary_ops(OpRegistry& r) {
  r.add(binary_op<AddFn>("add", add_backward, true, false));
  r.add(binary_op<SubFn>("sub", sub_backward, true, false));
  r.add(binary_op<MulFn>("mul", mul_backward, true, true));
  r.add(binary_op<DivFn>("div", div_backward, false, true));
  r.add(scalar_op<AddFn>("add_scalar", add_scalar_backward));
  r.add(scalar_op<MulFn>("mul_scalar", mul_scalar_backward));
}

}  // namespace kiln::elementwise
