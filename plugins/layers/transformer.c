/* TransformerBlock(embed_dim, num_heads, mlp_ratio = 4, dropout = 0,
 * causal = false): a pre-norm transformer encoder block on [N, L, E],
 *
 *   x = x + dropout(attn(ln1(x)))
 *   x = x + dropout(fc2(gelu(fc1(ln2(x)))))
 *
 * made of child layers (ln1, attn, ln2: LayerNorm and MultiHeadAttention;
 * fc1 [E -> mlp_ratio E] and fc2: Linear), so its parameters are named
 * "attn.q_proj.weight", "fc1.bias", ... The attention weights get the same
 * dropout as the residual branches. */
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
  kiln_module *ln1, *attn, *ln2, *fc1, *fc2;
  const kiln_op *gelu, *add, *dropout;
  double dropout_p;
} transformer_state;

static void transformer_destroy(void* state) {
  transformer_state* s = state;
  kl_host.module_release(s->ln1);
  kl_host.module_release(s->attn);
  kl_host.module_release(s->ln2);
  kl_host.module_release(s->fc1);
  kl_host.module_release(s->fc2);
  free(s);
}

static kiln_status create_children(transformer_state* s, kiln_layer_init* init, const kiln_attr* cfg,
                                   int64_t hidden) {
  const int64_t e = cfg[EMBED_DIM].value.i;
  kiln_attr norm[1], attn[4], fc1[2], fc2[2];
  kiln_status st;
  norm[0] = kiln_attr_ints("normalized_shape", &e, 1);
  attn[0] = kiln_attr_int("embed_dim", e);
  attn[1] = kiln_attr_int("num_heads", cfg[NUM_HEADS].value.i);
  attn[2] = kiln_attr_bool("causal", cfg[CAUSAL].value.b);
  attn[3] = kiln_attr_float("dropout", cfg[DROPOUT].value.f);
  fc1[0] = kiln_attr_int("in_features", e);
  fc1[1] = kiln_attr_int("out_features", hidden);
  fc2[0] = kiln_attr_int("in_features", hidden);
  fc2[1] = kiln_attr_int("out_features", e);
  if ((st = kl_add_child(init, "ln1", "LayerNorm", norm, 1, &s->ln1)) != KILN_OK) return st;
  if ((st = kl_add_child(init, "attn", "MultiHeadAttention", attn, 4, &s->attn)) != KILN_OK) return st;
  if ((st = kl_add_child(init, "ln2", "LayerNorm", norm, 1, &s->ln2)) != KILN_OK) return st;
  if ((st = kl_add_child(init, "fc1", "Linear", fc1, 2, &s->fc1)) != KILN_OK) return st;
  return kl_add_child(init, "fc2", "Linear", fc2, 2, &s->fc2);
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
  KL_TRY(kl_forward_child(&sc, s->ln1, call->inputs[0], &h));
  KL_TRY(kl_forward_child(&sc, s->attn, h, &h));
  KL_TRY(residual(&sc, s, call->training, call->inputs[0], h, &x));
  KL_TRY(kl_forward_child(&sc, s->ln2, x, &h));
  KL_TRY(kl_forward_child(&sc, s->fc1, h, &h));
  KL_TRY(kl_call(&sc, s->gelu, &h, 1, NULL, 0, &h));
  KL_TRY(kl_forward_child(&sc, s->fc2, h, &h));
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
