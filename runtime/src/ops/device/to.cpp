// "to": a contiguous copy of the input on the device named by the `device`
// attribute ("cpu", "cuda", "cuda:N"). The kernel is chosen by the input's
// device; the output is allocated on the target, so the runtime rejects an
// unavailable target (with the reason) before the kernel runs.
#include <cstring>

#include "device_ops.hpp"
#include "kiln/memory/cuda.hpp"
#include "kiln/ops/helpers.hpp"

namespace kiln {
namespace {

Device target_device(const OpDef& op, const Attrs& attrs) {
  const std::string& text = op.attr_string(attrs, "device");
  Device d;
  KILN_CHECK(parse_device(text, &d), Status::invalid_argument, "op '", op.name, "': unknown device '", text,
             "' (expected cpu, cuda or cuda:N)");
  return d;
}

void to_infer(InferCall& c) {
  c.outputs.push_back({c.inputs[0].shape(), c.inputs[0].dtype(), target_device(c.op, c.attrs)});
}

// Inputs arrive contiguous (the op does not accept strided views), so every
// path is one byte copy.
void to_kernel(const KernelCall& c) {
  const Tensor& in = c.inputs[0];
  Tensor& out = c.outputs[0];
  if (in.device().is_cpu() && out.device().is_cpu()) std::memcpy(out.raw_data(), in.raw_data(), in.nbytes());
  else cuda_copy(out.raw_data(), out.device(), in.raw_data(), in.device(), in.nbytes());
}

// The gradient goes back to the device the input came from.
std::vector<Tensor> to_backward(const BackwardCall& c) {
  const Tensor& grad = c.grad_outputs[0];
  const Device source = c.input_meta[0].device;
  if (grad.device() == source) return {grad};
  return {c.runtime.call1(c.op, {grad}, c.op.make_attrs({{"device", to_string(source)}}))};
}

}  // namespace

void register_to_op(OpRegistry& r) {
  OpDef op;
  op.name = "to";
  op.inputs = {{"input"}};
  op.attrs = {attr_required("device", AttrType::string)};
  op.infer = to_infer;
  op.backward = to_backward;
  op.saves_inputs = op.saves_outputs = false;  // the backward reads only the input's device
  op.set_kernel(DeviceType::cpu, kAllDTypes, to_kernel);
#ifdef KILN_WITH_CUDA
  op.set_kernel(DeviceType::cuda, kAllDTypes, to_kernel);
#endif
  r.add(std::move(op));
}

}  // namespace kiln
