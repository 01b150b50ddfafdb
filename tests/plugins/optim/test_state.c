/* Optimizer state: the listing, save -> new optimizer -> load continuing
 * exactly as an uninterrupted run, and loads that are refused whole. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kiln_test_support.h"
#include "optim_support.h"

#define N_B 3
#define MAX_ENTRIES 16

typedef struct trainee {
  kiln_tensor *a, *b; /* parameters of OPT_N and N_B values */
  kiln_optimizer* opt;
} trainee;

/* A copy of an optimizer's state, as a checkpoint holds it. */
typedef struct saved_state {
  size_t n;
  char names[MAX_ENTRIES][32];
  const char* name_ptrs[MAX_ENTRIES];
  kiln_tensor* tensors[MAX_ENTRIES];
} saved_state;

static const double b_init[N_B] = {1.5, -0.25, 0.75};

static void trainee_create(kiln_runtime* rt, const char* type, const kiln_attr* hyper, size_t n_hyper,
                           const double* a_values, const double* b_values, trainee* t) {
  kiln_tensor* params[2];
  memset(t, 0, sizeof *t);
  CHECK_OK(opt_param(rt, a_values, OPT_N, &t->a));
  CHECK_OK(opt_param(rt, b_values, N_B, &t->b));
  params[0] = t->a;
  params[1] = t->b;
  CHECK_OK(kiln_optimizer_create(rt, type, params, 2, hyper, n_hyper, &t->opt));
}

static void trainee_release(trainee* t) {
  kiln_optimizer_release(t->opt);
  kiln_tensor_release(t->a);
  kiln_tensor_release(t->b);
}

static void train(kiln_runtime* rt, trainee* t, int64_t first, int64_t last) {
  double ga[OPT_N], gb[N_B];
  int64_t step;
  for (step = first; step <= last; ++step) {
    opt_grads(step, 0, ga, OPT_N);
    opt_grads(step, OPT_N, gb, N_B);
    CHECK_OK(opt_set_grad(rt, t->a, ga, OPT_N));
    CHECK_OK(opt_set_grad(rt, t->b, gb, N_B));
    CHECK_OK(kiln_optimizer_step(t->opt));
  }
}

static void save(const kiln_optimizer* opt, saved_state* s) {
  size_t i;
  memset(s, 0, sizeof *s);
  CHECK_OK(kiln_optimizer_state_count(opt, &s->n));
  CHECK(s->n <= MAX_ENTRIES);
  if (s->n > MAX_ENTRIES) s->n = 0;
  for (i = 0; i < s->n; ++i) {
    const char* name = NULL;
    CHECK_OK(kiln_optimizer_state_get(opt, i, &name, &s->tensors[i]));
    snprintf(s->names[i], sizeof s->names[i], "%s", name ? name : "");
    s->name_ptrs[i] = s->names[i];
  }
}

static void saved_release(saved_state* s) {
  size_t i;
  for (i = 0; i < s->n; ++i) kiln_tensor_release(s->tensors[i]);
}

/* The index of entry `name` in `s`, or -1. */
static int find_entry(const saved_state* s, const char* name) {
  size_t i;
  for (i = 0; i < s->n; ++i)
    if (strcmp(s->names[i], name) == 0) return (int)i;
  return -1;
}

static int same_bits(const kiln_tensor* x, const kiln_tensor* y, int64_t n) {
  double vx[OPT_N], vy[OPT_N];
  if (opt_read(x, vx, n) || opt_read(y, vy, n)) return 0;
  return memcmp(vx, vy, (size_t)n * sizeof(double)) == 0;
}

/* Three steps, a save, a fresh optimizer over the same values that loads the
 * state, then three more steps on both: they must agree bit for bit. */
