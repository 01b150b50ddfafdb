/* A plugin of small layers for the module and container tests, written
 * against kiln_plugin.h alone:
 *   Affine    y = x * weight + bias over the last dimension ("features");
 *             parameters weight and bias, an i64 buffer feature_count.
 *   ModeScale y = x + x in train mode, y = x in eval mode.
 *   Block     Affine "first", ModeScale "mode", Affine "second" as
 *             sub-layers, then times its own parameter "gate".
 *   Split     two outputs: x and -x. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kiln/kiln_plugin.h"

static const kiln_host* host;

static kiln_status failf(kiln_status status, const char* format, ...) {
  char message[256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return host->error(status, message);
}

/* The one input of a single-input layer, or a failure naming the layer. */
static kiln_status single_input(const char* layer, const kiln_layer_call* call, kiln_tensor** out) {
  if (call->n_inputs != 1) return failf(KILN_ERR_INVALID_ARGUMENT, "%s takes 1 input, got %zu", layer, call->n_inputs);
  *out = call->inputs[0];
  return KILN_OK;
}

/* ---- Affine ------------------------------------------------------------------ */

typedef struct affine_state {
  int64_t features;
  kiln_tensor* weight;
  kiln_tensor* bias;
  kiln_tensor* feature_count;
  const kiln_op* mul;
  const kiln_op* add;
} affine_state;

static void affine_destroy(void* state) {
  affine_state* s = state;
  host->tensor_release(s->weight);
  host->tensor_release(s->bias);
  host->tensor_release(s->feature_count);
  free(s);
}

