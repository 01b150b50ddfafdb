#include "train/api_call.hpp"

#include "kiln/error.hpp"

namespace kiln::train {

void check_call(kiln_status status, std::string_view what) {
  if (status == KILN_OK) return;
  const bool known = status > KILN_OK && status <= KILN_ERR_SCRIPT;
  throw_error(known ? Status(status) : Status::internal, str_cat(what, ": ", kiln_last_error()));
}

TensorRef call_op(kiln_runtime* rt, const kiln_op* op, std::initializer_list<kiln_tensor*> inputs,
                  const kiln_attr* attrs, size_t n_attrs, std::string_view what) {
  kiln_tensor* out = nullptr;
  check_call(kiln_op_call1(rt, op, inputs.begin(), inputs.size(), attrs, n_attrs, &out), what);
  return TensorRef::adopt(out);
}

double read_scalar(kiln_runtime* rt, const kiln_op* cast, kiln_tensor* t, std::string_view what) {
  kiln_tensor* detached = nullptr;
  check_call(kiln_tensor_detach(t, &detached), what);
  const TensorRef value = TensorRef::adopt(detached);
  const kiln_attr to_f64 = kiln_attr_dtype("dtype", KILN_F64);
  const TensorRef as_f64 = call_op(rt, cast, {value.get()}, &to_f64, 1, what);
  double out = 0.0;
  check_call(kiln_tensor_read(as_f64.get(), &out, sizeof out), what);
  return out;
}

int64_t leading_dim(const kiln_tensor* t) {
  int rank = 0;
  int64_t dims[KILN_MAX_DIMS] = {};
  check_call(kiln_tensor_rank(t, &rank), "reading a batch's shape");
  check_call(kiln_tensor_shape(t, dims, KILN_MAX_DIMS), "reading a batch's shape");
  return rank == 0 ? 1 : dims[0];
}

}  // namespace kiln::train
