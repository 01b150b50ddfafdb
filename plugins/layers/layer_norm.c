/* LayerNorm(normalized_shape, eps = 1e-5, elementwise_affine = true,
 * bias = true): each slice over the trailing normalized_shape dims of the
 * input normalised by its own mean and (biased) variance, then scaled by
 * weight (1 at first) and shifted by bias (0 at first). */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "init.h"
#include "layers.h"

enum { NORMALIZED_SHAPE, EPS, ELEMENTWISE_AFFINE, BIAS, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [NORMALIZED_SHAPE] = {{"normalized_shape", KILN_ATTR_INTS, {.ints = {NULL, 0}}},
                          1,
                          "the trailing dims normalised together, e.g. [embed_dim]"},
    [EPS] = {{"eps", KILN_ATTR_FLOAT, {.f = 1e-5}}, 0, "added to the variance for stability"},
    [ELEMENTWISE_AFFINE] = {{"elementwise_affine", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn weight (and bias)"},
    [BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn a bias too (with elementwise_affine)"},
};

typedef struct layer_norm_state {
  const kiln_op* layer_norm;
  kiln_attr attrs[2]; /* normalized_shape (pointing at `shape`) and eps */
  int64_t shape[KILN_MAX_DIMS];
  kiln_tensor *weight, *bias;
} layer_norm_state;

static void layer_norm_destroy(void* state) {
  layer_norm_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->bias);
  free(s);
}

static kiln_status check_shape(const kiln_attr* entry) {
  const size_t n = entry->value.ints.len;
  size_t i;
  if (n < 1 || n > KILN_MAX_DIMS)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "LayerNorm: normalized_shape must have 1 to %d dims, got %zu",
                   KILN_MAX_DIMS, n);
  for (i = 0; i < n; ++i) {
    if (entry->value.ints.data[i] < 1)
      return kl_fail(KILN_ERR_INVALID_ARGUMENT, "LayerNorm: normalized_shape dims must be >= 1, got %lld at %zu",
                     (long long)entry->value.ints.data[i], i);
  }
  return KILN_OK;
}

static kiln_status layer_norm_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                     void** state) {
  const kiln_attr* shape = &cfg[NORMALIZED_SHAPE];
  const int rank = (int)shape->value.ints.len;
  layer_norm_state* s;
  int d;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = check_shape(shape)) != KILN_OK) return st;
  if ((st = kl_check_float_range("LayerNorm", &cfg[EPS], 0.0, 1.0, 0)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "LayerNorm: no memory for its state");
  for (d = 0; d < rank; ++d) s->shape[d] = shape->value.ints.data[d];
  s->attrs[0] = kiln_attr_ints("normalized_shape", s->shape, (size_t)rank);
  s->attrs[1] = kiln_attr_float("eps", cfg[EPS].value.f);
  st = kl_host.op_find(kl_host.layer_init_runtime(init), "layer_norm", &s->layer_norm);
  if (st == KILN_OK && cfg[ELEMENTWISE_AFFINE].value.b) {
    st = kl_add_parameter(init, "weight", KL_INIT_ONES, s->shape, rank, 0, 0, &s->weight);
    if (st == KILN_OK && cfg[BIAS].value.b)
      st = kl_add_parameter(init, "bias", KL_INIT_ZEROS, s->shape, rank, 0, 0, &s->bias);
  }
  if (st != KILN_OK) {
    layer_norm_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status layer_norm_forward(void* state, const kiln_layer_call* call) {
  const layer_norm_state* s = state;
  kiln_tensor* inputs[3];
  const kiln_status st = kl_expect_inputs("LayerNorm", call, 1);
  if (st != KILN_OK) return st;
  inputs[0] = call->inputs[0];
  inputs[1] = s->weight;
  inputs[2] = s->bias;
  return kl_host.op_call1(call->runtime, s->layer_norm, inputs, 3, s->attrs, 2, &call->outputs[0]);
}

kiln_status kl_register_layer_norm(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "LayerNorm",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = layer_norm_create,
                                .forward = layer_norm_forward,
                                .destroy = layer_norm_destroy};
  return kl_host.register_layer(registrar, &type);
}
