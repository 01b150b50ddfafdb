/* kiln_memory_estimate_get and kiln_find_batch_size on an MLP: the
 * estimate's parts (parameters exactly, gradients as large, optimizer state
 * per type, activations growing with the batch), trials that leave no
 * memory, gradient or random draw behind, the search under a limit and
 * under a hard CPU cap (the batch found fits and the next one does not),
 * and the errors. */
#include <string.h>

#include "check.h"
#include "trainer_support.h"

enum { IN = 64, HIDDEN = 256, CLASSES = 10 };
#define PARAM_BYTES ((int64_t)(IN * HIDDEN + HIDDEN + HIDDEN * CLASSES + CLASSES) * 4)

static const int64_t example_shape[1] = {IN};

/* Linear, ReLU, Dropout (which draws from the random stream), Linear. */
static kiln_module* mlp(kiln_runtime* rt) {
  const kiln_attr first[2] = {kiln_attr_int("in_features", IN), kiln_attr_int("out_features", HIDDEN)};
  const kiln_attr second[2] = {kiln_attr_int("in_features", HIDDEN), kiln_attr_int("out_features", CLASSES)};
  const kiln_attr p = kiln_attr_float("p", 0.5);
  kiln_module* seq = NULL;
  kiln_module* layers[4] = {NULL, NULL, NULL, NULL};
  size_t i;
  REQUIRE_OK(kiln_module_create(rt, "Linear", first, 2, &layers[0]));
  REQUIRE_OK(kiln_module_create(rt, "ReLU", NULL, 0, &layers[1]));
  REQUIRE_OK(kiln_module_create(rt, "Dropout", &p, 1, &layers[2]));
  REQUIRE_OK(kiln_module_create(rt, "Linear", second, 2, &layers[3]));
  REQUIRE_OK(kiln_sequential_create(rt, &seq));
  for (i = 0; i < 4; ++i) {
    REQUIRE_OK(kiln_sequential_append(seq, NULL, layers[i]));
    kiln_module_release(layers[i]);
  }
  return seq;
}

static kiln_optimizer* optimizer(kiln_runtime* rt, kiln_module* model, const char* type) {
  kiln_tensor* params[4];
  const kiln_attr lr = kiln_attr_float("lr", 0.1);
  kiln_optimizer* opt = NULL;
  size_t i;
  for (i = 0; i < 4; ++i) {
    const char* name = NULL;
    REQUIRE_OK(kiln_module_parameter(model, i, &name, &params[i]));
  }
  REQUIRE_OK(kiln_optimizer_create(rt, type, params, 4, &lr, 1, &opt));
  for (i = 0; i < 4; ++i) kiln_tensor_release(params[i]);
  return opt;
}

static kiln_memory_plan_options plan(kiln_optimizer* opt) {
  kiln_memory_plan_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.optimizer = opt;
  return o;
}

static kiln_memory_estimate estimate(kiln_module* model, int64_t batch, const kiln_memory_plan_options* o) {
  kiln_memory_estimate e;
  memset(&e, 0, sizeof e);
  e.size = sizeof e;
  CHECK_OK(kiln_memory_estimate_get(model, example_shape, 1, batch, o, &e));
  return e;
}

static int64_t cpu_current(kiln_runtime* rt) {
  kiln_memory_stats s;
  memset(&s, 0, sizeof s);
  s.size = sizeof s;
  CHECK_OK(kiln_memory_stats_get(rt, KILN_DEVICE_CPU, 0, &s));
  return s.current_bytes;
}

static int has_gradient(const kiln_module* model) {
  const char* name = NULL;
  kiln_tensor *p = NULL, *g = NULL;
  int has;
  CHECK_OK(kiln_module_parameter(model, 0, &name, &p));
  CHECK_OK(kiln_tensor_grad(p, &g));
  has = g != NULL;
  kiln_tensor_release(g);
  kiln_tensor_release(p);
  return has;
}

/* A draw of the random stream after seeding with 5 and running `trial`. */
static float draw_after(kiln_runtime* rt, kiln_module* model, int trial) {
  const kiln_op* rand = NULL;
  const int64_t shape[1] = {1};
  const kiln_attr size = kiln_attr_ints("shape", shape, 1);
  kiln_tensor* t = NULL;
  float value = 0;
  CHECK_OK(kiln_manual_seed(rt, 5));
  if (trial) (void)estimate(model, 8, NULL);
  CHECK_OK(kiln_op_find(rt, "rand", &rand));
  CHECK_OK(kiln_op_call1(rt, rand, NULL, 0, &size, 1, &t));
  if (t) CHECK_OK(kiln_tensor_read(t, &value, sizeof value));
  kiln_tensor_release(t);
  return value;
}

