/* Upsample(size | scale_factor, mode = "nearest", align_corners = false),
 * PyTorch's semantics (torch.nn.Upsample on [N, C, H, W]): the output is
 * `size` ([s] or [h, w]), or the input's size times `scale_factor` ([f] or
 * [fh, fw]) rounded down; "nearest" copies the input pixel each output
 * pixel falls in, "bilinear" blends the four around it. One op call:
 * upsample_nearest2d or upsample_bilinear2d. */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "layers.h"

enum { SIZE, SCALE_FACTOR, MODE, ALIGN_CORNERS, N_CONFIG };

static const kiln_attr_spec config[N_CONFIG] = {
    [SIZE] = {{"size", KILN_ATTR_INTS, {.ints = {NULL, 0}}}, 0, "output size [s] or [h, w]; or give scale_factor"},
    [SCALE_FACTOR] = {{"scale_factor", KILN_ATTR_FLOATS, {.floats = {NULL, 0}}},
                      0,
                      "multiplier of the input size, [f] or [fh, fw]; or give size"},
    [MODE] = {{"mode", KILN_ATTR_STRING, {.s = "nearest"}}, 0, "\"nearest\" or \"bilinear\""},
    [ALIGN_CORNERS] = {{"align_corners", KILN_ATTR_BOOL, {.b = 0}},
                       0,
                       "bilinear: map the corner pixels of input and output onto each other"},
};

enum { MODE_NEAREST, MODE_BILINEAR };

typedef struct upsample_state {
  const kiln_op* op;
  int64_t size[2];
  double scale_factor[2];
  kiln_attr attrs[3]; /* size, scale_factor (pointing at the arrays above), align_corners (bilinear only) */
  size_t n_attrs;
} upsample_state;

static kiln_status check_config(const kiln_attr* cfg, int mode) {
  const size_t n_size = cfg[SIZE].value.ints.len, n_scale = cfg[SCALE_FACTOR].value.floats.len;
  size_t i;
  if ((n_size == 0) == (n_scale == 0))
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "Upsample: give exactly one of size and scale_factor, got %s",
                   n_size ? "both" : "neither");
  if (n_size > 2 || n_scale > 2)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "Upsample: %s takes 1 or 2 values (height, width), got %zu",
                   n_size ? "size" : "scale_factor", n_size ? n_size : n_scale);
  for (i = 0; i < n_size; ++i)
    if (cfg[SIZE].value.ints.data[i] < 1)
      return kl_fail(KILN_ERR_INVALID_ARGUMENT, "Upsample: size must be >= 1, got %lld",
                     (long long)cfg[SIZE].value.ints.data[i]);
  for (i = 0; i < n_scale; ++i)
    if (!(cfg[SCALE_FACTOR].value.floats.data[i] > 0))
      return kl_fail(KILN_ERR_INVALID_ARGUMENT, "Upsample: scale_factor must be > 0, got %g",
                     cfg[SCALE_FACTOR].value.floats.data[i]);
  if (mode == MODE_NEAREST && cfg[ALIGN_CORNERS].value.b)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "Upsample: align_corners can only be set with mode \"bilinear\"");
  return KILN_OK;
}

static kiln_status upsample_create(void* user, kiln_layer_init* init, const kiln_attr* cfg, size_t n_config,
                                   void** state) {
  static const char* const modes[] = {"nearest", "bilinear", NULL};
  upsample_state* s;
  int mode = 0;
  size_t i;
  kiln_status st;
  (void)user;
  (void)n_config;
  if ((st = kl_read_choice("Upsample", &cfg[MODE], modes, &mode)) != KILN_OK) return st;
  if ((st = check_config(cfg, mode)) != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "Upsample: no memory for its state");
  for (i = 0; i < cfg[SIZE].value.ints.len; ++i) s->size[i] = cfg[SIZE].value.ints.data[i];
  for (i = 0; i < cfg[SCALE_FACTOR].value.floats.len; ++i) s->scale_factor[i] = cfg[SCALE_FACTOR].value.floats.data[i];
  s->attrs[s->n_attrs++] = kiln_attr_ints("size", s->size, cfg[SIZE].value.ints.len);
  s->attrs[s->n_attrs++] = kiln_attr_floats("scale_factor", s->scale_factor, cfg[SCALE_FACTOR].value.floats.len);
  if (mode == MODE_BILINEAR) s->attrs[s->n_attrs++] = kiln_attr_bool("align_corners", cfg[ALIGN_CORNERS].value.b);
  st = kl_host.op_find(kl_host.layer_init_runtime(init),
                       mode == MODE_BILINEAR ? "upsample_bilinear2d" : "upsample_nearest2d", &s->op);
  if (st != KILN_OK) {
    free(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status upsample_forward(void* state, const kiln_layer_call* call) {
  const upsample_state* s = state;
  const kiln_status st = kl_expect_inputs("Upsample", call, 1);
  if (st != KILN_OK) return st;
  return kl_host.op_call1(call->runtime, s->op, call->inputs, 1, s->attrs, s->n_attrs, &call->outputs[0]);
}

kiln_status kl_register_upsample(kiln_registrar* registrar) {
  const kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                                .name = "Upsample",
                                .config = config,
                                .n_config = N_CONFIG,
                                .create = upsample_create,
                                .forward = upsample_forward,
                                .destroy = free};
  return kl_host.register_layer(registrar, &type);
}
