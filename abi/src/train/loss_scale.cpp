#include "train/loss_scale.hpp"

#include <algorithm>
#include <cmath>

#include "kiln/error.hpp"
#include "train/trainer.hpp"

namespace kiln::train {
namespace {

constexpr const char* kWhat = "unscaling the gradients";

// sum(g * 0) is 0 when every element of g is finite and NaN otherwise
// (inf * 0 and NaN * 0 are NaN): an exact test that, unlike a sum of the
// values, cannot overflow on large finite gradients. As an f64 scalar, so
// that gradients of several dtypes add up.
TensorRef non_finite_marker(kiln_runtime* rt, const TrainOps& ops, kiln_tensor* g) {
  const kiln_attr zero = kiln_attr_float("value", 0.0);
  const TensorRef zeros = call_op(rt, ops.mul_scalar, {g}, &zero, 1, kWhat);
  const TensorRef sum = call_op(rt, ops.sum, {zeros.get()}, nullptr, 0, kWhat);
  const kiln_attr to_f64 = kiln_attr_dtype("dtype", KILN_F64);
  return call_op(rt, ops.cast, {sum.get()}, &to_f64, 1, kWhat);
}

}  // namespace

LossScaleState initial_loss_scale(const LossScaleConfig& c) { return {c.enabled ? c.initial : 1.0, 0}; }

bool unscale_gradients(kiln_runtime* rt, const TrainOps& ops, const std::vector<TensorRef>& params, double scale) {
  const std::vector<TensorRef> grads = present_gradients(params);
  const kiln_attr inverse = kiln_attr_float("value", 1.0 / scale);
  TensorRef marker;
  for (const TensorRef& g : grads) {
    const TensorRef unscaled = call_op(rt, ops.mul_scalar, {g.get()}, &inverse, 1, kWhat);
    check_call(kiln_tensor_assign(g.get(), unscaled.get()), kWhat);
    TensorRef part = non_finite_marker(rt, ops, g.get());
    marker = marker.get() ? call_op(rt, ops.add, {marker.get(), part.get()}, nullptr, 0, kWhat) : std::move(part);
  }
  // One read for all the gradients: the only wait for the device.
  return !marker.get() || std::isfinite(read_scalar(rt, ops.cast, marker.get(), kWhat));
}

void update_loss_scale(const LossScaleConfig& c, LossScaleState& s, bool finite, int64_t step) {
  if (finite) {
    s.clean_steps += 1;
    if (s.clean_steps < c.interval) return;
    const double grown = s.scale * c.growth;
    if (std::isfinite(grown)) s.scale = grown;
    s.clean_steps = 0;
    return;
  }
  KILN_CHECK(s.scale > c.min, Status::invalid_state, "loss scaling: the gradients of step ", step,
             " hold inf or NaN at the minimum loss scale ", s.scale,
             " (options->loss_scale_min); no smaller scale is left to try, so training stops. The loss or the "
             "gradients are not finite whatever the scale: check the data and the learning rate, or train in "
             "bf16 or f32");
  s.scale = std::max(s.scale * c.backoff, c.min);
  s.clean_steps = 0;
}

}  // namespace kiln::train