static void check_resume(kiln_runtime* rt, const char* type, const kiln_attr* hyper, size_t n_hyper) {
  trainee first, second;
  saved_state s;
  double a_now[OPT_N], b_now[N_B];
  int64_t steps = -1;
  size_t count = 0;
  printf("resuming %s\n", type);
  trainee_create(rt, type, hyper, n_hyper, opt_init, b_init, &first);
  train(rt, &first, 1, 3);
  save(first.opt, &s);
  CHECK(opt_read(first.a, a_now, OPT_N) == 0);
  CHECK(opt_read(first.b, b_now, N_B) == 0);

  trainee_create(rt, type, hyper, n_hyper, a_now, b_now, &second);
  CHECK_OK(kiln_optimizer_state_load(second.opt, s.name_ptrs, s.tensors, s.n));
  CHECK_OK(kiln_optimizer_step_count(second.opt, &steps));
  CHECK(steps == 3);
  CHECK_OK(kiln_optimizer_state_count(second.opt, &count));
  CHECK(count == s.n);

  train(rt, &first, 4, 6);
  train(rt, &second, 4, 6);
  CHECK(same_bits(first.a, second.a, OPT_N));
  CHECK(same_bits(first.b, second.b, N_B));
  CHECK_OK(kiln_optimizer_step_count(second.opt, &steps));
  CHECK(steps == 6);
  saved_release(&s);
  trainee_release(&first);
  trainee_release(&second);
}

static void check_listing(kiln_runtime* rt) {
  static const char* const expected[] = {"step",   "0.step",    "0.exp_avg",    "0.exp_avg_sq",    "0.max_exp_avg_sq",
                                         "1.step", "1.exp_avg", "1.exp_avg_sq", "1.max_exp_avg_sq"};
  const kiln_attr amsgrad = kiln_attr_bool("amsgrad", 1);
  trainee t;
  saved_state s;
  size_t i, count = 99;
  int64_t value = -1;
  double before[OPT_N], after[OPT_N];
  trainee_create(rt, "Adam", &amsgrad, 1, opt_init, b_init, &t);
  CHECK_OK(kiln_optimizer_state_count(t.opt, &count));
  CHECK(count == 1); /* only "step" before the first update */
  train(rt, &t, 1, 2);
  save(t.opt, &s);
  CHECK(s.n == sizeof expected / sizeof expected[0]);
  for (i = 0; i < s.n && i < sizeof expected / sizeof expected[0]; ++i) {
    if (strcmp(s.names[i], expected[i]) == 0) continue;
    fprintf(stderr, "entry %d is '%s', expected '%s'\n", (int)i, s.names[i], expected[i]);
    CHECK(strcmp(s.names[i], expected[i]) == 0);
  }
  CHECK_OK(kiln_tensor_read(s.tensors[0], &value, sizeof value));
  CHECK(value == 2);
  CHECK_OK(kiln_tensor_read(s.tensors[1], &value, sizeof value));
  CHECK(value == 2);
  /* Entries are copies: a further step leaves them as they were. */
  CHECK(opt_read(s.tensors[2], before, OPT_N) == 0);
  train(rt, &t, 3, 3);
  CHECK(opt_read(s.tensors[2], after, OPT_N) == 0);
  CHECK(memcmp(before, after, sizeof before) == 0);
  CHECK_ERROR(kiln_optimizer_state_get(t.opt, 99, NULL, NULL), KILN_ERR_INVALID_ARGUMENT, "NULL");
  saved_release(&s);
  trainee_release(&t);
}

/* Loads `s` with entry `drop` left out (-1: none), entry `replace` given
 * `replacement` (may be NULL), and an extra entry `extra` (NULL: none), into
 * a fresh optimizer: it must fail with `want` and `message`, changing nothing. */
static void check_refused(kiln_runtime* rt, const saved_state* s, int drop, int replace, kiln_tensor* replacement,
                          const char* extra, kiln_status want, const char* message) {
  const kiln_attr amsgrad = kiln_attr_bool("amsgrad", 1);
  const char* names[MAX_ENTRIES + 1];
  kiln_tensor* tensors[MAX_ENTRIES + 1];
  size_t i, n = 0, count = 99;
  int64_t steps = -1;
  trainee t;
  trainee_create(rt, "Adam", &amsgrad, 1, opt_init, b_init, &t);
  for (i = 0; i < s->n; ++i) {
    if ((int)i == drop) continue;
    names[n] = s->name_ptrs[i];
    tensors[n++] = (int)i == replace ? replacement : s->tensors[i];
  }
  if (extra) {
    names[n] = extra;
    tensors[n++] = s->tensors[2];
  }
  CHECK_ERROR(kiln_optimizer_state_load(t.opt, names, tensors, n), want, message);
  CHECK_OK(kiln_optimizer_state_count(t.opt, &count));
  CHECK(count == 1);
  CHECK_OK(kiln_optimizer_step_count(t.opt, &steps));
  CHECK(steps == 0);
  trainee_release(&t);
}

