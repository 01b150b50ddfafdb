/* LSTM and GRU: parameter names and shapes (torch.nn.LSTM's and GRU's),
 * their initial range, forward values against PyTorch's (the files in
 * data/, written by make_rnn_reference.py: state_dicts loaded strictly, then
 * every output compared), gradients of every output against finite
 * differences, dropout between layers in train mode only, LSTM's
 * proj_size, and errors. */
#include <math.h>

#include "layer_test.h"

enum { INPUT = 3, HIDDEN = 4, STEPS = 3, BATCH = 2 };

static kiln_module* make_rnn(kiln_runtime* rt, const char* type, int64_t layers, int bidirectional, int batch_first,
                             int bias, double dropout, int f64) {
  kiln_attr config[7];
  config[0] = kiln_attr_int("input_size", INPUT);
  config[1] = kiln_attr_int("hidden_size", HIDDEN);
  config[2] = kiln_attr_int("num_layers", layers);
  config[3] = kiln_attr_bool("bidirectional", bidirectional);
  config[4] = kiln_attr_bool("batch_first", batch_first);
  config[5] = kiln_attr_bool("bias", bias);
  config[6] = kiln_attr_float("dropout", dropout);
  return make_module(rt, type, config, 7, f64);
}

enum { PROJ = 2 };

/* An LSTM of 2 layers, bidirectional, time-major, with proj_size PROJ. */
static kiln_module* make_projected(kiln_runtime* rt, int f64) {
  kiln_attr config[5];
  config[0] = kiln_attr_int("input_size", INPUT);
  config[1] = kiln_attr_int("hidden_size", HIDDEN);
  config[2] = kiln_attr_int("num_layers", 2);
  config[3] = kiln_attr_bool("bidirectional", 1);
  config[4] = kiln_attr_int("proj_size", PROJ);
  return make_module(rt, "LSTM", config, 5, f64);
}

/* Parameter `index` of `m` is named `want`, has shape `dims` (rank `rank`)
 * and values of U(-bound, bound): inside the bound, and when `spread`, over
 * it too (for tensors large enough that a draw must reach past a quarter). */
static void check_parameter(kiln_module* m, size_t index, const char* want, const int64_t* dims, int rank,
                            double bound, int spread) {
  const char* name = NULL;
  kiln_tensor* t = NULL;
  double* values;
  double low = 0, high = 0;
  int64_t i, n;
  CHECK_OK(kiln_module_parameter(m, index, &name, &t));
  if (!t) return;
  CHECK(name && strcmp(name, want) == 0);
  CHECK(has_shape(t, dims, rank));
  values = kts_read(t);
  n = kts_numel(t);
  for (i = 0; values && i < n; ++i) {
    CHECK(fabs(values[i]) <= bound);
    low = values[i] < low ? values[i] : low;
    high = values[i] > high ? values[i] : high;
  }
  if (values && spread) CHECK(low < -bound / 4 && high > bound / 4);
  free(values);
  kiln_tensor_release(t);
}

/* PyTorch's names, in its order, and shapes: 2 layers, bidirectional. */
static void test_parameters(kiln_runtime* rt, const char* type, int gates) {
  static const char* const bases[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
  static const char* const suffixes[2] = {"", "_reverse"};
  kiln_module* m = make_rnn(rt, type, 2, 1, 0, 1, 0.0, 0);
  const double bound = 1.0 / sqrt((double)HIDDEN);
  size_t count = 0, index = 0;
  int layer, dir, b;
  if (!m) return;
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == 16);
  for (layer = 0; layer < 2; ++layer)
    for (dir = 0; dir < 2; ++dir)
      for (b = 0; b < 4; ++b, ++index) {
        char want[64];
        const int64_t in = layer == 0 ? INPUT : 2 * HIDDEN;
        const int64_t dims[2] = {gates * HIDDEN, b == 0 ? in : HIDDEN};
        snprintf(want, sizeof want, "%s_l%d%s", bases[b], layer, suffixes[dir]);
        check_parameter(m, index, want, dims, b < 2 ? 2 : 1, bound, 1);
      }
  kiln_module_release(m);
  /* Without biases: only the weights. */
  m = make_rnn(rt, type, 1, 0, 0, 0, 0.0, 0);
  if (m) {
    kiln_tensor* absent = NULL;
    const char* name = NULL;
    CHECK_OK(kiln_module_parameter_count(m, &count));
    CHECK(count == 2);
    CHECK_ERROR(kiln_module_parameter(m, 2, &name, &absent), KILN_ERR_INVALID_ARGUMENT, "index 2");
  }
  kiln_module_release(m);
}

