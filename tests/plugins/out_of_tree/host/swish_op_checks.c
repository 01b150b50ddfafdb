/* The op "swish": forward against a plain C reference (f64, and f32 on a
 * tensor large enough to be split over threads), gradients of input and
 * beta against central finite differences in f64, and bad inputs. */
#include "plugin_checks.h"

enum { ROWS = 3, COLS = 4, N = ROWS * COLS };
static const int64_t x_shape[2] = {ROWS, COLS};
static const int64_t beta_shape[1] = {1};

static double swish_reference(double x, double beta) { return x / (1.0 + exp(-beta * x)); }

/* x spread over [-2.5, 2.45], zero included. */
static void fill_x(double* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = -2.5 + 0.45 * (double)i;
}

static void check_forward_f64(kiln_runtime* rt) {
  double x[N], want[N], beta = 0.7;
  fill_x(x, N);
  for (int i = 0; i < N; ++i) want[i] = swish_reference(x[i], beta);
  kiln_tensor* args[2] = {make_f64(rt, x, x_shape, 2), make_f64(rt, &beta, beta_shape, 1)};
  kiln_tensor* y = call_op(rt, "swish", args, 2, NULL, 0);
  check_elements(y, want, N, 1e-12, 1e-12, "swish f64 forward");
  kiln_tensor_release(y);
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
}

/* More elements than one parallel chunk holds, so the kernel runs on
 * several threads. */
static void check_forward_f32_large(kiln_runtime* rt) {
  enum { LARGE = 100003 };
  const int64_t shape[1] = {LARGE};
  const float beta = 1.5f;
  float* x = malloc(LARGE * sizeof *x);
  float* y = malloc(LARGE * sizeof *y);
  CHECK(x != NULL && y != NULL);
  if (!x || !y) {
    free(x);
    free(y);
    return;
  }
  for (int i = 0; i < LARGE; ++i) x[i] = (float)(-6.0 + 12.0 * i / (LARGE - 1));
  kiln_tensor* args[2] = {make_f32(rt, x, shape, 1), make_f32(rt, &beta, beta_shape, 1)};
  kiln_tensor* out = call_op(rt, "swish", args, 2, NULL, 0);
  size_t mismatches = 0;
  if (out && kiln_tensor_read(out, y, LARGE * sizeof *y) == KILN_OK) {
    for (int i = 0; i < LARGE; ++i)
      if (!close_to(y[i], swish_reference(x[i], beta), 1e-6, 1e-5) && mismatches++ < 5)
        fprintf(stderr, "swish f32 forward: element %d is %.9g, expected %.9g\n", i, y[i], swish_reference(x[i], beta));
  } else {
    ++mismatches;
    fprintf(stderr, "swish f32 forward: no output: %s\n", kiln_last_error());
  }
  CHECK(mismatches == 0);
  kiln_tensor_release(out);
  kiln_tensor_release(args[0]);
  kiln_tensor_release(args[1]);
  free(x);
  free(y);
}

/* sum(swish(x, beta) * w): weights that differ per element, so that a
 * gradient mixed up between elements shows. */
static double weighted_loss(kiln_runtime* rt, const double* x, double beta, const double* w) {
  kiln_tensor* args[2] = {make_f64(rt, x, x_shape, 2), make_f64(rt, &beta, beta_shape, 1)};
  kiln_tensor* weights = make_f64(rt, w, x_shape, 2);
  kiln_tensor* y = call_op(rt, "swish", args, 2, NULL, 0);
  kiln_tensor* product_args[2] = {y, weights};
  kiln_tensor* product = call_op(rt, "mul", product_args, 2, NULL, 0);
  kiln_tensor* loss = call_op(rt, "sum", &product, 1, NULL, 0);
  const double value = scalar_of(loss);
  kiln_tensor* owned[6] = {args[0], args[1], weights, y, product, loss};
  for (int i = 0; i < 6; ++i) kiln_tensor_release(owned[i]);
  return value;
}

