/* TransformerBlock(embed_dim, num_heads, mlp_ratio = 4, dropout = 0,
 * causal = false): a pre-norm transformer encoder block on [N, L, E],
 *
 *   x = x + dropout(self_attn(norm1(x)))
 *   x = x + dropout(linear2(gelu(linear1(norm2(x)))))
 *
 * made of child layers (norm1, self_attn, norm2: LayerNorm and
 * MultiHeadAttention; linear1 [E -> mlp_ratio E] and linear2: Linear) named
 * as in torch.nn.TransformerEncoderLayer, so its parameters are PyTorch's
 * ("self_attn.in_proj_weight", "linear1.bias", ...) and the state_dict of
 * TransformerEncoderLayer(E, H, dim_feedforward = mlp_ratio E,
 * activation = "gelu", batch_first = True, norm_first = True) loads as it
 * is. The attention weights get the same dropout as the residual branches
 * (PyTorch also drops out the MLP's hidden activations). */
#include <stdlib.h>

#include "attention.h"
#include "child.h"
#include "config.h"
#include "dropout.h"
#include "host.h"
#include "layers.h"
#include "scratch.h"

enum { EMBED_DIM, NUM_HEADS, MLP_RATIO, DROPOUT, CAUSAL, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [EMBED_DIM] = {{"embed_dim", KILN_ATTR_INT, {.i = 0}}, 1, "features E of the input and the output"},
    [NUM_HEADS] = {{"num_heads", KILN_ATTR_INT, {.i = 0}}, 1, "attention heads; must divide embed_dim"},
    [MLP_RATIO] = {{"mlp_ratio", KILN_ATTR_FLOAT, {.f = 4.0}}, 0, "hidden size of the MLP over embed_dim"},
    [DROPOUT] = {{"dropout", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "dropout on the attention weights and both branches"},
    [CAUSAL] = {{"causal", KILN_ATTR_BOOL, {.b = 0}}, 0, "position t attends to positions <= t only"},
};

typedef struct transformer_state {
  kiln_module *norm1, *self_attn, *norm2, *linear1, *linear2;
  const kiln_op *gelu, *add, *dropout;
  double dropout_p;
} transformer_state;

static void transformer_destroy(void* state) {
  transformer_state* s = state;
  kl_host.module_release(s->norm1);
  kl_host.module_release(s->self_attn);
  kl_host.module_release(s->norm2);
  kl_host.module_release(s->linear1);
  kl_host.module_release(s->linear2);
  free(s);
}

static kiln_status create_children(transformer_state* s, kiln_layer_init* init, const kiln_attr* cfg,
                                   int64_t hidden) {
  const int64_t e = cfg[EMBED_DIM].value.i;
  kiln_attr norm[1], attn[4], linear1[2], linear2[2];
  kiln_status st;
  norm[0] = kiln_attr_ints("normalized_shape", &e, 1);
  attn[0] = kiln_attr_int("embed_dim", e);
  attn[1] = kiln_attr_int("num_heads", cfg[NUM_HEADS].value.i);
  attn[2] = kiln_attr_bool("causal", cfg[CAUSAL].value.b);
  attn[3] = kiln_attr_float("dropout", cfg[DROPOUT].value.f);
  linear1[0] = kiln_attr_int("in_features", e);
  linear1[1] = kiln_attr_int("out_features", hidden);
  linear2[0] = kiln_attr_int("in_features", hidden);
  linear2[1] = kiln_attr_int("out_features", e);
  if ((st = kl_add_child(init, "norm1", "LayerNorm", norm, 1, &s->norm1)) != KILN_OK) return st;
  if ((st = kl_add_child(init, "self_attn", "MultiHeadAttention", attn, 4, &s->self_attn)) != KILN_OK) return st;
  if ((st = kl_add_child(init, "norm2", "LayerNorm", norm, 1, &s->norm2)) != KILN_OK) return st;
  if ((st = kl_add_child(init, "linear1", "Linear", linear1, 2, &s->linear1)) != KILN_OK) return st;
  return kl_add_child(init, "linear2", "Linear", linear2, 2, &s->linear2);
}

static kiln_status transformer_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                      void** state) {
  const char* layer = "TransformerBlock";
  kiln_runtime* rt = kl_host.layer_init_runtime(init);
  const int64_t e = cfg[EMBED_DIM].value.i;
  const int64_t hidden = (int64_t)((double)e * cfg[MLP_RATIO].value.f);
  transformer_state* s;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_check_attention_config(layer, &cfg[EMBED_DIM], &cfg[NUM_HEADS], &cfg[DROPOUT])) != KILN_OK) return st;
  if (hidden < 1)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT,
                   "%s: mlp_ratio = %g gives an MLP of %lld features; expected mlp_ratio * embed_dim >= 1", layer,
                   cfg[MLP_RATIO].value.f, (long long)hidden);
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", layer);
  s->dropout_p = cfg[DROPOUT].value.f;
  st = kl_host.op_find(rt, "gelu", &s->gelu);
  if (st == KILN_OK) st = kl_host.op_find(rt, "add", &s->add);
  if (st == KILN_OK) st = kl_host.op_find(rt, "dropout", &s->dropout);
  if (st == KILN_OK) st = create_children(s, init, cfg, hidden);
  if (st != KILN_OK) {
    transformer_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

/* x + dropout(branch). */
static kiln_status residual(kl_scratch* sc, const transformer_state* s, int training, kiln_tensor* x,
                            kiln_tensor* branch, kiln_tensor** out) {
  kiln_tensor* pair[2];
  const kiln_status st = kl_dropout_apply(sc, s->dropout, branch, s->dropout_p, training, &pair[1]);
  if (st != KILN_OK) return st;
  pair[0] = x;
  return kl_call(sc, s->add, pair, 2, NULL, 0, out);
}

static kiln_status transformer_forward(void* state, const kiln_layer_call* call) {
  const transformer_state* s = state;
  kl_scratch sc;
  kiln_tensor *h = NULL, *x = NULL, *y = NULL;
  kiln_status st;
  kl_scratch_init(&sc, call->runtime);
  KL_TRY(kl_expect_inputs("TransformerBlock", call, 1));
  KL_TRY(kl_forward_child(&sc, s->norm1, call->inputs[0], &h));
  KL_TRY(kl_forward_child(&sc, s->self_attn, h, &h));
  KL_TRY(residual(&sc, s, call->training, call->inputs[0], h, &x));
  KL_TRY(kl_forward_child(&sc, s->norm2, x, &h));
  KL_TRY(kl_forward_child(&sc, s->linear1, h, &h));
  KL_TRY(kl_call(&sc, s->gelu, &h, 1, NULL, 0, &h));
  KL_TRY(kl_forward_child(&sc, s->linear2, h, &h));
  KL_TRY(residual(&sc, s, call->training, x, h, &y));
done:
  return kl_scratch_finish(&sc, st, y, &call->outputs[0]);
}

kiln_status kl_register_transformer(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "TransformerBlock",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = transformer_create,
                                .forward = transformer_forward,
                                .destroy = transformer_destroy};
  return kl_host.register_layer(registrar, &type);
}
