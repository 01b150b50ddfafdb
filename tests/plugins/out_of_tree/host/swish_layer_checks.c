/* The layer "Swish": its parameter "beta" (config default 1.0 and a given
 * value), its forward through the op, and bad configurations and calls. */
#include <string.h>

#include "plugin_checks.h"

/* The layer's only parameter: checks its name and returns its value. */
static double beta_of(kiln_module* layer) {
  size_t count = 0;
  const char* name = NULL;
  kiln_tensor* beta = NULL;
  CHECK_OK(kiln_module_parameter_count(layer, &count));
  CHECK(count == 1);
  if (count != 1) return NAN;
  CHECK_OK(kiln_module_parameter(layer, 0, &name, &beta));
  CHECK(name != NULL && strcmp(name, "beta") == 0);
  const double value = scalar_of(beta);
  kiln_tensor_release(beta);
  return value;
}

static void check_config(kiln_runtime* rt) {
  kiln_module *by_default = NULL, *given = NULL, *refused = NULL;
  const kiln_attr beta = kiln_attr_float("beta", 0.5);
  const kiln_attr wrong_type = kiln_attr_string("beta", "large");
  CHECK_OK(kiln_module_create(rt, "Swish", NULL, 0, &by_default));
  CHECK_OK(kiln_module_create(rt, "Swish", &beta, 1, &given));
  if (by_default) CHECK(beta_of(by_default) == 1.0);
  if (given) CHECK(beta_of(given) == 0.5);
  CHECK_ERROR(kiln_module_create(rt, "Swish", &wrong_type, 1, &refused), KILN_ERR_INVALID_ARGUMENT, "beta");
  CHECK(refused == NULL);
  kiln_module_release(by_default);
  kiln_module_release(given);
}

static void check_forward(kiln_runtime* rt) {
  const float x[4] = {-2.0f, -0.5f, 0.0f, 3.0f};
  const int64_t shape[2] = {2, 2};
  const kiln_attr beta = kiln_attr_float("beta", 2.0);
  double want[4];
  kiln_module* layer = NULL;
  kiln_tensor *y = NULL, *y_f64 = NULL;
  for (int i = 0; i < 4; ++i) want[i] = x[i] / (1.0 + exp(-2.0 * x[i]));
  kiln_tensor* input = make_f32(rt, x, shape, 2);
  CHECK_OK(kiln_module_create(rt, "Swish", &beta, 1, &layer));
  if (layer) CHECK_OK(kiln_module_forward1(layer, &input, 1, &y));
  const kiln_attr to_f64 = kiln_attr_dtype("dtype", KILN_F64);
  if (y) y_f64 = call_op(rt, "cast", &y, 1, &to_f64, 1);
  check_elements(y_f64, want, 4, 1e-6, 1e-6, "Swish layer forward");

  kiln_tensor* two[2] = {input, input};
  kiln_tensor* unused = NULL;
  if (layer)
    CHECK_ERROR(kiln_module_forward1(layer, two, 2, &unused), KILN_ERR_INVALID_ARGUMENT, "Swish takes one input, got 2");
  kiln_tensor_release(y_f64);
  kiln_tensor_release(y);
  kiln_tensor_release(input);
  kiln_module_release(layer);
}

int check_swish_layer(kiln_runtime* rt) {
  check_config(rt);
  check_forward(rt);
  return check_failures;
}
