/* Layers that are one op with the layer's configuration as the op's
 * attributes (the entries carry the op's attribute names): the pools, the
 * activations, Softmax and Identity (a copy). Each kind is a row of `kinds`: its names, its
 * schema and a check of the values. Input: one tensor. */
#include <stdlib.h>

#include "config.h"
#include "host.h"
#include "layers.h"

typedef struct op_layer_kind {
  const char* layer;
  const char* op;
  const kiln_attr_spec* config;
  size_t n_config;
  kiln_status (*check)(const char* layer, const kiln_attr* config); /* NULL: any value */
} op_layer_kind;

typedef struct op_layer_state {
  const op_layer_kind* kind;
  const kiln_op* op;
  kl_attrs attrs;
} op_layer_state;

/* ---- pools ------------------------------------------------------------------ */

enum { POOL_KERNEL, POOL_STRIDE, POOL_PADDING };

#define POOL_CONFIG_COMMON                                                                                      \
  [POOL_KERNEL] = {{"kernel_size", KILN_ATTR_INTS, {.ints = {NULL, 0}}}, 1, "window: [k] or [kh, kw]"},         \
  [POOL_STRIDE] = {{"stride", KILN_ATTR_INTS, {.ints = {NULL, 0}}}, 0, "[s] or [sh, sw]; [] (default): kernel_size"}, \
  [POOL_PADDING] = {{"padding", KILN_ATTR_INTS, {.ints = {kl_zero, 1}}}, 0, "implicit padding on each side, at most half the window"}

enum { MAX_DILATION = POOL_PADDING + 1, MAX_CEIL_MODE, MAX_N_CONFIG };
static const kiln_attr_spec max_pool_config[MAX_N_CONFIG] = {
    POOL_CONFIG_COMMON,
    [MAX_DILATION] = {{"dilation", KILN_ATTR_INTS, {.ints = {kl_one, 1}}}, 0, "spacing of the window: [d] or [dh, dw]"},
    [MAX_CEIL_MODE] = {{"ceil_mode", KILN_ATTR_BOOL, {.b = 0}}, 0, "round the output size up"},
};

enum { AVG_CEIL_MODE = POOL_PADDING + 1, AVG_COUNT_INCLUDE_PAD, AVG_N_CONFIG };
static const kiln_attr_spec avg_pool_config[AVG_N_CONFIG] = {
    POOL_CONFIG_COMMON,
    [AVG_CEIL_MODE] = {{"ceil_mode", KILN_ATTR_BOOL, {.b = 0}}, 0, "round the output size up"},
    [AVG_COUNT_INCLUDE_PAD] = {{"count_include_pad", KILN_ATTR_BOOL, {.b = 1}}, 0,
                               "divide by the window size including the padding it covers"},
};

static const kiln_attr_spec adaptive_config[] = {
    {{"output_size", KILN_ATTR_INTS, {.ints = {NULL, 0}}}, 1, "[s] or [h, w] of the output"},
};

/* kernel_size, stride and padding of either pool. */
static kiln_status check_pool(const char* layer, const kiln_attr* config) {
  int64_t kernel[2], stride[2], padding[2];
  kiln_status st;
  if ((st = kl_read_pair(layer, &config[POOL_KERNEL], 1, 0, kernel)) != KILN_OK) return st;
  if ((st = kl_read_pair(layer, &config[POOL_STRIDE], 1, 1, stride)) != KILN_OK) return st;
  if ((st = kl_read_pair(layer, &config[POOL_PADDING], 0, 0, padding)) != KILN_OK) return st;
  if (2 * padding[0] <= kernel[0] && 2 * padding[1] <= kernel[1]) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: padding %lldx%lld must be at most half of kernel_size %lldx%lld",
                 layer, (long long)padding[0], (long long)padding[1], (long long)kernel[0], (long long)kernel[1]);
}

static kiln_status check_max_pool(const char* layer, const kiln_attr* config) {
  int64_t dilation[2];
  const kiln_status st = check_pool(layer, config);
  return st != KILN_OK ? st : kl_read_pair(layer, &config[MAX_DILATION], 1, 0, dilation);
}

/* The 1-d pools take the entries of the 2-d ones with one value each
 * (kernel_size = [k] or k); their ops, max_pool1d and avg_pool1d, read them
 * as such. */
static kiln_status check_single_values(const char* layer, const kiln_attr* config, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (config[i].type == KILN_ATTR_INTS && config[i].value.ints.len > 1)
      return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s takes one value (the window along L), got %zu", layer,
                     config[i].name, config[i].value.ints.len);
  }
  return KILN_OK;
}

static kiln_status check_max_pool1d(const char* layer, const kiln_attr* config) {
  const kiln_status st = check_single_values(layer, config, MAX_N_CONFIG);
  return st != KILN_OK ? st : check_max_pool(layer, config);
}

static kiln_status check_avg_pool1d(const char* layer, const kiln_attr* config) {
  const kiln_status st = check_single_values(layer, config, AVG_N_CONFIG);
  return st != KILN_OK ? st : check_pool(layer, config);
}

