/* "ddp": data parallelism over the runtime's default process group (made
 * from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; see kiln_dist.h). Every
 * rank holds the whole model and trains on its shard of the data; after
 * each step's backward the gradients are averaged over the ranks, so every
 * rank takes the same optimizer step.
 *
 * attach broadcasts rank 0's parameters and buffers, groups the parameters
 * into buckets of about bucket_mb (in reverse order of the model's, the
 * order backward produces their gradients) and hangs a gradient-ready hook
 * on each. When the last gradient of a bucket is ready, the bucket is
 * flattened and its all-reduce starts on the group's thread while backward
 * goes on; buckets start in order, so every rank issues the same
 * collectives in the same order. reduce_gradients starts what is left (a
 * parameter without a gradient this step counts as zeros), waits for every
 * bucket and writes the averaged gradients back. Micro-batches that only
 * accumulate (backward_begin with sync = 0) reduce nothing. */
#include <stdlib.h>
#include <string.h>

#include "ddp.h"
#include "ddp_buckets.h"
#include "host.h"

const kiln_attr_spec kp_ddp_config[KP_DDP_N_CONFIG] = {
    [KP_DDP_BUCKET_MB] = {{"bucket_mb", KILN_ATTR_FLOAT, {.f = 25.0}},
                   0,
                   "gradients are all-reduced in buckets of about this many megabytes, each as soon as its "
                   "gradients are ready (PyTorch's bucket_cap_mb)"},
};

typedef struct ddp_state ddp_state;

/* What a parameter's hook gets back: the strategy and the parameter. */
typedef struct ddp_hook {
  ddp_state* ddp;
  size_t param;
  uint64_t id;
} ddp_hook;

struct ddp_state {
  const char* name;   /* the strategy's, for messages: "ddp" or one built on it */
  kiln_runtime* rt;
  kiln_process_group* group;
  int rank, world;
  double bucket_bytes;
  ddp_plan plan;      /* parameters in bucket order, and the buckets */
  ddp_hook* hooks;    /* one per parameter of the plan */
  size_t next_launch; /* buckets before it have started this step */
  int sync;           /* the current backward's gradients are reduced */
  kiln_module* model; /* attached to (borrowed: only compared) */
  kp_ops ops;
};

static void remove_hooks(ddp_state* s) {
  size_t i;
  if (!s->hooks) return;
  for (i = 0; i < s->plan.n_params; ++i) {
    if (s->hooks[i].id) kp_host.tensor_remove_grad_hook(s->plan.params[i], s->hooks[i].id);
  }
  free(s->hooks);
  s->hooks = NULL;
}

void kp_ddp_destroy(void* state) {
  ddp_state* s = state;
  remove_hooks(s);
  kp_plan_free(&s->plan);
  kp_host.process_group_release(s->group);
  free(s);
}