/* With proj_size, PyTorch's names in its order: weight_hr_l{k} [P, H] after
 * each layer and direction's biases, weight_hh [4 H, P], and layer 1 reads
 * 2 P features; all U(-1/sqrt(H), 1/sqrt(H)). */
static void test_projected_parameters(kiln_runtime* rt) {
  static const char* const bases[5] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"};
  static const char* const suffixes[2] = {"", "_reverse"};
  kiln_module* m = make_projected(rt, 0);
  const double bound = 1.0 / sqrt((double)HIDDEN);
  size_t count = 0, index = 0;
  int layer, dir, b;
  if (!m) return;
  CHECK_OK(kiln_module_parameter_count(m, &count));
  CHECK(count == 20);
  for (layer = 0; layer < 2; ++layer)
    for (dir = 0; dir < 2; ++dir)
      for (b = 0; b < 5; ++b, ++index) {
        const int64_t in = layer == 0 ? INPUT : 2 * PROJ;
        const int64_t shapes[5][2] = {{4 * HIDDEN, in}, {4 * HIDDEN, PROJ}, {4 * HIDDEN}, {4 * HIDDEN}, {PROJ, HIDDEN}};
        char want[64];
        snprintf(want, sizeof want, "%s_l%d%s", bases[b], layer, suffixes[dir]);
        check_parameter(m, index, want, shapes[b], b == 2 || b == 3 ? 1 : 2, bound, 0);
      }
  kiln_module_release(m);
}

/* The tensor "<case>.<name>" of the reference file. */
static kiln_tensor* reference_tensor(const kiln_example* io, const char* reference, const char* name) {
  char key[96];
  kiln_tensor* t = NULL;
  snprintf(key, sizeof key, "%s.%s", reference, name);
  CHECK_OK(kiln_example_get(io, key, &t));
  return t;
}

/* A module configured as the reference case, its PyTorch weights loaded
 * strictly, run on the case's input (and its initial states when
 * `given_states`) in f64: every output as PyTorch's. */
static void test_reference(const kiln_example* io, const char* reference, kiln_module* m, int n_states,
                           int given_states) {
  static const char* const input_names[3] = {"input", "h0", "c0"};
  static const char* const output_names[3] = {"output", "h_n", "c_n"};
  char path[512];
  kiln_tensor *inputs[3] = {NULL, NULL, NULL}, *outputs[3] = {NULL, NULL, NULL};
  size_t n_inputs = 0, n_outputs = 0, i;
  if (!m) return;
  snprintf(path, sizeof path, "%s/%s_weights.safetensors", RNN_REFERENCE_DIR, reference);
  CHECK_OK(kiln_weights_load(m, path, 1));
  CHECK_OK(kiln_module_set_training(m, 0));
  n_inputs = given_states ? (size_t)(1 + n_states) : 1;
  for (i = 0; i < n_inputs; ++i) inputs[i] = reference_tensor(io, reference, input_names[i]);
  CHECK_OK(kiln_module_forward(m, inputs, n_inputs, outputs, 3, &n_outputs));
  CHECK(n_outputs == (size_t)(1 + n_states));
  for (i = 0; i < n_outputs; ++i) {
    kiln_tensor* want = reference_tensor(io, reference, output_names[i]);
    double* values = want ? kts_read(want) : NULL;
    int64_t dims[KILN_MAX_DIMS];
    int rank = 0;
    if (values) {
      char what[96];
      snprintf(what, sizeof what, "%s %s", reference, output_names[i]);
      CHECK_OK(kiln_tensor_rank(want, &rank));
      CHECK_OK(kiln_tensor_shape(want, dims, KILN_MAX_DIMS));
      CHECK(has_shape(outputs[i], dims, rank));
      CHECK(kts_compare_tensor(what, outputs[i], values, kts_numel(want), 1e-12, 1e-10) == 0);
    }
    free(values);
    kiln_tensor_release(want);
    kiln_tensor_release(outputs[i]);
  }
  for (i = 0; i < n_inputs; ++i) kiln_tensor_release(inputs[i]);
  kiln_module_release(m);
}

