#include "tensor_ops.hpp"

namespace kiln_optim {

Tensor TensorOps::call(const char* op, std::initializer_list<kiln_tensor*> inputs, const kiln_attr* attrs,
                       size_t n_attrs) const {
  const kiln_op* handle = nullptr;
  check(host().op_find(rt_, op, &handle));
  kiln_tensor* out = nullptr;
  check(host().op_call1(rt_, handle, inputs.begin(), inputs.size(), attrs, n_attrs, &out));
  return Tensor(out);
}

Tensor TensorOps::with_value(const char* op, kiln_tensor* a, double value) const {
  const kiln_attr attr = kiln_attr_float("value", value);
  return call(op, {a}, &attr, 1);
}

Tensor TensorOps::sqrt(kiln_tensor* a) const { return call("sqrt", {a}, nullptr, 0); }

Tensor TensorOps::add_scaled(kiln_tensor* a, kiln_tensor* b, double s) const {
  const Tensor scaled = scale(b, s);
  return add(a, scaled.get());
}

Tensor TensorOps::full_like(kiln_tensor* like, double value) const {
  kiln_tensor_desc desc;
  check(host().tensor_describe(like, &desc));
  kiln_device_type device;
  int index = 0;
  check(host().tensor_device(like, &device, &index));
  kiln_tensor* out = nullptr;
  check(host().tensor_full(rt_, desc.dims, desc.rank, value, desc.dtype, device, index, &out));
  return Tensor(out);
}

void TensorOps::assign(kiln_tensor* dst, kiln_tensor* src) const { check(host().tensor_assign(dst, src)); }

}  // namespace kiln_optim