kiln_status kp_ddp_create(void* user, kiln_runtime* rt, const kiln_attr* cfg, size_t n_config, void** state) {
  const char* name = user;
  ddp_state* s;
  kiln_status st;
  (void)n_config;
  if (!(cfg[KP_DDP_BUCKET_MB].value.f > 0.0)) {
    return kp_fail(KILN_ERR_INVALID_ARGUMENT, "%s: bucket_mb must be positive, got %g", name,
                   cfg[KP_DDP_BUCKET_MB].value.f);
  }
  s = calloc(1, sizeof *s);
  if (!s) return kp_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", name);
  s->name = name;
  s->rt = rt;
  s->bucket_bytes = cfg[KP_DDP_BUCKET_MB].value.f * 1024.0 * 1024.0;
  s->sync = 1;
  st = kp_ops_find(rt, &s->ops);
  if (st == KILN_OK) st = kp_host.process_group_default(rt, &s->group);
  if (st == KILN_OK) st = kp_host.process_group_rank(s->group, &s->rank, &s->world);
  if (st != KILN_OK) {
    kp_ddp_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

kiln_status kp_ddp_rank(void* state, int* rank, int* world_size) {
  const ddp_state* s = state;
  *rank = s->rank;
  *world_size = s->world;
  return KILN_OK;
}

/* Starts every bucket whose gradients are all ready, in bucket order. */
static kiln_status launch_ready(ddp_state* s) {
  while (s->next_launch < s->plan.n_buckets) {
    ddp_bucket* b = &s->plan.buckets[s->next_launch];
    if (b->ready < b->count) return KILN_OK;
    kiln_status st = kp_bucket_launch(&s->plan, b, s->group, &s->ops);
    if (st != KILN_OK) return st;
    ++s->next_launch;
  }
  return KILN_OK;
}

static kiln_status gradient_ready(void* user, kiln_tensor* leaf) {
  ddp_hook* h = user;
  ddp_state* s = h->ddp;
  (void)leaf;
  if (!s->sync) return KILN_OK;
  s->plan.buckets[s->plan.bucket_of[h->param]].ready += 1;
  return launch_ready(s);
}

/* Broadcasts from rank 0 the tensors a module lists with count and get
 * (its parameters, or its buffers). */
static kiln_status broadcast_listed(ddp_state* s, kiln_module* model,
                                    kiln_status (*count)(const kiln_module*, size_t*),
                                    kiln_status (*get)(const kiln_module*, size_t, const char**, kiln_tensor**)) {
  size_t n = 0, i;
  kiln_status st = count(model, &n);
  for (i = 0; st == KILN_OK && i < n; ++i) {
    const char* name = NULL;
    kiln_tensor* t = NULL;
    st = get(model, i, &name, &t);
    if (st == KILN_OK) st = kp_host.process_group_broadcast(s->group, t, 0, NULL);
    kp_host.tensor_release(t);
  }
  return st;
}

/* Every rank starts from rank 0's weights and running statistics. */
static kiln_status broadcast_state(ddp_state* s, kiln_module* model) {
  kiln_status st = broadcast_listed(s, model, kp_host.module_parameter_count, kp_host.module_parameter);
  if (st == KILN_OK) st = broadcast_listed(s, model, kp_host.module_buffer_count, kp_host.module_buffer);
  return st;
}

kiln_status kp_ddp_attach(void* state, kiln_module* model) {
  ddp_state* s = state;
  kiln_status st;
  size_t i;
  if (s->model == model) return KILN_OK; /* a host attached, then its trainer did */
  if (s->model) return kp_fail(KILN_ERR_INVALID_STATE, "%s: already attached to another model", s->name);
  s->model = model;
  if (s->world == 1) return KILN_OK; /* one rank: nothing to agree on */
  st = broadcast_state(s, model);
  if (st == KILN_OK) st = kp_plan_make(s->rt, model, s->bucket_bytes, &s->plan);
  if (st != KILN_OK) return st;
  s->hooks = calloc(s->plan.n_params ? s->plan.n_params : 1, sizeof *s->hooks);
  if (!s->hooks) return kp_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for %zu hooks", s->name, s->plan.n_params);
  for (i = 0; i < s->plan.n_params; ++i) {
    s->hooks[i].ddp = s;
    s->hooks[i].param = i;
    st = kp_host.tensor_add_grad_hook(s->plan.params[i], gradient_ready, &s->hooks[i], &s->hooks[i].id);
    if (st != KILN_OK) {
      remove_hooks(s);
      return st;
    }
  }
  return KILN_OK;
}

kiln_status kp_ddp_backward_begin(void* state, int sync) {
  ddp_state* s = state;
  s->sync = sync;
  return KILN_OK;
}

kiln_status kp_ddp_reduce_gradients(void* state, kiln_tensor* const* params, size_t n_params) {
  ddp_state* s = state;
  kiln_status st = KILN_OK;
  size_t b;
  (void)params;
  (void)n_params;
  if (s->world == 1 || s->plan.n_buckets == 0) return KILN_OK;
  /* Buckets whose gradients did not all arrive (unused parameters) start
   * now, in order, with zeros for what is missing. */
  for (b = s->next_launch; st == KILN_OK && b < s->plan.n_buckets; ++b) {
    st = kp_bucket_launch(&s->plan, &s->plan.buckets[b], s->group, &s->ops);
  }
  /* Every started bucket is waited for, even after a failure, so that no
   * collective still writes into a tensor this step let go. */
  for (b = 0; b < s->plan.n_buckets; ++b) {
    kiln_status done = kp_bucket_finish(&s->plan, &s->plan.buckets[b], &s->ops);
    if (st == KILN_OK) st = done;
  }
  s->next_launch = 0;
  return st;
}

kiln_status kp_register_ddp(kiln_registrar* registrar) {
  kiln_strategy_type ddp = {0};
  ddp.size = sizeof ddp;
  ddp.name = "ddp";
  ddp.config = kp_ddp_config;
  ddp.n_config = KP_DDP_N_CONFIG;
  ddp.user = (void*)"ddp";
  ddp.create = kp_ddp_create;
  ddp.rank = kp_ddp_rank;
  ddp.reduce_gradients = kp_ddp_reduce_gradients;
  ddp.destroy = kp_ddp_destroy;
  ddp.attach = kp_ddp_attach;
  ddp.backward_begin = kp_ddp_backward_begin;
  return kp_host.register_strategy(registrar, &ddp);
}
