// masked_fill(input, mask; value): input with `value` wherever the bool mask
// (broadcast to the input's shape, as torch.Tensor.masked_fill) is true.
// The gradient flows where the mask is false.
#include "families.hpp"
#include "kiln/kernels/cpu/strided.hpp"
#include "kiln/ops/helpers.hpp"
#include "remap.hpp"

namespace kiln::shape {
namespace {

template <class T>
void masked_fill_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  const Tensor& mask = c.inputs[1];
  Tensor& out = c.outputs[0];
  const T fill = fill_as<T>(c.op.attr_real(c.attrs, "value"));
  const Shape mask_strides = cpu::broadcast_strides(mask.shape(), mask.strides(), out.shape());
  const T* src = in.data<T>();
  const bool* m = mask.data<bool>();
  T* dst = out.data<T>();
  c.runtime.thread_pool().parallel_for(out.numel(), cpu::kElementGrain, [&](int64_t b, int64_t e) {
    cpu::for_each_offset2(out.shape(), in.strides(), mask_strides, b, e,
                          [&](int64_t i, int64_t in_off, int64_t mask_off) {
                            dst[i] = m[mask_off] ? fill : src[in_off];
                          });
  });
}

std::vector<Tensor> masked_fill_backward(const BackwardCall& c) {
  return {c.runtime.call1(c.op, {c.grad_outputs[0], c.inputs[1]}, c.op.make_attrs({{"value", 0.0}})), Tensor()};
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  const int lead = to.rank() - from.rank();
  for (int d = 0; d < from.rank(); ++d)
    if (from[d] != 1 && from[d] != to[d + lead]) return false;
  return true;
}

void masked_fill_infer(InferCall& c) {
  const Shape& in = c.inputs[0].shape();
  const Shape& mask = c.inputs[1].shape();
  KILN_CHECK(c.inputs[1].dtype() == DType::boolean, Status::dtype_mismatch, "op '", c.op.name,
             "': mask must be bool, got ", dtype_name(c.inputs[1].dtype()));
  KILN_CHECK(broadcasts_to(mask, in), Status::shape_mismatch,
             "op '", c.op.name, "': mask of shape ", to_string(mask), " does not broadcast to the input's shape ",
             to_string(in));
  c.outputs.push_back({in, c.inputs[0].dtype(), c.device});
}

}  // namespace

void register_masked_fill_ops(OpRegistry& r) {
  OpDef op;
  op.name = "masked_fill";
  op.inputs = {{"input"}, {"mask"}};
  op.attrs = {attr_required("value", AttrType::real)};
  op.infer = masked_fill_infer;
  op.backward = masked_fill_backward;
  op.accepts_strided = true;
  op.saves_outputs = false;
  for (DType t : kAllDTypes)
    visit_dtype(t, [&]<class T>() { op.set_kernel(DeviceType::cpu, t, &masked_fill_kernel<T>); });
  r.add(std::move(op));
}

}  // namespace kiln::shape
