/* Checkpoint (kiln_module_checkpoint): gradients bit-identical to the
 * unwrapped model's with dropout inside, the random stream left where the
 * unwrapped model leaves it, gradients against finite differences in f64,
 * parameter names unchanged by wrapping, the plain forward without
 * recording, and the errors. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kiln_test_support.h"

enum { IN = 6, HIDDEN = 12, OUT = 4, BATCH = 5 };

static kiln_module* layer(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n) {
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, type, config, n, &m));
  return m;
}

static kiln_module* linear(kiln_runtime* rt, int64_t in, int64_t out) {
  const kiln_attr config[2] = {kiln_attr_int("in_features", in), kiln_attr_int("out_features", out)};
  return layer(rt, "Linear", config, 2);
}

/* Linear, ReLU, Dropout(0.5): a block whose backward needs the dropout mask. */
static kiln_module* block(kiln_runtime* rt, int64_t in, int64_t out) {
  const kiln_attr p = kiln_attr_float("p", 0.5);
  kiln_module* seq = NULL;
  kiln_module* parts[3];
  size_t i;
  parts[0] = linear(rt, in, out);
  parts[1] = layer(rt, "ReLU", NULL, 0);
  parts[2] = layer(rt, "Dropout", &p, 1);
  CHECK_OK(kiln_sequential_create(rt, &seq));
  for (i = 0; i < 3; ++i) {
    CHECK_OK(kiln_sequential_append(seq, NULL, parts[i]));
    kiln_module_release(parts[i]);
  }
  return seq;
}

static kiln_module* checkpoint(kiln_runtime* rt, kiln_module* inner) {
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_checkpoint(rt, inner, &m));
  return m;
}

/* Sequential of `blocks`, each wrapped in a Checkpoint when `wrap`. */
static kiln_module* chain(kiln_runtime* rt, kiln_module* const* blocks, size_t n, int wrap) {
  kiln_module* seq = NULL;
  size_t i;
  CHECK_OK(kiln_sequential_create(rt, &seq));
  for (i = 0; i < n; ++i) {
    kiln_module* child = wrap ? checkpoint(rt, blocks[i]) : blocks[i];
    CHECK_OK(kiln_sequential_append(seq, NULL, child));
    if (wrap) kiln_module_release(child);
  }
  return seq;
}

static size_t parameter_count(const kiln_module* m) {
  size_t n = 0;
  CHECK_OK(kiln_module_parameter_count(m, &n));
  return n;
}

/* Appends the values of `t` (n of them) to `out` at *at. */
static void append_values(double* out, size_t* at, const kiln_tensor* t, int64_t n) {
  double* values = kts_read(t);
  CHECK(values != NULL && kts_numel(t) == n);
  if (values) memcpy(out + *at, values, (size_t)n * sizeof(double));
  *at += (size_t)n;
  free(values);
}

/* After seeding with `seed`: loss = sum(w * model(x)), backward, then one
 * more forward. `out` gets x's gradient, every parameter's gradient (the
 * gradients are dropped afterwards) and the values of that next forward,
 * which show where the random stream was left. Returns the count written. */
static size_t train_step_values(kiln_runtime* rt, kiln_module* model, kiln_tensor* x, kiln_tensor* w, double* out) {
  const kiln_op *mul = NULL, *sum = NULL;
  kiln_tensor *y = NULL, *wy = NULL, *loss = NULL, *g = NULL, *next = NULL;
  kiln_tensor* pair[2];
  size_t at = 0, i;
  CHECK_OK(kiln_op_find(rt, "mul", &mul));
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_manual_seed(rt, 1234));
  CHECK_OK(kiln_module_forward1(model, &x, 1, &y));
  pair[0] = y;
  pair[1] = w;
  CHECK_OK(kiln_op_call1(rt, mul, pair, 2, NULL, 0, &wy));
  CHECK_OK(kiln_op_call1(rt, sum, &wy, 1, NULL, 0, &loss));
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  CHECK_OK(kiln_tensor_grad(x, &g));
  if (g) append_values(out, &at, g, kts_numel(x));
  kiln_tensor_release(g);
  CHECK_OK(kiln_tensor_zero_grad(x));
  for (i = 0; i < parameter_count(model); ++i) {
    const char* name = NULL;
    kiln_tensor* p = NULL;
    CHECK_OK(kiln_module_parameter(model, i, &name, &p));
    g = NULL;
    CHECK_OK(kiln_tensor_grad(p, &g));
    CHECK(g != NULL);
    if (g) append_values(out, &at, g, kts_numel(p));
    kiln_tensor_release(g);
    CHECK_OK(kiln_tensor_set_grad(p, NULL));
    kiln_tensor_release(p);
  }
  CHECK_OK(kiln_module_forward1(model, &x, 1, &next));
  if (next) append_values(out, &at, next, BATCH * OUT);
  kiln_tensor_release(next);
  kiln_tensor_release(loss);
  kiln_tensor_release(wy);
  kiln_tensor_release(y);
  return at;
}

