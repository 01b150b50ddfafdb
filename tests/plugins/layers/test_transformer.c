/* TransformerBlock: its parameter names (PyTorch's TransformerEncoderLayer's)
 * and shapes, forward against a reference assembled from the LayerNorm,
 * attention and Linear references, dropout only in train mode, causality,
 * gradients, errors. */
#include <math.h>

#include "layer_test.h"

enum { N = 2, L = 3, E = 4, HEADS = 2, HIDDEN = 8 };

static kiln_module* make_block(kiln_runtime* rt, int causal, double dropout) {
  kiln_attr config[5];
  config[0] = kiln_attr_int("embed_dim", E);
  config[1] = kiln_attr_int("num_heads", HEADS);
  config[2] = kiln_attr_float("mlp_ratio", 2.0);
  config[3] = kiln_attr_bool("causal", causal);
  config[4] = kiln_attr_float("dropout", dropout);
  return make_module(rt, "TransformerBlock", config, 5, 1);
}

static void randomize_all(kiln_runtime* rt, kiln_module* m, kts_rng* rng) {
  size_t count = 0, i;
  CHECK_OK(kiln_module_parameter_count(m, &count));
  for (i = 0; i < count; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    CHECK_OK(kiln_module_parameter(m, i, &name, &t));
    if (name) randomize_parameter(rt, m, name, rng);
    kiln_tensor_release(t);
  }
}

static void test_parameters(kiln_runtime* rt) {
  static const struct {
    const char* name;
    int rank;
    int64_t dims[2];
  } expected[] = {{"norm1.weight", 1, {E}},
                  {"norm1.bias", 1, {E}},
                  {"self_attn.in_proj_weight", 2, {3 * E, E}},
                  {"self_attn.in_proj_bias", 1, {3 * E}},
                  {"self_attn.out_proj.weight", 2, {E, E}},
                  {"self_attn.out_proj.bias", 1, {E}},
                  {"norm2.weight", 1, {E}},
                  {"norm2.bias", 1, {E}},
                  {"linear1.weight", 2, {HIDDEN, E}},
                  {"linear1.bias", 1, {HIDDEN}},
                  {"linear2.weight", 2, {E, HIDDEN}},
                  {"linear2.bias", 1, {E}}};
  kiln_module* m = make_block(rt, 0, 0.0);
  size_t count = 0, i;
  if (!m) return;
  /* torch.nn.TransformerEncoderLayer's names: all 12 parameters. */
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == COUNT(expected));
  for (i = 0; i < COUNT(expected); ++i) {
    kiln_tensor* t = kts_parameter(m, expected[i].name);
    CHECK(t && has_shape(t, expected[i].dims, expected[i].rank));
    kiln_tensor_release(t);
  }
  kiln_module_release(m);
}

static double gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }

/* The block's output for x [N, L, E] from its parameters. */
static int block_reference(const kiln_module* m, int causal, const double* x, double* out) {
  static const char* const names[] = {"norm1.weight",
                                      "norm1.bias",
                                      "self_attn.in_proj_weight",
                                      "self_attn.in_proj_bias",
                                      "self_attn.out_proj.weight",
                                      "self_attn.out_proj.bias",
                                      "norm2.weight",
                                      "norm2.bias",
                                      "linear1.weight",
                                      "linear1.bias",
                                      "linear2.weight",
                                      "linear2.bias"};
  double* p[COUNT(names)];
  double h[N * L * E], a[N * L * E], x1[N * L * E], hidden[N * L * HIDDEN];
  attention_reference_params ap;
  int i, complete = 1;
  for (i = 0; i < (int)COUNT(names); ++i) complete = (p[i] = parameter_values(m, names[i])) != NULL && complete;
  if (complete) {
    layer_norm_reference(x, N * L, E, p[0], p[1], 1e-5, h);
    attention_reference_in_proj(&ap, E, p[2], p[3]);
    ap.wo = p[4];
    ap.bo = p[5];
    attention_reference(N, L, L, E, HEADS, causal, h, h, h, &ap, a);
    for (i = 0; i < N * L * E; ++i) x1[i] = x[i] + a[i];
    layer_norm_reference(x1, N * L, E, p[6], p[7], 1e-5, h);
    linear_reference(h, N * L, E, p[8], p[9], HIDDEN, hidden);
    for (i = 0; i < N * L * HIDDEN; ++i) hidden[i] = gelu(hidden[i]);
    linear_reference(hidden, N * L, HIDDEN, p[10], p[11], E, a);
    for (i = 0; i < N * L * E; ++i) out[i] = x1[i] + a[i];
  }
  for (i = 0; i < (int)COUNT(names); ++i) free(p[i]);
  return complete;
}

