// Shared helpers of the kiln-data plugin.
#include "support.hpp"

#include <algorithm>

namespace kiln_data {

const kiln_host* host = nullptr;

void check(kiln_status status, const char* context) {
  if (status != KILN_OK) fail(status, context, ": ", host->last_error());
}

size_t dtype_size(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F64:
    case KILN_I64: return 8;
    case KILN_F32:
    case KILN_I32: return 4;
    case KILN_F16:
    case KILN_BF16: return 2;
    case KILN_U8:
    case KILN_BOOL: return 1;
  }
  fail(KILN_ERR_INVALID_ARGUMENT, "unknown dtype code ", int(dtype));
}

const char* dtype_name(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F32: return "f32";
    case KILN_F64: return "f64";
    case KILN_F16: return "f16";
    case KILN_BF16: return "bf16";
    case KILN_I32: return "i32";
    case KILN_I64: return "i64";
    case KILN_U8: return "u8";
    case KILN_BOOL: return "bool";
  }
  return "unknown";
}

int64_t numel(const std::vector<int64_t>& shape) {
  // A zero anywhere empties the shape, however large the other dimensions.
  // std::find, not std::ranges::find: that is an inline object, which
  // sanitizer builds would export from the plugin.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      fail(KILN_ERR_INVALID_ARGUMENT, "shape ", shape_text(shape), " has more than 2^63 elements");
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += cat(i ? "," : "", shape[i]);
  return text + "]";
}

TensorRef tensor_from_bytes(kiln_runtime* rt, const void* data, const std::vector<int64_t>& shape, kiln_dtype dtype) {
  TensorRef t;
  check(host->tensor_from_data(rt, data, size_t(numel(shape)) * dtype_size(dtype), shape.data(), int(shape.size()),
                               dtype, t.out()),
        "creating a tensor");
  return t;
}

TensorRef tensor_empty(kiln_runtime* rt, const std::vector<int64_t>& shape, kiln_dtype dtype) {
  TensorRef t;
  check(host->tensor_empty(rt, shape.data(), int(shape.size()), dtype, KILN_DEVICE_CPU, 0, t.out()),
        "creating a tensor");
  return t;
}

std::string config_string(const kiln_attr& a) { return a.value.s ? a.value.s : ""; }

std::vector<int64_t> config_ints(const kiln_attr& a) {
  return {a.value.ints.data, a.value.ints.data + a.value.ints.len};
}

std::vector<double> config_floats(const kiln_attr& a) {
  return {a.value.floats.data, a.value.floats.data + a.value.floats.len};
}

}  // namespace kiln_data