static void gradients_bit_identical_with_dropout(kiln_runtime* rt) {
  const int64_t x_shape[2] = {BATCH, IN}, w_shape[2] = {BATCH, OUT};
  kiln_module* blocks[3];
  kiln_module *plain, *per_block, *whole;
  kiln_tensor *x = NULL, *w = NULL;
  const size_t n = 4096;
  double *want = calloc(n, sizeof(double)), *got = calloc(n, sizeof(double));
  size_t n_want, n_got;
  kts_rng rng;
  blocks[0] = block(rt, IN, HIDDEN);
  blocks[1] = block(rt, HIDDEN, HIDDEN);
  blocks[2] = linear(rt, HIDDEN, OUT);
  plain = chain(rt, blocks, 3, 0);
  per_block = chain(rt, blocks, 3, 1);
  whole = checkpoint(rt, plain);
  CHECK_OK(kiln_module_cast(plain, KILN_F64));
  kts_rng_seed(&rng, 3);
  CHECK_OK(kts_tensor_uniform(rt, &rng, x_shape, 2, -1.0, 1.0, &x));
  CHECK_OK(kts_tensor_uniform(rt, &rng, w_shape, 2, -1.0, 1.0, &w));
  CHECK_OK(kiln_tensor_set_requires_grad(x, 1));

  n_want = train_step_values(rt, plain, x, w, want);
  CHECK(n_want == (size_t)(BATCH * IN + (IN + 1) * HIDDEN + (HIDDEN + 1) * HIDDEN + (HIDDEN + 1) * OUT + BATCH * OUT));
  n_got = train_step_values(rt, per_block, x, w, got);
  CHECK(n_got == n_want && memcmp(got, want, n_want * sizeof(double)) == 0);
  memset(got, 0, n * sizeof(double));
  n_got = train_step_values(rt, whole, x, w, got);
  CHECK(n_got == n_want && memcmp(got, want, n_want * sizeof(double)) == 0);

  free(want);
  free(got);
  kiln_tensor_release(w);
  kiln_tensor_release(x);
  kiln_module_release(whole);
  kiln_module_release(per_block);
  kiln_module_release(plain);
  kiln_module_release(blocks[0]);
  kiln_module_release(blocks[1]);
  kiln_module_release(blocks[2]);
}

/* The gradients of a checkpointed Linear, Tanh, Dropout, Linear against
 * finite differences in f64 (reseeded before each forward, so every
 * forward draws the same mask). */
static void gradients_match_finite_differences(kiln_runtime* rt) {
  const int64_t shape[2] = {3, IN};
  const kiln_attr p = kiln_attr_float("p", 0.3);
  kiln_module* parts[4];
  kiln_module *seq = NULL, *m;
  kiln_tensor* x = NULL;
  kts_gradcheck_options options = kts_gradcheck_defaults();
  kts_rng rng;
  size_t i;
  parts[0] = linear(rt, IN, HIDDEN);
  parts[1] = layer(rt, "Tanh", NULL, 0);
  parts[2] = layer(rt, "Dropout", &p, 1);
  parts[3] = linear(rt, HIDDEN, OUT);
  CHECK_OK(kiln_sequential_create(rt, &seq));
  for (i = 0; i < 4; ++i) {
    CHECK_OK(kiln_sequential_append(seq, NULL, parts[i]));
    kiln_module_release(parts[i]);
  }
  m = checkpoint(rt, seq);
  CHECK_OK(kiln_module_cast(m, KILN_F64));
  kts_rng_seed(&rng, 11);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 2, -1.0, 1.0, &x));
  options.reseed = 1;
  options.seed = 77;
  CHECK(kts_gradcheck_module(rt, m, &x, 1, &options) == 0);
  kiln_tensor_release(x);
  kiln_module_release(m);
  kiln_module_release(seq);
}

static void check_same_names(const kiln_module* a, const kiln_module* b) {
  size_t n = parameter_count(a), i;
  CHECK(n == parameter_count(b));
  for (i = 0; i < n && i < parameter_count(b); ++i) {
    const char *name_a = NULL, *name_b = NULL;
    kiln_tensor *ta = NULL, *tb = NULL;
    CHECK_OK(kiln_module_parameter(a, i, &name_a, &ta));
    CHECK_OK(kiln_module_parameter(b, i, &name_b, &tb));
    CHECK(name_a && name_b && strcmp(name_a, name_b) == 0);
    kiln_tensor_release(ta);
    kiln_tensor_release(tb);
  }
}

/* Wrapping changes no name: "0.0.weight" stays "0.0.weight", a wrapped
 * Linear's "weight" stays "weight", and the type says Checkpoint. */
