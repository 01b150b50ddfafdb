/* MultiHeadAttention(embed_dim, num_heads, bias = true, causal = false,
 * dropout = 0): scaled dot-product attention over num_heads heads of
 * embed_dim / num_heads features, batch first. Inputs: x [N, L, E] for
 * self-attention, or query [N, L, E], key [N, S, E], value [N, S, E].
 * Output [N, L, E]:
 *
 *   q, k, v = x Wq^T + bq, ..., split into heads [N, H, L, D]
 *   a = softmax(q k^T / sqrt(D) + mask) (dropout on a in train mode)
 *   out = (a v, heads merged) Wo^T + bo
 *
 * With causal, position t attends to positions s <= t only (the mask is
 * -inf above the diagonal). The middle line is one scaled_dot_product_attention
 * op, which reads the heads where the projection left them and never holds
 * the mask or the [N, H, L, S] scores as tensors.
 *
 * The parameters are torch.nn.MultiheadAttention's, under its names, so its
 * state_dict loads as it is: in_proj_weight [3E, E] (Wq, Wk, Wv stacked by
 * rows), in_proj_bias [3E] (absent with bias = false), and the Linear child
 * out_proj (out_proj.weight, out_proj.bias). Initialised as in PyTorch:
 * in_proj_weight xavier_uniform over the whole [3E, E] (bound
 * sqrt(6 / 4E)), out_proj.weight Linear's default, biases zero.
 * Self-attention projects x once through the whole in_proj_weight and splits
 * the result into q, k, v; cross-attention splits the weight and bias into
 * their three row blocks and projects each input by its own. */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "layers.h"
#include "attention.h"
#include "child.h"
#include "init.h"

