/* MultiHeadAttention: forward against a reference computed by hand (self-
 * and cross-attention, causal or not, with and without biases), the causal
 * mask seen by perturbing later positions, gradients of all three inputs
 * and every parameter, PyTorch's parameter names and shapes, initial
 * parameters, errors. */
#include <math.h>
#include <string.h>

#include "layer_test.h"

enum { N = 2, L = 3, S = 4, E = 4, HEADS = 2 };

/* torch.nn.MultiheadAttention's names, in its order; odd entries are the
 * biases, absent with bias = false. */
enum { IN_PROJ_WEIGHT, IN_PROJ_BIAS, OUT_PROJ_WEIGHT, OUT_PROJ_BIAS, N_PARAMETERS };
static const char* const parameter_names[N_PARAMETERS] = {"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                          "out_proj.bias"};

static int is_bias(int parameter) { return parameter % 2; }

static kiln_module* make_attention(kiln_runtime* rt, int causal, int bias) {
  kiln_attr config[4];
  config[0] = kiln_attr_int("embed_dim", E);
  config[1] = kiln_attr_int("num_heads", HEADS);
  config[2] = kiln_attr_bool("causal", causal);
  config[3] = kiln_attr_bool("bias", bias);
  return make_module(rt, "MultiHeadAttention", config, 4, 1);
}

/* The parameters, read into `values` (freed by the caller; NULL for the
 * biases without bias) and pointed at by `p`; 0 when one is missing. */
static int read_parameters(const kiln_module* m, int bias, double* values[N_PARAMETERS],
                           attention_reference_params* p) {
  int i, complete = 1;
  for (i = 0; i < N_PARAMETERS; ++i) {
    values[i] = NULL;
    if (bias || !is_bias(i)) complete = (values[i] = parameter_values(m, parameter_names[i])) != NULL && complete;
  }
  attention_reference_in_proj(p, E, values[IN_PROJ_WEIGHT], values[IN_PROJ_BIAS]);
  p->wo = values[OUT_PROJ_WEIGHT];
  p->bo = values[OUT_PROJ_BIAS];
  return complete;
}

/* Biases start at zero (PyTorch's MultiheadAttention); make them random
 * here so the reference sees them. */
static void randomize_parameters(kiln_runtime* rt, kiln_module* m, int bias, kts_rng* rng) {
  int i;
  for (i = 0; i < N_PARAMETERS; ++i)
    if (bias || !is_bias(i)) randomize_parameter(rt, m, parameter_names[i], rng);
}

static void test_reference(kiln_runtime* rt, int causal, int cross, int bias) {
  const int64_t q_shape[3] = {N, L, E}, kv_shape[3] = {N, cross ? S : L, E};
  const int64_t len_s = cross ? S : L;
  kiln_module* m = make_attention(rt, causal, bias);
  kiln_tensor* inputs[3] = {NULL, NULL, NULL};
  double* values[N_PARAMETERS] = {NULL};
  double *q = NULL, *k = NULL, *v = NULL, *got = NULL, want[N * L * E];
  attention_reference_params p;
  kts_rng rng;
  int i;
  if (!m) return;
  kts_rng_seed(&rng, 12 + (uint64_t)(4 * bias + 2 * causal + cross));
  randomize_parameters(rt, m, bias, &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, q_shape, 3, -1.0, 1.0, &inputs[0]));
  CHECK_OK(kts_tensor_uniform(rt, &rng, kv_shape, 3, -1.0, 1.0, &inputs[1]));
  CHECK_OK(kts_tensor_uniform(rt, &rng, kv_shape, 3, -1.0, 1.0, &inputs[2]));
  if (!inputs[0] || !inputs[1] || !inputs[2]) goto done;
  q = kts_read(inputs[0]);
  k = kts_read(inputs[cross ? 1 : 0]);
  v = kts_read(inputs[cross ? 2 : 0]);
  got = forward_values(m, inputs, cross ? 3 : 1);
  if (read_parameters(m, bias, values, &p) && q && k && v && got) {
    attention_reference(N, L, len_s, E, HEADS, causal, q, k, v, &p, want);
    CHECK(kts_compare(cross ? "cross-attention" : "self-attention", got, want, N * L * E, FORWARD_ATOL,
                      FORWARD_RTOL) == 0);
  }
  CHECK_GRADIENTS(rt, m, inputs, cross ? 3 : 1, NULL);
done:
  for (i = 0; i < N_PARAMETERS; ++i) free(values[i]);
  for (i = 0; i < 3; ++i) kiln_tensor_release(inputs[i]);
  free(q);
  free(k);
  free(v);
  free(got);
  kiln_module_release(m);
}

/* PyTorch's names, order and shapes: in_proj_weight [3E, E], in_proj_bias
 * [3E], out_proj.weight [E, E], out_proj.bias [E]; only the weights
 * without bias. */