static void test_references(kiln_runtime* rt) {
  char path[512];
  kiln_example* io = NULL;
  snprintf(path, sizeof path, "%s/rnn_io.safetensors", RNN_REFERENCE_DIR);
  CHECK_OK(kiln_safetensors_load(rt, path, &io));
  if (!io) return;
  test_reference(io, "lstm_bidirectional", make_rnn(rt, "LSTM", 2, 1, 1, 1, 0.0, 1), 2, 1);
  test_reference(io, "gru_bidirectional", make_rnn(rt, "GRU", 2, 1, 0, 1, 0.0, 1), 1, 1);
  test_reference(io, "lstm_unbatched", make_rnn(rt, "LSTM", 1, 0, 0, 0, 0.0, 1), 2, 0);
  test_reference(io, "gru_unbatched", make_rnn(rt, "GRU", 1, 0, 1, 1, 0.0, 1), 1, 0);
  test_reference(io, "lstm_projected", make_projected(rt, 1), 2, 1);
  kiln_example_release(io);
}

/* A graph of one node `rnn` over (x, states...) whose output is the node's
 * output `k`: gradients of the final states go through it. */
static kiln_module* output_of(kiln_runtime* rt, kiln_module* rnn, size_t n_inputs, int k) {
  static const char* const names[3] = {"x", "h0", "c0"};
  static const char* const outputs[3] = {"rnn:0", "rnn:1", "rnn:2"};
  kiln_module* g = NULL;
  CHECK_OK(kiln_graph_create(rt, names, n_inputs, &g));
  if (!g) return NULL;
  CHECK_OK(kiln_graph_add(g, "rnn", rnn, names, n_inputs));
  CHECK_OK(kiln_graph_set_outputs(g, &outputs[k], 1));
  return g;
}

/* 2 layers, bidirectional, batch-first input [N, T, F] and given states:
 * the gradients of the output and of each final state, for the input, the
 * states and every parameter. */
static void test_gradients(kiln_runtime* rt, const char* type, int n_states, uint64_t seed) {
  const int64_t x_shape[3] = {BATCH, STEPS, INPUT}, state_shape[3] = {4, BATCH, HIDDEN};
  kiln_module* m = make_rnn(rt, type, 2, 1, 1, 1, 0.0, 1);
  kiln_tensor* inputs[3] = {NULL, NULL, NULL};
  kts_rng rng;
  int i, k;
  if (!m) return;
  kts_rng_seed(&rng, seed);
  CHECK_OK(kts_tensor_uniform(rt, &rng, x_shape, 3, -1.0, 1.0, &inputs[0]));
  for (i = 1; i <= n_states; ++i) CHECK_OK(kts_tensor_uniform(rt, &rng, state_shape, 3, -1.0, 1.0, &inputs[i]));
  for (k = 0; k <= n_states; ++k) {
    kiln_module* g = output_of(rt, m, (size_t)(1 + n_states), k);
    if (g) CHECK_GRADIENTS(rt, g, inputs, (size_t)(1 + n_states), NULL);
    kiln_module_release(g);
  }
  /* Without given states (zeros) and without biases, output 0. */
  kiln_module_release(m);
  m = make_rnn(rt, type, 1, 1, 0, 0, 0.0, 1);
  if (m) {
    const int64_t time_major[3] = {STEPS, BATCH, INPUT};
    kiln_tensor* x = NULL;
    CHECK_OK(kts_tensor_uniform(rt, &rng, time_major, 3, -1.0, 1.0, &x));
    kiln_module* g = output_of(rt, m, 1, 0);
    if (x && g) CHECK_GRADIENTS(rt, g, &x, 1, NULL);
    kiln_module_release(g);
    kiln_tensor_release(x);
  }
  kiln_module_release(m);
  for (i = 0; i <= n_states; ++i) kiln_tensor_release(inputs[i]);
}

/* With proj_size: the gradients of every output for the input, h0
 * [4, N, P], c0 [4, N, H] and every parameter (weight_hr included), and of
 * the output with zero initial states. */
