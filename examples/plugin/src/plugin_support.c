/* Helpers shared by the plugin's kernels, ops and optimizer. */
#include <stdio.h>

#include "swish_plugin.h"

kiln_status tensor_elements(const kiln_tensor* t, void** data, int64_t* numel, kiln_dtype* dtype) {
  kiln_tensor_desc desc;
  kiln_status st = host->tensor_describe(t, &desc);
  if (st != KILN_OK) return st;
  st = host->tensor_address(t, data);
  if (st != KILN_OK) return st;
  *numel = desc_numel(&desc);
  *dtype = desc.dtype;
  return KILN_OK;
}

kiln_status tensor_scalar_value(const kiln_tensor* t, double* out) {
  void* data = NULL;
  int64_t numel = 0;
  kiln_dtype dtype = KILN_F32;
  kiln_status st = tensor_elements(t, &data, &numel, &dtype);
  if (st != KILN_OK) return st;
  if (numel != 1) return host->error(KILN_ERR_SHAPE_MISMATCH, "expected a one-element tensor");
  if (dtype == KILN_F32) *out = *(const float*)data;
  else if (dtype == KILN_F64) *out = *(const double*)data;
  else return host->error(KILN_ERR_DTYPE_MISMATCH, "expected an f32 or f64 scalar");
  return KILN_OK;
}

int64_t desc_numel(const kiln_tensor_desc* desc) {
  int64_t n = 1;
  for (int d = 0; d < desc->rank; ++d) n *= desc->dims[d];
  return n;
}

const char* desc_shape_text(const kiln_tensor_desc* desc, char* buf, size_t size) {
  size_t used = 0;
  used += (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < desc->rank && used < size; ++d)
    used += (size_t)snprintf(buf + used, size - used, d == 0 ? "%lld" : ", %lld", (long long)desc->dims[d]);
  if (used < size) snprintf(buf + used, size - used, "]");
  return buf;
}

const char* dtype_text(kiln_dtype dtype) {
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
  return "an unknown dtype";
}

kiln_status check_float(const kiln_tensor_desc* desc, const char* what) {
  char message[160];
  if (desc->dtype == KILN_F32 || desc->dtype == KILN_F64) return KILN_OK;
  snprintf(message, sizeof message, "%s must be f32 or f64, got %s", what, dtype_text(desc->dtype));
  return host->error(KILN_ERR_DTYPE_MISMATCH, message);
}

kiln_status call_op1(kiln_runtime* rt, const char* name, kiln_tensor* const* inputs, size_t n_inputs,
                     const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out) {
  const kiln_op* op = NULL;
  kiln_status st = host->op_find(rt, name, &op);
  if (st != KILN_OK) return st;
  return host->op_call1(rt, op, inputs, n_inputs, attrs, n_attrs, out);
}