static void test_parameter_layout(kiln_runtime* rt, int bias) {
  const int64_t shapes[N_PARAMETERS][2] = {{3 * E, E}, {3 * E}, {E, E}, {E}};
  static const int ranks[N_PARAMETERS] = {2, 1, 2, 1};
  kiln_module* m = make_attention(rt, 0, bias);
  size_t count = 0, index = 0;
  int i;
  if (!m) return;
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == (bias ? 4u : 2u));
  for (i = 0; i < N_PARAMETERS && index < count; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    if (!bias && is_bias(i)) continue;
    CHECK_OK(kiln_module_parameter(m, index++, &name, &t));
    CHECK(name && strcmp(name, parameter_names[i]) == 0);
    CHECK(t && has_shape(t, shapes[i], ranks[i]));
    kiln_tensor_release(t);
  }
  kiln_module_release(m);
}

/* Changing the input at positions after t leaves a causal layer's outputs
 * at positions <= t as they were, and changes a non-causal layer's. */
static void test_causality(kiln_runtime* rt, int causal) {
  enum { T = 1 };
  const int64_t shape[3] = {N, L, E};
  kiln_module* m = make_attention(rt, causal, 1);
  kiln_tensor *x = NULL, *changed = NULL;
  double *xs = NULL, *before = NULL, *after = NULL;
  kts_rng rng;
  int b, t, f, early_changes = 0, late_changes = 0;
  if (!m) return;
  kts_rng_seed(&rng, 20);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  xs = x ? kts_read(x) : NULL;
  if (!xs) goto done;
  for (b = 0; b < N; ++b)
    for (t = T + 1; t < L; ++t)
      for (f = 0; f < E; ++f) xs[(b * L + t) * E + f] += 0.5;
  CHECK_OK(kts_tensor_f64(rt, xs, shape, 3, &changed));
  before = forward_values(m, &x, 1);
  after = changed ? forward_values(m, &changed, 1) : NULL;
  if (!before || !after) goto done;
  for (b = 0; b < N; ++b)
    for (t = 0; t < L; ++t)
      for (f = 0; f < E; ++f) {
        const int64_t i = (b * L + t) * E + f;
        if (fabs(before[i] - after[i]) > 1e-12) ++*(t <= T ? &early_changes : &late_changes);
      }
  CHECK(late_changes > 0);
  CHECK(causal ? early_changes == 0 : early_changes > 0);
done:
  free(xs);
  free(before);
  free(after);
  kiln_tensor_release(x);
  kiln_tensor_release(changed);
  kiln_module_release(m);
}

/* in_proj_weight xavier_uniform over [3E, E] (bound sqrt(6 / (E + 3E)), as
 * PyTorch's), out_proj.weight kaiming (bound 1 / sqrt(E)), biases zero. */
static void test_initial_parameters(kiln_runtime* rt) {
  static const int counts[N_PARAMETERS] = {3 * E * E, 3 * E, E * E, E};
  kiln_module* m = make_attention(rt, 0, 1);
  double* values[N_PARAMETERS] = {NULL};
  attention_reference_params p;
  const double bounds[N_PARAMETERS] = {sqrt(6.0 / (4 * E)), 0.0, 1 / sqrt((double)E), 0.0};
  int i, j;
  if (!m) return;
  if (read_parameters(m, 1, values, &p)) {
    for (i = 0; i < N_PARAMETERS; ++i)
      for (j = 0; j < counts[i]; ++j) CHECK(fabs(values[i][j]) <= bounds[i]);
  }
  for (i = 0; i < N_PARAMETERS; ++i) free(values[i]);
  kiln_module_release(m);
}

static void test_errors(kiln_runtime* rt) {
  const int64_t shape[3] = {2, 3, 5};
  kiln_module *m = NULL, *bad = NULL;
  kiln_tensor *x = NULL, *y = NULL;
  kiln_attr config[3];
  config[0] = kiln_attr_int("embed_dim", 6);
  config[1] = kiln_attr_int("num_heads", 4);
  CHECK_ERROR(kiln_module_create(rt, "MultiHeadAttention", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT,
              "embed_dim = 6", "divisible by num_heads = 4");
  config[1] = kiln_attr_int("num_heads", 2);
  config[2] = kiln_attr_float("dropout", 1.0);
  CHECK_ERROR(kiln_module_create(rt, "MultiHeadAttention", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT, "dropout",
              "[0, 1)");
  m = make_attention(rt, 0, 1);
  CHECK_OK(kiln_tensor_full(rt, shape, 3, 1.0, KILN_F64, KILN_DEVICE_CPU, 0, &x));
  if (m && x) {
    kiln_tensor* two[2];
    two[0] = two[1] = x;
    CHECK_ERROR(kiln_module_forward1(m, &x, 1, &y), KILN_ERR_SHAPE_MISMATCH, "query", "embed_dim = 4",
                "last dim 5");
    CHECK_ERROR(kiln_module_forward1(m, two, 2, &y), KILN_ERR_INVALID_ARGUMENT, "1 input", "or 3", "got 2");
  }
  CHECK(bad == NULL && y == NULL);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

int main(void) {
  kiln_runtime* rt = NULL;
  int causal, cross, bias;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  for (bias = 0; bias < 2; ++bias)
    for (causal = 0; causal < 2; ++causal)
      for (cross = 0; cross < 2; ++cross) test_reference(rt, causal, cross, bias);
  test_parameter_layout(rt, 1);
  test_parameter_layout(rt, 0);
  test_causality(rt, 1);
  test_causality(rt, 0);
  test_initial_parameters(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/attention");
}