static kiln_status check_adaptive(const char* layer, const kiln_attr* config) {
  int64_t size[2];
  return kl_read_pair(layer, &config[0], 1, 0, size);
}

/* ---- activations and Softmax -------------------------------------------------- */

static const kiln_attr_spec leaky_relu_config[] = {
    {{"negative_slope", KILN_ATTR_FLOAT, {.f = 0.01}}, 0, "slope for negative inputs"},
};

static const kiln_attr_spec gelu_config[] = {
    {{"approximate", KILN_ATTR_STRING, {.s = "none"}}, 0, "\"none\" (exact, with erf) or \"tanh\""},
};

static const kiln_attr_spec softplus_config[] = {
    {{"beta", KILN_ATTR_FLOAT, {.f = 1.0}}, 0, "log(1 + exp(beta * x)) / beta"},
    {{"threshold", KILN_ATTR_FLOAT, {.f = 20.0}}, 0, "x itself where beta * x exceeds it"},
};

static const kiln_attr_spec softmax_config[] = {
    {{"dim", KILN_ATTR_INT, {.i = -1}}, 0, "the dimension whose slices sum to 1"},
};

static kiln_status check_gelu(const char* layer, const kiln_attr* config) {
  static const char* const choices[] = {"none", "tanh", NULL};
  int choice = 0;
  return kl_read_choice(layer, &config[0], choices, &choice);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const op_layer_kind kinds[] = {
    {"MaxPool2d", "max_pool2d", max_pool_config, MAX_N_CONFIG, check_max_pool},
    {"AvgPool2d", "avg_pool2d", avg_pool_config, AVG_N_CONFIG, check_pool},
    {"MaxPool1d", "max_pool1d", max_pool_config, MAX_N_CONFIG, check_max_pool1d},
    {"AvgPool1d", "avg_pool1d", avg_pool_config, AVG_N_CONFIG, check_avg_pool1d},
    {"AdaptiveAvgPool2d", "adaptive_avg_pool2d", adaptive_config, COUNT(adaptive_config), check_adaptive},
    {"ReLU", "relu", NULL, 0, NULL},
    {"LeakyReLU", "leaky_relu", leaky_relu_config, COUNT(leaky_relu_config), NULL},
    {"GELU", "gelu", gelu_config, COUNT(gelu_config), check_gelu},
    {"SiLU", "silu", NULL, 0, NULL},
    {"Tanh", "tanh", NULL, 0, NULL},
    {"Sigmoid", "sigmoid", NULL, 0, NULL},
    {"Softmax", "softmax", softmax_config, COUNT(softmax_config), NULL},
    {"Softplus", "softplus", softplus_config, COUNT(softplus_config), NULL},
    {"Hardswish", "hardswish", NULL, 0, NULL},
    {"Mish", "mish", NULL, 0, NULL},
    {"Identity", "copy", NULL, 0, NULL},
};

static void op_layer_destroy(void* state) {
  op_layer_state* s = state;
  kl_attrs_free(&s->attrs);
  free(s);
}

static kiln_status op_layer_create(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config,
                                   void** state) {
  const op_layer_kind* kind = user;
  op_layer_state* s;
  kiln_status st = kind->check ? kind->check(kind->layer, config) : KILN_OK;
  if (st != KILN_OK) return st;
  s = calloc(1, sizeof *s);
  if (!s) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "%s: no memory for its state", kind->layer);
  s->kind = kind;
  st = kl_host.op_find(kl_host.layer_init_runtime(init), kind->op, &s->op);
  if (st == KILN_OK) st = kl_attrs_copy(config, n_config, &s->attrs);
  if (st == KILN_OK) {
    /* The names the configuration came with may go with the registration;
     * the schema's own (entry i is entry i) live as long as the library. */
    size_t i;
    for (i = 0; i < n_config; ++i) s->attrs.items[i].name = kind->config[i].attr.name;
  }
  if (st != KILN_OK) {
    op_layer_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status op_layer_forward(void* state, const kiln_layer_call* call) {
  const op_layer_state* s = state;
  const kiln_status st = kl_expect_inputs(s->kind->layer, call, 1);
  if (st != KILN_OK) return st;
  return kl_host.op_call1(call->runtime, s->op, call->inputs, 1, s->attrs.items, s->attrs.count, &call->outputs[0]);
}

kiln_status kl_register_op_layers(kiln_registrar* registrar) {
  size_t i;
  for (i = 0; i < COUNT(kinds); ++i) {
    kiln_layer_type type = {.size = sizeof(kiln_layer_type),
                            .create = op_layer_create,
                            .forward = op_layer_forward,
                            .destroy = op_layer_destroy};
    kiln_status st;
    type.name = kinds[i].layer;
    type.config = kinds[i].config;
    type.n_config = kinds[i].n_config;
    type.user = (void*)&kinds[i];
    if ((st = kl_host.register_layer(registrar, &type)) != KILN_OK) return st;
  }
  return KILN_OK;
}