static kiln_status affine_create(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config,
                                 void** state) {
  kiln_runtime* rt = host->layer_init_runtime(init);
  const int64_t features = config[0].value.i;
  affine_state* s;
  kiln_status st;
  (void)user;
  (void)n_config;
  if (features <= 0)
    return failf(KILN_ERR_INVALID_ARGUMENT, "'features' must be positive, got %lld", (long long)features);
  s = calloc(1, sizeof *s);
  if (!s) return host->error(KILN_ERR_OUT_OF_MEMORY, "no memory for the Affine state");
  s->features = features;
  st = host->op_find(rt, "mul", &s->mul);
  if (st == KILN_OK) st = host->op_find(rt, "add", &s->add);
  if (st == KILN_OK)
    st = host->tensor_full(rt, &features, 1, config[1].value.f, KILN_F32, KILN_DEVICE_CPU, 0, &s->weight);
  if (st == KILN_OK)
    st = host->tensor_full(rt, &features, 1, config[2].value.f, KILN_F32, KILN_DEVICE_CPU, 0, &s->bias);
  if (st == KILN_OK)
    st = host->tensor_full(rt, NULL, 0, (double)features, KILN_I64, KILN_DEVICE_CPU, 0, &s->feature_count);
  if (st == KILN_OK) st = host->layer_add_parameter(init, "weight", s->weight);
  if (st == KILN_OK) st = host->layer_add_parameter(init, "bias", s->bias);
  if (st == KILN_OK) st = host->layer_add_buffer(init, "feature_count", s->feature_count);
  if (st != KILN_OK) {
    affine_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status affine_forward(void* state, const kiln_layer_call* call) {
  affine_state* s = state;
  kiln_tensor* x = NULL;
  kiln_tensor* scaled = NULL;
  kiln_tensor* args[2];
  kiln_tensor_desc desc;
  kiln_status st = single_input("Affine", call, &x);
  if (st != KILN_OK) return st;
  st = host->tensor_describe(x, &desc);
  if (st != KILN_OK) return st;
  if (desc.rank < 1 || desc.dims[desc.rank - 1] != s->features)
    return failf(KILN_ERR_SHAPE_MISMATCH, "Affine expected the last dimension to be %lld (features), got %lld",
                 (long long)s->features, desc.rank < 1 ? 0LL : (long long)desc.dims[desc.rank - 1]);
  args[0] = x;
  args[1] = s->weight;
  st = host->op_call1(call->runtime, s->mul, args, 2, NULL, 0, &scaled);
  if (st != KILN_OK) return st;
  args[0] = scaled;
  args[1] = s->bias;
  st = host->op_call1(call->runtime, s->add, args, 2, NULL, 0, &call->outputs[0]);
  host->tensor_release(scaled);
  return st;
}

/* ---- ModeScale ------------------------------------------------------------------ */

/* The state of ModeScale and Split: the one op they call (owned by the runtime). */
static kiln_status find_op_state(kiln_layer_init* init, const char* name, void** state) {
  const kiln_op* op = NULL;
  kiln_status st = host->op_find(host->layer_init_runtime(init), name, &op);
  if (st == KILN_OK) *state = (void*)op;
  return st;
}

static kiln_status mode_scale_create(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config,
                                     void** state) {
  (void)user;
  (void)config;
  (void)n_config;
  return find_op_state(init, "add", state);
}

static kiln_status mode_scale_forward(void* state, const kiln_layer_call* call) {
  kiln_tensor* x = NULL;
  kiln_tensor* args[2];
  kiln_status st = single_input("ModeScale", call, &x);
  if (st != KILN_OK) return st;
  if (!call->training) {
    host->tensor_retain(x);
    call->outputs[0] = x;
    return KILN_OK;
  }
  args[0] = x;
  args[1] = x;
  return host->op_call1(call->runtime, (const kiln_op*)state, args, 2, NULL, 0, &call->outputs[0]);
}

/* The op handle belongs to the runtime: nothing to free. */
static void nothing_to_destroy(void* state) { (void)state; }

/* ---- Block ---------------------------------------------------------------------- */

typedef struct block_state {
  kiln_module* parts[3]; /* first, mode, second */
  kiln_tensor* gate;
  const kiln_op* mul;
} block_state;

static void block_destroy(void* state) {
  block_state* s = state;
  size_t i;
  for (i = 0; i < 3; ++i) host->module_release(s->parts[i]);
  host->tensor_release(s->gate);
  free(s);
}

static kiln_status block_create(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config,
                                void** state) {
  static const char* const names[3] = {"first", "mode", "second"};
  static const char* const types[3] = {"Affine", "ModeScale", "Affine"};
  kiln_runtime* rt = host->layer_init_runtime(init);
  kiln_attr features = config[0];
  block_state* s = calloc(1, sizeof *s);
  kiln_status st = s ? KILN_OK : host->error(KILN_ERR_OUT_OF_MEMORY, "no memory for the Block state");
  size_t i;
  (void)user;
  (void)n_config;
  if (st != KILN_OK) return st;
  /* The parameter is added first, so it is listed first; the sub-layers
   * are created first, so that their check of `features` is the one a bad
   * value meets. */
  for (i = 0; i < 3 && st == KILN_OK; ++i)
    st = host->module_create(rt, types[i], &features, i == 1 ? 0 : 1, &s->parts[i]);
  if (st == KILN_OK) st = host->op_find(rt, "mul", &s->mul);
  if (st == KILN_OK) st = host->tensor_full(rt, &features.value.i, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &s->gate);
  if (st == KILN_OK) st = host->layer_add_parameter(init, "gate", s->gate);
  for (i = 0; i < 3 && st == KILN_OK; ++i) st = host->layer_add_child(init, names[i], s->parts[i]);
  if (st != KILN_OK) {
    block_destroy(s);
    return st;
  }
  *state = s;
  return KILN_OK;
}

static kiln_status block_forward(void* state, const kiln_layer_call* call) {
  block_state* s = state;
  kiln_tensor* h = NULL;
  kiln_tensor* next = NULL;
  kiln_tensor* args[2];
  size_t i;
  kiln_status st = single_input("Block", call, &h);
  if (st != KILN_OK) return st;
  host->tensor_retain(h);
  for (i = 0; i < 3 && st == KILN_OK; ++i) {
    size_t n = 0;
    st = host->module_forward(s->parts[i], &h, 1, &next, 1, &n);
    host->tensor_release(h);
    h = st == KILN_OK ? next : NULL;
  }
  if (st != KILN_OK) return st;
  args[0] = h;
  args[1] = s->gate;
  st = host->op_call1(call->runtime, s->mul, args, 2, NULL, 0, &call->outputs[0]);
  host->tensor_release(h);
  return st;
}

/* ---- Split ------------------------------------------------------------------------ */

static kiln_status split_create(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config,
                                void** state) {
  (void)user;
  (void)config;
  (void)n_config;
  return find_op_state(init, "neg", state);
}

static kiln_status split_forward(void* state, const kiln_layer_call* call) {
  kiln_tensor* x = NULL;
  kiln_status st = single_input("Split", call, &x);
  if (st != KILN_OK) return st;
  if (call->max_outputs < 2) return host->error(KILN_ERR_INVALID_ARGUMENT, "Split gives 2 outputs");
  st = host->op_call1(call->runtime, (const kiln_op*)state, &x, 1, NULL, 0, &call->outputs[1]);
  if (st != KILN_OK) return st;
  host->tensor_retain(x);
  call->outputs[0] = x;
  *call->n_outputs = 2;
  return KILN_OK;
}

/* ---- registration ------------------------------------------------------------------- */

static kiln_status register_layers(const kiln_host* h, kiln_registrar* registrar) {
  static const kiln_attr_spec affine_config[] = {
      {{"features", KILN_ATTR_INT, {.i = 0}}, 1, "size of the last dimension"},
      {{"weight", KILN_ATTR_FLOAT, {.f = 1.0}}, 0, "initial value of every weight"},
      {{"bias", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "initial value of every bias"}};
  static const kiln_attr_spec block_config[] = {
      {{"features", KILN_ATTR_INT, {.i = 0}}, 1, "size of the last dimension"}};
  const kiln_layer_type affine = {.size = sizeof(kiln_layer_type), .name = "Affine", .config = affine_config,
                                  .n_config = 3, .create = affine_create, .forward = affine_forward,
                                  .destroy = affine_destroy};
  const kiln_layer_type mode_scale = {.size = sizeof(kiln_layer_type), .name = "ModeScale",
                                      .create = mode_scale_create, .forward = mode_scale_forward,
                                      .destroy = nothing_to_destroy};
  const kiln_layer_type block = {.size = sizeof(kiln_layer_type), .name = "Block", .config = block_config,
                                 .n_config = 1, .create = block_create, .forward = block_forward,
                                 .destroy = block_destroy};
  const kiln_layer_type split = {.size = sizeof(kiln_layer_type), .name = "Split", .create = split_create,
                                 .forward = split_forward, .destroy = nothing_to_destroy};
  kiln_status st;
  host = h;
  st = host->register_layer(registrar, &affine);
  if (st == KILN_OK) st = host->register_layer(registrar, &mode_scale);
  if (st == KILN_OK) st = host->register_layer(registrar, &block);
  if (st == KILN_OK) st = host->register_layer(registrar, &split);
  return st;
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {
      sizeof descriptor, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), "modules-test", "1.0.0", register_layers};
  return &descriptor;
}
