/* LSTM and GRU: configuration, parameters and the helpers of their cells
 * (see rnn.h); the forward is in rnn_forward.c. */
#include "rnn.h"

#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "init.h"

const kiln_attr_spec kl_rnn_config[KL_RNN_N_CONFIG] = {
    [KL_RNN_INPUT_SIZE] = {{"input_size", KILN_ATTR_INT, {.i = 0}}, 1, "features of the input at each step"},
    [KL_RNN_HIDDEN_SIZE] = {{"hidden_size", KILN_ATTR_INT, {.i = 0}}, 1, "features H of the hidden state"},
    [KL_RNN_NUM_LAYERS] = {{"num_layers", KILN_ATTR_INT, {.i = 1}},
                           0,
                           "recurrent layers stacked, each reading the outputs of the one below"},
    [KL_RNN_BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn the biases bias_ih and bias_hh"},
    [KL_RNN_BATCH_FIRST] = {{"batch_first", KILN_ATTR_BOOL, {.b = 0}},
                            0,
                            "input and output are [N, T, features] rather than [T, N, features] "
                            "(the states stay [layers * directions, N, H])"},
    [KL_RNN_DROPOUT] = {{"dropout", KILN_ATTR_FLOAT, {.f = 0.0}},
                        0,
                        "dropout on the outputs of every layer but the last, in train mode, in [0, 1)"},
    [KL_RNN_BIDIRECTIONAL] = {{"bidirectional", KILN_ATTR_BOOL, {.b = 0}},
                              0,
                              "each layer also runs from the last step to the first; outputs are twice as wide"},
    [KL_RNN_PROJ_SIZE] = {{"proj_size", KILN_ATTR_INT, {.i = 0}},
                          0,
                          "h projected to this width by weight_hr, 0 < proj_size < hidden_size; 0: none"},
};

static const char* const op_names[KL_RNN_N_OPS] = {
    [KL_RNN_OP_LINEAR] = "linear",
    [KL_RNN_OP_ADD] = "add",
    [KL_RNN_OP_SUB] = "sub",
    [KL_RNN_OP_MUL] = "mul",
    [KL_RNN_OP_SIGMOID] = "sigmoid",
    [KL_RNN_OP_TANH] = "tanh",
    [KL_RNN_OP_CHUNK] = "chunk",
    [KL_RNN_OP_CONCAT] = "concat",
    [KL_RNN_OP_TRANSPOSE] = "transpose",
    [KL_RNN_OP_COPY] = "copy",
    [KL_RNN_OP_UNSQUEEZE] = "unsqueeze",
    [KL_RNN_OP_SQUEEZE] = "squeeze",
    [KL_RNN_OP_DROPOUT] = "dropout",
    [KL_RNN_OP_LSTM_RECURRENCE] = "lstm_recurrence",
};

static void rnn_destroy(void* state) {
  kl_rnn* r = state;
  int64_t i;
  if (r->weights) {
    for (i = 0; i < r->num_layers * r->directions; ++i) {
      kl_host.tensor_release(r->weights[i].w_ih);
      kl_host.tensor_release(r->weights[i].w_hh);
      kl_host.tensor_release(r->weights[i].b_ih);
      kl_host.tensor_release(r->weights[i].b_hh);
      kl_host.tensor_release(r->weights[i].w_hr);
    }
  }
  free(r->weights);
  free(r);
}

/* Adds "<base>_l<layer><suffix>" drawn from U(-1/sqrt(H), 1/sqrt(H)). */
static kiln_status add_weight(kiln_layer_init* init, const kl_rnn* r, const char* base, int64_t layer,
                              const char* suffix, const int64_t* shape, int rank, kiln_tensor** out) {
  char name[64];
  snprintf(name, sizeof name, "%s_l%lld%s", base, (long long)layer, suffix);
  /* KAIMING_UNIFORM bounds by 1/sqrt(fan_in): the hidden size is PyTorch's bound here. */
  return kl_add_parameter(init, name, KL_INIT_KAIMING_UNIFORM, shape, rank, r->hidden_size, r->hidden_size, out);
}

int64_t kl_rnn_h_size(const kl_rnn* rnn) { return rnn->proj_size ? rnn->proj_size : rnn->hidden_size; }

/* In PyTorch's order: for each layer and direction, weight_ih, weight_hh,
 * bias_ih, bias_hh, weight_hr. */
static kiln_status add_parameters(kl_rnn* r, kiln_layer_init* init, int bias) {
  const int64_t p = kl_rnn_h_size(r), rows = r->cell->gates * r->hidden_size;
  const int64_t hr_shape[2] = {r->proj_size, r->hidden_size};
  int64_t layer, dir;
  kiln_status st = KILN_OK;
  for (layer = 0; st == KILN_OK && layer < r->num_layers; ++layer) {
    const int64_t ih_shape[2] = {rows, layer == 0 ? r->input_size : r->directions * p};
    const int64_t hh_shape[2] = {rows, p};
    for (dir = 0; st == KILN_OK && dir < r->directions; ++dir) {
      kl_rnn_weights* w = &r->weights[layer * r->directions + dir];
      const char* suffix = dir ? "_reverse" : "";
      st = add_weight(init, r, "weight_ih", layer, suffix, ih_shape, 2, &w->w_ih);
      if (st == KILN_OK) st = add_weight(init, r, "weight_hh", layer, suffix, hh_shape, 2, &w->w_hh);
      if (st == KILN_OK && bias) st = add_weight(init, r, "bias_ih", layer, suffix, &rows, 1, &w->b_ih);
      if (st == KILN_OK && bias) st = add_weight(init, r, "bias_hh", layer, suffix, &rows, 1, &w->b_hh);
      if (st == KILN_OK && r->proj_size) st = add_weight(init, r, "weight_hr", layer, suffix, hr_shape, 2, &w->w_hr);
    }
  }
  return st;
}

/* proj_size, where the cell takes it: 0 (none) or in [1, hidden_size). */
static kiln_status check_proj_size(const char* layer, const kiln_attr* cfg, size_t n_config) {
  kiln_status st;
  if (n_config <= KL_RNN_PROJ_SIZE) return KILN_OK;
  if ((st = kl_check_int_min(layer, &cfg[KL_RNN_PROJ_SIZE], 0)) != KILN_OK) return st;
  if (cfg[KL_RNN_PROJ_SIZE].value.i < cfg[KL_RNN_HIDDEN_SIZE].value.i) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: proj_size must be smaller than hidden_size = %lld, got %lld", layer,
                 (long long)cfg[KL_RNN_HIDDEN_SIZE].value.i, (long long)cfg[KL_RNN_PROJ_SIZE].value.i);
}

