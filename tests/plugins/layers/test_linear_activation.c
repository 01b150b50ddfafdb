/* Linear's activation option, in train and eval mode (GELU is fused in
 * eval mode only): the output of Linear with an activation against Linear
 * then the activation's own layer (same parameters), its gradients against
 * finite differences, its parameter names (the same as without an
 * activation), and the error an unknown name gets. */
#include "layer_test.h"

typedef struct activation_case {
  const char* name;  /* Linear's activation option */
  const char* layer; /* the layer that computes it alone */
  kiln_attr config[1];
  size_t n_config;
} activation_case;

/* Linear 5 -> 4 in f64 with the given activation, its parameters U(-1, 1)
 * from one seed (so every call makes the same layer); NULL after a failed
 * check. */
static kiln_module* make_linear(kiln_runtime* rt, const char* activation, int bias) {
  kiln_attr config[4];
  kts_rng rng;
  kiln_module* m;
  config[0] = kiln_attr_int("in_features", 5);
  config[1] = kiln_attr_int("out_features", 4);
  config[2] = kiln_attr_bool("bias", bias);
  config[3] = kiln_attr_string("activation", activation);
  m = make_module(rt, "Linear", config, 4, 1);
  if (!m) return NULL;
  kts_rng_seed(&rng, 3);
  randomize_parameter(rt, m, "weight", &rng);
  if (bias) randomize_parameter(rt, m, "bias", &rng);
  return m;
}

static int has_parameter(const kiln_module* m, const char* name) {
  kiln_tensor* t = kts_parameter(m, name);
  const int found = t != NULL;
  kiln_tensor_release(t);
  return found;
}

static void test_against_two_layers(kiln_runtime* rt, const activation_case* c, kiln_tensor* x, int bias,
                                    int training) {
  kiln_module* fused = make_linear(rt, c->name, bias);
  kiln_module* plain = make_linear(rt, "none", bias);
  kiln_module* activation = make_module(rt, c->layer, c->config, c->n_config, 1);
  kiln_tensor* pre = NULL;
  size_t n_params = 0;
  if (fused) CHECK_OK(kiln_module_set_training(fused, training));
  if (fused && plain && activation) {
    double* got = forward_values(fused, &x, 1);
    double* want = NULL;
    CHECK_OK(kiln_module_forward1(plain, &x, 1, &pre));
    if (pre) want = forward_values(activation, &pre, 1);
    if (got && want) CHECK(kts_compare(c->name, got, want, 24, FORWARD_ATOL, FORWARD_RTOL) == 0);
    free(got);
    free(want);
    /* The activation adds no parameter and renames none. */
    CHECK_OK(kiln_module_parameter_count(fused, &n_params));
    CHECK(n_params == (bias ? 2u : 1u));
    CHECK(has_parameter(fused, "weight"));
    if (bias) CHECK(has_parameter(fused, "bias"));
    CHECK_GRADIENTS(rt, fused, &x, 1, NULL);
  }
  kiln_tensor_release(pre);
  kiln_module_release(activation);
  kiln_module_release(plain);
  kiln_module_release(fused);
}

static void test_unknown_activation(kiln_runtime* rt) {
  kiln_module* m = NULL;
  kiln_attr config[3];
  config[0] = kiln_attr_int("in_features", 3);
  config[1] = kiln_attr_int("out_features", 2);
  config[2] = kiln_attr_string("activation", "gelu");
  CHECK_ERROR(kiln_module_create(rt, "Linear", config, 3, &m), KILN_ERR_INVALID_ARGUMENT, "Linear", "activation",
              "\"gelu\"", "\"none\", \"relu\", \"gelu_tanh\"");
  CHECK(m == NULL);
}

int main(void) {
  kiln_runtime* rt = NULL;
  activation_case cases[2];
  const int64_t shape[3] = {2, 3, 5};
  kts_rng rng;
  kiln_tensor* x = NULL;
  size_t i;
  if (kts_runtime_create(1, &rt) != KILN_OK) {
    fprintf(stderr, "runtime: %s\n", kiln_last_error());
    return 1;
  }
  cases[0] = (activation_case){"relu", "ReLU", {{0}}, 0};
  cases[1] = (activation_case){"gelu_tanh", "GELU", {{0}}, 1};
  cases[1].config[0] = kiln_attr_string("approximate", "tanh");
  kts_rng_seed(&rng, 1);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  if (x)
    for (i = 0; i < COUNT(cases); ++i) {
      test_against_two_layers(rt, &cases[i], x, 1, 1);
      test_against_two_layers(rt, &cases[i], x, 0, 1);
      test_against_two_layers(rt, &cases[i], x, 1, 0);
      test_against_two_layers(rt, &cases[i], x, 0, 0);
    }
  test_unknown_activation(rt);
  kiln_tensor_release(x);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/linear_activation");
}
