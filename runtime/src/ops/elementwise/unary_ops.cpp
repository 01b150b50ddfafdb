// Unary ops and their backward ops, one of each per function of
// unary_functions.hpp: `f(input)` and `f_backward(grad, input)` = grad *
// f'(input), both with f's attributes. f32 and bf16 go through oneDNN
// eltwise primitives where oneDNN has vector code for the function (and,
// for backward, agrees with PyTorch's derivative); everything else through
// plain C++ loops over the formulas. Piecewise constant functions (floor, sign,
// ...) have zeros for a gradient and no backward op; neg's backward is neg.
#include "dnnl_eltwise.hpp"
#include "elementwise_common.hpp"
#include "unary_functions.hpp"

namespace kiln::elementwise {
namespace {

template <Domain D> struct DomainTypes;
template <> struct DomainTypes<Domain::floating> { using type = FloatTypes; };
template <> struct DomainTypes<Domain::numeric> { using type = NumericTypes; };
template <> struct DomainTypes<Domain::all> { using type = AllTypes; };

template <class Fn>
void check_domain(const InferCall& c, size_t i) {
  if constexpr (Fn::domain == Domain::floating) {
    check_floating(c, i);
  } else if constexpr (Fn::domain == Domain::numeric) {
    KILN_CHECK(c.inputs[i].dtype() != DType::boolean, Status::dtype_mismatch, "op '", c.op.name,
               "': input ", i, " must be a number type (floating or integer), got bool");
  }
}

template <class Fn>
void unary_infer(InferCall& c) {
  check_domain<Fn>(c, 0);
  Fn::params(c.op, c.attrs);  // rejects bad attribute values before any kernel runs
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

template <class Fn, class T>
void unary_kernel(const KernelCall& c) {
  const UnaryParams p = Fn::params(c.op, c.attrs);
  const T* in = c.inputs[0].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.outputs[0].numel();
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
    const dnnl_alg_kind_t alg = Fn::onednn(p);
    const EltwiseParams eltwise{static_cast<dnnl::algorithm>(alg), p.alpha, p.beta};
    if (alg != dnnl_alg_kind_undef && dnnl_eltwise_forward(c.runtime, eltwise, dtype_of<T>::value, in, out, n)) {
      if constexpr (Fn::onednn_loses_nan) {
        for_range(c.runtime, n, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            if (load_math(in[i]) != load_math(in[i])) out[i] = in[i];
        });
      }
      return;
    }
  }
  for_range(c.runtime, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = store_math<T>(Fn::value(load_math(in[i]), p));
  });
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
  const UnaryParams p = Fn::params(c.op, c.attrs);
  const T* grad = c.inputs[0].data<T>();
  const T* in = c.inputs[1].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.outputs[0].numel();
  if constexpr ((std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) && Fn::onednn_backward) {
    const dnnl_alg_kind_t alg = Fn::onednn(p);
    const EltwiseParams eltwise{static_cast<dnnl::algorithm>(alg), p.alpha, p.beta};
    if (alg != dnnl_alg_kind_undef && dnnl_eltwise_backward(c.runtime, eltwise, dtype_of<T>::value, in, grad, out, n))
      return;
  }
  for_range(c.runtime, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = store_acc<T>(load_acc(grad[i]) * Fn::derivative(load_acc(in[i]), p));
  });
}

template <class Fn>
std::string backward_name() {
  return std::string(Fn::name) + "_backward";
}

template <class Fn>
std::vector<Tensor> derivative_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op(backward_name<Fn>());
  return {c.runtime.call1(op, {c.grad_outputs[0], c.inputs[0]}, c.attrs)};
}

std::vector<Tensor> zero_backward(const BackwardCall& c) {
  const TensorMeta& in = c.input_meta[0];
  return {c.runtime.full(in.shape, 0.0, in.dtype, in.device)};
}

std::vector<Tensor> itself_backward(const BackwardCall& c) {
  return {c.runtime.call1(c.op, {c.grad_outputs[0]}, c.attrs)};
}

template <class Fn>
OpDef unary_op() {
  OpDef op;
  op.name = Fn::name;
  op.inputs = {{"input"}};
  op.attrs = Fn::attrs();
  op.infer = unary_infer<Fn>;
  op.saves_outputs = false;
  if constexpr (requires { Fn::precision; }) op.precision = Fn::precision;
  if constexpr (Fn::gradient == Gradient::derivative) {
    op.backward = derivative_backward<Fn>;
  } else {
    op.backward = Fn::gradient == Gradient::zero ? zero_backward : itself_backward;
    op.saves_inputs = false;
  }
  set_cpu_kernels(op, typename DomainTypes<Fn::domain>::type{},
                  []<class T>() -> KernelFn { return unary_kernel<Fn, T>; });
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
void register_functions(OpRegistry& r, FunctionList<Fn...>) {
  (r.add(unary_op<Fn>()), ...);
  const auto add_backward = [&]<class F>() {
    if constexpr (F::gradient == Gradient::derivative) r.add(unary_backward_op<F>());
  };
  (add_backward.template operator()<Fn>(), ...);
}

}  // namespace

void register_unary_ops(OpRegistry& r) { register_functions(r, UnaryFunctions{}); }

}  // namespace kiln::elementwise
