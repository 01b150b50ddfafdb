#include "init.h"

#include <math.h>

#include "host.h"

const char* const kl_init_names[] = {"kaiming_uniform", "kaiming_normal", "xavier_uniform", "xavier_normal",
                                     "normal", "zeros", "ones", NULL};

/* A "rand" (U(low, high)) or "randn" (N(mean, std)) draw: the op's two
 * distribution attributes are named by the caller. */
static kiln_status draw(kiln_runtime* rt, const char* op_name, const char* a_name, double a, const char* b_name,
                        double b, const int64_t* shape, int rank, kiln_tensor** out) {
  const kiln_op* op = NULL;
  kiln_attr attrs[3];
  kiln_status st = kl_host.op_find(rt, op_name, &op);
  if (st != KILN_OK) return st;
  attrs[0] = kiln_attr_ints("shape", shape, (size_t)rank);
  attrs[1] = kiln_attr_float(a_name, a);
  attrs[2] = kiln_attr_float(b_name, b);
  return kl_host.op_call1(rt, op, NULL, 0, attrs, 3, out);
}

static kiln_status uniform(kiln_runtime* rt, double bound, const int64_t* shape, int rank, kiln_tensor** out) {
  return draw(rt, "rand", "low", -bound, "high", bound, shape, rank, out);
}

static kiln_status normal(kiln_runtime* rt, double std, const int64_t* shape, int rank, kiln_tensor** out) {
  return draw(rt, "randn", "mean", 0.0, "std", std, shape, rank, out);
}

kiln_status kl_init_tensor(kiln_runtime* rt, kl_init init, const int64_t* shape, int rank, int64_t fan_in,
                           int64_t fan_out, kiln_tensor** out) {
  const double fan_sum = (double)(fan_in + fan_out);
  switch (init) {
    case KL_INIT_KAIMING_UNIFORM: return uniform(rt, 1.0 / sqrt((double)fan_in), shape, rank, out);
    case KL_INIT_KAIMING_NORMAL: return normal(rt, sqrt(2.0 / (double)fan_in), shape, rank, out);
    case KL_INIT_XAVIER_UNIFORM: return uniform(rt, sqrt(6.0 / fan_sum), shape, rank, out);
    case KL_INIT_XAVIER_NORMAL: return normal(rt, sqrt(2.0 / fan_sum), shape, rank, out);
    case KL_INIT_NORMAL: return normal(rt, 1.0, shape, rank, out);
    case KL_INIT_ZEROS:
    case KL_INIT_ONES:
      return kl_host.tensor_full(rt, shape, rank, init == KL_INIT_ONES ? 1.0 : 0.0, KILN_F32, KILN_DEVICE_CPU, 0, out);
  }
  return kl_fail(KILN_ERR_INTERNAL, "unknown initialiser %d", (int)init);
}

/* Adds `t` with `add` and hands it to *out, or releases it on failure. */
static kiln_status add_tensor(kiln_status (*add)(kiln_layer_init*, const char*, kiln_tensor*), kiln_layer_init* init,
                              const char* name, kiln_tensor* t, kiln_tensor** out) {
  const kiln_status st = add(init, name, t);
  if (st != KILN_OK) {
    kl_host.tensor_release(t);
    return st;
  }
  *out = t;
  return KILN_OK;
}

kiln_status kl_add_parameter(kiln_layer_init* init, const char* name, kl_init how, const int64_t* shape, int rank,
                             int64_t fan_in, int64_t fan_out, kiln_tensor** out) {
  kiln_tensor* t = NULL;
  const kiln_status st = kl_init_tensor(kl_host.layer_init_runtime(init), how, shape, rank, fan_in, fan_out, &t);
  if (st != KILN_OK) return st;
  return add_tensor(kl_host.layer_add_parameter, init, name, t, out);
}

kiln_status kl_add_buffer(kiln_layer_init* init, const char* name, double value, kiln_dtype dtype,
                          const int64_t* shape, int rank, kiln_tensor** out) {
  kiln_tensor* t = NULL;
  const kiln_status st =
      kl_host.tensor_full(kl_host.layer_init_runtime(init), shape, rank, value, dtype, KILN_DEVICE_CPU, 0, &t);
  if (st != KILN_OK) return st;
  return add_tensor(kl_host.layer_add_buffer, init, name, t, out);
}