static void estimate_parts(kiln_runtime* rt, kiln_module* model) {
  kiln_optimizer* sgd = optimizer(rt, model, "SGD");
  kiln_optimizer* adam = optimizer(rt, model, "Adam");
  const kiln_memory_plan_options none = plan(NULL), with_sgd = plan(sgd), with_adam = plan(adam);
  const int64_t before = cpu_current(rt);
  const kiln_memory_estimate small = estimate(model, 32, &none);
  const kiln_memory_estimate large = estimate(model, 64, &none);
  CHECK(small.parameter_bytes == PARAM_BYTES && small.buffer_bytes == 0);
  CHECK(small.gradient_bytes == PARAM_BYTES && small.optimizer_bytes == 0);
  /* At least the first Linear's saved input and the ReLU's saved output. */
  CHECK(small.activation_bytes >= 32 * (IN + HIDDEN) * 4);
  CHECK(large.activation_bytes > small.activation_bytes);
  CHECK(small.total_bytes == small.parameter_bytes + small.buffer_bytes + small.gradient_bytes +
                                 small.optimizer_bytes + small.activation_bytes);
  CHECK(estimate(model, 32, &with_sgd).optimizer_bytes == PARAM_BYTES);
  CHECK(estimate(model, 32, &with_adam).optimizer_bytes == 2 * PARAM_BYTES);
  /* Nothing stays: memory, gradients, the optimizers' state, the random stream. */
  CHECK(cpu_current(rt) == before);
  CHECK(!has_gradient(model));
  {
    size_t count = 1;
    CHECK_OK(kiln_optimizer_state_count(adam, &count));
    CHECK(count == 1); /* only the step count: no parameter state was made */
  }
  CHECK(draw_after(rt, model, 1) == draw_after(rt, model, 0));
  kiln_optimizer_release(adam);
  kiln_optimizer_release(sgd);
}

static void search_under_a_limit(kiln_runtime* rt, kiln_module* model) {
  kiln_memory_plan_options o = plan(NULL);
  kiln_batch_size_result r;
  const int64_t before = cpu_current(rt);
  memset(&r, 0, sizeof r);
  r.size = sizeof r;
  /* Room for the parameters, their gradients and activations of ~100 examples. */
  o.limit_bytes = before + 2 * PARAM_BYTES + 100 * (IN + HIDDEN + CLASSES) * 4 * 2;
  CHECK_OK(kiln_find_batch_size(model, example_shape, 1, &o, &r));
  printf("under a limit of %lld bytes: batch %lld, peak %lld bytes, %lld tries\n", (long long)o.limit_bytes,
         (long long)r.batch_size, (long long)r.peak_bytes, (long long)r.tries);
  CHECK(r.batch_size > 1 && r.batch_size < 65536 && r.peak_bytes <= o.limit_bytes && r.tries > 2);
  CHECK(cpu_current(rt) == before && !has_gradient(model));
  /* The next batch does not fit: a search capped there gives the same. */
  o.max_batch_size = r.batch_size + 1;
  {
    kiln_batch_size_result again = r;
    CHECK_OK(kiln_find_batch_size(model, example_shape, 1, &o, &again));
    CHECK(again.batch_size == r.batch_size);
  }
  /* Without a limit, max_batch_size ends the doubling. */
  o.limit_bytes = 0;
  o.max_batch_size = 12;
  CHECK_OK(kiln_find_batch_size(model, example_shape, 1, &o, &r));
  CHECK(r.batch_size == 12 && r.tries == 5); /* 1, 2, 4, 8, 12 */
}

/* Under a hard cap, trials run out of memory; each is cleaned up, the batch
 * found fits and the next one runs out of memory. */
