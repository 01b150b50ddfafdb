/* The example API: set, replace, get, list fields, missing fields. */
#include "data_test.h"

static kiln_tensor* scalar(kiln_runtime* rt, double value) {
  kiln_tensor* t = NULL;
  CHECK_OK(kiln_tensor_full(rt, NULL, 0, value, KILN_F32, KILN_DEVICE_CPU, 0, &t));
  return t;
}

static float value_of(const kiln_example* ex, const char* name) {
  kiln_tensor_desc desc;
  float v = -1.0f;
  read_field(ex, name, &desc, &v, sizeof v);
  return v;
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_example* ex = NULL;
  kiln_tensor *a = scalar(rt, 1.0), *b = scalar(rt, 2.0), *c = scalar(rt, 3.0), *got = NULL;
  size_t count = 99;
  const char* name = NULL;

  CHECK_OK(kiln_example_create(rt, &ex));
  CHECK_OK(kiln_example_field_count(ex, &count));
  CHECK(count == 0);
  CHECK_ERROR(kiln_example_get(ex, "input", &got), KILN_ERR_NOT_FOUND, "no field 'input'", "it has none");

  CHECK_OK(kiln_example_set(ex, "input", a));
  CHECK_OK(kiln_example_set(ex, "target", b));
  CHECK(value_of(ex, "input") == 1.0f);
  CHECK(value_of(ex, "target") == 2.0f);
  /* Replacing keeps the field's position. */
  CHECK_OK(kiln_example_set(ex, "input", c));
  CHECK(value_of(ex, "input") == 3.0f);
  CHECK_OK(kiln_example_field_count(ex, &count));
  CHECK(count == 2);
  CHECK_OK(kiln_example_field(ex, 0, &name, &got));
  CHECK(name && strcmp(name, "input") == 0 && got == c);
  kiln_tensor_release(got);
  CHECK_OK(kiln_example_field(ex, 1, &name, &got));
  CHECK(name && strcmp(name, "target") == 0 && got == b);
  kiln_tensor_release(got);
  got = NULL;

  CHECK_ERROR(kiln_example_field(ex, 2, &name, &got), KILN_ERR_INVALID_ARGUMENT, "field index 2 is out of range",
              "2 field(s)");
  CHECK_ERROR(kiln_example_get(ex, "label", &got), KILN_ERR_NOT_FOUND, "no field 'label'", "'input', 'target'");
  CHECK_ERROR(kiln_example_set(ex, "", a), KILN_ERR_INVALID_ARGUMENT, "must not be empty");
  CHECK_ERROR(kiln_example_set(ex, "x", NULL), KILN_ERR_INVALID_ARGUMENT, "'t' is NULL");
  CHECK_ERROR(kiln_example_get(NULL, "x", &got), KILN_ERR_INVALID_ARGUMENT, "'ex' is NULL");
  CHECK(got == NULL);

  /* The example keeps its tensors (and they their runtime) alive. */
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  kiln_tensor_release(c);
  kiln_runtime_release(rt);
  CHECK(value_of(ex, "target") == 2.0f);
  kiln_example_release(ex);
  kiln_example_release(NULL);
  return check_report("plugins/data/example");
}
