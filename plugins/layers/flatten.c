/* Flatten(start_dim = 1, end_dim = -1): dimensions start_dim .. end_dim of
 * the input merged into one, through the "reshape" op (a view when the
 * input is contiguous). Negative dims count from the end. */
#include <stdlib.h>

#include "host.h"
#include "layers.h"

enum { START_DIM, END_DIM, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [START_DIM] = {{"start_dim", KILN_ATTR_INT, {.i = 1}}, 0, "first dimension to merge"},
    [END_DIM] = {{"end_dim", KILN_ATTR_INT, {.i = -1}}, 0, "last dimension to merge"},
};

typedef struct flatten_state {
  const kiln_op* reshape;
  int64_t start_dim, end_dim;
} flatten_state;

static kiln_status flatten_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                  void** state) {
  flatten_state* s = malloc(sizeof *s);
  kiln_status st;
  (void)user;
  (void)n_config;
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Flatten: no memory for its state");
  s->start_dim = cfg[START_DIM].value.i;
  s->end_dim = cfg[END_DIM].value.i;
  st = kl_host.op_find(kl_host.layer_init_runtime(init), "reshape", &s->reshape);
  if (st != KILN_OK) {
    free(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status flatten_forward(void* state, const kiln_layer_call* call) {
  const flatten_state* s = state;
  kiln_tensor_desc in;
  int64_t shape[KILN_MAX_DIMS];
  int64_t start, end, d;
  int rank = 0;
  kiln_attr attr;
  kiln_status st = kl_expect_inputs("Flatten", call, 1);
  if (st == KILN_OK) st = kl_host.tensor_describe(call->inputs[0], &in);
  if (st != KILN_OK) return st;
  if (in.rank == 0) { /* a scalar flattens like a one-element vector, as in PyTorch */
    in.rank = 1;
    in.dims[0] = 1;
  }
  start = s->start_dim < 0 ? s->start_dim + in.rank : s->start_dim;
  end = s->end_dim < 0 ? s->end_dim + in.rank : s->end_dim;
  if (start < 0 || end >= in.rank || start > end)
    return kl_fail(KILN_ERR_SHAPE_MISMATCH,
                   "Flatten: start_dim = %lld and end_dim = %lld do not name dims first..last of an input of rank %d "
                   "(expected -rank <= start_dim <= end_dim < rank)",
                   (long long)s->start_dim, (long long)s->end_dim, in.rank);
  for (d = 0; d < start; ++d) shape[rank++] = in.dims[d];
  shape[rank] = 1;
  for (d = start; d <= end; ++d) shape[rank] *= in.dims[d];
  ++rank;
  for (d = end + 1; d < in.rank; ++d) shape[rank++] = in.dims[d];
  attr = kiln_attr_ints("shape", shape, (size_t)rank);
  return kl_host.op_call1(call->runtime, s->reshape, call->inputs, 1, &attr, 1, &call->outputs[0]);
}

kiln_status kl_register_flatten(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "Flatten",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = flatten_create,
                                .forward = flatten_forward,
                                .destroy = free};
  return kl_host.register_layer(registrar, &type);
}
