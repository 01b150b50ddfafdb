/* ddp's buckets: which parameters' gradients travel together, and how a
 * bucket's gradients are flattened into one tensor for the all-reduce and
 * written back from it. */
#ifndef KILN_PARALLEL_DDP_BUCKETS_H
#define KILN_PARALLEL_DDP_BUCKETS_H

#include <kiln/kiln_plugin.h>

/* The ops the buckets use, looked up once. */
typedef struct kp_ops {
  const kiln_op* reshape;
  const kiln_op* concat;
  const kiln_op* narrow;
} kp_ops;

typedef struct ddp_bucket {
  size_t first, count; /* the plan's params [first, first + count) */
  size_t ready;        /* of them, those whose gradient is ready this step */
  kiln_tensor* flat;   /* the gradients, flattened, while their all-reduce runs */
  kiln_work* work;
} ddp_bucket;

typedef struct ddp_plan {
  kiln_runtime* rt;     /* the runtime the model and its gradients live in */
  kiln_tensor** params; /* the model's, last first; one reference each */
  size_t n_params;
  size_t* bucket_of;    /* params[i] belongs to buckets[bucket_of[i]] */
  ddp_bucket* buckets;
  size_t n_buckets;
} ddp_plan;

kiln_status kp_ops_find(kiln_runtime* rt, kp_ops* ops);

/* The bytes of a tensor's elements. */
double kp_tensor_bytes(kiln_tensor* t);

/* Buckets of consecutive parameters (in reverse order) of one dtype and
 * device, each closed before it passes `bucket_bytes` (a parameter larger
 * than that gets a bucket of its own). */
kiln_status kp_plan_make(kiln_runtime* rt, kiln_module* model, double bucket_bytes, ddp_plan* out);
void kp_plan_free(ddp_plan* plan);

/* Flattens the bucket's gradients (zeros for a parameter without one) and
 * starts averaging them over the group. */
kiln_status kp_bucket_launch(const ddp_plan* plan, ddp_bucket* b, kiln_process_group* group, const kp_ops* ops);
/* Waits for a started bucket and writes the averaged gradients into the
 * parameters; then the bucket is ready for the next step. A bucket that
 * was not started is only reset. */
kiln_status kp_bucket_finish(const ddp_plan* plan, ddp_bucket* b, const kp_ops* ops);

#endif /* KILN_PARALLEL_DDP_BUCKETS_H */
