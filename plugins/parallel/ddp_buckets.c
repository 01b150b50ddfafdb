#include "ddp_buckets.h"

#include <stdlib.h>
#include <string.h>

#include "host.h"

kiln_status kp_ops_find(kiln_runtime* rt, kp_ops* ops) {
  kiln_status st = kp_host.op_find(rt, "reshape", &ops->reshape);
  if (st == KILN_OK) st = kp_host.op_find(rt, "concat", &ops->concat);
  if (st == KILN_OK) st = kp_host.op_find(rt, "narrow", &ops->narrow);
  return st;
}

static size_t dtype_bytes(kiln_dtype d) {
  switch (d) {
    case KILN_F64: case KILN_I64: return 8;
    case KILN_F32: case KILN_I32: return 4;
    case KILN_F16: case KILN_BF16: return 2;
    default: return 1;
  }
}

static int64_t numel(const kiln_tensor_desc* d) {
  int64_t n = 1;
  int i;
  for (i = 0; i < d->rank; ++i) n *= d->dims[i];
  return n;
}

double kp_tensor_bytes(kiln_tensor* t) {
  kiln_tensor_desc d;
  kp_host.tensor_describe(t, &d);
  return (double)numel(&d) * (double)dtype_bytes(d.dtype);
}

/* Whether parameter b may share a bucket with parameter a. */
static int same_kind(kiln_tensor* a, kiln_tensor* b) {
  kiln_tensor_desc da, db;
  kiln_device_type ta, tb;
  int ia = 0, ib = 0;
  kp_host.tensor_describe(a, &da);
  kp_host.tensor_describe(b, &db);
  kp_host.tensor_device(a, &ta, &ia);
  kp_host.tensor_device(b, &tb, &ib);
  return da.dtype == db.dtype && ta == tb && ia == ib;
}

void kp_plan_free(ddp_plan* plan) {
  size_t i;
  for (i = 0; i < plan->n_params; ++i) kp_host.tensor_release(plan->params[i]);
  for (i = 0; i < plan->n_buckets; ++i) {
    kp_host.work_release(plan->buckets[i].work);
    kp_host.tensor_release(plan->buckets[i].flat);
  }
  free(plan->params);
  free(plan->bucket_of);
  free(plan->buckets);
  memset(plan, 0, sizeof *plan);
}

static kiln_status take_params(kiln_module* model, ddp_plan* plan) {
  size_t n = 0, i;
  kiln_status st = kp_host.module_parameter_count(model, &n);
  if (st != KILN_OK) return st;
  plan->params = calloc(n ? n : 1, sizeof *plan->params);
  plan->bucket_of = calloc(n ? n : 1, sizeof *plan->bucket_of);
  plan->buckets = calloc(n ? n : 1, sizeof *plan->buckets);
  if (!plan->params || !plan->bucket_of || !plan->buckets) {
    return kp_fail(KILN_ERR_OUT_OF_MEMORY, "ddp: no memory to plan %zu parameters", n);
  }
  /* Backward reaches the last parameters first. */
  for (i = 0; i < n; ++i) {
    const char* name = NULL;
    st = kp_host.module_parameter(model, n - 1 - i, &name, &plan->params[i]);
    if (st != KILN_OK) return st;
    plan->n_params = i + 1;
  }
  return KILN_OK;
}

kiln_status kp_plan_make(kiln_runtime* rt, kiln_module* model, double bucket_bytes, ddp_plan* out) {
  ddp_plan plan;
  double bytes = 0.0;
  size_t i;
  kiln_status st;
  memset(&plan, 0, sizeof plan);
  plan.rt = rt;
  st = take_params(model, &plan);
  for (i = 0; st == KILN_OK && i < plan.n_params; ++i) {
    const double size = kp_tensor_bytes(plan.params[i]);
    if (plan.n_buckets == 0 || !same_kind(plan.params[i - 1], plan.params[i]) || bytes + size > bucket_bytes) {
      ddp_bucket* b = &plan.buckets[plan.n_buckets++];
      b->first = i;
      bytes = 0.0;
    }
    plan.buckets[plan.n_buckets - 1].count += 1;
    plan.bucket_of[i] = plan.n_buckets - 1;
    bytes += size;
  }
  if (st != KILN_OK) {
    kp_plan_free(&plan);
    return st;
  }
  *out = plan;
  return KILN_OK;
}