enum { EMBED_DIM, NUM_HEADS, BIAS, CAUSAL, DROPOUT, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [EMBED_DIM] = {{"embed_dim", KILN_ATTR_INT, {.i = 0}}, 1, "features E of the inputs and the output"},
    [NUM_HEADS] = {{"num_heads", KILN_ATTR_INT, {.i = 0}}, 1, "heads; must divide embed_dim"},
    [BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn biases in the projections"},
    [CAUSAL] = {{"causal", KILN_ATTR_BOOL, {.b = 0}}, 0, "position t attends to positions <= t only"},
    [DROPOUT] = {{"dropout", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "dropout on the attention weights in train mode"},
};

enum { OP_LINEAR, OP_SPLIT, OP_RESHAPE, OP_PERMUTE, OP_ATTENTION, N_OPS };
static const char* const op_names[N_OPS] = {"linear", "split", "reshape", "permute", "scaled_dot_product_attention"};

typedef struct attention_state {
  int64_t embed_dim, num_heads, head_dim;
  int causal;
  double dropout;
  const kiln_op* ops[N_OPS];
  kiln_tensor* in_proj_weight; /* [3E, E] */
  kiln_tensor* in_proj_bias;   /* [3E], NULL without bias */
  kiln_module* out_proj;       /* Linear child */
} attention_state;

static void attention_destroy(void* state) {
  attention_state* s = state;
  kl_host.tensor_release(s->in_proj_weight);
  kl_host.tensor_release(s->in_proj_bias);
  kl_host.module_release(s->out_proj);
  free(s);
}

kiln_status kl_check_attention_config(const char* layer, const kiln_attr* embed_dim, const kiln_attr* num_heads,
                                      const kiln_attr* dropout) {
  kiln_status st;
  if ((st = kl_check_int_min(layer, embed_dim, 1)) != KILN_OK) return st;
  if ((st = kl_check_int_min(layer, num_heads, 1)) != KILN_OK) return st;
  if ((st = kl_check_float_range(layer, dropout, 0.0, 1.0, 1)) != KILN_OK) return st;
  return kl_check_divisible(layer, embed_dim, num_heads);
}

/* In PyTorch's order: in_proj_weight [3E, E] xavier_uniform (its fans are
 * those of the whole stacked matrix, E in and 3E out), in_proj_bias [3E]
 * zero, then out_proj: Linear(E, E) with its default weight and a zero
 * bias. */
static kiln_status add_projections(attention_state* s, kiln_layer_init* init, int64_t e, int bias) {
  const int64_t in_shape[2] = {3 * e, e};
  kiln_attr out_proj[4];
  kiln_status st;
  out_proj[0] = kiln_attr_int("in_features", e);
  out_proj[1] = kiln_attr_int("out_features", e);
  out_proj[2] = kiln_attr_bool("bias", bias);
  out_proj[3] = kiln_attr_string("bias_init", "zeros");
  st = kl_add_parameter(init, "in_proj_weight", KL_INIT_XAVIER_UNIFORM, in_shape, 2, e, 3 * e, &s->in_proj_weight);
  if (st == KILN_OK && bias)
    st = kl_add_parameter(init, "in_proj_bias", KL_INIT_ZEROS, &in_shape[0], 1, e, 3 * e, &s->in_proj_bias);
  return st != KILN_OK ? st : kl_add_child(init, "out_proj", "Linear", out_proj, 4, &s->out_proj);
}

static kiln_status attention_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                    void** state) {
  const char* layer = "MultiHeadAttention";
  kiln_runtime* rt = kl_host.layer_init_runtime(init);
  const int64_t e = cfg[EMBED_DIM].value.i, h = cfg[NUM_HEADS].value.i;
  const int bias = cfg[BIAS].value.b;
  attention_state* s;
  int i;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_check_attention_config(layer, &cfg[EMBED_DIM], &cfg[NUM_HEADS], &cfg[DROPOUT])) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", layer);
  s->embed_dim = e;
  s->num_heads = h;
  s->head_dim = e / h;
  s->causal = cfg[CAUSAL].value.b;
  s->dropout = cfg[DROPOUT].value.f;
  for (i = 0, st = KILN_OK; st == KILN_OK && i < N_OPS; ++i) st = kl_host.op_find(rt, op_names[i], &s->ops[i]);
  if (st == KILN_OK) st = add_projections(s, init, e, bias);
  if (st != KILN_OK) {
    attention_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

/* query [N, L, E], key and value [N, S, E]; writes N, L and S. */
static kiln_status check_inputs(const attention_state* s, kiln_tensor* const* qkv, int64_t* n, int64_t* l,
                                int64_t* len_s) {
  static const char* const names[3] = {"query", "key", "value"};
  kiln_tensor_desc d[3];
  int i;
  for (i = 0; i < 3; ++i) {
    const kiln_status st = kl_host.tensor_describe(qkv[i], &d[i]);
    if (st != KILN_OK) return st;
    if (d[i].rank != 3 || d[i].dims[2] != s->embed_dim)
      return kl_fail(KILN_ERR_SHAPE_MISMATCH,
                     "MultiHeadAttention: %s must be [N, length, embed_dim = %lld] (batch first), got rank %d with "
                     "last dim %lld",
                     names[i], (long long)s->embed_dim, d[i].rank, (long long)(d[i].rank ? d[i].dims[d[i].rank - 1] : 0));
  }
  if (d[1].dims[0] != d[0].dims[0] || d[2].dims[0] != d[0].dims[0] || d[2].dims[1] != d[1].dims[1])
    return kl_fail(KILN_ERR_SHAPE_MISMATCH,
                   "MultiHeadAttention: query [%lld, %lld, E], key [%lld, %lld, E] and value [%lld, %lld, E] must "
                   "share N, and key and value their length",
                   (long long)d[0].dims[0], (long long)d[0].dims[1], (long long)d[1].dims[0], (long long)d[1].dims[1],
                   (long long)d[2].dims[0], (long long)d[2].dims[1]);
  *n = d[0].dims[0];
  *l = d[0].dims[1];
  *len_s = d[1].dims[1];
  return KILN_OK;
}

/* x [N, len, E] -> [N, H, len, D]. */
static kiln_status split_heads(kl_scratch* sc, const attention_state* s, kiln_tensor* x, int64_t n, int64_t len,
                               kiln_tensor** out) {
  const int64_t shape[4] = {n, len, s->num_heads, s->head_dim};
  static const int64_t swap[4] = {0, 2, 1, 3};
  kiln_attr reshape = kiln_attr_ints("shape", shape, 4), permute = kiln_attr_ints("dims", swap, 4);
  kiln_tensor* split = NULL;
  const kiln_status st = kl_call(sc, s->ops[OP_RESHAPE], &x, 1, &reshape, 1, &split);
  return st != KILN_OK ? st : kl_call(sc, s->ops[OP_PERMUTE], &split, 1, &permute, 1, out);
}

/* x [N, H, L, D] -> [N, L, E]. */
static kiln_status merge_heads(kl_scratch* sc, const attention_state* s, kiln_tensor* x, int64_t n, int64_t l,
                               kiln_tensor** out) {
  const int64_t shape[3] = {n, l, s->embed_dim};
  static const int64_t swap[4] = {0, 2, 1, 3};
  kiln_attr reshape = kiln_attr_ints("shape", shape, 3), permute = kiln_attr_ints("dims", swap, 4);
  kiln_tensor* merged = NULL;
  const kiln_status st = kl_call(sc, s->ops[OP_PERMUTE], &x, 1, &permute, 1, &merged);
  return st != KILN_OK ? st : kl_call(sc, s->ops[OP_RESHAPE], &merged, 1, &reshape, 1, out);
}

/* `t` cut into three equal parts along `dim` (E each): q, k, v. */
static kiln_status split_qkv(kl_scratch* sc, const attention_state* s, kiln_tensor* t, int64_t dim,
                             kiln_tensor* parts[3]) {
  const int64_t sizes[3] = {s->embed_dim, s->embed_dim, s->embed_dim};
  kiln_attr attrs[2];
  attrs[0] = kiln_attr_int("dim", dim);
  attrs[1] = kiln_attr_ints("sizes", sizes, 3);
  return kl_call_n(sc, s->ops[OP_SPLIT], &t, 1, attrs, 2, parts, 3);
}

/* x w^T + b (b may be NULL). */
static kiln_status project(kl_scratch* sc, const attention_state* s, kiln_tensor* x, kiln_tensor* w, kiln_tensor* b,
                           kiln_tensor** out) {
  kiln_tensor* inputs[3];
  inputs[0] = x;
  inputs[1] = w;
  inputs[2] = b;
  return kl_call(sc, s->ops[OP_LINEAR], inputs, 3, NULL, 0, out);
}

/* One product with the whole in_proj_weight, [N, L, 3E], split into q, k, v. */
static kiln_status project_self(kl_scratch* sc, const attention_state* s, kiln_tensor* x, kiln_tensor** q,
                                kiln_tensor** k, kiln_tensor** v) {
  kiln_tensor *qkv = NULL, *parts[3] = {NULL, NULL, NULL};
  kiln_status st = project(sc, s, x, s->in_proj_weight, s->in_proj_bias, &qkv);
  if (st == KILN_OK) st = split_qkv(sc, s, qkv, -1, parts);
  *q = parts[0];
  *k = parts[1];
  *v = parts[2];
  return st;
}

/* Each of query, key, value through its row block of in_proj_weight and
 * in_proj_bias; split passes the gradients back into the whole tensors. */
static kiln_status project_cross(kl_scratch* sc, const attention_state* s, kiln_tensor* const* qkv, kiln_tensor** q,
                                 kiln_tensor** k, kiln_tensor** v) {
  kiln_tensor *w[3] = {NULL, NULL, NULL}, *b[3] = {NULL, NULL, NULL};
  kiln_status st = split_qkv(sc, s, s->in_proj_weight, 0, w);
  if (st == KILN_OK && s->in_proj_bias) st = split_qkv(sc, s, s->in_proj_bias, 0, b);
  if (st == KILN_OK) st = project(sc, s, qkv[0], w[0], b[0], q);
  if (st == KILN_OK) st = project(sc, s, qkv[1], w[1], b[1], k);
  if (st == KILN_OK) st = project(sc, s, qkv[2], w[2], b[2], v);
  return st;
}

static kiln_status attention_forward(void* state, const kiln_layer_call* call) {
  attention_state* s = state;
  kiln_tensor* const* qkv = call->inputs;
  kiln_tensor* self[3];
  kl_scratch sc;
  kiln_tensor *q = NULL, *k = NULL, *v = NULL, *heads[3] = {NULL, NULL, NULL};
  kiln_tensor *context = NULL, *merged = NULL, *y = NULL;
  kiln_attr attrs[2];
  int64_t n = 0, l = 0, len_s = 0;
  kiln_status st;
  kl_scratch_init(&sc, call->runtime);
  if (call->n_inputs == 1) {
    self[0] = self[1] = self[2] = call->inputs[0];
    qkv = self;
  } else if (call->n_inputs != 3) {
    st = kl_fail(KILN_ERR_INVALID_ARGUMENT,
                 "MultiHeadAttention takes 1 input (self-attention) or 3 (query, key, value), got %zu",
                 call->n_inputs);
    goto done;
  }
  KL_TRY(check_inputs(s, qkv, &n, &l, &len_s));
  KL_TRY(call->n_inputs == 1 ? project_self(&sc, s, qkv[0], &q, &k, &v) : project_cross(&sc, s, qkv, &q, &k, &v));
  KL_TRY(split_heads(&sc, s, q, n, l, &heads[0]));
  KL_TRY(split_heads(&sc, s, k, n, len_s, &heads[1]));
  KL_TRY(split_heads(&sc, s, v, n, len_s, &heads[2]));
  /* The scale is the op's default, 1 / sqrt(D); dropout on the weights in train mode only. */
  attrs[0] = kiln_attr_bool("is_causal", s->causal);
  attrs[1] = kiln_attr_float("dropout_p", call->training ? s->dropout : 0.0);
  KL_TRY(kl_call(&sc, s->ops[OP_ATTENTION], heads, 3, attrs, 2, &context));
  KL_TRY(merge_heads(&sc, s, context, n, l, &merged));
  KL_TRY(kl_forward_child(&sc, s->out_proj, merged, &y));
done:
  return kl_scratch_finish(&sc, st, y, &call->outputs[0]);
}

kiln_status kl_register_attention(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "MultiHeadAttention",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = attention_create,
                                .forward = attention_forward,
                                .destroy = attention_destroy};
  return kl_host.register_layer(registrar, &type);
}
