#include "kernel_of.hpp"

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

void run_kernel_of(const KernelCall& c, const OpDef& target, std::span<const Tensor> inputs,
                   std::span<Tensor> outputs, const Attrs& attrs) {
  const Device device = outputs[0].device();
  const DType dtype = inputs[size_t(target.dtype_input)].dtype();
  const KernelFn kernel = target.kernel(device.type, dtype);
  KILN_CHECK(kernel != nullptr, Status::unsupported, "op '", c.op.name, "' runs through '", target.name,
             "', which has no kernel for ", dtype_name(dtype), " on ", to_string(device));
  kernel(KernelCall{c.runtime, target, inputs, outputs, attrs});
}

void mirror_kernels(OpDef& op, const OpDef& target, DeviceType device, KernelFn fn) {
  for (int t = 0; t < kNumDTypes; ++t)
    if (target.kernel(device, DType(t))) op.set_kernel(device, DType(t), fn);
}

void register_cuda_mirrored_kernels(OpRegistry& r) {
  // (op, the op whose kernels it runs)
  static constexpr std::pair<std::string_view, std::string_view> kMirrored[] = {
      {"instance_norm", "group_norm"}, {"max_pool1d", "max_pool2d"}, {"avg_pool1d", "avg_pool2d"},
      {"bmm", "matmul"}, {"baddbmm", "matmul"},
  };
  for (const auto& [name, target_name] : kMirrored) {
    const OpDef& op = r.get(name);
    const OpDef& target = r.get(target_name);
    KernelFn fn = nullptr;
    for (int t = 0; t < kNumDTypes && !fn; ++t) fn = op.kernel(DeviceType::cpu, DType(t));
    for (int t = 0; t < kNumDTypes; ++t)
      if (fn && target.kernel(DeviceType::cuda, DType(t))) r.set_kernel(name, DeviceType::cuda, DType(t), fn);
  }
}

}  // namespace kiln::nn