static void check_gradients(kiln_runtime* rt) {
  const double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
  double x[N], w[N], beta = 0.7, numeric_dx[N];
  fill_x(x, N);
  for (int i = 0; i < N; ++i) w[i] = 0.5 + 0.25 * (i % 5) - 0.1 * i;

  /* Analytic: backward through swish, mul and sum. */
  kiln_tensor* args[2] = {make_f64(rt, x, x_shape, 2), make_f64(rt, &beta, beta_shape, 1)};
  kiln_tensor* weights = make_f64(rt, w, x_shape, 2);
  CHECK_OK(kiln_tensor_set_requires_grad(args[0], 1));
  CHECK_OK(kiln_tensor_set_requires_grad(args[1], 1));
  kiln_tensor* y = call_op(rt, "swish", args, 2, NULL, 0);
  kiln_tensor* product_args[2] = {y, weights};
  kiln_tensor* product = call_op(rt, "mul", product_args, 2, NULL, 0);
  kiln_tensor* loss = call_op(rt, "sum", &product, 1, NULL, 0);
  kiln_tensor *dx = NULL, *dbeta = NULL;
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  CHECK_OK(kiln_tensor_grad(args[0], &dx));
  CHECK_OK(kiln_tensor_grad(args[1], &dbeta));

  /* Numeric: central differences of the same loss. */
  CHECK_OK(kiln_no_grad_begin(rt));
  for (int i = 0; i < N; ++i) {
    const double saved = x[i];
    x[i] = saved + eps;
    const double up = weighted_loss(rt, x, beta, w);
    x[i] = saved - eps;
    const double down = weighted_loss(rt, x, beta, w);
    x[i] = saved;
    numeric_dx[i] = (up - down) / (2 * eps);
  }
  const double numeric_dbeta =
      (weighted_loss(rt, x, beta + eps, w) - weighted_loss(rt, x, beta - eps, w)) / (2 * eps);
  CHECK_OK(kiln_no_grad_end(rt));

  check_elements(dx, numeric_dx, N, atol, rtol, "swish d/dinput against finite differences");
  int64_t dbeta_shape[1] = {0};
  int dbeta_rank = -1;
  if (dbeta) {
    CHECK_OK(kiln_tensor_rank(dbeta, &dbeta_rank));
    CHECK_OK(kiln_tensor_shape(dbeta, dbeta_shape, 1));
  }
  CHECK(dbeta_rank == 1 && dbeta_shape[0] == 1); /* beta's shape */
  const double analytic_dbeta = scalar_of(dbeta);
  if (!close_to(analytic_dbeta, numeric_dbeta, atol, rtol))
    fprintf(stderr, "swish d/dbeta is %.12g, finite differences give %.12g\n", analytic_dbeta, numeric_dbeta);
  CHECK(close_to(analytic_dbeta, numeric_dbeta, atol, rtol));

  kiln_tensor* owned[8] = {args[0], args[1], weights, y, product, loss, dx, dbeta};
  for (int i = 0; i < 8; ++i) kiln_tensor_release(owned[i]);
}

static void check_bad_inputs(kiln_runtime* rt) {
  const kiln_op* swish = NULL;
  kiln_tensor* out = NULL;
  double x[N], two_betas[2] = {1.0, 2.0};
  const int64_t two_shape[1] = {2};
  const float beta_f32 = 1.0f;
  fill_x(x, N);
  kiln_tensor* input = make_f64(rt, x, x_shape, 2);
  kiln_tensor* two = make_f64(rt, two_betas, two_shape, 1);
  kiln_tensor* narrow = make_f32(rt, &beta_f32, beta_shape, 1);
  CHECK_OK(kiln_op_find(rt, "swish", &swish));

  kiln_tensor* with_two[2] = {input, two};
  CHECK_ERROR(kiln_op_call1(rt, swish, with_two, 2, NULL, 0, &out), KILN_ERR_SHAPE_MISMATCH,
              "beta must have exactly one element", "[2]");
  kiln_tensor* with_narrow[2] = {input, narrow};
  CHECK_ERROR(kiln_op_call1(rt, swish, with_narrow, 2, NULL, 0, &out), KILN_ERR_DTYPE_MISMATCH,
              "beta must have the input's dtype f64, got f32");
  CHECK(out == NULL);

  kiln_tensor_release(input);
  kiln_tensor_release(two);
  kiln_tensor_release(narrow);
}

int check_swish_op(kiln_runtime* rt) {
  check_forward_f64(rt);
  check_forward_f32_large(rt);
  check_gradients(rt);
  check_bad_inputs(rt);
  return check_failures;
}
