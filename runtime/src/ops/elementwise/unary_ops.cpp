// Unary ops and their backward ops: `f(input)` and `f_backward(grad, input)`
// = grad * f'(input), both with f's attributes. f32 runs through oneDNN
// eltwise primitives; f64, f16 and bf16 through plain C++ loops over the
// formulas in unary_functions.hpp. neg's backward is neg itself.
#include "elementwise_common.hpp"
#include "unary_functions.hpp"

namespace kiln::elementwise {
namespace {

template <class Fn>
void unary_infer(InferCall& c) {
  check_floating(c, 0);
  Fn::params(c.op, c.attrs);  // rejects bad attribute values before any kernel runs
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

template <class Fn, class T>
void unary_kernel(const KernelCall& c) {
  const EltwiseParams p = Fn::params(c.op, c.attrs);
  const T* in = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.outputs[0].numel();
  if constexpr (std::is_same_v<T, float>) {
    dnnl_eltwise_forward(c.runtime, p, in, out, n);
  } else {
    for_range(c.runtime, n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = store_acc<T>(Fn::value(load_acc(in[i]), p));
    });
  }
}

template <class Fn>
void unary_backward_infer(InferCall& c) {
  check_floating(c, 0);
  check_same_dtype(c);
  KILN_CHECK(c.inputs[0].shape() == c.inputs[1].shape(), Status::shape_mismatch, "op '", c.op.name, "': grad ",
             to_string(c.inputs[0].shape()), " and input ", to_string(c.inputs[1].shape()), " must have one shape");
  Fn::params(c.op, c.attrs);
  c.outputs.push_back({c.inputs[1].shape(), c.inputs[1].dtype(), c.device});
}

template <class Fn, class T>
void unary_backward_kernel(const KernelCall& c) {
  const EltwiseParams p = Fn::params(c.op, c.attrs);
  const T* grad = c.inputs[0].data<T>();
  const T* in = c.inputs[1].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.outputs[0].numel();
  if constexpr (std::is_same_v<T, float>) {
    dnnl_eltwise_backward(c.runtime, p, in, grad, out, n);
  } else {
    for_range(c.runtime, n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = store_acc<T>(load_acc(grad[i]) * Fn::derivative(load_acc(in[i]), p));
    });
  }
}

template <class Fn>
std::string backward_name() {
  return std::string(Fn::name) + "_backward";
}

template <class Fn>
std::vector<Tensor> unary_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op(backward_name<Fn>());
  return {c.runtime.call1(op, {c.grad_outputs[0], c.inputs[0]}, c.attrs)};
}

std::vector<Tensor> neg_backward(const BackwardCall& c) { return {c.runtime.call1(c.op, {c.grad_outputs[0]}, c.attrs)}; }

template <class Fn>
OpDef unary_op() {
  OpDef op;
  op.name = Fn::name;
  op.inputs = {{"input"}};
  op.attrs = Fn::attrs();
  op.infer = unary_infer<Fn>;
  op.backward = unary_backward<Fn>;
  op.saves_outputs = false;
  if constexpr (requires { Fn::precision; }) op.precision = Fn::precision;
  set_cpu_kernels(op, FloatTypes{}, []<class T>() -> KernelFn { return unary_kernel<Fn, T>; });
  return op;
}

// The backward op's own outputs carry no gradient (no double backward).
template <class Fn>
OpDef unary_backward_op() {
  OpDef op;
  op.name = backward_name<Fn>();
  op.inputs = {{"grad"}, {"input"}};
  op.attrs = Fn::attrs();
  op.infer = unary_backward_infer<Fn>;
  set_cpu_kernels(op, FloatTypes{}, []<class T>() -> KernelFn { return unary_backward_kernel<Fn, T>; });
  return op;
}

template <class... Fn>
void register_with_backward_ops(OpRegistry& r) {
  (r.add(unary_op<Fn>()), ...);
  (r.add(unary_backward_op<Fn>()), ...);
}

}  // namespace

void register_unary_ops(OpRegistry& r) {
  OpDef neg = unary_op<Neg>();
  neg.backward = neg_backward;
  neg.saves_inputs = false;
  r.add(std::move(neg));
  register_with_backward_ops<Relu, LeakyRelu, Gelu, Silu, Tanh, Sigmoid, Exp, Log, Sqrt, Pow, Clamp>(r);
}

}  // namespace kiln::elementwise