static void test_projected_gradients(kiln_runtime* rt) {
  const int64_t x_shape[3] = {STEPS, BATCH, INPUT}, h_shape[3] = {4, BATCH, PROJ}, c_shape[3] = {4, BATCH, HIDDEN};
  kiln_module* m = make_projected(rt, 1);
  kiln_tensor* inputs[3] = {NULL, NULL, NULL};
  kts_rng rng;
  int i, k;
  if (!m) return;
  kts_rng_seed(&rng, 13);
  CHECK_OK(kts_tensor_uniform(rt, &rng, x_shape, 3, -1.0, 1.0, &inputs[0]));
  CHECK_OK(kts_tensor_uniform(rt, &rng, h_shape, 3, -1.0, 1.0, &inputs[1]));
  CHECK_OK(kts_tensor_uniform(rt, &rng, c_shape, 3, -1.0, 1.0, &inputs[2]));
  for (k = 0; k < 3; ++k) {
    kiln_module* g = output_of(rt, m, 3, k);
    if (g) CHECK_GRADIENTS(rt, g, inputs, 3, NULL);
    kiln_module_release(g);
  }
  {
    kiln_module* g = output_of(rt, m, 1, 0);
    if (g) CHECK_GRADIENTS(rt, g, inputs, 1, NULL);
    kiln_module_release(g);
  }
  kiln_module_release(m);
  for (i = 0; i < 3; ++i) kiln_tensor_release(inputs[i]);
}

/* The values of the output of m(x) (malloc'd); NULL after a failed check.
 * The layers give several outputs, which kiln_module_forward1 refuses. */
static double* output_values(kiln_module* m, kiln_tensor* x) {
  kiln_tensor* outputs[3] = {NULL, NULL, NULL};
  size_t n = 0, i;
  double* values = NULL;
  CHECK_OK(kiln_module_forward(m, &x, 1, outputs, 3, &n));
  if (n > 0) values = kts_read(outputs[0]);
  CHECK(values != NULL);
  for (i = 0; i < n; ++i) kiln_tensor_release(outputs[i]);
  return values;
}

/* dropout = 0.5 between 2 layers: train mode differs from eval mode, eval
 * mode repeats itself; one layer has nothing to drop. */
static void test_dropout(kiln_runtime* rt, const char* type) {
  const int64_t shape[3] = {STEPS, BATCH, INPUT};
  const int64_t n = STEPS * BATCH * HIDDEN;
  kiln_module* two = make_rnn(rt, type, 2, 0, 0, 1, 0.5, 1);
  kiln_module* one = make_rnn(rt, type, 1, 0, 0, 1, 0.5, 1);
  kiln_tensor* x = NULL;
  double *eval = NULL, *again = NULL, *train = NULL;
  kts_rng rng;
  int64_t i, differ = 0;
  kts_rng_seed(&rng, 5);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 3, -1.0, 1.0, &x));
  if (!two || !one || !x) goto done;
  CHECK_OK(kiln_module_set_training(two, 0));
  eval = output_values(two, x);
  again = output_values(two, x);
  CHECK_OK(kiln_module_set_training(two, 1));
  train = output_values(two, x);
  if (eval && again && train) {
    CHECK(kts_compare("eval mode twice", again, eval, n, 0, 0) == 0);
    for (i = 0; i < n; ++i) differ += train[i] != eval[i];
    CHECK(differ > 0);
  }
  free(eval);
  free(train);
  CHECK_OK(kiln_module_set_training(one, 0));
  eval = output_values(one, x);
  CHECK_OK(kiln_module_set_training(one, 1));
  train = output_values(one, x);
  if (eval && train) CHECK(kts_compare("one layer, train mode", train, eval, n, 0, 0) == 0);
done:
  free(eval);
  free(again);
  free(train);
  kiln_tensor_release(x);
  kiln_module_release(two);
  kiln_module_release(one);
}

