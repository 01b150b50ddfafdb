// prelu and prelu_backward on the CPU. prelu_backward(grad, input, weight)
// gives both gradients at once: the input's element by element, the
// weight's summed over every element of its channel.
#include "../reduction/common.hpp"
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "prelu.hpp"

namespace kiln::shape {
namespace {

void prelu_infer(InferCall& c) {
  check_floating(c, 0);
  check_same_dtype(c);
  prelu_geometry(c.op, c.inputs[0].shape(), c.inputs[1].shape());
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), c.device});
}

template <class T>
void prelu_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const PreluGeometry g = prelu_geometry(c.op, in.shape(), c.inputs[1].shape());
  const T* x = in.data<T>();
  const T* w = c.inputs[1].data<T>();
  T* out = c.outputs[0].data<T>();
  c.runtime.thread_pool().parallel_for(in.numel(), cpu::kElementGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = store_acc<T>(prelu_value(load_acc(x[i]), load_acc(w[g.channel(i)])));
  });
}

std::vector<Tensor> prelu_backward(const BackwardCall& c) {
  std::vector<Tensor> grads = c.runtime.call("prelu_backward", {c.grad_outputs[0], c.inputs[0], c.inputs[1]}, {});
  if (!c.needs_input_grad[0]) grads[0] = Tensor();
  if (!c.needs_input_grad[1]) grads[1] = Tensor();
  return grads;
}

void prelu_backward_infer(InferCall& c) {
  check_floating(c, 0);
  check_same_dtype(c);
  prelu_geometry(c.op, c.inputs[1].shape(), c.inputs[2].shape());
  KILN_CHECK(c.inputs[0].shape() == c.inputs[1].shape(), Status::shape_mismatch, "op '", c.op.name,
             "': gradient of shape ", to_string(c.inputs[0].shape()), " for an input of shape ",
             to_string(c.inputs[1].shape()));
  c.outputs.push_back({c.inputs[1].shape(), c.inputs[1].dtype(), c.device});
  c.outputs.push_back({c.inputs[2].shape(), c.inputs[2].dtype(), c.device});
}

// Serial over the weight's sums: a channel gathers from many elements.
template <class T>
void prelu_backward_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[1];
  const PreluGeometry g = prelu_geometry(c.op, in.shape(), c.inputs[2].shape());
  const T* grad = c.inputs[0].data<T>();
  const T* x = in.data<T>();
  const T* w = c.inputs[2].data<T>();
  T* grad_in = c.outputs[0].data<T>();
  std::vector<acc_t<T>> grad_w(size_t(g.channels), acc_t<T>(0));
  for (int64_t i = 0; i < in.numel(); ++i) {
    const int64_t ch = g.channel(i);
    const acc_t<T> xi = load_acc(x[i]), gi = load_acc(grad[i]);
    grad_in[i] = store_acc<T>(gi * prelu_input_slope(xi, load_acc(w[ch])));
    grad_w[size_t(ch)] += gi * prelu_weight_slope(xi);
  }
  T* dw = c.outputs[1].data<T>();
  for (size_t k = 0; k < grad_w.size(); ++k) dw[k] = store_acc<T>(grad_w[k]);
}

}  // namespace

PreluGeometry prelu_geometry(const OpDef& op, const Shape& input, const Shape& weight) {
  PreluGeometry g;
  g.channels = weight.numel();
  const int64_t channels = input.rank() >= 2 ? input[1] : 1;
  KILN_CHECK(weight.rank() <= 1 && (g.channels == 1 || g.channels == channels), Status::shape_mismatch, "op '",
             op.name, "': weight of shape ", to_string(weight), " for input ", to_string(input),
             "; expected 1 slope or one per channel (", channels, ", the size of dim 1)");
  for (int d = 2; d < input.rank(); ++d) g.inner *= input[d];
  return g;
}

void register_prelu_ops(OpRegistry& r) {
  {
    OpDef op;
    op.name = "prelu";
    op.inputs = {{"input"}, {"weight"}};
    op.infer = prelu_infer;
    op.backward = prelu_backward;
    op.saves_outputs = false;
    reduction::set_float_kernels(op, []<class T>() { return &prelu_kernel<T>; });
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "prelu_backward";
    op.inputs = {{"grad"}, {"input"}, {"weight"}};
    op.infer = prelu_backward_infer;
    reduction::set_float_kernels(op, []<class T>() { return &prelu_backward_kernel<T>; });
    r.add(std::move(op));
  }
}

}  // namespace kiln::shape
