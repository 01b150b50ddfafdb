/* kiln_tensor_assign, which plugins reach as host->tensor_assign (an
 * optimizer's in-place update): values converted to the destination's
 * dtype, written in place into a leaf that requires grad, no tape, and a
 * shape mismatch named with both shapes. */
#include "loader_support.h"

int main(void) {
  kiln_runtime* rt = bare_runtime();
  const int64_t shape[2] = {2, 2}, other[1] = {4};
  const double values[4] = {1.5, -2.0, 3.25, 0.0};
  float out[4] = {0, 0, 0, 0};
  kiln_tensor *param = NULL, *src = NULL, *wrong = NULL, *grad = NULL;
  int requires_grad = 0;

  CHECK_OK(kiln_tensor_zeros(rt, shape, 2, KILN_F32, KILN_DEVICE_CPU, 0, &param));
  CHECK_OK(kiln_tensor_set_requires_grad(param, 1));
  CHECK_OK(kiln_tensor_from_data(rt, values, sizeof values, shape, 2, KILN_F64, &src));
  CHECK_OK(kiln_tensor_assign(param, src));
  CHECK_OK(kiln_tensor_read(param, out, sizeof out));
  CHECK(out[0] == 1.5f && out[1] == -2.0f && out[2] == 3.25f && out[3] == 0.0f);
  /* Still a leaf that requires grad: backward through it reaches it alone. */
  CHECK_OK(kiln_tensor_requires_grad(param, &requires_grad));
  CHECK(requires_grad == 1);
  CHECK_OK(kiln_backward(rt, param, param, 0));
  CHECK_OK(kiln_tensor_grad(param, &grad));
  CHECK(grad != NULL);

  CHECK_OK(kiln_tensor_full(rt, other, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &wrong));
  CHECK_ERROR(kiln_tensor_assign(param, wrong), KILN_ERR_SHAPE_MISMATCH, "'dst' is shaped [2, 2]", "'src' [4]");
  CHECK_ERROR(kiln_tensor_assign(NULL, src), KILN_ERR_INVALID_ARGUMENT, "'dst' is NULL");

  kiln_tensor_release(grad);
  kiln_tensor_release(wrong);
  kiln_tensor_release(src);
  kiln_tensor_release(param);
  kiln_runtime_release(rt);
  return check_report("plugins/loader/tensor_assign");
}
