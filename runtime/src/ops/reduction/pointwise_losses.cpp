// Losses that compare input and target element by element: mse_loss and
// bce_with_logits, with reduction "mean", "sum" or "none", and their
// backward ops, which give the gradients of both input and target.
#include <cmath>

#include "common.hpp"
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"

namespace kiln::reduction {
namespace {

struct MseLoss {
  template <class A> static A loss(A x, A t) { return (x - t) * (x - t); }
  template <class A> static A d_input(A x, A t) { return 2 * (x - t); }
  template <class A> static A d_target(A x, A t) { return -2 * (x - t); }
};

// max(x, 0) - x t + log(1 + exp(-|x|)): never exponentiates a large positive
// number, so it holds for any logit.
struct BceWithLogitsLoss {
  template <class A> static A loss(A x, A t) { return std::max(x, A(0)) - x * t + std::log1p(std::exp(-std::abs(x))); }
  template <class A> static A d_input(A x, A t) {
    const A e = std::exp(-std::abs(x));  // sigmoid without overflow on either side
    return (x >= 0 ? 1 / (1 + e) : e / (1 + e)) - t;
  }
  template <class A> static A d_target(A x, A) { return -x; }
};

void pointwise_loss_infer(InferCall& c) {
  check_floating(c, 0);
  check_same_dtype(c);
  const Shape& in = c.inputs[0].shape();
  KILN_CHECK(in == c.inputs[1].shape(), Status::shape_mismatch, "op '", c.op.name, "': input ", to_string(in),
             " and target ", to_string(c.inputs[1].shape()), " must have the same shape");
  c.outputs.push_back({loss_output_shape(parse_loss_reduction(c.op, c.attrs), in), c.inputs[0].dtype(), c.device});
}

template <class Loss, class T>
void pointwise_loss_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const T* x = c.inputs[0].data<T>();
  const T* t = c.inputs[1].data<T>();
  T* out = c.outputs[0].data<T>();
  const int64_t n = c.inputs[0].numel();
  const LossReduction red = parse_loss_reduction(c.op, c.attrs);
  if (red == LossReduction::none) {
    c.runtime.thread_pool().parallel_for(n, cpu::kElementGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = store_acc<T>(Loss::loss(load_acc(x[i]), load_acc(t[i])));
    });
    return;
  }
  // Partial sums over fixed blocks, added in order: the result does not
  // depend on how the blocks were spread over threads.
  const int64_t block = cpu::kElementGrain;
  std::vector<A> partial(size_t((n + block - 1) / block), A(0));
  c.runtime.thread_pool().parallel_for(int64_t(partial.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      A s = 0;
      for (int64_t i = p * block; i < std::min(n, (p + 1) * block); ++i) s += Loss::loss(load_acc(x[i]), load_acc(t[i]));
      partial[size_t(p)] = s;
    }
  });
  A total = 0;
  for (A s : partial) total += s;
  out[0] = store_acc<T>(red == LossReduction::mean ? total / A(n) : total);
}

// (grad, input, target) -> (grad of input, grad of target).
void pointwise_loss_backward_infer(InferCall& c) {
  for (int k = 0; k < 2; ++k) c.outputs.push_back({c.inputs[1].shape(), c.inputs[1].dtype(), c.device});
}

template <class Loss, class T>
void pointwise_loss_backward_kernel(const KernelCall& c) {
  using A = acc_t<T>;
  const T* g = c.inputs[0].data<T>();
  const T* x = c.inputs[1].data<T>();
  const T* t = c.inputs[2].data<T>();
  T* gx = c.outputs[0].data<T>();
  T* gt = c.outputs[1].data<T>();
  const int64_t n = c.inputs[1].numel();
  const LossReduction red = parse_loss_reduction(c.op, c.attrs);
  const A shared = red == LossReduction::none ? A(0) : load_acc(g[0]) / A(red == LossReduction::mean ? n : 1);
  c.runtime.thread_pool().parallel_for(n, cpu::kElementGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const A scale = red == LossReduction::none ? load_acc(g[i]) : shared;
      const A xi = load_acc(x[i]), ti = load_acc(t[i]);
      gx[i] = store_acc<T>(scale * Loss::d_input(xi, ti));
      gt[i] = store_acc<T>(scale * Loss::d_target(xi, ti));
    }
  });
}

std::vector<Tensor> pointwise_loss_backward(const BackwardCall& c) {
  const OpDef& op = c.runtime.op(c.op.name + "_backward");
  const std::vector<Tensor> args{c.grad_outputs[0], c.inputs[0], c.inputs[1]};
  std::vector<Tensor> grads = c.runtime.call(op, args, c.attrs);
  for (size_t i = 0; i < 2; ++i)
    if (!c.needs_input_grad[i]) grads[i] = Tensor();
  return grads;
}

template <class Loss>
void add_pointwise_loss(OpRegistry& r, const std::string& name) {
  OpDef op;
  op.name = name;
  op.inputs = {{"input"}, {"target"}};
  op.attrs = {attr_string("reduction", "mean")};
  op.infer = pointwise_loss_infer;
  op.backward = pointwise_loss_backward;
  op.saves_outputs = false;
  op.precision = PrecisionCategory::f32;
  set_float_kernels(op, []<class T>() { return &pointwise_loss_kernel<Loss, T>; });
  r.add(std::move(op));

  OpDef grad;
  grad.name = name + "_backward";
  grad.inputs = {{"grad"}, {"input"}, {"target"}};
  grad.attrs = {attr_string("reduction", "mean")};
  grad.infer = pointwise_loss_backward_infer;
  set_float_kernels(grad, []<class T>() { return &pointwise_loss_backward_kernel<Loss, T>; });
  r.add(std::move(grad));
}

}  // namespace

void register_pointwise_loss_ops(OpRegistry& r) {
  add_pointwise_loss<MseLoss>(r, "mse_loss");
  add_pointwise_loss<BceWithLogitsLoss>(r, "bce_with_logits");
}

}  // namespace kiln::reduction
