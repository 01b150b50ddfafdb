/* kiln-parallel: how training is spread over processes. "single" is one
 * process, rank 0 of 1: gradients already agree, so reducing them only
 * checks its arguments. */
#include <stdio.h>

#include "kiln/kiln_plugin.h"

static const kiln_host* host;

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
  char message[96];
  size_t i;
  (void)state;
  if (!params && n_params > 0) {
    snprintf(message, sizeof message, "single: params is NULL with %zu entries", n_params);
    return host->error(KILN_ERR_INVALID_ARGUMENT, message);
  }
  for (i = 0; i < n_params; ++i) {
    if (params[i]) continue;
    snprintf(message, sizeof message, "single: params[%zu] is NULL", i);
    return host->error(KILN_ERR_INVALID_ARGUMENT, message);
  }
  return KILN_OK;
}

static kiln_status register_parallel(const kiln_host* h, kiln_registrar* registrar) {
  kiln_strategy_type single = {0};
  host = h;
  single.size = sizeof single;
  single.name = "single";
  single.create = single_create;
  single.rank = single_rank;
  single.reduce_gradients = single_reduce_gradients;
  return host->register_strategy(registrar, &single);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {sizeof descriptor, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0),
                                                    "kiln-parallel", "0.1.0", register_parallel};
  return &descriptor;
}
