/* "single": one process, rank 0 of 1. Gradients already agree, so reducing
 * them only checks its arguments. */
#include <stddef.h>

#include "host.h"

static kiln_status single_create(void* user, kiln_runtime* runtime, const kiln_attr* config, size_t n_config,
                                 void** state) {
  (void)user;
  (void)runtime;
  (void)config;
  (void)n_config;
  *state = NULL; /* nothing to keep */
  return KILN_OK;
}

static kiln_status single_rank(void* state, int* rank, int* world_size) {
  (void)state;
  *rank = 0;
  *world_size = 1;
  return KILN_OK;
}

/* One process: the gradients are already the only ones. The arguments are
 * still checked, so a caller's mistake shows up before it goes distributed. */
static kiln_status single_reduce_gradients(void* state, kiln_tensor* const* params, size_t n_params) {
  size_t i;
  (void)state;
  if (!params && n_params > 0) return kp_fail(KILN_ERR_INVALID_ARGUMENT, "single: params is NULL with %zu entries", n_params);
  for (i = 0; i < n_params; ++i) {
    if (!params[i]) return kp_fail(KILN_ERR_INVALID_ARGUMENT, "single: params[%zu] is NULL", i);
  }
  return KILN_OK;
}

kiln_status kp_register_single(kiln_registrar* registrar) {
  kiln_strategy_type single = {0};
  single.size = sizeof single;
  single.name = "single";
  single.create = single_create;
  single.rank = single_rank;
  single.reduce_gradients = single_reduce_gradients;
  return kp_host.register_strategy(registrar, &single);
}
