/* DepthwiseSeparableConv2d(in_channels, out_channels, kernel_size,
 * stride = 1, padding = 0, dilation = 1, bias = true) on [N, C, H, W]: a
 * depthwise Conv2d (one kernel per input channel: groups = in_channels,
 * with the stride, padding and dilation), then a 1x1 pointwise Conv2d that
 * mixes the channels. Children "depthwise" and "pointwise", so the
 * parameters are "depthwise.weight" [C, 1, kh, kw], "pointwise.weight"
 * [out, C, 1, 1] and their biases. */
#include <stdlib.h>

#include "child.h"
#include "conv_config.h"
#include "host.h"
#include "layers.h"

enum { BIAS = KL_CONV_N_COMMON, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    KL_CONV_CONFIG_COMMON,
    [BIAS] = {{"bias", KILN_ATTR_BOOL, {.b = 1}}, 0, "learn an additive bias in both convolutions"},
};

typedef struct separable_state {
  kiln_module *depthwise, *pointwise;
} separable_state;

static void separable_destroy(void* state) {
  separable_state* s = state;
  kl_host.module_release(s->depthwise);
  kl_host.module_release(s->pointwise);
  free(s);
}

enum { DEPTHWISE_GROUPS = KL_CONV_N_COMMON, DEPTHWISE_BIAS, N_DEPTHWISE };

static kiln_status add_children(separable_state* s, kiln_layer_init* init, const kiln_attr* cfg) {
  kiln_attr depthwise[N_DEPTHWISE], pointwise[4];
  const int64_t c = cfg[KL_CONV_IN].value.i;
  kiln_status st;
  int i;
  /* The common entries pass on as they are. */
  for (i = 0; i < KL_CONV_N_COMMON; ++i) depthwise[i] = cfg[i];
  depthwise[KL_CONV_OUT] = kiln_attr_int("out_channels", c);
  depthwise[DEPTHWISE_GROUPS] = kiln_attr_int("groups", c);
  depthwise[DEPTHWISE_BIAS] = cfg[BIAS];
  pointwise[0] = kiln_attr_int("in_channels", c);
  pointwise[1] = cfg[KL_CONV_OUT];
  pointwise[2] = kiln_attr_ints("kernel_size", kl_one, 1);
  pointwise[3] = cfg[BIAS];
  st = kl_add_child(init, "depthwise", "Conv2d", depthwise, N_DEPTHWISE, &s->depthwise);
  return st != KILN_OK ? st : kl_add_child(init, "pointwise", "Conv2d", pointwise, 4, &s->pointwise);
}

static kiln_status separable_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                    void** state) {
  kl_conv_geometry g;
  separable_state* s;
  kiln_status st;
  (void)user;
  (void)n_config;
  /* Checked here so that errors name this layer, not the Conv2d inside. */
  if ((st = kl_read_conv_geometry("DepthwiseSeparableConv2d", cfg, &g)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "DepthwiseSeparableConv2d: no memory for its state");
  st = add_children(s, init, cfg);
  if (st != KILN_OK) {
    separable_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status separable_forward(void* state, const kiln_layer_call* call) {
  const separable_state* layer = state;
  kl_scratch s;
  kiln_tensor *h = NULL, *y = NULL;
  kiln_status st;
  kl_scratch_init(&s, call->runtime);
  KL_TRY(kl_expect_inputs("DepthwiseSeparableConv2d", call, 1));
  KL_TRY(kl_forward_child(&s, layer->depthwise, call->inputs[0], &h));
  KL_TRY(kl_forward_child(&s, layer->pointwise, h, &y));
done:
  return kl_scratch_finish(&s, st, y, &call->outputs[0]);
}

kiln_status kl_register_separable_conv(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "DepthwiseSeparableConv2d",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = separable_create,
                                .forward = separable_forward,
                                .destroy = separable_destroy};
  return kl_host.register_layer(registrar, &type);
}