/* The gradient of `param` as a 1-D tensor (zeros when it has none). */
static kiln_status flat_gradient(kiln_runtime* rt, kiln_tensor* param, const kp_ops* ops, kiln_tensor** out) {
  kiln_tensor* grad = NULL;
  kiln_status st = kp_host.tensor_grad(param, &grad);
  const int64_t flat_shape[1] = {-1};
  const kiln_attr shape = kiln_attr_ints("shape", flat_shape, 1);
  if (st == KILN_OK && !grad) {
    kiln_tensor_desc d;
    kiln_device_type type;
    int index = 0;
    kp_host.tensor_describe(param, &d);
    kp_host.tensor_device(param, &type, &index);
    st = kp_host.tensor_full(rt, d.dims, d.rank, 0.0, d.dtype, type, index, &grad);
  }
  if (st == KILN_OK) st = kp_host.op_call1(rt, ops->reshape, &grad, 1, &shape, 1, out);
  kp_host.tensor_release(grad);
  return st;
}

kiln_status kp_bucket_launch(const ddp_plan* plan, ddp_bucket* b, kiln_process_group* group, const kp_ops* ops) {
  kiln_tensor** pieces = calloc(b->count, sizeof *pieces);
  kiln_status st = pieces ? KILN_OK : kp_fail(KILN_ERR_OUT_OF_MEMORY, "ddp: no memory for a bucket");
  size_t i;
  const kiln_attr dim = kiln_attr_int("dim", 0);
  for (i = 0; st == KILN_OK && i < b->count; ++i) st = flat_gradient(plan->rt, plan->params[b->first + i], ops, &pieces[i]);
  if (st == KILN_OK) st = kp_host.op_call1(plan->rt, ops->concat, pieces, b->count, &dim, 1, &b->flat);
  if (st == KILN_OK) st = kp_host.process_group_all_reduce(group, b->flat, KILN_REDUCE_MEAN, &b->work);
  for (i = 0; pieces && i < b->count; ++i) kp_host.tensor_release(pieces[i]);
  free(pieces);
  return st;
}

/* Writes the `numel` averaged gradients at `offset` of a bucket into their
 * parameter. The piece is a view of the bucket, so each gradient is copied
 * once, into the parameter's gradient. */
static kiln_status write_back(kiln_runtime* rt, kiln_tensor* param, kiln_tensor* flat, int64_t offset, int64_t numel,
                              const kp_ops* ops) {
  kiln_tensor_desc d;
  kiln_tensor *piece = NULL, *shaped = NULL, *grad = NULL;
  const kiln_attr range[3] = {kiln_attr_int("dim", 0), kiln_attr_int("start", offset), kiln_attr_int("length", numel)};
  kiln_attr shape;
  kiln_status st;
  kp_host.tensor_describe(param, &d);
  shape = kiln_attr_ints("shape", d.dims, (size_t)d.rank);
  st = kp_host.op_call1(rt, ops->narrow, &flat, 1, range, 3, &piece);
  if (st == KILN_OK) st = kp_host.op_call1(rt, ops->reshape, &piece, 1, &shape, 1, &shaped);
  if (st == KILN_OK) st = kp_host.tensor_grad(param, &grad);
  if (st == KILN_OK) st = grad ? kp_host.tensor_assign(grad, shaped) : kp_host.tensor_set_grad(param, shaped);
  kp_host.tensor_release(grad);
  kp_host.tensor_release(shaped);
  kp_host.tensor_release(piece);
  return st;
}

kiln_status kp_bucket_finish(const ddp_plan* plan, ddp_bucket* b, const kp_ops* ops) {
  kiln_status st = KILN_OK;
  b->ready = 0;
  if (b->work) {
    st = kp_host.work_wait(b->work);
    kp_host.work_release(b->work);
    b->work = NULL;
  }
  if (st == KILN_OK && b->flat) {
    int64_t offset = 0;
    size_t i;
    for (i = 0; st == KILN_OK && i < b->count; ++i) {
      kiln_tensor* param = plan->params[b->first + i];
      kiln_tensor_desc d;
      kp_host.tensor_describe(param, &d);
      st = write_back(plan->rt, param, b->flat, offset, numel(&d), ops);
      offset += numel(&d);
    }
  }
  kp_host.tensor_release(b->flat);
  b->flat = NULL;
  return st;
}
