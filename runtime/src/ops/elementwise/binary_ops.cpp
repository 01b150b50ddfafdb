// add, sub, mul, div, minimum, maximum and remainder with NumPy
// broadcasting (binary_map.hpp), and add_scalar / mul_scalar.
#include <algorithm>

#include "binary_functions.hpp"
#include "binary_map.hpp"

namespace kiln::elementwise {
namespace {

template <class T, class Fn>
void scalar_op_kernel(const KernelCall& c) {
  const double value = c.op.attr_real(c.attrs, "value");
  scalar_loop<T, T, false>(c.runtime, c.inputs[0].data<T>(), static_cast<math_t<T>>(value), c.outputs[0].data<T>(),
                           c.outputs[0].numel(), Fn{});
}

// An integer divisor must have no zero (PyTorch raises there too); floating
// ones give NaN.
template <class T>
void remainder_kernel(const KernelCall& c) {
  if constexpr (std::is_integral_v<T>) {
    const Tensor divisor = c.runtime.contiguous(c.inputs[1]);
    const T* p = divisor.data<T>();
    const int64_t n = divisor.numel();
    KILN_CHECK(std::find(p, p + n, T(0)) == p + n, Status::invalid_argument, "op '", c.op.name,
               "': integer division by zero (the divisor b ", to_string(divisor.shape()), " has a zero element)");
  }
  binary_kernel<T, T, RemainderFn>(c);
}

void binary_infer(InferCall& c) { c.outputs.push_back({binary_shape(c), c.inputs[0].dtype(), c.device}); }

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

// torch.maximum and torch.minimum: the gradient goes to the operand chosen,
// in halves to both at ties, and whole to both where a NaN is involved (no
// comparison holds there). Operand a gets none where `a_loses`(a, b) holds,
// b none where `b_loses`(a, b) does.
std::vector<Tensor> choice_backward(const BackwardCall& c, const char* a_loses, const char* b_loses) {
  Runtime& rt = c.runtime;
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const Tensor& g = c.grad_outputs[0];
  const OpDef& where = rt.op("where");
  const Attrs attrs = where.default_attrs();
  const Tensor half = rt.call1("mul_scalar", {g}, {{"value", 0.5}});
  const Tensor shared = rt.call1(where, {rt.call1("eq", {a, b}), half, g}, attrs);
  const Tensor zero = rt.full({}, 0.0, g.dtype(), g.device());
  std::vector<Tensor> grads(2);
  if (c.needs_input_grad[0]) grads[0] = grad_for(c, 0, rt.call1(where, {rt.call1(a_loses, {a, b}), zero, shared}, attrs));
  if (c.needs_input_grad[1]) grads[1] = grad_for(c, 1, rt.call1(where, {rt.call1(b_loses, {a, b}), zero, shared}, attrs));
  return grads;
}

std::vector<Tensor> maximum_backward(const BackwardCall& c) { return choice_backward(c, "lt", "gt"); }
std::vector<Tensor> minimum_backward(const BackwardCall& c) { return choice_backward(c, "gt", "lt"); }

// d(a % b)/da = 1 and d(a % b)/db = -floor(a / b).
std::vector<Tensor> remainder_backward(const BackwardCall& c) {
  Runtime& rt = c.runtime;
  const Tensor& g = c.grad_outputs[0];
  Tensor grad_b;
  if (c.needs_input_grad[1]) {
    const Tensor quotient = rt.call1("floor", {rt.call1("div", {c.inputs[0], c.inputs[1]})});
    grad_b = grad_for(c, 1, rt.call1("neg", {rt.call1("mul", {g, quotient})}));
  }
  return {c.needs_input_grad[0] ? grad_for(c, 0, g) : Tensor(), grad_b};
}

std::vector<Tensor> add_scalar_backward(const BackwardCall& c) { return {c.grad_outputs[0]}; }

std::vector<Tensor> mul_scalar_backward(const BackwardCall& c) {
  return {c.runtime.call1(c.op, {c.grad_outputs[0]}, c.attrs)};
}

// The kernel maker of a binary op computing Fn, for set_cpu_kernels.
template <class Fn>
constexpr auto kernel_of = []<class T>() -> KernelFn { return binary_kernel<T, T, Fn>; };

template <class Types, class Make>
OpDef binary_op(std::string name, BackwardFn backward, bool backward_reads_inputs, Make make) {
  OpDef op;
  op.name = std::move(name);
  op.inputs = {{"a"}, {"b"}};
  op.infer = binary_infer;
  op.backward = backward;
  op.accepts_strided = true;
  op.saves_outputs = false;
  op.saves_inputs = backward_reads_inputs;  // add and sub need only the shapes
  set_cpu_kernels(op, Types{}, make);
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
  r.add(binary_op<ArithmeticTypes>("add", add_backward, false, kernel_of<AddFn>));
  r.add(binary_op<ArithmeticTypes>("sub", sub_backward, false, kernel_of<SubFn>));
  r.add(binary_op<ArithmeticTypes>("mul", mul_backward, true, kernel_of<MulFn>));
  r.add(binary_op<FloatTypes>("div", div_backward, true, kernel_of<DivFn>));
  r.add(binary_op<AllTypes>("maximum", maximum_backward, true, kernel_of<MaximumFn>));
  r.add(binary_op<AllTypes>("minimum", minimum_backward, true, kernel_of<MinimumFn>));
  r.add(binary_op<ArithmeticTypes>("remainder", remainder_backward, true,
                                   []<class T>() -> KernelFn { return remainder_kernel<T>; }));
  r.add(scalar_op<AddFn>("add_scalar", add_scalar_backward));
  r.add(scalar_op<MulFn>("mul_scalar", mul_scalar_backward));
}

}  // namespace kiln::elementwise