static kiln_status check_config(const char* layer, const kiln_attr* cfg, size_t n_config) {
  kiln_status st;
  if ((st = kl_check_int_min(layer, &cfg[KL_RNN_INPUT_SIZE], 1)) != KILN_OK) return st;
  if ((st = kl_check_int_min(layer, &cfg[KL_RNN_HIDDEN_SIZE], 1)) != KILN_OK) return st;
  if ((st = kl_check_int_min(layer, &cfg[KL_RNN_NUM_LAYERS], 1)) != KILN_OK) return st;
  if ((st = kl_check_float_range(layer, &cfg[KL_RNN_DROPOUT], 0.0, 1.0, 1)) != KILN_OK) return st;
  return check_proj_size(layer, cfg, n_config);
}

static kiln_status rnn_create(void* cell, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config, void** state) {
  const kl_rnn_cell* c = cell;
  kiln_runtime* rt = kl_host.layer_init_runtime(init);
  kl_rnn* r;
  int i;
  kiln_status st;
  if ((st = check_config(c->name, cfg, n_config)) != KILN_OK) return st;
  r = calloc(1, sizeof *r);
  if (!r) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", c->name);
  r->cell = c;
  r->input_size = cfg[KL_RNN_INPUT_SIZE].value.i;
  r->hidden_size = cfg[KL_RNN_HIDDEN_SIZE].value.i;
  r->num_layers = cfg[KL_RNN_NUM_LAYERS].value.i;
  r->directions = cfg[KL_RNN_BIDIRECTIONAL].value.b ? 2 : 1;
  r->batch_first = cfg[KL_RNN_BATCH_FIRST].value.b;
  r->dropout = cfg[KL_RNN_DROPOUT].value.f;
  r->proj_size = n_config > KL_RNN_PROJ_SIZE ? cfg[KL_RNN_PROJ_SIZE].value.i : 0;
  r->weights = calloc((size_t)(r->num_layers * r->directions), sizeof *r->weights);
  st = r->weights ? KILN_OK
                  : kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for %lld layers' weights", c->name,
                            (long long)r->num_layers);
  for (i = 0; st == KILN_OK && i < KL_RNN_N_OPS; ++i) st = kl_host.op_find(rt, op_names[i], &r->ops[i]);
  if (st == KILN_OK) st = add_parameters(r, init, cfg[KL_RNN_BIAS].value.b);
  if (st != KILN_OK) {
    rnn_destroy(r);
    return st;
  }
  *state = r;
  return KILN_OK;
}