static void check_refusals(kiln_runtime* rt) {
  const kiln_attr amsgrad = kiln_attr_bool("amsgrad", 1);
  const int64_t five = OPT_N;
  trainee t;
  saved_state s;
  kiln_tensor *wrong_shape = NULL, *wrong_dtype = NULL;
  trainee_create(rt, "Adam", &amsgrad, 1, opt_init, b_init, &t);
  train(rt, &t, 1, 2);
  save(t.opt, &s);
  CHECK_OK(kiln_tensor_zeros(rt, &five, 1, KILN_F64, KILN_DEVICE_CPU, 0, &wrong_shape));
  CHECK_OK(kiln_tensor_zeros(rt, &five, 1, KILN_F32, KILN_DEVICE_CPU, 0, &wrong_dtype));

  check_refused(rt, &s, find_entry(&s, "0.exp_avg"), -1, NULL, NULL, KILN_ERR_INVALID_ARGUMENT,
                "entry '0.exp_avg' is missing");
  check_refused(rt, &s, find_entry(&s, "1.step"), -1, NULL, NULL, KILN_ERR_INVALID_ARGUMENT,
                "entry '1.step' is missing");
  check_refused(rt, &s, find_entry(&s, "step"), -1, NULL, NULL, KILN_ERR_INVALID_ARGUMENT, "entry 'step' is missing");
  check_refused(rt, &s, -1, find_entry(&s, "1.exp_avg"), wrong_shape, NULL, KILN_ERR_SHAPE_MISMATCH,
                "entry '1.exp_avg' has shape [5], the state needs [3]");
  check_refused(rt, &s, -1, find_entry(&s, "0.exp_avg_sq"), wrong_dtype, NULL, KILN_ERR_DTYPE_MISMATCH,
                "entry '0.exp_avg_sq' is f32");
  check_refused(rt, &s, -1, find_entry(&s, "0.step"), wrong_shape, NULL, KILN_ERR_SHAPE_MISMATCH,
                "a step count is an i64 scalar");
  check_refused(rt, &s, -1, -1, NULL, "0.momentum_buffer", KILN_ERR_INVALID_ARGUMENT,
                "unexpected entry '0.momentum_buffer'");
  check_refused(rt, &s, -1, -1, NULL, "2.exp_avg", KILN_ERR_INVALID_ARGUMENT,
                "unexpected entry '2.exp_avg'; the optimizer has 2 parameter(s)");
  check_refused(rt, &s, -1, -1, NULL, "exp_avg", KILN_ERR_INVALID_ARGUMENT, "unexpected entry 'exp_avg'");

  kiln_tensor_release(wrong_shape);
  kiln_tensor_release(wrong_dtype);
  saved_release(&s);
  trainee_release(&t);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  {
    const double betas[2] = {0.8, 0.9};
    kiln_attr sgd[4], adam[3], adamw[2], rmsprop[4], adagrad[3];
    sgd[0] = kiln_attr_float("lr", 0.1);
    sgd[1] = kiln_attr_float("momentum", 0.9);
    sgd[2] = kiln_attr_bool("nesterov", 1);
    sgd[3] = kiln_attr_float("weight_decay", 0.01);
    adam[0] = kiln_attr_float("lr", 0.01);
    adam[1] = kiln_attr_floats("betas", betas, 2);
    adam[2] = kiln_attr_bool("amsgrad", 1);
    adamw[0] = kiln_attr_float("lr", 0.01);
    adamw[1] = kiln_attr_float("weight_decay", 0.1);
    rmsprop[0] = kiln_attr_float("lr", 0.01);
    rmsprop[1] = kiln_attr_float("momentum", 0.5);
    rmsprop[2] = kiln_attr_bool("centered", 1);
    rmsprop[3] = kiln_attr_float("weight_decay", 0.01);
    adagrad[0] = kiln_attr_float("lr", 0.1);
    adagrad[1] = kiln_attr_float("lr_decay", 0.1);
    adagrad[2] = kiln_attr_float("initial_accumulator_value", 0.2);
    check_resume(rt, "SGD", sgd, 4);
    check_resume(rt, "Adam", adam, 3);
    check_resume(rt, "AdamW", adamw, 2);
    check_resume(rt, "RMSprop", rmsprop, 4);
    check_resume(rt, "Adagrad", adagrad, 3);
  }
  check_listing(rt);
  check_refusals(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/optim/state");
}