static void test_errors(kiln_runtime* rt) {
  const int64_t wrong_features[3] = {STEPS, BATCH, INPUT + 1}, x_shape[3] = {STEPS, BATCH, INPUT};
  const int64_t wrong_state[3] = {2, BATCH, HIDDEN}, empty[3] = {0, BATCH, INPUT}, wide_h0[3] = {4, BATCH, HIDDEN};
  kiln_module *lstm = make_rnn(rt, "LSTM", 1, 1, 0, 1, 0.0, 1), *gru = make_rnn(rt, "GRU", 1, 0, 0, 1, 0.0, 1);
  kiln_module *bad = NULL, *projected = NULL;
  kiln_tensor *x = NULL, *other = NULL, *state = NULL, *none = NULL, *wide = NULL, *outs[3] = {NULL, NULL, NULL};
  size_t n_outs = 0;
  kiln_tensor* args[3];
  kiln_attr config[3];
  kts_rng rng;
  kts_rng_seed(&rng, 9);
  config[0] = kiln_attr_int("input_size", INPUT);
  config[1] = kiln_attr_int("hidden_size", 0);
  CHECK_ERROR(kiln_module_create(rt, "LSTM", config, 2, &bad), KILN_ERR_INVALID_ARGUMENT, "LSTM",
              "hidden_size must be >= 1, got 0");
  config[1] = kiln_attr_int("hidden_size", HIDDEN);
  config[2] = kiln_attr_float("dropout", 1.0);
  CHECK_ERROR(kiln_module_create(rt, "GRU", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT, "GRU", "dropout", "[0, 1)");
  config[2] = kiln_attr_int("num_layers", 0);
  CHECK_ERROR(kiln_module_create(rt, "GRU", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT, "num_layers");
  config[2] = kiln_attr_int("proj_size", -1);
  CHECK_ERROR(kiln_module_create(rt, "LSTM", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT, "LSTM",
              "proj_size must be >= 0, got -1");
  config[2] = kiln_attr_int("proj_size", HIDDEN);
  CHECK_ERROR(kiln_module_create(rt, "LSTM", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT,
              "LSTM: proj_size must be smaller than hidden_size = 4, got 4");
  /* GRU has no proj_size, as in PyTorch. */
  config[2] = kiln_attr_int("proj_size", 2);
  CHECK_ERROR(kiln_module_create(rt, "GRU", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT, "GRU", "proj_size");
  CHECK(bad == NULL);
  CHECK_OK(kts_tensor_uniform(rt, &rng, wrong_features, 3, -1.0, 1.0, &other));
  CHECK_OK(kts_tensor_uniform(rt, &rng, x_shape, 3, -1.0, 1.0, &x));
  CHECK_OK(kts_tensor_uniform(rt, &rng, wrong_state, 3, -1.0, 1.0, &state));
  CHECK_OK(kiln_tensor_empty(rt, empty, 3, KILN_F64, KILN_DEVICE_CPU, 0, &none));
  if (!lstm || !gru || !x || !other || !state || !none) goto done;
  CHECK_ERROR(kiln_module_forward(lstm, &other, 1, outs, 3, &n_outs), KILN_ERR_SHAPE_MISMATCH, "LSTM", "input_size = 3",
              "last dim 4");
  CHECK_ERROR(kiln_module_forward(gru, &none, 1, outs, 3, &n_outs), KILN_ERR_SHAPE_MISMATCH, "GRU", "length 0");
  args[0] = x;
  args[1] = state;
  args[2] = state;
  CHECK_ERROR(kiln_module_forward(lstm, args, 2, outs, 3, &n_outs), KILN_ERR_INVALID_ARGUMENT,
              "LSTM takes 1 input (input) or 3 (input, h0, c0), got 2");
  CHECK_ERROR(kiln_module_forward(gru, args, 3, outs, 3, &n_outs), KILN_ERR_INVALID_ARGUMENT,
              "GRU takes 1 input (input) or 2 (input, h0), got 3");
  /* One layer in one direction takes h0 [1, N, H]. */
  CHECK_ERROR(kiln_module_forward(gru, args, 2, outs, 3, &n_outs), KILN_ERR_SHAPE_MISMATCH, "GRU: h0", "[1, 2, 4]");
  CHECK(n_outs == 0 && outs[0] == NULL);
  /* With proj_size, h0 is [L * D, N, P], not hidden_size wide. */
  projected = make_projected(rt, 1);
  CHECK_OK(kts_tensor_uniform(rt, &rng, wide_h0, 3, -1.0, 1.0, &wide));
  args[1] = wide;
  args[2] = wide;
  if (projected && wide)
    CHECK_ERROR(kiln_module_forward(projected, args, 3, outs, 3, &n_outs), KILN_ERR_SHAPE_MISMATCH,
                "LSTM: h0 must be [num_layers * directions, N, proj_size] = [4, 2, 2]");
done:
  kiln_tensor_release(x);
  kiln_tensor_release(other);
  kiln_tensor_release(state);
  kiln_tensor_release(none);
  kiln_tensor_release(wide);
  kiln_module_release(lstm);
  kiln_module_release(gru);
  kiln_module_release(projected);
}

int main(void) {
  kiln_runtime* rt = layer_test_runtime();
  test_parameters(rt, "LSTM", 4);
  test_parameters(rt, "GRU", 3);
  test_projected_parameters(rt);
  test_references(rt);
  test_gradients(rt, "LSTM", 2, 11);
  test_gradients(rt, "GRU", 1, 12);
  test_projected_gradients(rt);
  test_dropout(rt, "LSTM");
  test_dropout(rt, "GRU");
  test_errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/layers/rnn");
}