static void search_under_a_cpu_cap(kiln_runtime* rt, kiln_module* model) {
  kiln_optimizer* adam = optimizer(rt, model, "Adam");
  kiln_memory_plan_options o = plan(adam);
  kiln_batch_size_result r;
  kiln_memory_estimate e;
  const int64_t before = cpu_current(rt);
  memset(&r, 0, sizeof r);
  r.size = sizeof r;
  CHECK_OK(kiln_memory_set_limit(rt, KILN_DEVICE_CPU, 0, before + 4 * PARAM_BYTES + 300 * 1024));
  CHECK_OK(kiln_find_batch_size(model, example_shape, 1, &o, &r));
  printf("under a CPU cap: batch %lld, peak %lld bytes, %lld tries\n", (long long)r.batch_size,
         (long long)r.peak_bytes, (long long)r.tries);
  CHECK(r.batch_size > 1 && r.batch_size < 65536);
  CHECK(cpu_current(rt) == before && !has_gradient(model));
  memset(&e, 0, sizeof e);
  e.size = sizeof e;
  CHECK_OK(kiln_memory_estimate_get(model, example_shape, 1, r.batch_size, &o, &e));
  CHECK_ERROR(kiln_memory_estimate_get(model, example_shape, 1, r.batch_size + 1, &o, &e), KILN_ERR_OUT_OF_MEMORY,
              "the trial step at batch size", "over the cap of");
  CHECK(cpu_current(rt) == before);
  /* Not even one example: an error with the reason, nothing left behind. */
  CHECK_OK(kiln_memory_set_limit(rt, KILN_DEVICE_CPU, 0, before + 1024));
  CHECK_ERROR(kiln_find_batch_size(model, example_shape, 1, &o, &r), KILN_ERR_OUT_OF_MEMORY,
              "even a batch of 1 does not fit", "over the cap of");
  CHECK(cpu_current(rt) == before && !has_gradient(model));
  CHECK_OK(kiln_memory_set_limit(rt, KILN_DEVICE_CPU, 0, 0));
  kiln_optimizer_release(adam);
}

static void errors(kiln_module* model) {
  kiln_memory_plan_options o = plan(NULL);
  kiln_memory_estimate e;
  kiln_batch_size_result r;
  const int64_t bad_shape[1] = {0};
  memset(&e, 0, sizeof e);
  e.size = sizeof e;
  memset(&r, 0, sizeof r);
  r.size = sizeof r;
  CHECK_ERROR(kiln_memory_estimate_get(NULL, example_shape, 1, 1, &o, &e), KILN_ERR_INVALID_ARGUMENT, "'model'");
  CHECK_ERROR(kiln_memory_estimate_get(model, example_shape, 1, 0, &o, &e), KILN_ERR_INVALID_ARGUMENT,
              "batch_size is 0");
  CHECK_ERROR(kiln_memory_estimate_get(model, bad_shape, 1, 1, &o, &e), KILN_ERR_INVALID_ARGUMENT,
              "input_shape[0] is 0");
  CHECK_ERROR(kiln_memory_estimate_get(model, NULL, 1, 1, &o, &e), KILN_ERR_INVALID_ARGUMENT,
              "input_shape is NULL");
  o.loss = "no_such_loss";
  CHECK_ERROR(kiln_memory_estimate_get(model, example_shape, 1, 1, &o, &e), KILN_ERR_NOT_FOUND,
              "options->loss 'no_such_loss'");
  o.loss = NULL;
  o.precision = "f8";
  CHECK_ERROR(kiln_find_batch_size(model, example_shape, 1, &o, &r), KILN_ERR_INVALID_ARGUMENT,
              "options->precision is 'f8'");
  o.precision = NULL;
  o.limit_bytes = -1;
  CHECK_ERROR(kiln_find_batch_size(model, example_shape, 1, &o, &r), KILN_ERR_INVALID_ARGUMENT,
              "options->limit_bytes is -1");
  o.limit_bytes = 0;
  o.max_batch_size = -2;
  CHECK_ERROR(kiln_find_batch_size(model, example_shape, 1, &o, &r), KILN_ERR_INVALID_ARGUMENT,
              "options->max_batch_size is -2");
  /* A model whose input does not fit says so: it is not an out-of-memory. */
  CHECK_ERROR(kiln_memory_estimate_get(model, bad_shape, 0, 1, NULL, &e), KILN_ERR_SHAPE_MISMATCH, "Linear");
  o.max_batch_size = 0;
  r.size = 0;
  CHECK_ERROR(kiln_find_batch_size(model, example_shape, 1, &o, &r), KILN_ERR_INVALID_ARGUMENT, "out->size is 0");
}

int main(void) {
  kiln_runtime* rt = open_runtime(3);
  kiln_module* model = mlp(rt);
  estimate_parts(rt, model);
  search_under_a_limit(rt, model);
  search_under_a_cpu_cap(rt, model);
  errors(model);
  kiln_module_release(model);
  kiln_runtime_release(rt);
  return check_report("trainer/memory_plan");
}
