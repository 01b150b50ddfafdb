/* Sequential: forward equals calling the layers by hand, dotted names of
 * parameters and buffers, and what append refuses. */
#include "module_test.h"

static const float x_data[6] = {1, 2, 3, 4, 5, 6};
static const int64_t x_shape[2] = {2, 3};
static const float w1[3] = {1, 2, 3}, b1[3] = {0.5f, 0, -1};
static const float w2[3] = {-1, 0.5f, 2}, b2[3] = {1, 1, 1};

static void forward_matches_layers_by_hand(kiln_runtime* rt) {
  kiln_module* first = affine(rt, 3, w1, b1);
  kiln_module* second = affine(rt, 3, w2, b2);
  kiln_module* seq = NULL;
  kiln_tensor* x = tensor_f32(rt, x_data, x_shape, 2);
  kiln_tensor *h = NULL, *by_hand = NULL;
  float got[6], want[6], reference[6];
  const char* type = NULL;
  size_t i;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_append(seq, NULL, first));
  CHECK_OK(kiln_sequential_append(seq, "second", second));
  CHECK_OK(kiln_module_type(seq, &type));
  CHECK(type && strcmp(type, "Sequential") == 0);

  forward_read(seq, x, got, 6);
  CHECK_OK(kiln_module_forward1(first, &x, 1, &h));
  CHECK_OK(kiln_module_forward1(second, &h, 1, &by_hand));
  CHECK_OK(kiln_tensor_read(by_hand, want, sizeof want));
  check_close(got, want, 6, "Sequential against its layers called by hand");
  for (i = 0; i < 6; ++i) {
    const size_t f = i % 3;
    reference[i] = (x_data[i] * w1[f] + b1[f]) * w2[f] + b2[f];
  }
  check_close(got, reference, 6, "Sequential against the formula");

  kiln_tensor_release(by_hand);
  kiln_tensor_release(h);
  kiln_tensor_release(x);
  kiln_module_release(seq);
  kiln_module_release(second);
  kiln_module_release(first);
}

static void empty_sequential_passes_inputs_through(kiln_runtime* rt) {
  kiln_module* seq = NULL;
  kiln_tensor* x = tensor_f32(rt, x_data, x_shape, 2);
  float got[6];
  CHECK_OK(kiln_sequential_create(rt, &seq));
  forward_read(seq, x, got, 6);
  check_close(got, x_data, 6, "empty Sequential");
  kiln_tensor_release(x);
  kiln_module_release(seq);
}

static void check_name(const kiln_module* m, size_t index, int buffer, const char* want) {
  const char* name = NULL;
  kiln_tensor* t = NULL;
  if (buffer)
    CHECK_OK(kiln_module_buffer(m, index, &name, &t));
  else
    CHECK_OK(kiln_module_parameter(m, index, &name, &t));
  if (!name || strcmp(name, want) != 0) {
    fprintf(stderr, "%s %zu is named '%s', expected '%s'\n", buffer ? "buffer" : "parameter", index,
            name ? name : "(NULL)", want);
    ++check_failures;
  }
  if (!buffer && t) {
    int requires_grad = 0;
    CHECK_OK(kiln_tensor_requires_grad(t, &requires_grad));
    CHECK(requires_grad == 1);
  }
  kiln_tensor_release(t);
}

static void names_and_counts(kiln_runtime* rt) {
  kiln_module *outer = NULL, *inner = NULL;
  kiln_module* a = affine(rt, 3, w1, b1);
  kiln_module* b = affine(rt, 3, w2, b2);
  kiln_module* mode = plain_layer(rt, "ModeScale");
  size_t count = 0;
  const char* name = NULL;
  kiln_tensor* t = NULL;
  CHECK_OK(kiln_sequential_create(rt, &outer));
  CHECK_OK(kiln_sequential_create(rt, &inner));
  CHECK_OK(kiln_sequential_append(inner, NULL, a));
  CHECK_OK(kiln_sequential_append(inner, NULL, mode));
  CHECK_OK(kiln_sequential_append(outer, "block", inner));
  CHECK_OK(kiln_sequential_append(outer, "head", b));
  /* A layer used twice is listed once, under its first name. */
  CHECK_OK(kiln_sequential_append(outer, "again", a));

  CHECK_OK(kiln_module_parameter_count(outer, &count));
  CHECK(count == 4);
  check_name(outer, 0, 0, "block.0.weight");
  check_name(outer, 1, 0, "block.0.bias");
  check_name(outer, 2, 0, "head.weight");
  check_name(outer, 3, 0, "head.bias");
  CHECK_OK(kiln_module_buffer_count(outer, &count));
  CHECK(count == 2);
  check_name(outer, 0, 1, "block.0.feature_count");
  check_name(outer, 1, 1, "head.feature_count");
  CHECK_ERROR(kiln_module_parameter(outer, 4, &name, &t), KILN_ERR_INVALID_ARGUMENT, "index 4", "has 4 parameters");
  CHECK(t == NULL);
  CHECK_OK(kiln_module_parameter_count(mode, &count));
  CHECK(count == 0);

  kiln_module_release(outer);
  kiln_module_release(inner);
  kiln_module_release(mode);
  kiln_module_release(b);
  kiln_module_release(a);
}

static void append_refusals(kiln_runtime* rt) {
  kiln_module *seq = NULL, *inner = NULL;
  kiln_module* a = affine(rt, 3, w1, b1);
  CHECK_OK(kiln_sequential_create(rt, &seq));
  CHECK_OK(kiln_sequential_create(rt, &inner));
  CHECK_OK(kiln_sequential_append(seq, "a", a));
  CHECK_ERROR(kiln_sequential_append(seq, "a", a), KILN_ERR_INVALID_ARGUMENT, "already has a child named 'a'");
  CHECK_ERROR(kiln_sequential_append(seq, "x.y", a), KILN_ERR_INVALID_ARGUMENT, "'x.y'", "'.'");
  CHECK_ERROR(kiln_sequential_append(seq, NULL, seq), KILN_ERR_INVALID_ARGUMENT, "inside itself");
  CHECK_OK(kiln_sequential_append(inner, NULL, seq));
  CHECK_ERROR(kiln_sequential_append(seq, NULL, inner), KILN_ERR_INVALID_ARGUMENT, "inside itself");
  CHECK_ERROR(kiln_sequential_append(a, NULL, seq), KILN_ERR_INVALID_ARGUMENT, "is of type Affine, not a Sequential");
  CHECK_ERROR(kiln_sequential_append(seq, NULL, NULL), KILN_ERR_INVALID_ARGUMENT, "'child' is NULL");
  kiln_module_release(inner);
  kiln_module_release(seq);
  kiln_module_release(a);
}

int main(void) {
  kiln_runtime* rt = test_runtime();
  if (!rt) return check_report("modules/sequential");
  forward_matches_layers_by_hand(rt);
  empty_sequential_passes_inputs_through(rt);
  names_and_counts(rt);
  append_refusals(rt);
  kiln_runtime_release(rt);
  return check_report("modules/sequential");
}
