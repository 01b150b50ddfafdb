#include "kernel_reuse.hpp"

#include "kiln/error.hpp"

namespace kiln::nn {

std::vector<DeviceType> built_devices() {
#ifdef KILN_WITH_CUDA
  return {DeviceType::cpu, DeviceType::cuda};
#else
  return {DeviceType::cpu};
#endif
}

Tensor dense_view(const Tensor& t, const Shape& shape) {
  KILN_CHECK(t.is_contiguous() && shape.numel() == t.numel(), Status::internal, "cannot view ", to_string(t.shape()),
             " as ", to_string(shape));
  return t.view_as(shape, contiguous_strides(shape), t.offset());
}

void run_kernel_of(const KernelCall& caller, const OpDef& op, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, const Attrs& attrs) {
  const Device device = outputs[0].device();
  const DType dtype = inputs[0].dtype();
  const KernelFn kernel = op.kernel(device.type, dtype);
  KILN_CHECK(kernel != nullptr, Status::unsupported, "op '", caller.op.name, "' runs on op '", op.name,
             "', which has no kernel for ", dtype_name(dtype), " on ", to_string(device));
  kernel(KernelCall{caller.runtime, op, inputs, outputs, attrs});
}

}  // namespace kiln::nn