kiln_status kl_rnn_register(kiln_registrar* registrar, const kl_rnn_cell* cell) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = cell->name,
                                .config = kl_rnn_config,
                                .n_config = cell->n_config,
                                .user = (void*)cell,
                                .create = rnn_create,
                                .forward = kl_rnn_forward,
                                .destroy = rnn_destroy};
  return kl_host.register_layer(registrar, &type);
}

kiln_status kl_rnn_unary(kl_scratch* s, const kl_rnn* rnn, int op, kiln_tensor* x, kiln_tensor** out) {
  return kl_call(s, rnn->ops[op], &x, 1, NULL, 0, out);
}

kiln_status kl_rnn_binary(kl_scratch* s, const kl_rnn* rnn, int op, kiln_tensor* a, kiln_tensor* b, kiln_tensor** out) {
  kiln_tensor* pair[2];
  pair[0] = a;
  pair[1] = b;
  return kl_call(s, rnn->ops[op], pair, 2, NULL, 0, out);
}

kiln_status kl_rnn_hidden_product(kl_scratch* s, const kl_rnn* rnn, const kl_rnn_weights* w, kiln_tensor* h,
                                  kiln_tensor** out) {
  kiln_tensor* inputs[3];
  inputs[0] = h;
  inputs[1] = w->w_hh;
  inputs[2] = w->b_hh;
  return kl_call(s, rnn->ops[KL_RNN_OP_LINEAR], inputs, 3, NULL, 0, out);
}

kiln_status kl_rnn_squeeze0(kl_scratch* s, const kl_rnn* rnn, kiln_tensor* t, kiln_tensor** out) {
  const int64_t dim = 0;
  const kiln_attr attr = kiln_attr_ints("dim", &dim, 1);
  return kl_call(s, rnn->ops[KL_RNN_OP_SQUEEZE], &t, 1, &attr, 1, out);
}

kiln_status kl_rnn_unsqueeze0(kl_scratch* s, const kl_rnn* rnn, kiln_tensor* t, kiln_tensor** out) {
  const kiln_attr attr = kiln_attr_int("dim", 0);
  return kl_call(s, rnn->ops[KL_RNN_OP_UNSQUEEZE], &t, 1, &attr, 1, out);
}

kiln_status kl_rnn_chunk_last(kl_scratch* s, const kl_rnn* rnn, kiln_tensor* t, int n, kiln_tensor** parts) {
  kiln_attr attrs[2];
  attrs[0] = kiln_attr_int("chunks", n);
  attrs[1] = kiln_attr_int("dim", -1);
  return kl_call_n(s, rnn->ops[KL_RNN_OP_CHUNK], &t, 1, attrs, 2, parts, (size_t)n);
}