static void names_unchanged_by_wrapping(kiln_runtime* rt) {
  kiln_module* blocks[2];
  kiln_module *plain, *wrapped, *lin = linear(rt, 2, 3), *wrapped_lin;
  const char *type = NULL, *name = NULL;
  kiln_tensor* t = NULL;
  blocks[0] = block(rt, IN, HIDDEN);
  blocks[1] = linear(rt, HIDDEN, OUT);
  plain = chain(rt, blocks, 2, 0);
  wrapped = chain(rt, blocks, 2, 1);
  check_same_names(plain, wrapped);
  CHECK_OK(kiln_module_parameter(wrapped, 0, &name, &t));
  CHECK(name && strcmp(name, "0.0.weight") == 0);
  kiln_tensor_release(t);
  wrapped_lin = checkpoint(rt, lin);
  CHECK_OK(kiln_module_type(wrapped_lin, &type));
  CHECK(type && strcmp(type, "Checkpoint") == 0);
  CHECK_OK(kiln_module_parameter(wrapped_lin, 1, &name, &t));
  CHECK(name && strcmp(name, "bias") == 0);
  kiln_tensor_release(t);
  kiln_module_release(wrapped_lin);
  kiln_module_release(lin);
  kiln_module_release(wrapped);
  kiln_module_release(plain);
  kiln_module_release(blocks[0]);
  kiln_module_release(blocks[1]);
}

/* Without recording the wrapper is the module's own forward: the same
 * values, no gradient. */
static void plain_forward_without_recording(kiln_runtime* rt) {
  const int64_t shape[2] = {BATCH, 2};
  kiln_module* lin = linear(rt, 2, 3);
  kiln_module* m = checkpoint(rt, lin);
  kiln_tensor *x = NULL, *want = NULL, *got = NULL;
  int requires_grad = 1;
  kts_rng rng;
  double *a, *b;
  kts_rng_seed(&rng, 5);
  CHECK_OK(kiln_module_cast(m, KILN_F64));
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 2, -1.0, 1.0, &x));
  CHECK_OK(kiln_no_grad_begin(rt));
  CHECK_OK(kiln_module_forward1(lin, &x, 1, &want));
  CHECK_OK(kiln_module_forward1(m, &x, 1, &got));
  CHECK_OK(kiln_no_grad_end(rt));
  CHECK_OK(kiln_tensor_requires_grad(got, &requires_grad));
  CHECK(requires_grad == 0);
  a = kts_read(want);
  b = kts_read(got);
  CHECK(a && b && memcmp(a, b, BATCH * 3 * sizeof(double)) == 0);
  free(a);
  free(b);
  kiln_tensor_release(got);
  kiln_tensor_release(want);
  kiln_tensor_release(x);
  kiln_module_release(m);
  kiln_module_release(lin);
}

static void errors(kiln_runtime* rt) {
  const int64_t shape[2] = {BATCH, 2};
  kiln_runtime* other = NULL;
  kiln_module *lin = linear(rt, 2, 3), *m = NULL, *foreign = NULL;
  kiln_tensor *x = NULL, *y = NULL, *g = NULL;
  kts_rng rng;
  CHECK_ERROR(kiln_module_checkpoint(NULL, lin, &m), KILN_ERR_INVALID_ARGUMENT, "kiln_module_checkpoint", "'rt'");
  CHECK_ERROR(kiln_module_checkpoint(rt, NULL, &m), KILN_ERR_INVALID_ARGUMENT, "'inner'");
  CHECK_ERROR(kiln_module_checkpoint(rt, lin, NULL), KILN_ERR_INVALID_ARGUMENT, "'out'");
  CHECK_OK(kts_runtime_create(1, &other));
  CHECK_ERROR(kiln_module_checkpoint(other, lin, &foreign), KILN_ERR_INVALID_ARGUMENT,
              "the module belongs to another runtime");
  CHECK(foreign == NULL);
  kiln_runtime_release(other);

  /* A second backward through a freed graph names the Checkpoint. */
  m = checkpoint(rt, lin);
  kts_rng_seed(&rng, 9);
  CHECK_OK(kts_tensor_uniform(rt, &rng, shape, 2, -1.0, 1.0, &x));
  CHECK_OK(kiln_module_cast(m, KILN_F64));
  CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
  CHECK_OK(kiln_tensor_detach(y, &g));
  CHECK_OK(kiln_backward(rt, y, g, 0));
  CHECK_ERROR(kiln_backward(rt, y, g, 0), KILN_ERR_INVALID_STATE, "Checkpoint whose graph has already been freed",
              "retain_graph");
  /* With retain_graph the module is run again each time. */
  kiln_tensor_release(y);
  CHECK_OK(kiln_module_forward1(m, &x, 1, &y));
  CHECK_OK(kiln_backward(rt, y, g, 1));
  CHECK_OK(kiln_backward(rt, y, g, 0));
  kiln_tensor_release(g);
  kiln_tensor_release(y);
  kiln_tensor_release(x);
  kiln_module_release(m);
  kiln_module_release(lin);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  if (!rt) return check_report("plugins/checkpoint/checkpoint");
  gradients_bit_identical_with_dropout(rt);
  gradients_match_finite_differences(rt);
  names_unchanged_by_wrapping(rt);
  plain_forward_without_recording(rt);
  errors(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/checkpoint/checkpoint");
}