/* dropout is 0.3: eval mode matches the reference, train mode does not. */
static void test_forward(kiln_runtime* rt, int causal) {
  const int64_t shape[3] = {N, L, E};
  kiln_module* m = make_block(rt, causal, 0.3);
  kiln_tensor* x = NULL;
  double *xs = NULL, *got = NULL, want[N * L * E];
  int have_reference = 0;
  kts_rng rng;
  if (!m) return;
  kts_rng_seed(&rng, 30 + (uint64_t)causal);
  randomize_all(rt, m, &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  xs = x ? kts_read(x) : NULL;
  CHECK_OK(kiln_module_set_training(m, 0));
  got = xs ? forward_values(m, &x, 1) : NULL;
  if (got && (have_reference = block_reference(m, causal, xs, want)) != 0)
    CHECK(kts_compare("TransformerBlock", got, want, N * L * E, FORWARD_ATOL, FORWARD_RTOL) == 0);
  free(got);
  got = NULL;
  CHECK_OK(kiln_module_set_training(m, 1));
  if (xs) got = forward_values(m, &x, 1);
  if (got && have_reference) {
    int i, changed = 0;
    for (i = 0; i < N * L * E; ++i) changed += got[i] != want[i];
    CHECK(changed > 0);
  }
  free(got);
  free(xs);
  kiln_tensor_release(x);
  kiln_module_release(m);
}

/* Gradients, and: with causal, outputs before a changed position stay. */
static void test_gradients_and_causality(kiln_runtime* rt) {
  const int64_t shape[3] = {N, L, E};
  kiln_module* m = make_block(rt, 1, 0.0);
  kiln_tensor *x = NULL, *changed = NULL;
  double *xs = NULL, *before = NULL, *after = NULL;
  kts_rng rng;
  int b, f, t;
  if (!m) return;
  kts_rng_seed(&rng, 40);
  randomize_all(rt, m, &rng);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  if (!x) goto done;
  CHECK_GRADIENTS(rt, m, &x, 1, NULL);
  xs = kts_read(x);
  if (!xs) goto done;
  for (b = 0; b < N; ++b)
    for (f = 0; f < E; ++f) xs[(b * L + L - 1) * E + f] += 1.0;
  CHECK_OK(kts_tensor_f64(rt, xs, shape, 3, &changed));
  before = forward_values(m, &x, 1);
  after = changed ? forward_values(m, &changed, 1) : NULL;
  if (before && after)
    for (b = 0; b < N; ++b)
      for (t = 0; t < L - 1; ++t)
        CHECK(kts_compare("positions before the change", after + (b * L + t) * E, before + (b * L + t) * E, E, 1e-12,
                          0) == 0);
done:
  free(xs);
  free(before);
  free(after);
  kiln_tensor_release(x);
  kiln_tensor_release(changed);
  kiln_module_release(m);
}

static void test_errors(kiln_runtime* rt) {
  kiln_module* m = NULL;
  kiln_attr config[3];
  config[0] = kiln_attr_int("embed_dim", 6);
  config[1] = kiln_attr_int("num_heads", 4);
  CHECK_ERROR(kiln_module_create(rt, "TransformerBlock", config, 2, &m), KILN_ERR_INVALID_ARGUMENT, "embed_dim = 6",
              "divisible by num_heads = 4");
  config[1] = kiln_attr_int("num_heads", 2);
  config[2] = kiln_attr_float("mlp_ratio", 0.1);
  CHECK_ERROR(kiln_module_create(rt, "TransformerBlock", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "mlp_ratio",
              "0 features");
  CHECK(m == NULL);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_parameters(rt);
  test_forward(rt, 0);
  test_forward(rt, 1);
  test_gradients_and_causality(rt);
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/transformer");
}
