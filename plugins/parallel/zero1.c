/* "zero1": ddp with the optimizer's state sharded over the ranks (stage 1
 * of ZeRO, Rajbhandari et al. 2020). The gradients are averaged exactly as
 * ddp averages them (a ddp state does it, buckets and hooks included), so
 * every rank holds the whole averaged gradient and clips the same norm.
 * The parameters are shared out over the ranks (zero1_partition.h); right
 * before the optimizer step each rank drops the gradients of the others'
 * parameters, so the optimizer, which makes a parameter's state on its
 * first update, keeps state for this rank's share only: about 1/world of
 * it. Right after the step each parameter is broadcast from its owner, so
 * every rank ends the step with the same parameters, those ddp would give.
 *
 * The strategy reports each parameter's owner (state_owner), so that a
 * saved training state gathers the whole optimizer state into one file
 * and a loaded one gives each rank its share, for any number of ranks. */
#include <stdlib.h>

#include "ddp.h"
#include "ddp_buckets.h"
#include "host.h"
#include "zero1_partition.h"

typedef struct zero1_state {
  void* ddp; /* the gradient averaging: a ddp state, driven through ddp's callbacks */
  kiln_process_group* group;
  int rank, world;
  kiln_module* model;   /* attached to (borrowed: only compared) */
  kiln_tensor** params; /* the model's, in its order; one reference each */
  int* owner;           /* owner[i]: the rank that updates params[i] */
  kiln_work** works;    /* step_end's broadcasts, one per parameter */
  size_t n_params;
} zero1_state;

static void forget_params(zero1_state* s) {
  size_t i;
  for (i = 0; i < s->n_params; ++i) kp_host.tensor_release(s->params[i]);
  free(s->params);
  free(s->owner);
  free(s->works);
  s->params = NULL;
  s->owner = NULL;
  s->works = NULL;
  s->n_params = 0;
}

static void zero1_destroy(void* state) {
  zero1_state* s = state;
  forget_params(s);
  kp_host.process_group_release(s->group);
  if (s->ddp) kp_ddp_destroy(s->ddp);
  free(s);
}

static kiln_status zero1_create(void* user, kiln_runtime* rt, const kiln_attr* cfg, size_t n_config, void** state) {
  zero1_state* s = calloc(1, sizeof *s);
  kiln_status st;
  (void)user;
  if (!s) return kp_fail(KILN_ERR_OUT_OF_MEMORY, "zero1: no memory for its state");
  st = kp_ddp_create((void*)"zero1", rt, cfg, n_config, &s->ddp);
  if (st == KILN_OK) st = kp_host.process_group_default(rt, &s->group);
  if (st == KILN_OK) st = kp_host.process_group_rank(s->group, &s->rank, &s->world);
  if (st != KILN_OK) {
    zero1_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status zero1_rank(void* state, int* rank, int* world_size) {
  const zero1_state* s = state;
  *rank = s->rank;
  *world_size = s->world;
  return KILN_OK;
}

/* Takes the model's parameters and shares them out over the ranks. */
static kiln_status partition(zero1_state* s, kiln_module* model) {
  size_t n = 0, i;
  double* bytes;
  kiln_status st = kp_host.module_parameter_count(model, &n);
  if (st != KILN_OK) return st;
  s->params = calloc(n ? n : 1, sizeof *s->params);
  s->owner = calloc(n ? n : 1, sizeof *s->owner);
  s->works = calloc(n ? n : 1, sizeof *s->works);
  bytes = calloc(n ? n : 1, sizeof *bytes);
  if (!s->params || !s->owner || !s->works || !bytes) st = kp_fail(KILN_ERR_OUT_OF_MEMORY, "zero1: no memory to share out %zu parameters", n);
  for (i = 0; st == KILN_OK && i < n; ++i) {
    const char* name = NULL;
    st = kp_host.module_parameter(model, i, &name, &s->params[i]);
    if (st == KILN_OK) {
      s->n_params = i + 1;
      bytes[i] = kp_tensor_bytes(s->params[i]);
    }
  }
  if (st == KILN_OK && !kp_partition_by_size(bytes, n, s->world, s->owner)) {
    st = kp_fail(KILN_ERR_OUT_OF_MEMORY, "zero1: no memory to share out %zu parameters", n);
  }
  free(bytes);
  if (st != KILN_OK) forget_params(s);
  return st;
}

static kiln_status zero1_attach(void* state, kiln_module* model) {
  zero1_state* s = state;
  kiln_status st;
  if (s->model == model) return KILN_OK; /* a host attached, then its trainer did */
  st = kp_ddp_attach(s->ddp, model);     /* refuses another model, as ddp does */
  if (st == KILN_OK) st = partition(s, model);
  if (st == KILN_OK) s->model = model;
  return st;
}

static kiln_status zero1_backward_begin(void* state, int sync) {
  const zero1_state* s = state;
  return kp_ddp_backward_begin(s->ddp, sync);
}

static kiln_status zero1_reduce_gradients(void* state, kiln_tensor* const* params, size_t n_params) {
  const zero1_state* s = state;
  return kp_ddp_reduce_gradients(s->ddp, params, n_params);
}

static kiln_status zero1_state_owner(void* state, const kiln_tensor* param, int* owner) {
  const zero1_state* s = state;
  size_t i;
  *owner = -1;
  for (i = 0; i < s->n_params; ++i) {
    if (s->params[i] == param) *owner = s->owner[i];
  }
  return KILN_OK;
}

static kiln_status zero1_step_begin(void* state) {
  const zero1_state* s = state;
  kiln_status st = KILN_OK;
  size_t i;
  for (i = 0; st == KILN_OK && i < s->n_params; ++i) {
    if (s->owner[i] != s->rank) st = kp_host.tensor_set_grad(s->params[i], NULL);
  }
  return st;
}

static kiln_status zero1_step_end(void* state) {
  zero1_state* s = state;
  kiln_status st = KILN_OK;
  size_t i;
  if (s->world == 1) return KILN_OK;
  /* Every rank queues the same broadcasts in the same order; they run one
   * after the other on the group's thread while the next are queued. */
  for (i = 0; st == KILN_OK && i < s->n_params; ++i) {
    st = kp_host.process_group_broadcast(s->group, s->params[i], s->owner[i], &s->works[i]);
  }
  /* Every queued broadcast is waited for, even after a failure, so that
   * none still writes into a parameter once the step has returned. */
  for (i = 0; i < s->n_params; ++i) {
    if (!s->works[i]) continue;
    {
      const kiln_status done = kp_host.work_wait(s->works[i]);
      if (st == KILN_OK) st = done;
    }
    kp_host.work_release(s->works[i]);
    s->works[i] = NULL;
  }
  return st;
}

kiln_status kp_register_zero1(kiln_registrar* registrar) {
  kiln_strategy_type zero1 = {0};
  zero1.size = sizeof zero1;
  zero1.name = "zero1";
  zero1.config = kp_ddp_config;
  zero1.n_config = KP_DDP_N_CONFIG;
  zero1.create = zero1_create;
  zero1.rank = zero1_rank;
  zero1.reduce_gradients = zero1_reduce_gradients;
  zero1.destroy = zero1_destroy;
  zero1.attach = zero1_attach;
  zero1.backward_begin = zero1_backward_begin;
  zero1.state_owner = zero1_state_owner;
  zero1.step_begin = zero1_step_begin;
  zero1.step_end = zero1_step_end;
  return kp_host.register_strategy(registrar, &zero1);
}
