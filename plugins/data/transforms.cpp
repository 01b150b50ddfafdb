// Example fields as contiguous CPU data, for the transforms' kernels.
#include "transforms.hpp"

namespace kiln_data {

FieldTensor read_field(kiln_example* ex, const std::string& name, const char* transform) {
  TensorRef stored;
  const kiln_status st = host->example_get(ex, name.c_str(), stored.out());
  if (st != KILN_OK) fail(st, transform, ": the example has no field '", name, "': ", host->last_error());
  kiln_device_type device;
  int index;
  check(host->tensor_device(stored.get(), &device, &index), transform);
  if (device != KILN_DEVICE_CPU)
    fail(KILN_ERR_DEVICE_MISMATCH, transform, ": field '", name, "' is not on the CPU; transforms run on CPU tensors");
  FieldTensor f;
  check(host->tensor_contiguous(stored.get(), f.tensor.out()), transform);
  check(host->tensor_describe(f.tensor.get(), &f.desc), transform);
  f.shape.assign(f.desc.dims, f.desc.dims + f.desc.rank);
  check(host->tensor_address(f.tensor.get(), &f.data), transform);
  return f;
}

FieldTensor new_field_tensor(kiln_runtime* rt, const std::vector<int64_t>& shape, kiln_dtype dtype) {
  FieldTensor f;
  f.tensor = tensor_empty(rt, shape, dtype);
  check(host->tensor_describe(f.tensor.get(), &f.desc), "a new tensor");
  f.shape = shape;
  check(host->tensor_address(f.tensor.get(), &f.data), "a new tensor");
  return f;
}

void write_field(kiln_example* ex, const std::string& name, const FieldTensor& t) {
  check(host->example_set(ex, name.c_str(), t.tensor.get()), "setting an example field");
}

}  // namespace kiln_data
