/* Embedding: rows looked up by index, the table's gradient against finite
 * differences, padding_idx (a zero row that gets no gradient), errors. */
#include "layer_test.h"

enum { ROWS = 5, DIM = 3 };

static void test_lookup(kiln_runtime* rt, int64_t padding_idx) {
  const int64_t index_values[2][3] = {{4, 0, 2}, {2, 1, 4}}, index_shape[2] = {2, 3};
  const int64_t other_values[2][3] = {{3, 0, 2}, {2, 1, 3}};
  const int64_t out_shape[3] = {2, 3, DIM};
  kiln_attr config[3];
  kiln_module* m;
  kiln_tensor *indices = NULL, *other = NULL, *y = NULL, *weight = NULL, *grad = NULL;
  double *table = NULL, want[2 * 3 * DIM];
  int i, k;
  kts_rng rng;
  config[0] = kiln_attr_int("num_embeddings", ROWS);
  config[1] = kiln_attr_int("embedding_dim", DIM);
  config[2] = kiln_attr_int("padding_idx", padding_idx);
  m = make_module(rt, "Embedding", config, 3, 1);
  if (!m) return;
  CHECK_OK(kiln_tensor_from_data(rt, index_values, sizeof index_values, index_shape, 2, KILN_I64, &indices));
  table = parameter_values(m, "weight");
  if (table && padding_idx >= 0)
    for (k = 0; k < DIM; ++k) CHECK(table[padding_idx * DIM + k] == 0.0);
  if (table && indices) {
    CHECK_OK(kiln_module_forward1(m, &indices, 1, &y));
    CHECK(y && has_shape(y, out_shape, 3));
    for (i = 0; i < 6; ++i)
      for (k = 0; k < DIM; ++k) want[i * DIM + k] = table[index_values[i / 3][i % 3] * DIM + k];
    if (y) CHECK(kts_compare_tensor("Embedding", y, want, 2 * 3 * DIM, 0.0, 0.0) == 0);
  }
  /* Parameters are the only floating tensors: the check covers the table.
   * The indices avoid the padding row, whose gradient is zero by design
   * (checked below) while its values do reach the output. */
  kts_rng_seed(&rng, 11);
  randomize_parameter(rt, m, "weight", &rng);
  CHECK_OK(kiln_tensor_from_data(rt, other_values, sizeof other_values, index_shape, 2, KILN_I64, &other));
  if (other) CHECK_GRADIENTS(rt, m, &other, 1, NULL);
  kiln_tensor_release(other);
  /* The padding row (index 4, used twice) gets no gradient; row 2, used
   * twice too, gets 2 from an all-ones seed. */
  if (padding_idx >= 0) weight = kts_parameter(m, "weight");
  if (padding_idx >= 0 && weight && indices) {
    kiln_tensor *out = NULL, *ones = NULL;
    CHECK_OK(kiln_module_forward1(m, &indices, 1, &out));
    CHECK_OK(kiln_tensor_full(rt, out_shape, 3, 1.0, KILN_F64, KILN_DEVICE_CPU, 0, &ones));
    CHECK_OK(kiln_tensor_zero_grad(weight));
    if (out && ones) CHECK_OK(kiln_backward(rt, out, ones, 0));
    CHECK_OK(kiln_tensor_grad(weight, &grad));
    if (grad) {
      double* g = kts_read(grad);
      if (g) {
        for (k = 0; k < DIM; ++k) {
          CHECK(g[padding_idx * DIM + k] == 0.0);
          CHECK(g[2 * DIM + k] == 2.0);
        }
      }
      free(g);
    }
    kiln_tensor_release(out);
    kiln_tensor_release(ones);
  }
  free(table);
  kiln_tensor_release(grad);
  kiln_tensor_release(weight);
  kiln_tensor_release(y);
  kiln_tensor_release(indices);
  kiln_module_release(m);
}

static void test_errors(kiln_runtime* rt) {
  kiln_module* m = NULL;
  kiln_attr config[3];
  config[0] = kiln_attr_int("num_embeddings", 0);
  config[1] = kiln_attr_int("embedding_dim", 3);
  CHECK_ERROR(kiln_module_create(rt, "Embedding", config, 2, &m), KILN_ERR_INVALID_ARGUMENT, "num_embeddings",
              ">= 1");
  config[0] = kiln_attr_int("num_embeddings", 5);
  config[2] = kiln_attr_int("padding_idx", 5);
  CHECK_ERROR(kiln_module_create(rt, "Embedding", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "padding_idx",
              "[0, num_embeddings = 5)", "got 5");
  CHECK(m == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_lookup(rt, -1);
  test_lookup(rt, 4);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/embedding");
}
