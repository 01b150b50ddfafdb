// The gradients of the parameters, their total norm and clipping by it. Everything is done with ops,
// on the gradients' own device; only the norm itself is read back.
#include "kiln/error.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

constexpr const char* kWhat = "computing the gradient norm";

// Keeps the clipped norm just under max_norm, as PyTorch's clip_grad_norm_ does.
constexpr double kClipEpsilon = 1e-6;

// sum(g * g) over one gradient, as an f64 scalar, so that gradients of
// several dtypes add up and the total keeps its precision: the square of
// its 2-norm, taken in one pass over the gradient.
TensorRef squared_sum(kiln_runtime* rt, const TrainOps& ops, kiln_tensor* g) {
  const TensorRef norm = call_op(rt, ops.norm, {g}, nullptr, 0, kWhat);
  const kiln_attr to_f64 = kiln_attr_dtype("dtype", KILN_F64);
  const TensorRef norm64 = call_op(rt, ops.cast, {norm.get()}, &to_f64, 1, kWhat);
  return call_op(rt, ops.mul, {norm64.get(), norm64.get()}, nullptr, 0, kWhat);
}

void scale_in_place(kiln_runtime* rt, const TrainOps& ops, const std::vector<TensorRef>& grads, double factor) {
  const kiln_attr value = kiln_attr_float("value", factor);
  for (const TensorRef& g : grads) {
    const TensorRef scaled = call_op(rt, ops.mul_scalar, {g.get()}, &value, 1, "clipping the gradients");
    check_call(kiln_tensor_assign(g.get(), scaled.get()), "clipping the gradients");
  }
}

}  // namespace

std::vector<TensorRef> present_gradients(const std::vector<TensorRef>& params) {
  std::vector<TensorRef> grads;
  for (const TensorRef& p : params) {
    kiln_tensor* g = nullptr;
    check_call(kiln_tensor_grad(p.get(), &g), "reading the gradients");
    if (g) grads.push_back(TensorRef::adopt(g));
  }
  return grads;
}

double clip_gradients(kiln_runtime* rt, const TrainOps& ops, const std::vector<TensorRef>& params, double max_norm) {
  const std::vector<TensorRef> grads = present_gradients(params);
  if (grads.empty()) return 0.0;
  TensorRef total;
  for (const TensorRef& g : grads) {
    TensorRef part = squared_sum(rt, ops, g.get());
    total = total.get() ? call_op(rt, ops.add, {total.get(), part.get()}, nullptr, 0, kWhat) : std::move(part);
  }
  const TensorRef norm_t = call_op(rt, ops.sqrt, {total.get()}, nullptr, 0, kWhat);
  const double norm = read_scalar(rt, ops.cast, norm_t.get(), kWhat);
  if (max_norm > 0.0 && norm > max_norm) scale_in_place(rt, ops, grads, max_norm / (norm + kClipEpsilon));
  return norm;
}

}  // namespace kiln::train
