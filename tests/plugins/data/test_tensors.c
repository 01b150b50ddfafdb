/* The "tensors" data source: rows of in-memory tensors. */
#include "data_test.h"

int main(void) {
  kiln_runtime* rt = open_runtime();
  const float inputs[6] = {1, 2, 3, 4, 5, 6};
  const int64_t targets[3] = {2, 0, 1}, input_shape[2] = {3, 2}, target_shape[1] = {3}, short_shape[1] = {2};
  kiln_tensor *x = NULL, *y = NULL, *y_short = NULL, *scalar = NULL;
  kiln_data_source* src = NULL;
  float row[2];
  kiln_tensor_desc desc;
  int64_t length = 0;

  CHECK_OK(kiln_tensor_from_data(rt, inputs, sizeof inputs, input_shape, 2, KILN_F32, &x));
  CHECK_OK(kiln_tensor_from_data(rt, targets, sizeof targets, target_shape, 1, KILN_I64, &y));
  CHECK_OK(kiln_tensor_from_data(rt, targets, 2 * sizeof targets[0], short_shape, 1, KILN_I64, &y_short));
  CHECK_OK(kiln_tensor_full(rt, NULL, 0, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &scalar));
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", x), kiln_attr_tensor("target", y)};
    CHECK_OK(kiln_data_source_create(rt, "tensors", config, 2, &src));
  }
  if (src) {
    CHECK_OK(kiln_data_source_length(src, &length));
    CHECK(length == 3);
    read_example_field(src, 1, "input", &desc, row, sizeof row);
    CHECK(desc_is(&desc, KILN_F32, 1, &input_shape[1]));
    CHECK(row[0] == 3.0f && row[1] == 4.0f);
    CHECK(example_target(src, 0) == 2);
    CHECK(example_target(src, 2) == 1);
    kiln_data_source_release(src);
    src = NULL;
  }
  {
    const kiln_attr config[1] = {kiln_attr_tensor("input", x)};
    CHECK_OK(kiln_data_source_create(rt, "tensors", config, 1, &src));
    kiln_data_source_release(src);
    src = NULL;
  }
  {
    const kiln_attr config[2] = {kiln_attr_tensor("input", x), kiln_attr_tensor("target", y_short)};
    CHECK_ERROR(kiln_data_source_create(rt, "tensors", config, 2, &src), KILN_ERR_SHAPE_MISMATCH,
                "data source 'tensors'", "'input' holds 3 examples", "'target' holds 2");
  }
  {
    const kiln_attr config[1] = {kiln_attr_tensor("input", scalar)};
    CHECK_ERROR(kiln_data_source_create(rt, "tensors", config, 1, &src), KILN_ERR_SHAPE_MISMATCH,
                "'input' is a scalar");
  }
  CHECK_ERROR(kiln_data_source_create(rt, "no-such-source", NULL, 0, &src), KILN_ERR_NOT_FOUND, "no-such-source");
  CHECK(src == NULL);
  kiln_tensor_release(x);
  kiln_tensor_release(y);
  kiln_tensor_release(y_short);
  kiln_tensor_release(scalar);
  kiln_runtime_release(rt);
  return check_report("plugins/data/tensors");
}
