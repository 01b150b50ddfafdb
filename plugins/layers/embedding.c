/* Embedding(num_embeddings, embedding_dim, padding_idx = -1): rows of a
 * weight table [num_embeddings, embedding_dim] (N(0, 1) at first) looked up
 * by integer indices of any shape; the output is [..., embedding_dim].
 * padding_idx (in [0, num_embeddings); -1: none) names a row that starts at
 * zero and receives no gradient, as in PyTorch. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "host.h"
#include "init.h"
#include "layers.h"
#include "scratch.h"

enum { NUM_EMBEDDINGS, EMBEDDING_DIM, PADDING_IDX, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [NUM_EMBEDDINGS] = {{"num_embeddings", KILN_ATTR_INT, {.i = 0}}, 1, "rows of the table (the index range)"},
    [EMBEDDING_DIM] = {{"embedding_dim", KILN_ATTR_INT, {.i = 0}}, 1, "size of each row"},
    [PADDING_IDX] = {{"padding_idx", KILN_ATTR_INT, {.i = -1}},
                     0,
                     "a row that starts at zero and gets no gradient; -1: none"},
};

typedef struct embedding_state {
  const kiln_op *embedding, *where;
  kiln_tensor* weight;
  int64_t num_embeddings, padding_idx;
  /* [num_embeddings, 1], true at padding_idx, on the device it was last
   * needed on (rebuilt when the module moves). */
  kiln_tensor* padding_mask;
  kiln_device_type mask_device;
  int mask_device_index;
} embedding_state;

static void embedding_destroy(void* state) {
  embedding_state* s = state;
  kl_host.tensor_release(s->weight);
  kl_host.tensor_release(s->padding_mask);
  free(s);
}

/* N(0, 1) with row `zero_row` (when >= 0) set to zero. */
static kiln_status initial_table(kiln_runtime* rt, const int64_t shape[2], int64_t zero_row, kiln_tensor** out) {
  const size_t count = (size_t)(shape[0] * shape[1]);
  kiln_tensor* drawn = NULL;
  float* values = NULL;
  kiln_status st = kl_init_tensor(rt, KL_INIT_NORMAL, shape, 2, 0, 0, &drawn);
  if (st != KILN_OK || zero_row < 0) {
    if (st == KILN_OK) *out = drawn;
    return st;
  }
  values = malloc(count * sizeof *values);
  if (!values) st = kl_fail(KILN_ERR_OUT_OF_MEMORY, "Embedding: no memory for a %zu-value table", count);
  if (st == KILN_OK) st = kl_host.tensor_read(drawn, values, count * sizeof *values);
  if (st == KILN_OK) {
    memset(values + zero_row * shape[1], 0, (size_t)shape[1] * sizeof *values);
    st = kl_host.tensor_from_data(rt, values, count * sizeof *values, shape, 2, KILN_F32, out);
  }
  free(values);
  kl_host.tensor_release(drawn);
  return st;
}

static kiln_status embedding_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                    void** state) {
  kiln_runtime* rt = kl_host.layer_init_runtime(init);
  const int64_t shape[2] = {cfg[NUM_EMBEDDINGS].value.i, cfg[EMBEDDING_DIM].value.i};
  const int64_t padding_idx = cfg[PADDING_IDX].value.i;
  embedding_state* s;
  kiln_tensor* table = NULL;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_check_int_min("Embedding", &cfg[NUM_EMBEDDINGS], 1)) != KILN_OK) return st;
  if ((st = kl_check_int_min("Embedding", &cfg[EMBEDDING_DIM], 1)) != KILN_OK) return st;
  if (padding_idx < -1 || padding_idx >= shape[0])
    return kl_fail(KILN_ERR_INVALID_ARGUMENT,
                   "Embedding: padding_idx must be -1 (none) or in [0, num_embeddings = %lld), got %lld",
                   (long long)shape[0], (long long)padding_idx);
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Embedding: no memory for its state");
  s->num_embeddings = shape[0];
  s->padding_idx = padding_idx;
  st = kl_host.op_find(rt, "embedding", &s->embedding);
  if (st == KILN_OK) st = kl_host.op_find(rt, "where", &s->where);
  if (st == KILN_OK) st = initial_table(rt, shape, padding_idx, &table);
  if (st == KILN_OK) {
    st = kl_host.layer_add_parameter(init, "weight", table);
    if (st == KILN_OK)
      s->weight = table;
    else
      kl_host.tensor_release(table);
  }
  if (st != KILN_OK) {
    embedding_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

/* The padding mask on the weight's device. */
static kiln_status padding_mask(embedding_state* s, kiln_runtime* rt, kiln_tensor** out) {
  const int64_t shape[2] = {s->num_embeddings, 1};
  kiln_device_type device;
  int index = 0;
  unsigned char* flags;
  kiln_tensor *host_mask = NULL, *mask = NULL;
  kiln_status st = kl_host.tensor_device(s->weight, &device, &index);
  if (st != KILN_OK) return st;
  if (s->padding_mask && s->mask_device == device && s->mask_device_index == index) {
    *out = s->padding_mask;
    return KILN_OK;
  }
  flags = calloc((size_t)s->num_embeddings, 1);
  if (!flags) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Embedding: no memory for its padding mask");
  flags[s->padding_idx] = 1;
  st = kl_host.tensor_from_data(rt, flags, (size_t)s->num_embeddings, shape, 2, KILN_BOOL, &host_mask);
  free(flags);
  if (st == KILN_OK) st = kl_host.tensor_to(host_mask, device, index, &mask);
  kl_host.tensor_release(host_mask);
  if (st != KILN_OK) return st;
  kl_host.tensor_release(s->padding_mask);
  s->padding_mask = mask;
  s->mask_device = device;
  s->mask_device_index = index;
  *out = mask;
  return KILN_OK;
}

/* The table the lookup reads: the weight itself, or with padding_idx, the
 * weight whose padding row comes through a detached copy, so the same
 * values flow forward and no gradient reaches that row. */
static kiln_status lookup_table(embedding_state* s, kl_scratch* scratch, kiln_tensor** out) {
  kiln_tensor* where_inputs[3];
  kiln_tensor* detached = NULL;
  kiln_status st;
  if (s->padding_idx < 0) {
    *out = s->weight;
    return KILN_OK;
  }
  st = padding_mask(s, scratch->runtime, &where_inputs[0]);
  if (st == KILN_OK) st = kl_host.tensor_detach(s->weight, &detached);
  if (st == KILN_OK) st = kl_scratch_keep(scratch, detached);
  if (st != KILN_OK) return st;
  where_inputs[1] = detached;
  where_inputs[2] = s->weight;
  return kl_call(scratch, s->where, where_inputs, 3, NULL, 0, out);
}

static kiln_status embedding_forward(void* state, const kiln_layer_call* call) {
  embedding_state* s = state;
  kl_scratch scratch;
  kiln_tensor* inputs[2] = {NULL, NULL};
  kiln_tensor* y = NULL;
  kiln_status st;
  kl_scratch_init(&scratch, call->runtime);
  KL_TRY(kl_expect_inputs("Embedding", call, 1));
  inputs[0] = call->inputs[0];
  KL_TRY(lookup_table(s, &scratch, &inputs[1]));
  KL_TRY(kl_call(&scratch, s->embedding, inputs, 2, NULL, 0, &y));
done:
  return kl_scratch_finish(&scratch, st, y, &call->outputs[0]);
}

kiln_status kl_register_embedding(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "Embedding",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = embedding_create,
                                .forward = embedding_forward,
                                .destroy = embedding_destroy};
  return kl_host.register_layer(registrar, &type);
}
